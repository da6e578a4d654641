//! The results of `misura clock sources`, `misura clock interference` and
//! `misura clock timer`.

use super::run::Envelope;
use super::summary::{Bucket, SummarySnapshot};
use serde::{Deserialize, Serialize};

// ---------------------------------------------------------------- sources

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SourcesConfig {
    /// Reads asked for per source (--reads).
    pub reads_per_source: u64,
    /// Back-to-back reads per timed batch.
    pub batch: u32,
    /// Time allowed per source (ns); a source stops early when it is spent.
    pub time_per_source_ns: i64,
    /// How read cost is measured, in words.
    pub cost_method: String,
}

/// The kernel's clocksource (sysfs).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClocksourceInfo {
    pub current: Option<String>,
    pub available: Vec<String>,
}

/// The TSC: flags, and its rate measured against CLOCK_MONOTONIC_RAW over the run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TscInfo {
    pub flags: Vec<String>,
    pub measured_hz: Option<f64>,
    /// The CLOCK_MONOTONIC_RAW interval the rate was measured over (ns).
    pub measured_over_ns: i64,
    pub kernel_hz: Option<f64>,
    pub kernel_source: Option<String>,
}

/// One row of the table: one time source.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SourceRow {
    /// E.g. "CLOCK_MONOTONIC", "TSC (RDTSC)", "gettimeofday()", "PHC /dev/ptp0".
    pub name: String,
    /// "posix", "libc", "tsc" or "phc".
    pub kind: String,
    pub clock_id: Option<i32>,
    /// The interface(s) a NIC clock belongs to.
    pub interfaces: Vec<String>,
    /// Whether the source could be read; if not, `error` says why.
    pub usable: bool,
    pub error: Option<String>,
    pub reads: u64,
    /// Per-read cost (ns), median over batches.
    pub read_cost_median_ns: Option<f64>,
    /// Per-read cost (ns), 99th percentile over batches.
    pub read_cost_p99_ns: Option<f64>,
    /// clock_getres (TSC: one tick at the measured rate), ns.
    pub resolution_ns: Option<f64>,
    /// Smallest non-zero step between consecutive reads, ns.
    pub smallest_step_ns: Option<f64>,
    /// Consecutive reads that returned the same value.
    pub zero_steps: u64,
    /// Reads lower than the read before.
    pub monotonicity_violations: u64,
    pub largest_backward_step_ns: Option<f64>,
    /// What the source is good for, in one line.
    pub good_for: String,
}

/// A PTP synchronisation daemon found running (a process scan of /proc).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PtpDaemon {
    /// `ptp4l`, `phc2sys`, `ts2phc` or `timemaster`.
    pub name: String,
    pub pid: u32,
    /// Its command line, as /proc/PID/cmdline gives it (at most 256 bytes).
    pub cmdline: String,
}

/// One NIC hardware clock, read against the system clock.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PhcInfo {
    /// `/dev/ptpN`.
    pub device: String,
    /// The driver's clock name (e.g. `e1000e`), when sysfs gives one.
    pub clock_name: Option<String>,
    pub interfaces: Vec<String>,
    /// The clock could be opened and read.
    pub usable: bool,
    /// Why not, when it could not.
    pub error: Option<String>,
    /// Cost of one `clock_gettime` on the clock (median and p99 over `reads`
    /// single reads, each timed with CLOCK_MONOTONIC_RAW, the empty
    /// bracket subtracted).
    pub read_cost_median_ns: Option<f64>,
    pub read_cost_p99_ns: Option<f64>,
    pub reads: u64,
    /// How the clock was compared with CLOCK_REALTIME (the cross-timestamp
    /// method, e.g. `PTP_SYS_OFFSET_EXTENDED`, or paired clock_gettime reads).
    pub method: Option<String>,
    /// Cross-timestamps taken.
    pub samples: u64,
    /// PHC − CLOCK_REALTIME, ns, at the end of the comparison.
    pub offset_ns: Option<f64>,
    /// Half-width of the offset's uncertainty, ns.
    pub offset_uncertainty_ns: Option<f64>,
    /// Rate of the PHC against CLOCK_REALTIME, ppm (positive: the PHC runs fast).
    pub drift_ppm: Option<f64>,
    pub drift_uncertainty_ppm: Option<f64>,
    /// Over how long the drift was measured, ns.
    pub span_ns: Option<i64>,
    /// The PTP daemons whose command line names this clock or its
    /// interfaces (or that discipline every clock, `phc2sys -a`).
    pub disciplined_by: Vec<String>,
}

/// The result of `misura clock sources`.
pub type SourcesReport = Envelope<SourcesConfig, SourcesFigures>;

/// The figures of a `SourcesReport`, inside its envelope.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SourcesFigures {
    pub clocksource: ClocksourceInfo,
    pub tsc: Option<TscInfo>,
    /// Number of /dev/ptpN clocks found.
    pub ptp_clocks: u32,
    /// What was found about NIC clocks, as a sentence ("none: …" when there is none).
    pub ptp_note: String,
    /// Each NIC clock against the system clock (empty in results from
    /// before it was measured).
    #[serde(default)]
    pub phcs: Vec<PhcInfo>,
    /// ptp4l, phc2sys, ts2phc or timemaster processes found running.
    #[serde(default)]
    pub ptp_daemons: Vec<PtpDaemon>,
    pub sources: Vec<SourceRow>,
    pub elapsed_s: f64,
}

// ---------------------------------------------------------------- interference

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct InterferenceConfig {
    /// The clock read in the loop ("CLOCK_MONOTONIC", …, "TSC").
    pub clock: String,
    /// Length of each run (ns).
    pub duration_ns: i64,
    /// CPU the loop was pinned to, if any.
    pub cpu: Option<usize>,
    /// Busy threads of the loaded run (--load).
    pub load_threads: u32,
    /// Idle run, then loaded run (--compare).
    pub compare: bool,
    pub bins_per_decade: u32,
    /// How many of the longest gaps are kept.
    pub longest_gaps: usize,
}

/// One run of the read loop.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct InterferenceRun {
    /// "idle" or "loaded".
    pub label: String,
    pub load_threads: u32,
    /// The CPU each load thread was pinned to.
    pub load_cpus: Vec<usize>,
    pub complete: bool,
    pub elapsed_s: f64,
    pub reads: u64,
    pub reads_per_s: f64,
    /// Consecutive reads with the same value.
    pub zero_steps: u64,
    /// Reads lower than the previous one.
    pub backward_steps: u64,
    /// The non-zero steps between consecutive reads (ns).
    pub steps: SummarySnapshot,
    /// Log histogram of the non-zero steps.
    pub histogram: Vec<Bucket>,
    /// The longest steps, longest first, with their offset from the run's start.
    pub longest_gaps: Vec<Gap>,
    /// Time the loop did not run for, in steps over 10 µs (ns).
    pub time_in_gaps_over_10us_ns: i64,
}

/// One long step between consecutive reads: the loop did not run for `step_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gap {
    /// The step (ns).
    pub step_ns: i64,
    /// When it started, as an offset from the first read (ns).
    pub at_ns: i64,
}

same_fields!(Gap from misura_measure::clockstats::Gap { step_ns, at_ns });

/// The result of `misura clock interference`.
pub type InterferenceReport = Envelope<InterferenceConfig, InterferenceFigures>;

/// The figures of a `InterferenceReport`, inside its envelope.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct InterferenceFigures {
    /// clock_getres of the clock (TSC: one tick), ns.
    pub resolution_ns: f64,
    /// TSC rate used to turn ticks into ns (clock TSC only).
    pub tsc_hz: Option<f64>,
    pub runs: Vec<InterferenceRun>,
}

// ---------------------------------------------------------------- timer

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TimerConfig {
    /// The clock slept on ("CLOCK_MONOTONIC").
    pub clock: String,
    pub interval_ns: i64,
    pub duration_ns: i64,
    pub rt_priority: Option<i32>,
    pub cpu: Option<usize>,
    /// The PM QoS CPU latency held through /dev/cpu_dma_latency (µs); None: not held.
    pub cpu_dma_latency_us: Option<i32>,
    pub bins_per_decade: u32,
}

/// The result of `misura clock timer`.
pub type TimerReport = Envelope<TimerConfig, TimerFigures>;

/// The figures of a `TimerReport`, inside its envelope.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TimerFigures {
    /// Wake-ups measured.
    pub wakeups: u64,
    /// Periods skipped because a wake-up came after the next target.
    pub missed_periods: u64,
    /// Sleeps ended early by a signal (resumed towards the same target).
    pub interrupted_sleeps: u64,
    /// Wake-up latency: wake time − target (ns).
    pub latency: SummarySnapshot,
    /// Offset of the worst wake-up from the start (ns).
    pub max_at_ns: Option<i64>,
    pub histogram: Vec<Bucket>,
    /// The full-resolution HDR histogram of the wake-up latency (every
    /// recorded bucket, exact below 2048 ns, 0.1 % wide above); empty in
    /// results written before it was stored.
    #[serde(default)]
    pub hdr: Vec<Bucket>,
    pub elapsed_s: f64,
}
