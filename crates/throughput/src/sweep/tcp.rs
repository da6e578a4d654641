//! `misura sweep tcp`: `misura tcp`'s knobs, the sweepable ones as lists.

use super::series::{mean, runs_client, sum_opt, Series};
use super::values::{the_swept, Knobs, OnOff, ValueList};
use crate::client::ClientPlan;
use crate::error::Refusal;
use crate::tcp::{TcpKnobs, TcpPlan, TcpShape};
use misura_cli::units::ByteSize;
use misura_report::throughput::{SweepFigures, TcpReport};

/// `misura sweep tcp`'s own knobs: `misura tcp`'s, the sweepable ones as lists
/// (plain values: the binary's clap group converts into them).
#[derive(Debug, Clone)]
pub struct TcpSweep {
    /// Parallel data connections, or a list or range of them to sweep.
    pub streams: ValueList<u32>,
    /// Size of each write (e.g. 1400, 64K), or a list or range of sizes to sweep.
    pub msg_size: ValueList<ByteSize>,
    /// SO_SNDBUF to ask for, or a list of them to sweep (default: the kernel's autotuning).
    pub sndbuf: Option<ValueList<ByteSize>>,
    /// SO_RCVBUF to ask for, or a list of them to sweep (default: the kernel's autotuning).
    pub rcvbuf: Option<ValueList<ByteSize>>,
    /// TCP_NODELAY in every run, or `on,off` to sweep it.
    pub nodelay: Option<ValueList<OnOff>>,
    /// Clients at once, or a list or range of counts to sweep.
    pub clients: ValueList<u32>,
    /// The flags the same in every run.
    pub shape: TcpShape,
}

/// One value of a flag `misura sweep tcp` varies.
#[derive(Clone, Debug)]
pub enum TcpKnob {
    Streams(u32),
    MsgSize(ByteSize),
    Sndbuf(ByteSize),
    Rcvbuf(ByteSize),
    Nodelay(OnOff),
    Clients(u32),
}

impl std::fmt::Display for TcpKnob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TcpKnob::Streams(n) | TcpKnob::Clients(n) => n.fmt(f),
            TcpKnob::MsgSize(b) | TcpKnob::Sndbuf(b) | TcpKnob::Rcvbuf(b) => b.fmt(f),
            TcpKnob::Nodelay(o) => o.fmt(f),
        }
    }
}

impl TcpSweep {
    /// The base plan (every flag at its first value, on the client part
    /// `client` makes of a client count) and one plan per value of the
    /// swept flag, each checked.
    pub fn series(
        &self,
        client: impl FnOnce(u32) -> Result<ClientPlan, Refusal>,
    ) -> Result<Series<TcpPlan>, Refusal> {
        let swept = the_swept(vec![
            Knobs::of("msg-size", Some(&self.msg_size), TcpKnob::MsgSize),
            Knobs::of("sndbuf", self.sndbuf.as_ref(), TcpKnob::Sndbuf),
            Knobs::of("rcvbuf", self.rcvbuf.as_ref(), TcpKnob::Rcvbuf),
            Knobs::of("streams", Some(&self.streams), TcpKnob::Streams),
            Knobs::of("nodelay", self.nodelay.as_ref(), TcpKnob::Nodelay),
            Knobs::of("clients", Some(&self.clients), TcpKnob::Clients),
        ])?;
        let knobs = TcpKnobs {
            streams: *self.streams.first(),
            msg_size: self.msg_size.first().clone(),
            sndbuf: self.sndbuf.as_ref().map(|l| l.first().clone()),
            rcvbuf: self.rcvbuf.as_ref().map(|l| l.first().clone()),
            nodelay: self.nodelay.as_ref().is_some_and(|l| l.first().on()),
        };
        let base = TcpPlan::new(
            runs_client(client(*self.clients.first())?),
            &knobs,
            &self.shape,
        )?;
        Series::new(base, swept, vary)
    }
}

/// The base plan with one swept value set, checked again.
pub fn vary(base: &TcpPlan, k: &TcpKnob) -> Result<TcpPlan, Refusal> {
    let mut p = base.clone();
    match k {
        TcpKnob::Streams(n) => p.streams = *n,
        TcpKnob::MsgSize(b) => p.msg_size = b.clone(),
        TcpKnob::Sndbuf(b) => p.sndbuf = Some(b.clone()),
        TcpKnob::Rcvbuf(b) => p.rcvbuf = Some(b.clone()),
        TcpKnob::Nodelay(o) => p.nodelay = o.on(),
        TcpKnob::Clients(n) => p.client.clients = *n,
    }
    p.check()?;
    Ok(p)
}

/// A run's headline figures.
pub fn figures(r: &TcpReport) -> SweepFigures {
    let c = &r.clients;
    SweepFigures {
        complete: r.complete,
        throughput_bps: Some(r.throughput_bps),
        retransmits: Some(r.retransmits),
        rtt_us_mean: mean(c.iter().filter_map(|c| c.rtt_us_mean)),
        cpu_local_pct: Some(c.iter().map(|c| c.cpu_local.utilisation_pct).sum()),
        cpu_remote_pct: sum_opt(c.iter().map(|c| c.cpu_remote.map(|x| x.utilisation_pct))),
        service_demand_local: mean(c.iter().filter_map(|c| c.service_demand_local_us_per_kb)),
        service_demand_remote: mean(c.iter().filter_map(|c| c.service_demand_remote_us_per_kb)),
        error: (!r.complete).then(|| r.stop_reason.to_string()),
        ..Default::default()
    }
}
