//! `misura sweep udp`: `misura udp`'s knobs, the sweepable ones as lists.

use super::series::{mean, runs_client, sum_opt, Series};
use super::values::{the_swept, Knobs, ValueList};
use crate::client::ClientPlan;
use crate::error::Refusal;
use crate::udp::{UdpKnobs, UdpPlan, UdpShape};
use misura_cli::units::{ByteSize, LinkRate};
use misura_report::throughput::{SweepFigures, UdpReport};

/// `misura sweep udp`'s own knobs: `misura udp`'s, the sweepable ones as lists
/// (plain values: the binary's clap group converts into them).
#[derive(Debug, Clone)]
pub struct UdpSweep {
    /// Sending rate of UDP payload (e.g. 10M, 1G), or a list of rates to sweep.
    pub rate: ValueList<LinkRate>,
    /// UDP payload per datagram, bytes (≥ 24), or a list or range of sizes to sweep.
    pub msg_size: ValueList<ByteSize>,
    /// Clients at once, or a list or range of counts to sweep.
    pub clients: ValueList<u32>,
    /// The flags the same in every run.
    pub shape: UdpShape,
}

/// One value of a flag `misura sweep udp` varies.
#[derive(Clone, Debug)]
pub enum UdpKnob {
    MsgSize(ByteSize),
    Rate(LinkRate),
    Clients(u32),
}

impl std::fmt::Display for UdpKnob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UdpKnob::MsgSize(b) => b.fmt(f),
            UdpKnob::Rate(r) => r.fmt(f),
            UdpKnob::Clients(n) => n.fmt(f),
        }
    }
}

impl UdpSweep {
    /// The base plan (every flag at its first value, on the client part
    /// `client` makes of a client count) and one plan per value of the
    /// swept flag, each checked.
    pub fn series(
        &self,
        client: impl FnOnce(u32) -> Result<ClientPlan, Refusal>,
    ) -> Result<Series<UdpPlan>, Refusal> {
        let swept = the_swept(vec![
            Knobs::of("msg-size", Some(&self.msg_size), UdpKnob::MsgSize),
            Knobs::of("rate", Some(&self.rate), UdpKnob::Rate),
            Knobs::of("clients", Some(&self.clients), UdpKnob::Clients),
        ])?;
        let knobs = UdpKnobs {
            rate: self.rate.first().clone(),
            msg_size: self.msg_size.first().clone(),
        };
        let base = UdpPlan::new(
            runs_client(client(*self.clients.first())?),
            &knobs,
            &self.shape,
        )?;
        Series::new(base, swept, vary)
    }
}

/// The base plan with one swept value set, checked again.
pub fn vary(base: &UdpPlan, k: &UdpKnob) -> Result<UdpPlan, Refusal> {
    let mut p = base.clone();
    match k {
        UdpKnob::MsgSize(b) => p.msg_size = b.clone(),
        UdpKnob::Rate(r) => p.rate = r.clone(),
        UdpKnob::Clients(n) => p.client.clients = *n,
    }
    p.check()?;
    Ok(p)
}

/// A run's headline figures; a run where nothing arrived says so as its
/// error.
pub fn figures(r: &UdpReport) -> SweepFigures {
    let c = &r.clients;
    SweepFigures {
        complete: r.complete,
        throughput_bps: Some(r.throughput_bps),
        loss_ratio: Some(r.loss_ratio),
        jitter_ns: c.iter().filter_map(|c| c.jitter_ns).max(),
        cpu_local_pct: Some(c.iter().map(|c| c.cpu_local.utilisation_pct).sum()),
        cpu_remote_pct: sum_opt(c.iter().map(|c| c.cpu_remote.map(|x| x.utilisation_pct))),
        service_demand_local: mean(c.iter().filter_map(|c| c.cpu_local.us_per_kb(c.sent_bytes))),
        error: if !r.complete {
            Some(r.stop_reason.to_string())
        } else {
            r.warnings
                .iter()
                .find(|w| w.code == misura_cli::warnings::ABOVE_PATH_MTU)
                .map(|w| w.text.clone())
        },
        ..Default::default()
    }
}
