//! Probing an `irtt server` (`misura rtt HOST --peer irtt`, and `misura
//! load --reflector irtt://HOST`): the flags' meaning for irtt, and the
//! result. The session is `misura_irtt::client`'s.

use crate::shared::exit::Failure;
use crate::shared::output::{Finished, Report};
use anyhow::Result;
use misura_irtt::client::{self, Options};
use misura_irtt::report::{separability, write_rtt, ParamsView, RttSummary};
use misura_wire::irtt::{DEFAULT_PORT, MAX_KEY_LEN, MAX_PACKET_LEN, PROTOCOL_VERSION};
use misura_wire::irtt_params::{Clock, Params, ReceivedStats, StampAt};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use misura_rtt::args::Peer;

/// Longest irtt session misura asks for.
pub const MAX_DURATION: Duration = Duration::from_secs(7 * 24 * 3600);

/// One irtt session, as `misura rtt`'s flags say it.
pub struct Probe<'a> {
    /// HOST or HOST:PORT (irtt's port 2112 when none).
    pub target: &'a str,
    pub period: Option<Duration>,
    pub count: Option<u64>,
    pub duration: Option<Duration>,
    /// irtt's packet length (its header included; 0: the header only).
    pub length: usize,
    pub key: Option<&'a str>,
    pub quiet: bool,
}

/// Runs the session; the result says which stamps the server returned
/// and what misura can and cannot separate with them.
pub fn run(p: &Probe<'_>, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let target = crate::shared::target::resolve(p.target, DEFAULT_PORT)?;
    let interval = p.period.unwrap_or(Duration::from_millis(100));
    if interval.is_zero() || interval > Duration::from_secs(15) {
        return Err(Failure::Usage(format!(
            "the probe period {interval:?} is out of irtt's range: give 1ns to 15s (the server may raise it; irtt's own minimum is 10ms)"
        ))
        .into());
    }
    let count = match (p.count, p.duration) {
        (None, None) => Some(100),
        (c, _) => c,
    };
    let by_count = count.map(|c| interval.saturating_mul(c.min(u32::MAX as u64) as u32));
    let duration = match (by_count, p.duration) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) => a,
        (None, Some(b)) => b,
        (None, None) => unreachable!("count defaults to 100"),
    };
    if duration.is_zero() || duration > MAX_DURATION {
        return Err(Failure::Usage(format!(
            "the irtt session would last {duration:?}: give --count/--duration for at most {} days",
            MAX_DURATION.as_secs() / 86400
        ))
        .into());
    }
    if p.length > MAX_PACKET_LEN {
        return Err(Failure::Usage(format!(
            "--request {} is over irtt's packet limit here of {MAX_PACKET_LEN} bytes",
            p.length
        ))
        .into());
    }
    if let Some(k) = p.key {
        if k.is_empty() || k.len() > MAX_KEY_LEN {
            return Err(Failure::Usage(format!(
                "--irtt-hmac: the key has {} bytes; give 1 to {MAX_KEY_LEN}",
                k.len()
            ))
            .into());
        }
    }
    let params = Params {
        protocol_version: PROTOCOL_VERSION,
        duration_ns: duration.as_nanos() as i64,
        interval_ns: interval.as_nanos() as i64,
        length: p.length as i64,
        received_stats: ReceivedStats::Both,
        stamp_at: StampAt::Both,
        clock: Clock::Both,
        dscp: 0,
        server_fill: String::new(),
    };
    let started_at = misura_run::meta::now_rfc3339();
    let o = Options {
        target,
        key: p.key.map(|k| k.as_bytes().to_vec()),
        params: params.clone(),
        count,
    };
    if !p.quiet {
        eprintln!(
            "misura rtt: irtt session with {target}: {} probes every {interval:?} asked for",
            count.map_or("-".into(), |c| c.to_string())
        );
    }
    let should_stop = || stop.load(Ordering::Relaxed) != 0;
    let run = client::run(&o, &should_stop)?;
    let t = &run.tally;
    let (complete, stop_reason) = crate::shared::output::completion(stop);
    let snap = |s: &misura_stats::Summary| (s.count() > 0).then(|| s.snapshot());
    let (separable, not_separable) = separability(
        &t.stamps,
        t.counts.answered,
        t.server_processing.count(),
        t.counts.sent,
        t.server_received,
    );
    let summary = RttSummary {
        meta: misura_run::meta::meta("misura.irtt-rtt", started_at),
        complete: complete && !run.interrupted,
        stop_reason,
        target: target.to_string(),
        local: run.local.to_string(),
        hmac: p.key.is_some(),
        requested: ParamsView::from(&params),
        granted: ParamsView::from(&run.granted),
        client_stamps: "kernel software TX stamp (user clock before the send where it did not come) and kernel software RX stamp, CLOCK_REALTIME".into(),
        server_stamps: t.stamps,
        separable,
        not_separable,
        counts: t.counts,
        server_received_count: t.server_received,
        duration_s: run.elapsed.as_secs_f64(),
        final_wait_s: run.final_wait.as_secs_f64(),
        rtt: snap(&t.rtt),
        rtt_minus_server_processing: snap(&t.rtt_net),
        server_processing: snap(&t.server_processing),
        forward_wall: snap(&t.forward),
        backward_wall: snap(&t.backward),
    };
    let none = summary.counts.answered == 0 && summary.counts.sent > 0;
    let sent = summary.counts.sent;
    let report = Report::new(summary, "rtt", target.to_string(), write_rtt);
    if none {
        eprintln!("misura: no reply to any of {sent} irtt probes from {target}");
        return Ok(Finished::with_code(report, crate::shared::exit::ERROR));
    }
    Ok(Finished::ok(report))
}
