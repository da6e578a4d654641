//! How a paced sender kept its schedule (`misura udp`): bursts, wake-ups,
//! the measured wake-up margin, the spacing of the sends against the
//! target gap, and the CPU the sending thread used.

use serde::{Deserialize, Serialize};

/// The pacer's figures for one sender.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pacing {
    /// Whose sending these are: "client" (forward) or "server" (reverse).
    pub sender: String,
    /// How the sender waited: "clock_nanosleep" (absolute sleeps on
    /// CLOCK_MONOTONIC ending a measured margin early, the rest spun;
    /// SO_TXTIME is not used).
    pub method: String,
    /// The sending thread's timer slack (PR_GET_TIMERSLACK), ns.
    pub timer_slack_ns: Option<u64>,
    /// Schedule, bursts, wake-ups, margin and spacing (the units are
    /// datagrams), flattened into this object.
    #[serde(flatten)]
    pub figures: PacerFigures,
}

/// The pacer's account of a run: bursts, wake-ups, the margin, the spacing,
/// with the names of a UDP result's `pacing` object (the units are
/// datagrams).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PacerFigures {
    /// The schedule's gap between two units, ns (fractional).
    pub target_gap_ns: f64,
    /// Units handed out and units dropped by the catch-up limit.
    #[serde(rename = "scheduled")]
    pub units: u64,
    pub skipped: u64,
    /// Runs of sends without a sleep or spin between them, the longest,
    /// and the units sent in runs of more than one.
    pub bursts: u64,
    pub max_burst: u64,
    #[serde(rename = "burst_datagrams")]
    pub burst_units: u64,
    /// Sleeps that ended at their target, and how late (p50, p99, max).
    pub wakeups: u64,
    pub wake_late_p50_ns: Option<i64>,
    pub wake_late_p99_ns: Option<i64>,
    pub wake_late_max_ns: Option<i64>,
    /// The margin at the end of the run, and its largest value.
    #[serde(rename = "wake_margin_ns")]
    pub margin_ns: u64,
    #[serde(rename = "wake_margin_max_ns")]
    pub margin_max_ns: u64,
    /// Time spent polling instead of sleeping.
    pub spin_ns: u64,
    /// Gaps between consecutive sends, p50 and p99.
    pub gap_p50_ns: Option<i64>,
    pub gap_p99_ns: Option<i64>,
    /// Send time − due time of each unit, p50, p99, max.
    pub behind_p50_ns: Option<i64>,
    pub behind_p99_ns: Option<i64>,
    pub behind_max_ns: Option<i64>,
}

impl From<misura_measure::pacer::PacerFigures> for PacerFigures {
    fn from(v: misura_measure::pacer::PacerFigures) -> PacerFigures {
        let ns = |s: Option<misura_measure::time::Span>| s.map(|s| s.as_ns());
        PacerFigures {
            target_gap_ns: v.target_gap_ns,
            units: v.units,
            skipped: v.skipped,
            bursts: v.bursts,
            max_burst: v.max_burst,
            burst_units: v.burst_units,
            wakeups: v.wakeups,
            wake_late_p50_ns: ns(v.wake_late_p50),
            wake_late_p99_ns: ns(v.wake_late_p99),
            wake_late_max_ns: ns(v.wake_late_max),
            margin_ns: v.margin_ns,
            margin_max_ns: v.margin_max_ns,
            spin_ns: v.spin_ns,
            gap_p50_ns: ns(v.gap_p50),
            gap_p99_ns: ns(v.gap_p99),
            behind_p50_ns: ns(v.behind_p50),
            behind_p99_ns: ns(v.behind_p99),
            behind_max_ns: ns(v.behind_max),
        }
    }
}

/// CPU time one end used over the test, from the kernel's accounting
/// (`getrusage`: user + system).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUse {
    pub user_ns: u64,
    pub system_ns: u64,
    /// (user + system) / elapsed, in % of one CPU (200 % = two CPUs busy).
    pub utilisation_pct: f64,
}

impl CpuUse {
    pub fn new(user_ns: u64, system_ns: u64, elapsed_ns: u64) -> CpuUse {
        let pct = if elapsed_ns > 0 {
            100.0 * (user_ns + system_ns) as f64 / elapsed_ns as f64
        } else {
            0.0
        };
        CpuUse {
            user_ns,
            system_ns,
            utilisation_pct: pct,
        }
    }
    pub fn total_ns(&self) -> u64 {
        self.user_ns + self.system_ns
    }
    /// Service demand: CPU µs per KB (1024 bytes) moved, netperf's unit.
    pub fn us_per_kb(&self, bytes: u64) -> Option<f64> {
        (bytes > 0).then(|| self.total_ns() as f64 / 1000.0 / (bytes as f64 / 1024.0))
    }
    /// Service demand: CPU µs per transaction.
    pub fn us_per_transaction(&self, transactions: u64) -> Option<f64> {
        (transactions > 0).then(|| self.total_ns() as f64 / 1000.0 / transactions as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_demand_and_utilisation() {
        let cpu = CpuUse::new(300_000_000, 200_000_000, 1_000_000_000);
        assert!((cpu.utilisation_pct - 50.0).abs() < 1e-9);
        // 0.5 s CPU over 1 MiB = 1024 KB → 488.28 µs/KB.
        assert!((cpu.us_per_kb(1 << 20).unwrap() - 500_000.0 / 1024.0).abs() < 1e-6);
        assert_eq!(cpu.us_per_kb(0), None);
        assert!((cpu.us_per_transaction(1000).unwrap() - 500.0).abs() < 1e-9);
    }
}
