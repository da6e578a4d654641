//! Probing an `irtt server` (`misura rtt HOST --peer irtt`, and `misura
//! load --reflector irtt://HOST`): the flags' meaning for irtt, and the
//! result. The session is `misura_irtt::client`'s; rtt's flags and its
//! STAMP session are `misura_rtt`'s.

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
use misura_rtt::{Measured, RttArgs};

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

impl Probe<'_> {
    /// `misura rtt HOST --peer irtt`: the flags that mean something to irtt.
    pub fn of(a: &RttArgs) -> Probe<'_> {
        Probe {
            target: a.target.as_deref().unwrap_or_default(),
            period: a
                .period
                .as_ref()
                .map(|p| p.std())
                .or(a.rate.map(|r| Duration::from_secs_f64(1.0 / r.max(1e-3)))),
            count: a.count,
            duration: a.duration.as_ref().map(|d| d.std()),
            length: a.request.first().copied().unwrap_or(0),
            key: a.irtt_hmac.as_deref(),
            quiet: a.out.quiet,
        }
    }
}

/// One session of `misura rtt`'s flags as `misura load` runs one per
/// phase: an irtt server's (`--peer irtt`, as an rtt result), else the
/// STAMP session of `misura-rtt`.
pub fn measure(a: &RttArgs, stop: &Arc<AtomicUsize>) -> Result<Measured> {
    if a.peer != Some(Peer::Irtt) || a.l2 {
        return misura_rtt::measure(a, stop);
    }
    let report = rtt_report(&Probe::of(a), stop)?;
    Ok(Measured {
        target_name: report.config.target.clone(),
        report,
        frames_error: None,
        series: Vec::new(),
    })
}

/// One session: the parameters asked for, the server's address, and the run.
struct Session {
    params: Params,
    target: std::net::SocketAddr,
    started_at: String,
    run: client::Run,
}

fn session(p: &Probe<'_>, stop: &Arc<AtomicUsize>) -> Result<Session> {
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
    Ok(Session {
        params,
        target,
        started_at,
        run,
    })
}

/// Runs the session; the result says which stamps the server returned
/// and what misura can and cannot separate with them.
pub fn run(p: &Probe<'_>, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let Session {
        params,
        target,
        started_at,
        run,
    } = session(p, stop)?;
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

/// The session as `misura rtt`'s result, for `misura load --reflector
/// irtt://HOST` (its phases compare rtt results): kernel RTT, the user
/// RTT, the server's processing time as the turnaround and the RTT without
/// it as the network RTT; no one-way figures (irtt gives no clock offset).
pub fn rtt_report(p: &Probe<'_>, stop: &Arc<AtomicUsize>) -> Result<misura_report::rtt::RttReport> {
    use misura_report::rtt::*;
    let Session {
        params,
        target,
        started_at,
        run,
    } = session(p, stop)?;
    let t = &run.tally;
    let c = &t.counts;
    let (complete, stop_reason) = crate::shared::output::completion(stop);
    let snap = |s: &misura_stats::Summary| (s.count() > 0).then(|| s.snapshot());
    let latency = RttLatencies {
        user_rtt: t.user_rtt.snapshot(),
        kernel_rtt: snap(&t.rtt),
        hardware_rtt: None,
        turnaround: snap(&t.server_processing),
        network_rtt: snap(&t.rtt_net),
        forward: None,
        backward: None,
        jitter_rfc3550_ns: None,
        ipdv: None,
    };
    let len = run.granted.length.max(0) as usize;
    Ok(misura_report::Envelope {
        meta: crate::shared::meta::meta("misura.rtt", started_at),
        complete: complete && !run.interrupted,
        stop_reason,
        host: crate::shared::host::fingerprint(Default::default()),
        config: RttConfig {
            transport: "irtt".into(),
            target: target.to_string(),
            local: run.local.to_string(),
            interface: None,
            frame_format: None,
            netns: None,
            authenticated: p.key.is_some(),
            pattern: misura_measure::Pattern::Periodic,
            period_ns: run.granted.interval_ns,
            count: p.count,
            duration_s: Some(params.duration_ns as f64 / 1e9),
            request_sizes: vec![len],
            response_size: Some(len),
            timeout_ns: (run.final_wait.as_nanos() as i64).max(1),
            threshold_ns: None,
            link_rate_bps: None,
            link_speed_source: "unknown".into(),
            ssid: 0,
            seed: 0,
        },
        body: RttFigures {
            timestamps: RttTimestamps {
                timescale: "CLOCK_REALTIME".into(),
                client_tx: "kernel software".into(),
                client_rx: "kernel software".into(),
                reflector_rx: Some("irtt server: user space after the read".into()),
                reflector_tx: Some("irtt server: user space before the write".into()),
                reflector_sync: None,
                reflector_two_step: false,
                warmup_probes: 0,
                warmup_unstamped: 0,
                client_interface: None,
                client_phc: None,
                hardware_note: None,
            },
            clock_offset: None,
            totals: RttTotals {
                sent: c.sent,
                received: c.answered,
                lost: c.lost,
                duplicates: c.duplicates,
                reordered: c.reordered,
                unknown: c.unmatched,
                malformed_replies: c.malformed,
                auth_failed: c.hmac_failures,
                tx_stamp_missing: c.tx_user_clock,
                rx_stamp_missing: c.rx_user_clock,
                stamped_kernel: c.answered - c.tx_user_clock.min(c.answered),
                ..Default::default()
            },
            per_size: vec![RttSizeResult {
                request_bytes: len,
                response_bytes: len,
                sent: c.sent,
                received: c.answered,
                lost: c.lost,
                latency: latency.clone(),
                ideal: None,
                histogram_network_rtt: Vec::new(),
                histogram_user_rtt: Vec::new(),
                hdr_network_rtt: t.rtt_net.hdr_buckets(),
                hdr_user_rtt: t.user_rtt.hdr_buckets(),
                hdr_kernel_rtt: t.rtt.hdr_buckets(),
            }],
            overall: latency,
            elapsed_s: run.elapsed.as_secs_f64(),
            frames_file: None,
        },
        warnings: Vec::new(),
    })
}
