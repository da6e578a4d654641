//! `misura clock sources`' method: seed 003's Table 1 for today's machine —
//! every time source with its read cost, resolution, smallest step and
//! monotonicity.

use crate::error::{Knob, PlanError};
use crate::finish::{completion, host_and_warnings};
use misura_cli::progress::Progress;
use misura_cli::warnings::Warn;
use misura_measure::clockstats::{counter_rate_hz, StepTracker};
use misura_measure::time::{Instant, Span};
use misura_report::clock::{
    ClocksourceInfo, SourceRow, SourcesConfig, SourcesFigures, SourcesReport, TscInfo,
};
use misura_report::LoopTuning;
use misura_report::Warning;
use misura_stats::Summary;
use misura_sys::clock::{monotonic_raw_ns, now_ns, resolution_ns};
use misura_sys::clocks::{gettimeofday_ns, PosixClock, POSIX_CLOCKS};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The table the flags ask for, checked.
#[derive(Debug, Clone)]
pub struct SourcesPlan {
    /// Reads per source (rounded up to whole batches of 32).
    pub reads: u64,
    /// Time allowed for the whole table; each source gets an equal share.
    pub budget: Span,
}

/// The shortest budget for the whole table.
pub const MIN_BUDGET: Span = Span::from_ns(10_000_000);

impl SourcesPlan {
    pub fn new(reads: u64, budget: Span) -> Result<SourcesPlan, PlanError> {
        if reads == 0 {
            return Err(PlanError::NoReads);
        }
        if budget < MIN_BUDGET {
            return Err(PlanError::TooShort {
                knob: Knob::Budget,
                min: MIN_BUDGET,
            });
        }
        Ok(SourcesPlan { reads, budget })
    }
}

// ------------------------------------------------------- the table

const BATCH: usize = 32;
const WARMUP_BATCHES: usize = 16;

/// What one source's reads gave, in the source's own units.
struct Measured {
    /// Duration of each timed batch (ns), bracket included.
    batch_ns: Summary,
    steps: StepTracker,
}

/// Times batches of back-to-back reads with CLOCK_MONOTONIC_RAW, and follows
/// the steps inside each batch. Stops at `reads`, at `deadline` (raw ns) or on a signal.
fn read_batches<F: FnMut() -> i64>(
    mut read: F,
    reads: u64,
    deadline: i64,
    stop: &AtomicUsize,
) -> Measured {
    let mut m = Measured {
        batch_ns: Summary::new(),
        steps: StepTracker::new(0),
    };
    let mut buf = [0i64; BATCH];
    for _ in 0..WARMUP_BATCHES {
        for slot in buf.iter_mut() {
            *slot = read();
        }
    }
    let mut done = 0u64;
    while done < reads {
        let t0 = monotonic_raw_ns();
        for slot in buf.iter_mut() {
            *slot = read();
        }
        let t1 = monotonic_raw_ns();
        m.batch_ns.record(t1 - t0);
        m.steps.break_chain();
        for &v in &buf {
            m.steps.read(v);
        }
        done += BATCH as u64;
        if t1 > deadline || stop.load(Ordering::Relaxed) != 0 {
            break;
        }
    }
    m
}

/// The cost of the empty bracket (two back-to-back MONOTONIC_RAW reads), median ns.
fn bracket_ns() -> i64 {
    let mut s = Summary::new();
    for _ in 0..20_000 {
        let t0 = monotonic_raw_ns();
        let t1 = monotonic_raw_ns();
        s.record(t1 - t0);
    }
    s.quantile(0.5).unwrap_or(0)
}

struct Pending {
    name: String,
    kind: &'static str,
    clock_id: Option<i32>,
    interfaces: Vec<String>,
    /// ns per unit of the read value; None for the TSC until the rate is known.
    scale: Option<f64>,
    resolution_ns: Option<f64>,
    good_for: &'static str,
    result: std::result::Result<Measured, String>,
}

fn good_for(c: &PosixClock) -> &'static str {
    match c.short {
        "monotonic" => "intervals and deadlines: slewed by NTP, never steps; misura's clock for durations",
        "monotonic_raw" => "the reference for counter rates: the oscillator's own rate, never slewed",
        "monotonic_coarse" => "cheap time to the tick; too coarse for latency",
        "realtime" => "wall-clock stamps comparable with SO_TIMESTAMPING and other hosts (steps when the time is set)",
        "realtime_coarse" => "cheap wall-clock time to the tick: logs, not latency",
        "tai" => "wall-clock time without leap seconds, PTP's timescale (REALTIME + the kernel's TAI offset)",
        "boottime" => "like MONOTONIC but counts suspend: uptime across sleeps",
        _ => "",
    }
}

/// NIC clocks and their interfaces: sysfs first, then ETHTOOL_GET_TS_INFO's
/// phc_index for clocks sysfs does not tie to an interface.
fn ptp_devices() -> Vec<misura_sys::phc::PtpDevice> {
    let mut devs = misura_sys::phc::list();
    if devs.iter().any(|d| d.interfaces.is_empty()) {
        let ifaces: Vec<String> = std::fs::read_dir("/sys/class/net")
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        for ifname in ifaces {
            if let Ok(Some(idx)) = misura_sys::tsinfo::get_ts_info(&ifname).map(|c| c.phc_index) {
                if let Some(d) = devs.iter_mut().find(|d| {
                    misura_sys::phc::index(&d.name) == Some(idx) && d.interfaces.is_empty()
                }) {
                    d.interfaces.push(ifname);
                }
            }
        }
    }
    devs
}

/// Reads every source in turn, each for at most its share of the budget.
struct Reader<'a> {
    reads: u64,
    per_source: Span,
    stop: &'a AtomicUsize,
}

impl Reader<'_> {
    fn interrupted(&self) -> bool {
        self.stop.load(Ordering::Relaxed) != 0
    }

    fn measure<F: FnMut() -> i64>(&self, read: F) -> Measured {
        read_batches(
            read,
            self.reads,
            monotonic_raw_ns() + self.per_source.as_ns(),
            self.stop,
        )
    }

    fn posix(&self, c: &PosixClock) -> Pending {
        let res = resolution_ns(c.id);
        let result = if now_ns(c.id) == 0 {
            Err(format!("clock_gettime({}) fails on this kernel", c.name))
        } else {
            let id = c.id;
            Ok(self.measure(|| now_ns(id)))
        };
        Pending {
            name: c.name.into(),
            kind: "posix",
            clock_id: Some(c.id),
            interfaces: vec![],
            scale: Some(1.0),
            resolution_ns: (res > 0).then_some(res as f64),
            good_for: good_for(c),
            result,
        }
    }

    fn gettimeofday(&self) -> Pending {
        Pending {
            name: "gettimeofday()".into(),
            kind: "libc",
            clock_id: None,
            interfaces: vec![],
            scale: Some(1.0),
            resolution_ns: Some(1000.0),
            good_for: "legacy µs wall clock (430 ns in Li et al. 2006); use clock_gettime instead",
            result: Ok(self.measure(gettimeofday_ns)),
        }
    }

    /// RDTSC, and RDTSCP where the CPU has it; their scale is known later.
    fn tsc(&self, tsc_flags: &[String]) -> [Pending; 2] {
        let tsc = |name: &str, good_for, result| Pending {
            name: name.into(),
            kind: "tsc",
            clock_id: None,
            interfaces: vec![],
            scale: None,
            resolution_ns: None,
            good_for,
            result,
        };
        let have_rdtscp = tsc_flags.iter().any(|f| f == "rdtscp");
        [
            tsc(
                "TSC (RDTSC)",
                "cheapest timestamp, in cycles: needs constant_tsc + nonstop_tsc and a rate (misura clock tsc)",
                Ok(self.measure(|| misura_sys::tsc::read() as i64)),
            ),
            tsc(
                "TSC (RDTSCP)",
                "RDTSC that waits for earlier instructions, with the CPU id: stamps that must not move",
                if have_rdtscp {
                    Ok(self.measure(|| misura_sys::tsc::read_ordered().0 as i64))
                } else {
                    Err("the CPU does not report the rdtscp flag".into())
                },
            ),
        ]
    }

    fn phc(&self, d: &misura_sys::phc::PtpDevice) -> Pending {
        let opened = misura_sys::phc::PhcClock::open(&d.dev).map_err(|e| e.to_string());
        let (clock_id, res, result) = match &opened {
            Ok(phc) => {
                let id = phc.clock_id();
                let r = resolution_ns(id);
                (
                    Some(id),
                    (r > 0).then_some(r as f64),
                    Ok(self.measure(|| now_ns(id))),
                )
            }
            Err(e) => (None, None, Err(e.clone())),
        };
        Pending {
            name: format!("PHC {}", d.dev.display()),
            kind: "phc",
            clock_id,
            interfaces: d.interfaces.clone(),
            scale: Some(1.0),
            resolution_ns: res,
            good_for:
                "the NIC's own clock, the timescale of its hardware stamps; a system call a read",
            result,
        }
    }

    /// Every source, in table order, until a signal stops the reading.
    fn read_all(
        &self,
        ptp: &[misura_sys::phc::PtpDevice],
        tsc_flags: &[String],
        progress: &mut Progress,
    ) -> Vec<Pending> {
        let mut pending = Vec::new();
        for c in POSIX_CLOCKS {
            if self.interrupted() {
                return pending;
            }
            progress.tick(|| format!("reading {}", c.name));
            pending.push(self.posix(&c));
        }
        if self.interrupted() {
            return pending;
        }
        progress.tick(|| "reading gettimeofday()".into());
        pending.push(self.gettimeofday());
        if misura_sys::tsc::AVAILABLE && !self.interrupted() {
            progress.tick(|| "reading the TSC".into());
            pending.extend(self.tsc(tsc_flags));
        }
        for d in ptp {
            if self.interrupted() {
                break;
            }
            progress.tick(|| format!("reading {}", d.dev.display()));
            pending.push(self.phc(d));
        }
        pending
    }
}

impl Pending {
    /// The table row; `bracket` (ns) is the cost of the timing reads around
    /// each batch, `tsc_ns_per_tick` the TSC's scale when it was measured.
    fn row(self, bracket: i64, tsc_ns_per_tick: Option<f64>) -> SourceRow {
        let scale = self.scale.or(tsc_ns_per_tick);
        let mut row = SourceRow {
            name: self.name,
            kind: self.kind.into(),
            clock_id: self.clock_id,
            interfaces: self.interfaces,
            usable: false,
            error: None,
            reads: 0,
            read_cost_median_ns: None,
            read_cost_p99_ns: None,
            resolution_ns: self.resolution_ns.or(if self.kind == "tsc" {
                tsc_ns_per_tick
            } else {
                None
            }),
            smallest_step_ns: None,
            zero_steps: 0,
            monotonicity_violations: 0,
            largest_backward_step_ns: None,
            good_for: self.good_for.into(),
        };
        let m = match self.result {
            Err(e) => {
                row.error = Some(e);
                return row;
            }
            Ok(m) => m,
        };
        let per_read = |q: f64| {
            m.batch_ns
                .quantile(q)
                .map(|b| ((b - bracket).max(0)) as f64 / BATCH as f64)
        };
        row.usable = true;
        row.reads = m.steps.reads();
        row.read_cost_median_ns = per_read(0.5);
        row.read_cost_p99_ns = per_read(0.99);
        row.smallest_step_ns = m
            .steps
            .steps()
            .min()
            .and_then(|v| scale.map(|s| v as f64 * s));
        row.zero_steps = m.steps.zero_steps();
        row.monotonicity_violations = m.steps.backward_steps();
        row.largest_backward_step_ns = (m.steps.backward_steps() > 0)
            .then(|| scale.map(|s| m.steps.largest_backward_ns() as f64 * s))
            .flatten();
        row
    }
}

/// The NIC clocks in a sentence (or why there are none).
fn ptp_note(ptp: &[misura_sys::phc::PtpDevice]) -> String {
    if ptp.is_empty() {
        return "none: no /dev/ptp* on this host (no NIC with a PTP hardware clock, or its driver is not loaded), so no NIC hardware timestamps".to_string();
    }
    ptp.iter()
        .map(|d| {
            format!(
                "{} ({}) on {}",
                d.dev.display(),
                d.clock_name.as_deref().unwrap_or("unnamed"),
                if d.interfaces.is_empty() {
                    "no interface".into()
                } else {
                    d.interfaces.join(", ")
                }
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The TSC flags a rate needs, when missing.
fn tsc_warnings(tsc_flags: &[String]) -> Vec<Warning> {
    if !misura_sys::tsc::AVAILABLE {
        return Vec::new();
    }
    ["constant_tsc", "nonstop_tsc"]
        .into_iter()
        .filter(|f| !tsc_flags.iter().any(|x| x == f))
        .map(|f| {
            Warn::CpuFlagMissing {
                flag: f.to_string(),
            }
            .into()
        })
        .collect()
}

/// Read every source within the plan's budget (progress on stderr unless
/// `quiet`) and make the table.
pub fn measure(plan: &SourcesPlan, stop: &AtomicUsize, quiet: bool) -> SourcesReport {
    let budget_ns = plan.budget.as_ns();
    let started_at = misura_cli::meta::now_rfc3339();
    let t_start = monotonic_raw_ns();
    let tsc_start = (misura_sys::tsc::read(), monotonic_raw_ns());
    let ptp = ptp_devices();
    let n_sources =
        POSIX_CLOCKS.len() + 1 + if misura_sys::tsc::AVAILABLE { 2 } else { 0 } + ptp.len();
    let reader = Reader {
        reads: plan.reads,
        per_source: Span::from_ns(budget_ns / n_sources as i64),
        stop,
    };
    let bracket = bracket_ns();
    let tsc_flags = misura_sys::tsc::flags();
    let mut progress = Progress::new(quiet, Some(Duration::from_nanos(budget_ns as u64)));
    let pending = reader.read_all(&ptp, &tsc_flags, &mut progress);
    progress.done();
    let tsc_end = (misura_sys::tsc::read(), monotonic_raw_ns());
    let measured_hz = if misura_sys::tsc::AVAILABLE {
        counter_rate_hz(
            tsc_start.0,
            Instant::from_ns(tsc_start.1),
            tsc_end.0,
            Instant::from_ns(tsc_end.1),
        )
    } else {
        None
    };
    let tsc_ns_per_tick = measured_hz.map(|hz| 1e9 / hz);
    let sources: Vec<SourceRow> = pending
        .into_iter()
        .map(|p| p.row(bracket, tsc_ns_per_tick))
        .collect();

    // Each NIC clock against the system clock, and who disciplines it.
    let (phcs, ptp_daemons) = if stop.load(Ordering::Relaxed) == 0 {
        misura_run::ptp::survey(misura_run::ptp::Effort::QUICK)
    } else {
        (Vec::new(), Vec::new())
    };
    let cs = misura_sys::clocks::kernel_clocksource();
    let (complete, stop_reason) = completion(stop);
    let (host, mut warnings) = host_and_warnings(LoopTuning::default(), false);
    warnings.extend(tsc_warnings(&tsc_flags));
    let kernel = if misura_sys::tsc::AVAILABLE {
        misura_sys::tsc::kernel_khz()
    } else {
        None
    };
    SourcesReport {
        meta: misura_cli::meta::meta("misura.clock-sources", started_at),
        complete,
        stop_reason,
        host,
        config: SourcesConfig {
            reads_per_source: plan.reads,
            batch: BATCH as u32,
            time_per_source_ns: reader.per_source.as_ns(),
            cost_method: format!(
                "batches of {BATCH} back-to-back reads timed with CLOCK_MONOTONIC_RAW, the empty bracket ({bracket} ns) subtracted, divided by {BATCH}; median and p99 over the batches"
            ),
        },
        body: SourcesFigures {
            clocksource: ClocksourceInfo { current: cs.current, available: cs.available },
            tsc: misura_sys::tsc::AVAILABLE.then(|| TscInfo {
                flags: tsc_flags.clone(),
                measured_hz,
                measured_over_ns: tsc_end.1 - tsc_start.1,
                kernel_hz: kernel.as_ref().map(|k| k.0 * 1000.0),
                kernel_source: kernel.map(|k| k.1),
            }),
            ptp_clocks: ptp.len() as u32,
            ptp_note: ptp_note(&ptp),
            phcs,
            ptp_daemons,
            sources,
            elapsed_s: (monotonic_raw_ns() - t_start) as f64 / 1e9,
        },
        warnings,
    }
}
