//! The result of a `misura rtt` run, from the session's counters and the
//! summaries of its probes.

use super::collect::Collector;
use super::plan::RttPlan;
use super::request::RttRequest;
use super::transport::Transport;
use misura_cli::meta::meta;
use misura_cli::warnings::Warn;
use misura_measure::rtt::{error_percent, seed_ideal_rtt_ns};
use misura_measure::stamp_sender::{SessionSender, WARMUP_PROBES};
use misura_measure::time::Span;
use misura_measure::LinkModel;
use misura_report::model::summary::buckets;
use misura_report::rtt::*;
use misura_report::LoopTuning;
use misura_report::SummarySnapshot;
use misura_report::Warning;
use misura_run::stamping::FrameFormat;
use misura_run::stamping::Hardware;
use misura_sys::clock::realtime;
use misura_sys::packet::TimestampingGranted;
use misura_wire::stamp;
use std::collections::BTreeMap;

/// What the run found out besides the probes.
pub struct RunFacts<'a> {
    pub a: &'a RttRequest,
    pub plan: &'a RttPlan,
    pub tr: &'a Transport,
    pub granted: TimestampingGranted,
    pub hw: &'a Hardware,
    pub sender: &'a SessionSender,
    pub collect: &'a Collector,
    pub started_at: String,
    pub stop_reason: misura_report::StopReason,
    pub elapsed_s: f64,
    pub icmp: u64,
    pub ssid: u16,
    pub link_bps: Option<u64>,
    pub link_source: String,
    pub tuning: LoopTuning,
}

pub fn report(f: RunFacts<'_>) -> RttReport {
    let (plan, sender, c) = (f.plan, f.sender, f.collect);
    let config = config(&f);
    let given = c.fixed_offset_ns.map(|o| OffsetReport {
        method: "given, not estimated".into(),
        offset_ns: o,
        uncertainty_ns: 0.0,
        skew_ppm: None,
        windows: 0,
    });
    let offset = given.or_else(|| c.tracker.estimate_at(realtime()).map(|e| OffsetReport {
        method: "estimated from minimum-RTT probes (the clocks are not known to be synchronised): one-way delays assume the quietest probes were symmetric".into(),
        offset_ns: e.offset_ns,
        uncertainty_ns: e.uncertainty_ns,
        skew_ppm: e.skew_ppm,
        windows: e.windows,
    }));
    let host = misura_run::host::fingerprint(f.tuning);
    let mut warnings = plan.warnings.clone();
    warnings.extend(misura_run::host::warnings_for(&host, false));
    warnings.extend(session_warnings(sender, c, f.icmp));
    let n = sender.counters();
    if n.hw_tx_stamp_missing + n.hw_rx_stamp_missing > 0 {
        warnings.push(
            Warn::HardwareStampsMissing {
                interface: f.hw.interface.clone().unwrap_or_default(),
                tx: n.hw_tx_stamp_missing,
                rx: n.hw_rx_stamp_missing,
                of: n.received,
            }
            .into(),
        );
    }
    let ti = sender.timestamp_info();
    let source = |hardware: bool, kernel: bool| {
        match (hardware, kernel) {
            (true, true) => "NIC hardware and kernel software",
            (true, false) => "NIC hardware",
            (false, true) => "kernel software",
            (false, false) => "user clock",
        }
        .to_string()
    };
    let g = f.granted;
    let hw_used = g.hardware_tx || g.hardware_rx;
    RttReport {
        meta: meta("misura.rtt", f.started_at),
        complete: f.stop_reason.is_finished(),
        stop_reason: f.stop_reason,
        host,
        config,
        body: RttFigures {
            timestamps: RttTimestamps {
                timescale: if hw_used {
                    "CLOCK_REALTIME, integer ns (client and reflector each on their own clock); the client's NIC stamps on its PTP hardware clock (client_phc)"
                } else {
                    "CLOCK_REALTIME, integer ns (client and reflector each on their own clock)"
                }
                .into(),
                client_tx: source(g.hardware_tx, g.software_tx),
                client_rx: source(g.hardware_rx, g.software_rx),
                // What the measured replies said, each its own (a NIC may
                // stamp some requests and not others): the warm-up's
                // Timestamp Information only when none did. All three named
                // or none, as from one TLV: a reflector that sends none is
                // not named by its follow-ups alone.
                reflector_rx: ti.map(|t| {
                    methods_named(&c.reflector_rx).unwrap_or_else(|| method_name(t.timestamp_in))
                }),
                reflector_tx: ti.map(|t| {
                    methods_named(&c.reflector_tx).unwrap_or_else(|| method_name(t.timestamp_out))
                }),
                reflector_rx_methods: by_name(&c.reflector_rx),
                reflector_tx_methods: by_name(&c.reflector_tx),
                reflector_sync: ti.map(|t| sync_name(t.sync_src_out)),
                reflector_two_step: n.follow_ups > 0,
                warmup_probes: u64::from(WARMUP_PROBES),
                warmup_unstamped: sender.warm_up().unstamped,
                client_interface: f.hw.interface.clone(),
                client_phc: f
                    .hw
                    .phc_index
                    .filter(|_| hw_used)
                    .map(|i| format!("/dev/ptp{i}")),
                hardware_note: f.hw.note.clone(),
                // A STAMP reply carries t2 and t3, on the reflector's wall clock, always.
                reflector_stamps: Some(ReflectorStamps {
                    receive: n.received,
                    send: n.received,
                    midpoint: 0,
                    wall_clock: n.received,
                }),
            },
            clock_offset: offset,
            totals: RttTotals {
                sent: n.sent,
                received: n.received,
                lost: n.lost,
                duplicates: n.duplicates,
                late: n.late,
                reordered: n.reordered,
                unknown: n.unknown,
                malformed_replies: n.malformed,
                auth_failed: n.auth_failed,
                follow_ups: n.follow_ups,
                tx_stamp_missing: n.tx_stamp_missing,
                rx_stamp_missing: n.rx_stamp_missing,
                icmp_errors: f.icmp,
                hw_tx_stamp_missing: n.hw_tx_stamp_missing,
                hw_rx_stamp_missing: n.hw_rx_stamp_missing,
                stamped_hardware: c.stamped[0],
                stamped_kernel: c.stamped[1],
                stamped_user: c.stamped[2],
            },
            overall: c.overall.latencies(),
            per_size: per_size(plan, c, f.link_bps, f.tr.payload_overhead()),
            elapsed_s: f.elapsed_s,
            frames_file: f.a.frames.as_ref().map(|p| p.display().to_string()),
            irtt: None,
        },
        warnings,
    }
}

fn config(f: &RunFacts<'_>) -> RttConfig {
    let (a, plan, tr) = (f.a, f.plan, f.tr);
    RttConfig {
        transport: tr.name().into(),
        target: tr.target(),
        local: tr.local(),
        interface: match tr {
            Transport::L2(l) => Some(l.interface.clone()),
            Transport::Udp(_) => None,
        },
        frame_format: match tr {
            Transport::L2(l) => Some(
                if l.ptp {
                    FrameFormat::Ptp
                } else {
                    FrameFormat::Misura
                }
                .name()
                .into(),
            ),
            Transport::Udp(_) => None,
        },
        netns: a.netns.clone(),
        authenticated: plan.key.is_some(),
        pattern: plan.pattern.into(),
        period_ns: plan.period.as_ns(),
        count: plan.count,
        duration_s: plan.duration.map(Span::as_secs_f64),
        request_sizes: plan.sizes.clone(),
        response_size: a.plan.response,
        timeout_ns: plan.timeout.as_ns(),
        threshold_ns: plan.threshold.map(Span::as_ns),
        link_rate_bps: f.link_bps,
        link_speed_source: f.link_source.clone(),
        ssid: f.ssid,
        seed: a.plan.seed,
    }
}

/// Per request size, with the ideal RTT when the link rate is known.
fn per_size(
    plan: &RttPlan,
    c: &Collector,
    link_bps: Option<u64>,
    ip_overhead: usize,
) -> Vec<RttSizeResult> {
    let link = link_bps.map(|r| LinkModel::new(r, false));
    plan.sizes
        .iter()
        .zip(&c.per_size)
        .map(|(&s, g)| {
            let lat = g.latencies();
            let ideal = link.map(|l| {
                let physical = 2.0 * l.wire_time_ns(s + ip_overhead);
                let err = |x: Option<&SummarySnapshot>| {
                    x.and_then(|s| s.median_ns)
                        .map(|m| error_percent(m as f64, physical))
                };
                IdealRtt {
                    physical_ns: physical,
                    seed_convention_ns: seed_ideal_rtt_ns(s, l.rate_bps),
                    user_error_percent: err(Some(&lat.user_rtt)),
                    kernel_error_percent: err(lat.kernel_rtt.as_ref()),
                    network_error_percent: err(lat.network_rtt.as_ref()),
                }
            });
            RttSizeResult {
                request_bytes: s,
                response_bytes: if g.response_bytes > 0 {
                    g.response_bytes
                } else {
                    s
                },
                sent: g.sent,
                received: g.sent - g.lost,
                lost: g.lost,
                histogram_network_rtt: buckets(g.network.log_histogram(10)),
                histogram_user_rtt: buckets(g.user.log_histogram(10)),
                hdr_network_rtt: buckets(g.network.hdr_buckets()),
                hdr_user_rtt: buckets(g.user.hdr_buckets()),
                hdr_kernel_rtt: buckets(g.kernel.hdr_buckets()),
                latency: lat,
                ideal,
            }
        })
        .collect()
}

/// What the session and the socket reported that limits the result.
fn session_warnings(sender: &SessionSender, c: &Collector, icmp: u64) -> Vec<Warning> {
    let mut warnings = Vec::new();
    if !sender.expects_follow_up() {
        let w = sender.warm_up();
        let reflector_lacks_it = w.follow_up_supported == Some(false)
            || (w.follow_up_supported == Some(true) && !w.follow_up_filled);
        warnings.push(if reflector_lacks_it {
            Warn::ReflectorWithoutFollowUp
        } else {
            Warn::RequestsWithoutFollowUp
        });
    }
    if let Some(e) = &c.frames_error {
        warnings.push(Warn::LogWriteFailed {
            what: "per-probe log",
            error: e.to_string(),
        });
    }
    if icmp > 0 {
        warnings.push(Warn::IcmpErrors { count: icmp });
    }
    warnings.into_iter().map(Warning::from).collect()
}

/// Each timestamp method the replies stated, the most frequent first
/// (ties in code order), joined by " and "; `None` when none stated one.
fn methods_named(counts: &BTreeMap<u8, u64>) -> Option<String> {
    let mut seen: Vec<(u8, u64)> = counts.iter().map(|(&m, &n)| (m, n)).collect();
    seen.sort_by_key(|&(m, n)| (std::cmp::Reverse(n), m));
    let names: Vec<String> = seen.into_iter().map(|(m, _)| method_name(m)).collect();
    (!names.is_empty()).then(|| names.join(" and "))
}

fn by_name(counts: &BTreeMap<u8, u64>) -> BTreeMap<String, u64> {
    counts.iter().map(|(&m, &n)| (method_name(m), n)).collect()
}

fn method_name(m: u8) -> String {
    match m {
        stamp::timestamp_method::HW_ASSIST => "NIC hardware".into(),
        stamp::timestamp_method::SW_LOCAL => "software".into(),
        stamp::timestamp_method::CONTROL_PLANE => "control plane".into(),
        other => format!("method {other}"),
    }
}

fn sync_name(s: u8) -> String {
    match s {
        stamp::sync_source::NTP => "NTP-synchronised".into(),
        stamp::sync_source::PTP => "PTP-synchronised".into(),
        stamp::sync_source::LOCAL_FREE_RUNNING => "free-running".into(),
        other => format!("sync source {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stamp::timestamp_method::{HW_ASSIST, SW_LOCAL};

    /// A reflector whose NIC stamped some requests and not others is named
    /// with both methods, the commoner first, and counted per method.
    #[test]
    fn the_reflectors_methods_are_named_as_its_replies_stated_them() {
        let mixed = BTreeMap::from([(HW_ASSIST, 44), (SW_LOCAL, 156)]);
        assert_eq!(
            methods_named(&mixed).as_deref(),
            Some("software and NIC hardware")
        );
        assert_eq!(
            by_name(&mixed),
            BTreeMap::from([("NIC hardware".into(), 44), ("software".into(), 156)])
        );
        let nic = BTreeMap::from([(HW_ASSIST, 200)]);
        assert_eq!(methods_named(&nic).as_deref(), Some("NIC hardware"));
        assert_eq!(methods_named(&BTreeMap::new()), None);
    }
}
