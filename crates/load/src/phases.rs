//! The three phases of `misura load` and the result built from them.

use crate::error::{LoadError, ProbePlanError};
use crate::flows::{self, FlowOutcome};
use crate::plan::LoadPlan;
use misura_cli::meta::{meta, now_rfc3339};
use misura_report::rtt::RttReport;
use misura_report::under_load::*;
use misura_report::{LoopTuning, StopReason};
use misura_rtt::plan::{Pace, PlanInput, RttPlan, Span};
use misura_rtt::{self as rtt, Peer, RttRequest};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the loaded phase's probes run before the load starts (their
/// warm-up, on the idle path).
const LOAD_LEAD_NS: i64 = 150_000_000;
/// How long after the load starts the loaded phase's `--rr` transactions
/// start (at most a quarter of the phase).
const RR_SETTLE_NS: i64 = 1_000_000_000;
/// The probes' own intervals: the result's latency series.
const PROBES_INTERVAL: Span = Span::from_millis(500);

/// The probes of one phase: `misura rtt`'s defaults, with the phase's
/// set in code and `timeout` for each probe; the key file read (not for an
/// irtt server, whose client takes none) and the plan checked, a refusal
/// typed (the binary words it with load's flags).
pub(crate) fn rtt_request(
    a: &LoadPlan,
    ns: i64,
    offset_ns: Option<f64>,
    timeout: Span,
) -> Result<RttRequest, LoadError> {
    let reflector = a.reflector.clone().unwrap_or_else(|| host_only(&a.host));
    // irtt://HOST[:PORT]: an irtt server answers the probes.
    let irtt = reflector.strip_prefix("irtt://").map(str::to_string);
    let plan = PlanInput {
        key: match irtt {
            Some(_) => None,
            None => misura_cli::keys::read_key(&a.key_file)?,
        },
        pace: Pace::Period(a.period.span()),
        timeout,
        duration: Some(Span::from_ns((ns / 1_000_000).max(1) * 1_000_000)),
        interval: Some(PROBES_INTERVAL),
        ..PlanInput::default()
    };
    if irtt.is_none() {
        RttPlan::new(plan.clone()).map_err(|error| ProbePlanError {
            period: a.period.clone(),
            error,
        })?;
    }
    Ok(RttRequest {
        peer: irtt.as_ref().map(|_| Peer::Irtt),
        target: Some(irtt.unwrap_or(reflector)),
        plan,
        quiet: true,
        cpu: a.cpu,
        clock_offset_ns: offset_ns,
        ..RttRequest::default()
    })
}

/// HOST of HOST[:PORT] (the reflector listens on the server's host).
pub(crate) fn host_only(s: &str) -> String {
    if let Some(rest) = s.strip_prefix('[') {
        if let Some(i) = rest.find(']') {
            return rest[..i].to_string();
        }
    }
    match s.matches(':').count() {
        1 => s.split(':').next().unwrap_or(s).to_string(),
        _ => s.to_string(),
    }
}

/// One phase's probes: the rtt result and when they ran (s from `t0`).
struct Probed {
    name: &'static str,
    report: RttReport,
    /// The phase's request/response transactions (`--rr`).
    rr: Option<misura_report::under_load::RrPhase>,
    series: Vec<rtt::IntervalPoint>,
    start_s: f64,
    duration_s: f64,
}

fn probe(
    probe: crate::Probe,
    name: &'static str,
    a: &LoadPlan,
    ns: i64,
    offset_ns: Option<f64>,
    t0: Instant,
    stop: &Arc<AtomicUsize>,
) -> Result<Probed, LoadError> {
    let args = rtt_request(a, ns, offset_ns, a.timeout.span())?;
    let start = t0.elapsed().as_secs_f64();
    let rr = crate::rr::start(a, Span::ZERO, ns, stop);
    let m = probe(&args, stop);
    let rr = crate::rr::join(rr);
    let m = m.map_err(LoadError::Probe)?;
    Ok(Probed {
        name,
        report: m.report,
        rr,
        series: m.series,
        start_s: start,
        duration_s: ns as f64 / 1e9,
    })
}

/// Run idle, loaded and idle phases; the result and, if the load failed,
/// why.
pub fn measure(
    a: &LoadPlan,
    probe_with: crate::Probe,
    stop: &Arc<AtomicUsize>,
    line: &crate::progress::LoadProgress,
) -> Result<(UnderLoadReport, Option<String>), LoadError> {
    let planned = flows::plan(a)?;
    let started_at = now_rfc3339();
    let t0 = Instant::now();
    let t0_realtime = misura_sys::clock::realtime_ns();
    let mut probed = vec![probe(probe_with, "idle", a, a.idle.ns, None, t0, stop)?];
    // The idle phase's offset serves every later phase's one-way delays:
    // under load the minimum-RTT probes are no longer symmetric.
    let offset = probed[0].report.clock_offset.as_ref().map(|o| o.offset_ns);
    let mut outcomes: Vec<FlowOutcome> = Vec::new();
    let mut load_start_s = 0.0;
    if stop.load(Ordering::Relaxed) == 0 {
        line.phase("loaded");
        // The loaded phase's probes start first, so their warm-up (eight
        // probes, one at a time) runs on the idle path; the load follows a
        // moment later and the probes end just before it does.
        let probe_ns = a.duration.ns - LOAD_LEAD_NS - 300_000_000;
        let args = rtt_request(a, probe_ns, offset, a.timeout.span())?;
        let probe_start = t0.elapsed().as_secs_f64();
        let probes = {
            let stop = stop.clone();
            std::thread::spawn(move || probe_with(&args, &stop))
        };
        std::thread::sleep(Duration::from_nanos(LOAD_LEAD_NS as u64));
        load_start_s = t0.elapsed().as_secs_f64();
        let handles: Vec<_> = planned
            .into_iter()
            .map(|f| flows::start(f, a.refusal_words, stop))
            .collect();
        // The transactions are closed loop: on the idle path before the
        // load took hold they would complete by the thousand and outnumber
        // the loaded ones, so they start once the load is established.
        let settle = RR_SETTLE_NS.min(a.duration.ns / 4);
        let rr = crate::rr::start(
            a,
            Span::from_ns(settle),
            probe_ns - LOAD_LEAD_NS - settle,
            stop,
        );
        let m = probes
            .join()
            .map_err(|_| LoadError::Panicked {
                what: "the probing thread",
            })?
            .map_err(LoadError::Probe)?;
        probed.push(Probed {
            name: "loaded",
            report: m.report,
            rr: crate::rr::join(rr),
            series: m.series,
            start_s: probe_start,
            duration_s: a.duration.ns as f64 / 1e9,
        });
        outcomes = handles
            .into_iter()
            .map(|h| {
                h.join().map_err(|_| LoadError::Panicked {
                    what: "a load thread",
                })
            })
            .collect::<Result<_, _>>()?;
    }
    if stop.load(Ordering::Relaxed) == 0 {
        line.phase("idle after");
        probed.push(probe(
            probe_with,
            "idle after",
            a,
            a.idle.ns,
            offset,
            t0,
            stop,
        )?);
    }
    let failed = outcomes
        .iter()
        .filter_map(|o| o.error.clone())
        .collect::<Vec<_>>();
    let mut report = build(a, started_at, &probed, &outcomes, load_start_s, stop);
    report.latency_series = probed
        .iter()
        .flat_map(|p| {
            p.series.iter().map(|i| LatencyPoint {
                t_s: (i.end.as_ns() - t0_realtime) as f64 / 1e9,
                phase: p.name.into(),
                sent: i.sent,
                lost: i.lost,
                user_rtt_ns: i.user_rtt.map(|v| v.as_ns() as f64),
                network_rtt_ns: i.network_rtt.map(|v| v.as_ns() as f64),
                forward_ns: i.forward.map(|v| v.as_ns() as f64),
                backward_ns: i.backward.map(|v| v.as_ns() as f64),
            })
        })
        .collect();
    let failed = (!failed.is_empty()).then(|| failed.join("; "));
    Ok((report, failed))
}

fn build(
    a: &LoadPlan,
    started_at: String,
    probed: &[Probed],
    outcomes: &[FlowOutcome],
    load_start_s: f64,
    stop: &AtomicUsize,
) -> UnderLoadReport {
    let idle = &probed[0].report;
    let idle_offset = idle.clock_offset.as_ref().map(|o| o.offset_ns);
    let phases: Vec<Phase> = probed
        .iter()
        .map(|p| {
            let mut ph = phase(p);
            if p.name == "loaded" {
                ph.flows = outcomes.iter().map(|o| o.throughput.clone()).collect();
                ph.total_bps = ph.flows.iter().map(|f| f.throughput_bps).sum();
            }
            ph
        })
        .collect();
    let loaded = phases.iter().find(|p| p.name == "loaded");
    let ts = &idle.timestamps;
    let mut warnings = idle.warnings.clone();
    for (p, e) in probed
        .iter()
        .filter_map(|p| Some((p.name, p.rr.as_ref()?.error.as_ref()?)))
    {
        warnings.push(misura_report::Warning {
            code: "load.rr-failed".into(),
            text: format!("the {p} phase's request/response transactions: {e}"),
        });
    }
    for o in outcomes {
        if let Some(e) = &o.error {
            warnings.push(misura_report::Warning {
                code: "load.flow-failed".into(),
                text: e.clone(),
            });
        }
    }
    warnings.extend(crate::replies::warnings(&phases));
    // The probes' own traffic against what the path carried under load: a
    // slow bottleneck that the probes themselves help to fill is said.
    let request = idle.per_size.first().map_or(0, |s| s.request_bytes) as f64;
    let probe_bps = (request + 28.0 + 18.0) * 8.0 * 1e9 / a.period.ns.max(1) as f64;
    if let Some(l) = loaded.filter(|l| l.total_bps > 0.0) {
        let share = probe_bps / l.total_bps;
        if share > 0.05 {
            warnings.push(misura_report::Warning {
                code: "load.probes-heavy".into(),
                text: format!(
                    "the probes alone send {:.0} kbit/s each way, {:.0} % of what the path carried under load: they add to the queue they measure; lengthen the probe period",
                    probe_bps / 1e3,
                    share * 100.0
                ),
            });
        }
    }
    if idle_offset.is_none() {
        warnings.push(misura_report::Warning {
            code: "load.no-idle-offset".into(),
            text: "no clock offset from the idle phase: one-way delays are not given".into(),
        });
    }
    let sig = stop.load(Ordering::Relaxed);
    let complete = sig == 0
        && probed.len() == 3
        && probed.iter().all(|p| p.report.complete)
        && outcomes.iter().all(|o| o.throughput.complete);
    UnderLoadReport {
        meta: meta("misura.load", started_at),
        complete,
        stop_reason: if sig != 0 {
            misura_cli::exit::signal_reason(sig)
        } else if complete {
            StopReason::Finished
        } else {
            StopReason::other("a phase or a flow did not complete (see warnings)")
        },
        host: misura_run::host::fingerprint(LoopTuning {
            netns: a.netns.clone(),
            cpu: a.cpu,
            ..Default::default()
        }),
        config: UnderLoadConfig {
            server: a.host.clone(),
            reflector: idle.config.target.clone(),
            up_streams: if a.udp_up.is_some() { 0 } else { a.up },
            down_streams: if a.udp_down.is_some() { 0 } else { a.down },
            udp_up_bps: outcomes
                .iter()
                .find(|o| o.throughput.direction == "up" && o.throughput.kind == "udp")
                .map(|_| rate_of(a.udp_up.as_deref())),
            udp_down_bps: outcomes
                .iter()
                .find(|o| o.throughput.direction == "down" && o.throughput.kind == "udp")
                .map(|_| rate_of(a.udp_down.as_deref())),
            idle_s: a.idle.ns as f64 / 1e9,
            duration_s: a.duration.ns as f64 / 1e9,
            period_ns: a.period.ns,
            request_bytes: idle.per_size.first().map_or(0, |s| s.request_bytes),
            timestamps: format!(
                "client TX {} / RX {}; reflector RX {} / TX {}",
                ts.client_tx,
                ts.client_rx,
                ts.reflector_rx.as_deref().unwrap_or("unknown"),
                ts.reflector_tx.as_deref().unwrap_or("unknown")
            ),
        },
        body: UnderLoadFigures {
            clock_offset: idle.clock_offset.clone(),
            inflation: inflation(phases.first(), loaded),
            responsiveness: Responsiveness {
                rpm_user: loaded.and_then(|l| l.user_rtt.median_ns).map(|m| 60e9 / m),
                rpm_network: loaded
                    .and_then(|l| l.network_rtt.as_ref()?.median_ns)
                    .map(|m| 60e9 / m),
                method: "60 s over the loaded phase's median RTT of misura's STAMP probes (not the HTTP procedure of draft-ietf-ippm-responsiveness)".into(),
            },
            throughput_series: outcomes
                .iter()
                .flat_map(|o| o.series.iter())
                .map(|p| ThroughputPoint {
                    t_s: load_start_s + p.t_s,
                    ..p.clone()
                })
                .collect(),
            latency_series: Vec::new(),
            phases,
        },
        warnings,
    }
}

fn rate_of(text: Option<&str>) -> u64 {
    text.and_then(|t| t.parse::<misura_cli::units::LinkRate>().ok())
        .map_or(0, |r| r.bps)
}

/// A phase from its probes (their one-way delays already use the idle
/// phase's offset).
fn phase(p: &Probed) -> Phase {
    let r = &p.report;
    let o = &r.overall;
    let of = |s: Option<&misura_report::SummarySnapshot>| s.map(|s| Percentiles::of(s, 0.0));
    Phase {
        name: p.name.into(),
        start_s: p.start_s,
        duration_s: p.duration_s,
        sent: r.totals.sent,
        received: r.totals.received,
        lost: r.totals.lost,
        duplicates: r.totals.duplicates,
        unknown: r.totals.unknown,
        malformed: r.totals.malformed_replies + r.totals.auth_failed,
        network_rtt: of(o.network_rtt.as_ref()),
        user_rtt: Percentiles::of(&o.user_rtt, 0.0),
        kernel_rtt: of(o.kernel_rtt.as_ref()),
        hdr_network_rtt: misura_report::model::summary::pool_buckets(
            r.per_size.iter().flat_map(|s| &s.hdr_network_rtt),
        ),
        hdr_user_rtt: misura_report::model::summary::pool_buckets(
            r.per_size.iter().flat_map(|s| &s.hdr_user_rtt),
        ),
        forward: of(o.forward.as_ref()),
        backward: of(o.backward.as_ref()),
        jitter_ns: o.jitter_rfc3550_ns,
        flows: Vec::new(),
        total_bps: 0.0,
        rr: p.rr.clone(),
    }
}

fn inflation(idle: Option<&Phase>, loaded: Option<&Phase>) -> Inflation {
    let (Some(i), Some(l)) = (idle, loaded) else {
        return Inflation::default();
    };
    let diff = |a: Option<&Percentiles>, b: Option<&Percentiles>| -> (Option<f64>, Option<f64>) {
        let (Some(a), Some(b)) = (a, b) else {
            return (None, None);
        };
        let d = b.median_ns.zip(a.median_ns).map(|(x, y)| x - y);
        let u = b
            .median_se_ns()
            .zip(a.median_se_ns())
            .map(|(x, y)| (x * x + y * y).sqrt());
        (d, u)
    };
    let (net, net_u) = diff(i.network_rtt.as_ref(), l.network_rtt.as_ref());
    let (user, user_u) = diff(Some(&i.user_rtt), Some(&l.user_rtt));
    Inflation {
        network_rtt_ns: net,
        network_rtt_uncertainty_ns: net_u,
        user_rtt_ns: user,
        user_rtt_uncertainty_ns: user_u,
        forward_ns: diff(i.forward.as_ref(), l.forward.as_ref()).0,
        backward_ns: diff(i.backward.as_ref(), l.backward.as_ref()).0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(reflector: Option<&str>) -> LoadPlan {
        let d = |s: &str| s.parse().unwrap();
        LoadPlan {
            host: "198.18.0.2:5999".into(),
            reflector: reflector.map(String::from),
            server: None,
            up: 1,
            down: 1,
            udp_up: None,
            udp_down: None,
            duration: d("10s"),
            idle: d("5s"),
            period: d("20ms"),
            timeout: d("2s"),
            rr: false,
            cpu: Some(1),
            cpu_load: Default::default(),
            key_file: Some("/k".into()),
            quiet: false,
            netns: None,
            flows: vec![],
            transactions: None,
            refusal_words: |r| r.to_string(),
        }
    }

    /// The probes' request is what the command line that `misura load`
    /// once wrote for them gave (`--duration`, `--period`, `--timeout`,
    /// `--interval 500ms`, `-q`, `--cpu`, `--key-file`, `--clock-offset-ns`,
    /// `--peer irtt`), over rtt's defaults.
    #[test]
    fn the_probes_request_is_rtts_with_the_phases() {
        let dir = std::env::temp_dir().join(format!("misura-load-key-{}", std::process::id()));
        std::fs::write(&dir, "00112233445566778899aabbccddeeff").unwrap();
        let mut p = plan(None);
        p.key_file = Some(dir.clone());
        let got = rtt_request(&p, 2_500_000_000, Some(-12.5), Span::from_secs(2)).unwrap();
        let want = RttRequest {
            target: Some("198.18.0.2".into()),
            plan: PlanInput {
                key: misura_cli::keys::read_key(&Some(dir.clone())).unwrap(),
                pace: Pace::Period(Span::from_millis(20)),
                timeout: Span::from_secs(2),
                duration: Some(Span::from_millis(2500)),
                interval: Some(Span::from_millis(500)),
                ..PlanInput::default()
            },
            quiet: true,
            cpu: Some(1),
            clock_offset_ns: Some(-12.5),
            ..RttRequest::default()
        };
        assert_eq!(format!("{got:?}"), format!("{want:?}"));
        let got = rtt_request(
            &plan(Some("irtt://[::1]:2112")),
            1,
            None,
            Span::from_secs(2),
        )
        .unwrap();
        assert_eq!(
            (got.target.as_deref(), got.peer, got.plan.key.is_none()),
            (Some("[::1]:2112"), Some(Peer::Irtt), true)
        );
        assert_eq!(got.plan.duration, Some(Span::from_millis(1)));
        let _ = std::fs::remove_file(dir);
    }
}
