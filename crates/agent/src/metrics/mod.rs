//! The agent's metric state: one fixed-size record per target, fed by each
//! run's result and turned into OpenMetrics families on every scrape.
//!
//! Memory is bounded by construction: a target has a fixed number of
//! counters and histogram slots, and every label value comes from the
//! configuration or from a small fixed set, so series never multiply over
//! days of running.

pub mod families;

use misura_report::metrics::Value;
use misura_report::rtt::RttReport;
use misura_report::OnewayReport;
use misura_report::{Bucket, SummarySnapshot};

/// Histogram edges: 10^(k/5) ns rounded, 1 µs … 1 s (five per decade; one-way
/// latencies on a short path sit well below 10 µs).
/// They are every other edge of the 10-per-decade log histogram the
/// measurement commands report (`Summary::log_histogram(10)`), so a run's
/// buckets fall into these without splitting.
pub fn bucket_edges_ns() -> &'static [i64] {
    static EDGES: std::sync::OnceLock<Vec<i64>> = std::sync::OnceLock::new();
    EDGES.get_or_init(|| {
        (15..=45)
            .map(|k| 10f64.powf(f64::from(k) / 5.0).round() as i64)
            .collect()
    })
}

/// Why a run of a target failed; the label values of the error counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorReason {
    /// The measuring process could not be started.
    Spawn,
    /// It did not finish within its time limit and was killed.
    Timeout,
    /// It exited with a failure status.
    ExitStatus,
    /// Its output was not a result of the expected kind.
    BadOutput,
    /// It ran, but nothing came back: every probe was lost.
    NoReplies,
}

impl ErrorReason {
    pub const ALL: [ErrorReason; 5] = [
        ErrorReason::Spawn,
        ErrorReason::Timeout,
        ErrorReason::ExitStatus,
        ErrorReason::BadOutput,
        ErrorReason::NoReplies,
    ];

    pub fn label(self) -> &'static str {
        match self {
            ErrorReason::Spawn => "spawn",
            ErrorReason::Timeout => "timeout",
            ErrorReason::ExitStatus => "exit_status",
            ErrorReason::BadOutput => "bad_output",
            ErrorReason::NoReplies => "no_replies",
        }
    }
}

/// A cumulative latency histogram over the fixed edges.
#[derive(Clone, Debug, Default)]
pub struct Hist {
    /// Non-cumulative counts per edge, plus one slot past the last edge.
    counts: Vec<u64>,
    count: u64,
    sum_s: f64,
}

impl Hist {
    fn slots(&mut self) -> &mut Vec<u64> {
        if self.counts.is_empty() {
            self.counts = vec![0; bucket_edges_ns().len() + 1];
        }
        &mut self.counts
    }

    /// Add one run's log-histogram buckets (`[lower, upper)`): each goes to
    /// the first edge not below its upper bound, which is exact for the
    /// 10-per-decade buckets the commands write. `mean_ns` gives the sum.
    pub fn add_buckets(&mut self, buckets: &[Bucket], mean_ns: Option<f64>) {
        let edges = bucket_edges_ns();
        let mut n = 0;
        for b in buckets {
            let i = edges.partition_point(|&e| e < b.upper_ns);
            self.slots()[i] += b.count;
            n += b.count;
        }
        self.count += n;
        self.sum_s += mean_ns.unwrap_or(0.0) * n as f64 / 1e9;
    }

    /// Add a run known only by its summary (no buckets): the cumulative
    /// count at each edge is the nearest-rank lower bound from min, median,
    /// p90, p99, p99.9 and max (at least ⌈q·n⌉ values lie at or below the
    /// q-quantile). Exact at both ends, coarse in between.
    pub fn add_quantiles(&mut self, s: &SummarySnapshot) {
        let n = s.count;
        if n == 0 {
            return;
        }
        let points: Vec<(i64, u64)> = [
            (s.min_ns, 1.0 / n as f64),
            (s.median_ns, 0.5),
            (s.p90_ns, 0.9),
            (s.p99_ns, 0.99),
            (s.p999_ns, 0.999),
            (s.max_ns, 1.0),
        ]
        .into_iter()
        .filter_map(|(v, q)| v.map(|v| (v, ((q * n as f64).ceil() as u64).min(n))))
        .collect();
        let edges = bucket_edges_ns();
        let mut prev = 0;
        for (i, &e) in edges.iter().enumerate() {
            let cum = points
                .iter()
                .filter(|(v, _)| *v <= e)
                .map(|(_, c)| *c)
                .max()
                .unwrap_or(0)
                .max(prev);
            self.slots()[i] += cum - prev;
            prev = cum;
        }
        let last = edges.len();
        self.slots()[last] += n - prev;
        self.count += n;
        self.sum_s += s.mean_ns.unwrap_or(0.0) * n as f64 / 1e9;
    }

    fn value(&self) -> Value {
        let edges = bucket_edges_ns();
        let mut cum = 0;
        let buckets = edges
            .iter()
            .enumerate()
            .map(|(i, &e)| {
                cum += self.counts.get(i).copied().unwrap_or(0);
                (e as f64 / 1e9, cum)
            })
            .collect();
        Value::Histogram {
            buckets,
            count: self.count,
            sum: self.sum_s,
        }
    }
}

/// The latency figures of each kind, in exposition order: (figure, help).
const RTT_FIGURES: [(&str, &str); 3] = [
    ("user", "User-level round-trip time (what ping sees: RX2 − TX1), from each run's 10-per-decade histogram."),
    ("kernel", "Kernel-stamped round-trip time; runs report no histogram for it, so the buckets are nearest-rank lower bounds from min/median/p90/p99/p99.9/max."),
    ("network", "Network round-trip time (kernel RTT minus the reflector's turnaround), from each run's 10-per-decade histogram."),
];
const ONEWAY_FIGURES: [(&str, &str); 2] = [
    (
        "user",
        "One-way mean user latency Mul, from each run's 10-per-decade histogram.",
    ),
    (
        "kernel",
        "One-way latency between kernel software stamps, from each run's 10-per-decade histogram.",
    ),
];

/// Everything the agent knows about one target.
#[derive(Clone, Debug)]
pub struct TargetMetrics {
    pub kind: &'static str,
    pub address: String,
    hists: Vec<Hist>,
    sent: u64,
    received: u64,
    lost: u64,
    duplicates: u64,
    reordered: u64,
    runs: u64,
    errors: [u64; ErrorReason::ALL.len()],
    jitter_s: Option<f64>,
    pdv_s: Option<f64>,
    timestamp_source: &'static str,
    last_success_s: Option<f64>,
    last_duration_s: Option<f64>,
    /// Slots the target missed: due but kept from starting (an exclusive
    /// run, or `parallel` runs, under way) for a whole interval.
    pub skipped: u64,
}

/// Map a source name from a result onto the fixed label set.
fn source_label(s: &str) -> &'static str {
    match s {
        "NIC hardware" => "NIC hardware",
        "kernel software" => "kernel software",
        "user clock" => "user clock",
        _ => "unknown",
    }
}

/// One histogram's buckets over every size of a run.
fn all_sizes<S>(per_size: &[S], histogram: impl Fn(&S) -> &Vec<Bucket>) -> Vec<Bucket> {
    per_size
        .iter()
        .flat_map(|s| histogram(s).iter().cloned())
        .collect()
}

fn pdv(s: &SummarySnapshot) -> Option<f64> {
    // RFC 5481 packet delay variation: a high percentile minus the minimum.
    Some((s.p99_ns? - s.min_ns?) as f64 / 1e9)
}

impl TargetMetrics {
    pub fn new(kind: &'static str, address: String) -> TargetMetrics {
        let n = if kind == "rtt" {
            RTT_FIGURES.len()
        } else {
            ONEWAY_FIGURES.len()
        };
        TargetMetrics {
            kind,
            address,
            hists: vec![Hist::default(); n],
            sent: 0,
            received: 0,
            lost: 0,
            duplicates: 0,
            reordered: 0,
            runs: 0,
            errors: [0; ErrorReason::ALL.len()],
            jitter_s: None,
            pdv_s: None,
            timestamp_source: "unknown",
            last_success_s: None,
            last_duration_s: None,
            skipped: 0,
        }
    }

    /// Fold in one throughput result (`misura tcp|udp|rr`): only whether it
    /// measured something; its figures are in the archive.
    pub fn add_throughput(&mut self, v: &serde_json::Value, now_s: f64) -> bool {
        self.runs += 1;
        let measured = v
            .get("throughput_bps")
            .or_else(|| v.get("transactions_per_s"))
            .and_then(|x| x.as_f64())
            .is_some_and(|x| x > 0.0);
        if measured {
            self.last_success_s = Some(now_s);
        }
        measured
    }

    /// Add one run's probe totals: sent, received, lost, duplicates, reordered.
    fn count_probes(&mut self, [sent, received, lost, duplicates, reordered]: [u64; 5]) {
        self.sent += sent;
        self.received += received;
        self.lost += lost;
        self.duplicates += duplicates;
        self.reordered += reordered;
    }

    pub fn error(&mut self, r: ErrorReason) {
        let i = ErrorReason::ALL.iter().position(|x| *x == r).unwrap_or(0);
        self.errors[i] += 1;
    }

    /// Fold in one `misura rtt` result finished at `now_s` (Unix seconds).
    /// Returns false when nothing came back (the caller counts the error).
    pub fn add_rtt(&mut self, r: &RttReport, now_s: f64) -> bool {
        self.runs += 1;
        self.last_duration_s = Some(r.elapsed_s);
        let t = &r.totals;
        self.count_probes([t.sent, t.received, t.lost, t.duplicates, t.reordered]);
        self.timestamp_source = source_label(&r.timestamps.client_rx);
        let o = &r.overall;
        let user = all_sizes(&r.per_size, |s| &s.histogram_user_rtt);
        self.hists[0].add_buckets(&user, o.user_rtt.mean_ns);
        if let Some(k) = &o.kernel_rtt {
            self.hists[1].add_quantiles(k);
        }
        let net = all_sizes(&r.per_size, |s| &s.histogram_network_rtt);
        self.hists[2].add_buckets(&net, o.network_rtt.as_ref().and_then(|s| s.mean_ns));
        if t.received == 0 {
            return false;
        }
        self.jitter_s = o.jitter_rfc3550_ns.map(|j| j / 1e9);
        self.pdv_s = o
            .network_rtt
            .as_ref()
            .and_then(pdv)
            .or_else(|| pdv(&o.user_rtt));
        self.last_success_s = Some(now_s);
        true
    }

    /// Fold in one `misura oneway` result; as [`TargetMetrics::add_rtt`].
    pub fn add_oneway(&mut self, r: &OnewayReport, now_s: f64) -> bool {
        self.runs += 1;
        self.last_duration_s = Some(r.loop_stats.elapsed_s);
        let t = &r.totals;
        self.count_probes([t.sent, t.received, t.lost, t.duplicates, t.reordered]);
        let ts = &r.timestamps;
        self.timestamp_source = if ts.hardware_rx {
            "NIC hardware"
        } else if ts.kernel_software_rx {
            "kernel software"
        } else {
            "user clock"
        };
        let o = &r.overall;
        let user = all_sizes(&r.per_size, |s| &s.histogram_mul);
        self.hists[0].add_buckets(&user, o.mul.mean_ns);
        let kern = all_sizes(&r.per_size, |s| &s.histogram_kernel);
        self.hists[1].add_buckets(&kern, o.kernel.as_ref().and_then(|s| s.mean_ns));
        if t.received == 0 {
            return false;
        }
        self.jitter_s = None;
        self.pdv_s = o.kernel.as_ref().and_then(pdv).or_else(|| pdv(&o.mul));
        self.last_success_s = Some(now_s);
        true
    }
}

/// Agent-wide counters.
#[derive(Clone, Debug, Default)]
pub struct AgentCounters {
    pub reloads_ok: u64,
    pub reloads_failed: u64,
    /// Results the store could not take (each kept in memory and retried).
    pub store_errors: u64,
    /// Fleet template fetches by outcome.
    pub template_ok: u64,
    pub template_not_modified: u64,
    pub template_failed: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_are_every_other_log10_edge() {
        let e = bucket_edges_ns();
        assert_eq!(e.first(), Some(&1_000));
        assert_eq!(e.last(), Some(&1_000_000_000));
        assert_eq!(e.len(), 31);
        assert_eq!(
            &e[5..11],
            &[10_000, 15_849, 25_119, 39_811, 63_096, 100_000]
        );
    }

    #[test]
    fn buckets_accumulate_across_runs() {
        let mut h = Hist::default();
        let run = [
            Bucket {
                lower_ns: 12_589,
                upper_ns: 15_849,
                count: 3,
            },
            Bucket {
                lower_ns: 50_119,
                upper_ns: 63_096,
                count: 2,
            },
        ];
        h.add_buckets(&run, Some(30_000.0));
        h.add_buckets(&run, Some(30_000.0));
        let Value::Histogram {
            buckets,
            count,
            sum,
        } = h.value()
        else {
            panic!()
        };
        assert_eq!(count, 10);
        assert!((sum - 10.0 * 30e-6).abs() < 1e-12);
        assert_eq!(buckets[5].1, 0); // le 10 µs
        assert_eq!(buckets[6].1, 6); // le 15.849 µs
        assert_eq!(buckets[9].1, 10); // le 63.096 µs
        assert_eq!(buckets.last().unwrap().1, 10);
        // Beyond 1 s: only in +Inf.
        h.add_buckets(
            &[Bucket {
                lower_ns: 1_000_000_000,
                upper_ns: 1_258_925_412,
                count: 1,
            }],
            Some(1e9),
        );
        let Value::Histogram { buckets, count, .. } = h.value() else {
            panic!()
        };
        assert_eq!((buckets.last().unwrap().1, count), (10, 11));
    }

    #[test]
    fn quantiles_give_monotone_lower_bounds() {
        let s = SummarySnapshot {
            count: 100,
            min_ns: Some(20_000),
            max_ns: Some(2_000_000),
            mean_ns: Some(60_000.0),
            std_dev_ns: None,
            median_ns: Some(50_000),
            p90_ns: Some(90_000),
            p99_ns: Some(500_000),
            p999_ns: Some(2_000_000),
            mean_minus_min_ns: None,
            threshold_ns: None,
            over_threshold: 0,
            clamped: 0,
        };
        let mut h = Hist::default();
        h.add_quantiles(&s);
        let Value::Histogram { buckets, count, .. } = h.value() else {
            panic!()
        };
        assert_eq!(count, 100);
        let at = |le: f64| {
            buckets
                .iter()
                .find(|(e, _)| (*e - le).abs() < 1e-12)
                .unwrap()
                .1
        };
        assert_eq!(at(1e-5), 0);
        assert_eq!(at(25_119e-9), 1);
        assert_eq!(at(63_096e-9), 50);
        assert_eq!(at(1e-4), 90);
        assert_eq!(buckets.last().unwrap().1, 100);
        assert!(buckets.windows(2).all(|w| w[0].1 <= w[1].1));
    }
}
