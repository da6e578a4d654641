//! `misura sweep rr`: `misura rr`'s knobs, the sweepable ones as lists.

use super::series::{mean, runs_client, sum_opt, Series};
use super::values::{the_swept, Knobs, ValueList};
use crate::client::ClientPlan;
use crate::error::Refusal;
use crate::rr::{RrKnobs, RrPlan, RrShape};
use misura_cli::units::ByteSize;
use misura_report::throughput::{RrReport, SweepFigures};

/// `misura sweep rr`'s own knobs: `misura rr`'s, the sweepable ones as lists
/// (plain values: the binary's clap group converts into them).
#[derive(Debug, Clone)]
pub struct RrSweep {
    /// Request size, bytes (udp: ≥ 16), or a list or range of sizes to sweep.
    pub request: Option<ValueList<ByteSize>>,
    /// Response size, bytes (udp: ≥ 16), or a list or range of sizes to sweep.
    pub response: Option<ValueList<ByteSize>>,
    /// Transactions in flight, or a list or range of them to sweep.
    pub burst: ValueList<u32>,
    /// Clients at once, or a list or range of counts to sweep.
    pub clients: ValueList<u32>,
    /// The flags the same in every run.
    pub shape: RrShape,
}

/// One value of a flag `misura sweep rr` varies.
#[derive(Clone, Debug)]
pub enum RrKnob {
    Request(ByteSize),
    Response(ByteSize),
    Burst(u32),
    Clients(u32),
}

impl std::fmt::Display for RrKnob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RrKnob::Request(b) | RrKnob::Response(b) => b.fmt(f),
            RrKnob::Burst(n) | RrKnob::Clients(n) => n.fmt(f),
        }
    }
}

impl RrSweep {
    /// The base plan (every flag at its first value, on the client part
    /// `client` makes of a client count) and one plan per value of the
    /// swept flag, each checked.
    pub fn series(
        &self,
        client: impl FnOnce(u32) -> Result<ClientPlan, Refusal>,
    ) -> Result<Series<RrPlan>, Refusal> {
        let swept = the_swept(vec![
            Knobs::of("request", self.request.as_ref(), RrKnob::Request),
            Knobs::of("response", self.response.as_ref(), RrKnob::Response),
            Knobs::of("burst", Some(&self.burst), RrKnob::Burst),
            Knobs::of("clients", Some(&self.clients), RrKnob::Clients),
        ])?;
        let knobs = RrKnobs {
            request: self.request.as_ref().map(|l| l.first().clone()),
            response: self.response.as_ref().map(|l| l.first().clone()),
            burst: *self.burst.first(),
        };
        let base = RrPlan::new(
            runs_client(client(*self.clients.first())?),
            &knobs,
            &self.shape,
        )?;
        Series::new(base, swept, vary)
    }
}

/// The base plan with one swept value set, checked again.
pub fn vary(base: &RrPlan, k: &RrKnob) -> Result<RrPlan, Refusal> {
    let mut p = base.clone();
    match k {
        RrKnob::Request(b) => p.t.request = b.bytes,
        RrKnob::Response(b) => p.t.response = b.bytes,
        RrKnob::Burst(n) => p.t.burst = *n,
        RrKnob::Clients(n) => p.client.clients = *n,
    }
    p.check()?;
    Ok(p)
}

/// A run's headline figures.
pub fn figures(r: &RrReport) -> SweepFigures {
    let c = &r.clients;
    SweepFigures {
        complete: r.complete,
        transactions_per_s: Some(r.transactions_per_s),
        latency_median_ns: c.iter().filter_map(|c| c.latency.median_ns).max(),
        latency_p99_ns: c.iter().filter_map(|c| c.latency.p99_ns).max(),
        cpu_local_pct: Some(c.iter().map(|c| c.cpu_local.utilisation_pct).sum()),
        cpu_remote_pct: sum_opt(c.iter().map(|c| c.cpu_remote.map(|x| x.utilisation_pct))),
        service_demand_local: mean(
            c.iter()
                .filter_map(|c| c.service_demand_local_us_per_transaction),
        ),
        service_demand_remote: mean(
            c.iter()
                .filter_map(|c| c.service_demand_remote_us_per_transaction),
        ),
        error: (!r.complete).then(|| r.stop_reason.to_string()),
        ..Default::default()
    }
}
