//! The OpenMetrics families of every scrape, built from the targets'
//! records: one function per family or group of families, in exposition
//! order.

use super::{AgentCounters, ErrorReason, TargetMetrics, ONEWAY_FIGURES, RTT_FIGURES};
use crate::archive::SinkCounters;
use misura_report::metrics::{Family, MetricType, Value};
use std::collections::BTreeMap;

type Targets = BTreeMap<String, TargetMetrics>;

/// All families, targets in name order.
pub fn families(targets: &Targets, agent: &AgentCounters) -> Vec<Family> {
    let mut out = vec![info_family(targets)];
    out.extend(latency_families(targets));
    out.extend(probe_counter_families(targets));
    out.push(error_family(targets));
    let mut skipped = Family::new(
        "misura_target_skipped_slots",
        MetricType::Counter,
        None,
        "Slots a target missed: due, but kept from starting for a whole interval by an exclusive (throughput) run, by `parallel` runs under way, or by the agent itself.",
    );
    for (target, t) in targets {
        skipped.push(&[("target", target)], Value::Counter(t.skipped as f64));
    }
    out.push(skipped);
    out.push(delay_variation_family(targets));
    out.push(last_value_family(
        targets,
        "misura_last_success_timestamp_seconds",
        "Unix time at which the last run with at least one reply ended.",
        |t| t.last_success_s,
    ));
    out.push(last_value_family(
        targets,
        "misura_last_run_duration_seconds",
        "Measuring time of the last run, as the run reported it.",
        |t| t.last_duration_s,
    ));
    out.push(reload_family(agent));
    out.extend(agent_families(agent));
    out
}

fn info_family(targets: &Targets) -> Family {
    let mut info = Family::new("misura_target_info", MetricType::Gauge, None, "One series per configured target; kind, address and the timestamp source the last run obtained.");
    for (name, t) in targets {
        info.push(
            &[
                ("target", name),
                ("kind", t.kind),
                ("address", &t.address),
                ("timestamp_source", t.timestamp_source),
            ],
            Value::Gauge(1.0),
        );
    }
    info
}

/// One histogram family per kind and figure, with the targets of that kind.
fn latency_families(targets: &Targets) -> Vec<Family> {
    let mut out = Vec::new();
    for (kind, figures) in [("rtt", &RTT_FIGURES[..]), ("oneway", &ONEWAY_FIGURES[..])] {
        for (i, (figure, help)) in figures.iter().enumerate() {
            let mut f = Family::new(
                &format!("misura_{kind}_{figure}_seconds"),
                MetricType::Histogram,
                Some("seconds"),
                help,
            );
            for (name, t) in targets.iter().filter(|(_, t)| t.kind == kind) {
                f.push(&[("target", name)], t.hists[i].value());
            }
            out.push(f);
        }
    }
    out
}

fn probe_counter_families(targets: &Targets) -> Vec<Family> {
    type Get = fn(&TargetMetrics) -> u64;
    let counters: [(&str, &str, Get); 6] = [
        ("misura_probes_sent", "Probes sent.", |t| t.sent),
        (
            "misura_probes_received",
            "Probes received (first copies).",
            |t| t.received,
        ),
        (
            "misura_probes_lost",
            "Probes not received within the timeout.",
            |t| t.lost,
        ),
        (
            "misura_probes_duplicates",
            "Duplicate copies received.",
            |t| t.duplicates,
        ),
        (
            "misura_probes_reordered",
            "Probes that arrived after one with a higher sequence number.",
            |t| t.reordered,
        ),
        ("misura_runs", "Measurements that produced a result.", |t| {
            t.runs
        }),
    ];
    counters
        .into_iter()
        .map(|(name, help, get)| {
            let mut f = Family::new(name, MetricType::Counter, None, help);
            for (target, t) in targets {
                f.push(&[("target", target)], Value::Counter(get(t) as f64));
            }
            f
        })
        .collect()
}

fn error_family(targets: &Targets) -> Family {
    let mut f = Family::new(
        "misura_target_errors",
        MetricType::Counter,
        None,
        "Runs that failed, by reason: spawn, timeout, exit_status, bad_output, no_replies.",
    );
    for (target, t) in targets {
        for (r, n) in ErrorReason::ALL.iter().zip(t.errors) {
            f.push(
                &[("target", target), ("reason", r.label())],
                Value::Counter(n as f64),
            );
        }
    }
    f
}

fn delay_variation_family(targets: &Targets) -> Family {
    let mut f = Family::new(
        "misura_delay_variation_seconds",
        MetricType::Gauge,
        Some("seconds"),
        "Delay variation of the last successful run: rfc3550 = interarrival jitter of the network RTT (rtt targets); rfc5481_p99 = p99 minus minimum of the network RTT (rtt) or kernel/user one-way latency (oneway).",
    );
    for (target, t) in targets {
        if let Some(j) = t.jitter_s {
            f.push(
                &[("target", target), ("method", "rfc3550")],
                Value::Gauge(j),
            );
        }
        if let Some(p) = t.pdv_s {
            f.push(
                &[("target", target), ("method", "rfc5481_p99")],
                Value::Gauge(p),
            );
        }
    }
    f
}

/// A gauge in seconds of the last run, for the targets that have one.
fn last_value_family(
    targets: &Targets,
    name: &str,
    help: &str,
    get: fn(&TargetMetrics) -> Option<f64>,
) -> Family {
    let mut f = Family::new(name, MetricType::Gauge, Some("seconds"), help);
    for (target, t) in targets {
        if let Some(s) = get(t) {
            f.push(&[("target", target)], Value::Gauge(s));
        }
    }
    f
}

fn reload_family(agent: &AgentCounters) -> Family {
    let mut f = Family::new(
        "misura_agent_config_reloads",
        MetricType::Counter,
        None,
        "Configuration reloads (SIGHUP), by result.",
    );
    f.push(&[("result", "ok")], Value::Counter(agent.reloads_ok as f64));
    f.push(
        &[("result", "error")],
        Value::Counter(agent.reloads_failed as f64),
    );
    f
}

fn counter(name: &str, help: &str, labels: &[(&str, &str)], v: u64) -> Family {
    let mut f = Family::new(name, MetricType::Counter, None, help);
    f.push(labels, Value::Counter(v as f64));
    f
}

/// The store's and the fleet template's counters.
fn agent_families(agent: &AgentCounters) -> Vec<Family> {
    let mut t = Family::new(
        "misura_agent_template_fetches",
        MetricType::Counter,
        None,
        "Fleet template fetches (--config-url), by result: ok (a new template applied), not_modified (ETag matched), error (fetch or parse failed: the running configuration was kept).",
    );
    for (r, v) in [
        ("ok", agent.template_ok),
        ("not_modified", agent.template_not_modified),
        ("error", agent.template_failed),
    ] {
        t.push(&[("result", r)], Value::Counter(v as f64));
    }
    vec![
        counter(
            "misura_agent_store_errors",
            "Results the local store could not take at first (each is held and retried; new measurements wait meanwhile).",
            &[],
            agent.store_errors,
        ),
        t,
    ]
}

/// Per sink: results delivered, dropped (past max_age/max_waiting), failed
/// attempts, and what waits.
pub fn sink_families(sinks: &BTreeMap<String, SinkCounters>) -> Vec<Family> {
    type Get = fn(&SinkCounters) -> f64;
    let all: [(&str, MetricType, &str, Get); 5] = [
        ("misura_sink_sent", MetricType::Counter, "Results the sink acknowledged.", |c| c.sent as f64),
        ("misura_sink_dropped", MetricType::Counter, "Results skipped for the sink because more, or older, were waiting than its max_waiting/max_age allow (still in the local store).", |c| c.dropped as f64),
        ("misura_sink_errors", MetricType::Counter, "Delivery attempts that failed (each retried with back-off).", |c| c.errors as f64),
        ("misura_sink_waiting", MetricType::Gauge, "Results waiting for the sink.", |c| c.waiting as f64),
        ("misura_sink_oldest_waiting_timestamp_seconds", MetricType::Gauge, "When the oldest waiting result was kept (Unix time; 0 when none waits).", |c| c.oldest_waiting_ns.unwrap_or(0) as f64 / 1e9),
    ];
    all.iter()
        .map(|(name, kind, help, get)| {
            let mut f = Family::new(name, *kind, None, help);
            for (sink, c) in sinks {
                let v = get(c);
                let v = if *kind == MetricType::Counter {
                    Value::Counter(v)
                } else {
                    Value::Gauge(v)
                };
                f.push(&[("sink", sink), ("kind", c.kind)], v);
            }
            f
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_has_fixed_series() {
        let mut m = BTreeMap::new();
        m.insert(
            "a".to_string(),
            TargetMetrics::new("rtt", "198.18.0.2:8620".into()),
        );
        m.get_mut("a").unwrap().error(ErrorReason::Timeout);
        let mut v = Vec::new();
        misura_report::metrics::write_openmetrics(&families(&m, &AgentCounters::default()), &mut v)
            .unwrap();
        let text = String::from_utf8(v).unwrap();
        assert!(
            text.contains("misura_target_errors_total{target=\"a\",reason=\"timeout\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("misura_rtt_network_seconds_bucket{target=\"a\",le=\"1e-6\"} 0\n"),
            "{text}"
        );
        assert!(
            text.contains("misura_rtt_network_seconds_count{target=\"a\"} 0\n"),
            "{text}"
        );
        assert!(!text.contains("misura_oneway_user_seconds_count"), "{text}");
        assert!(text.ends_with("# EOF\n"));
    }
}
