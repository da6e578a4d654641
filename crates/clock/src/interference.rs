//! `misura clock interference`'s method: seed 000's experiment — a tight
//! loop of clock reads; the steps between consecutive reads show when the
//! kernel, the hardware or other threads took the CPU away.

use crate::error::MeasureError;
use crate::error::{Knob, PlanError};
use crate::finish::{completion, host_and_warnings_after_lock};
use misura_measure::time::{Instant, Span};

type Result<T, E = MeasureError> = std::result::Result<T, E>;
use misura_cli::progress::Progress;
use misura_cli::warnings::Warn;
use misura_measure::clockstats::counter_rate_hz;
use misura_measure::clockstats::StepTracker;
use misura_report::clock::{
    InterferenceConfig, InterferenceFigures, InterferenceReport, InterferenceRun,
};
use misura_report::LoopTuning;
use misura_report::Warning;
use misura_run::cpuload::BusyThreads;
use misura_sys::clock::monotonic_raw_ns;
use misura_sys::clock::{now_ns, resolution_ns};
use misura_sys::clocks::PosixClock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

#[derive(Debug, Clone, Copy)]
enum Source {
    Posix(PosixClock),
    /// TSC ticks turned into ns at this many ns per tick.
    Tsc(f64),
}

/// Reads in the hot loop between checks of the deadline and the stop flag.
const CHUNK: u32 = 1024;

fn read_loop<F: FnMut() -> i64>(
    mut read: F,
    duration: Span,
    gaps: usize,
    stop: &AtomicUsize,
    progress: &mut Progress,
    label: &str,
) -> StepTracker {
    let mut t = StepTracker::new(gaps);
    let mut next_tick = 1_000_000_000i64;
    loop {
        for _ in 0..CHUNK {
            t.read(read());
        }
        let span = t.span_ns();
        if span >= duration.as_ns() || stop.load(Ordering::Relaxed) != 0 {
            return t;
        }
        if span >= next_tick {
            next_tick += 1_000_000_000;
            let (n, max) = (t.reads(), t.steps().max().unwrap_or(0));
            progress.tick(|| {
                format!(
                    "{label}: {n} reads, longest step {}",
                    misura_report::clock::human_ns(max as f64)
                )
            });
            // Printing is not interference: do not count the step across it.
            t.break_chain();
        }
    }
}

/// The runs the flags ask for, the clock resolved (the TSC's rate measured).
#[derive(Debug, Clone)]
pub struct InterferencePlan {
    duration: Span,
    clock_name: String,
    source: Source,
    resolution_ns: f64,
    /// (label, load threads) of each run, in order.
    runs: Vec<(&'static str, u32)>,
    load: u32,
    compare: bool,
    cpu: Option<usize>,
    gaps: usize,
    bins_per_decade: u32,
}

/// The shortest run.
pub const MIN_DURATION: Span = Span::from_ns(1_000_000);

/// What the flags ask of `misura clock interference`, before it is checked.
#[derive(Debug, Clone)]
pub struct InterferenceRequest {
    pub duration: Span,
    /// The POSIX clock to read; `None` for the TSC.
    pub clock: Option<PosixClock>,
    /// Busy threads beside the loop (0: idle).
    pub load: u32,
    /// Idle first, then loaded.
    pub compare: bool,
    pub cpu: Option<usize>,
    /// How many of the longest gaps to report.
    pub gaps: usize,
    pub bins_per_decade: u32,
}

impl InterferencePlan {
    /// The request checked, in the order the flags were always checked; with
    /// the TSC, its rate measured against CLOCK_MONOTONIC_RAW (0.1 s).
    pub fn new(r: &InterferenceRequest) -> Result<InterferencePlan, PlanError> {
        if r.duration < MIN_DURATION {
            return Err(PlanError::TooShort {
                knob: Knob::Duration,
                min: MIN_DURATION,
            });
        }
        let (clock_name, source, resolution_ns) = match r.clock {
            Some(c) => (
                c.name.to_string(),
                Source::Posix(c),
                resolution_ns(c.id) as f64,
            ),
            None => {
                if !misura_sys::tsc::AVAILABLE {
                    return Err(PlanError::NoTsc);
                }
                let hz =
                    tsc_rate_over(Duration::from_millis(100)).ok_or(PlanError::TscRateUnknown)?;
                ("TSC".to_string(), Source::Tsc(1e9 / hz), 1e9 / hz)
            }
        };
        let max = misura_run::cpuload::max_busy_threads();
        if r.load > max {
            return Err(PlanError::TooMuchLoad { asked: r.load, max });
        }
        if r.load == 0 && r.compare {
            return Err(PlanError::CompareWithoutLoad);
        }
        Ok(InterferencePlan {
            duration: r.duration,
            clock_name,
            source,
            resolution_ns,
            runs: match (r.load, r.compare) {
                (0, _) => vec![("idle", 0)],
                (n, false) => vec![("loaded", n)],
                (n, true) => vec![("idle", 0), ("loaded", n)],
            },
            load: r.load,
            compare: r.compare,
            cpu: r.cpu,
            gaps: r.gaps,
            bins_per_decade: r
                .bins_per_decade
                .clamp(1, misura_stats::summary::MAX_BINS_PER_DECADE),
        })
    }

    /// Read the clock for one run.
    fn read(&self, stop: &AtomicUsize, progress: &mut Progress, label: &str) -> StepTracker {
        match self.source {
            Source::Posix(c) => read_loop(
                || now_ns(c.id),
                self.duration,
                self.gaps,
                stop,
                progress,
                label,
            ),
            Source::Tsc(scale) => {
                let base = misura_sys::tsc::read();
                read_loop(
                    || (misura_sys::tsc::read().wrapping_sub(base) as f64 * scale) as i64,
                    self.duration,
                    self.gaps,
                    stop,
                    progress,
                    label,
                )
            }
        }
    }
}

/// One run: start its load threads, read the clock, stop them.
fn one_run(
    plan: &InterferencePlan,
    (label, n): (&str, u32),
    cpus: &[usize],
    stop: &AtomicUsize,
    progress: &mut Progress,
    warnings: &mut Vec<Warning>,
) -> InterferenceRun {
    let load = (n > 0).then(|| BusyThreads::start(n, plan.cpu, cpus));
    if let Some(l) = &load {
        for e in &l.pin_errors {
            warnings.push(
                Warn::LoadThreadNotPinned {
                    error: e.to_string(),
                }
                .into(),
            );
        }
    }
    let t0 = std::time::Instant::now();
    let tracker = plan.read(stop, progress, label);
    let elapsed = t0.elapsed().as_secs_f64();
    let load_cpus = load.as_ref().map(|l| l.cpus.clone()).unwrap_or_default();
    drop(load);
    InterferenceRun {
        label: label.into(),
        load_threads: n,
        load_cpus,
        complete: tracker.span_ns() >= plan.duration.as_ns(),
        elapsed_s: elapsed,
        reads: tracker.reads(),
        reads_per_s: tracker.reads() as f64 / elapsed.max(1e-9),
        zero_steps: tracker.zero_steps(),
        backward_steps: tracker.backward_steps(),
        steps: tracker.steps().snapshot().into(),
        histogram: misura_report::model::summary::buckets(
            tracker.steps().log_histogram(plan.bins_per_decade),
        ),
        longest_gaps: tracker.longest_gaps().iter().map(|&g| g.into()).collect(),
        time_in_gaps_over_10us_ns: tracker.long_steps_ns(),
    }
}

/// The CPUs the process may use (for the load threads, read before the loop
/// is pinned); then pin the loop and lock memory. Returns (cpus, memory locked).
fn place_loop(cpu: Option<usize>, warnings: &mut Vec<Warning>) -> Result<(Vec<usize>, bool)> {
    let mut allowed = misura_sys::sched::current_affinity().unwrap_or_default();
    if allowed.is_empty() {
        allowed = (0..misura_sys::sched::online_cpus()).collect();
    }
    if let Some(cpu) = cpu {
        misura_sys::sched::pin_to_cpu(cpu)?;
    }
    let memory_locked = misura_run::host::lock_memory(warnings);
    Ok((allowed, memory_locked))
}

/// Pin the loop, run idle and/or loaded (progress on stderr unless
/// `quiet`) and make the report.
pub fn measure(
    plan: &InterferencePlan,
    stop: &AtomicUsize,
    quiet: bool,
) -> Result<InterferenceReport> {
    let started_at = misura_cli::meta::now_rfc3339();
    let mut warnings = Vec::new();
    let (allowed, memory_locked) = place_loop(plan.cpu, &mut warnings)?;
    let total =
        Duration::from_nanos((plan.duration.as_ns() as u64).saturating_mul(plan.runs.len() as u64));
    let mut progress = Progress::new(quiet, Some(total));
    let mut runs = Vec::new();
    for &r in &plan.runs {
        if stop.load(Ordering::Relaxed) != 0 {
            break;
        }
        runs.push(one_run(
            plan,
            r,
            &allowed,
            stop,
            &mut progress,
            &mut warnings,
        ));
    }
    progress.done();
    let (complete, stop_reason) = completion(stop);
    let (host, host_warnings) = host_and_warnings_after_lock(LoopTuning {
        netns: None,
        cpu: plan.cpu,
        rt_priority: None,
        memory_locked,
        ..Default::default()
    });
    warnings.extend(host_warnings);
    if runs.iter().any(|r| r.backward_steps > 0) {
        warnings.push(
            Warn::NotMonotonic {
                clock: plan.clock_name.to_string(),
            }
            .into(),
        );
    }
    Ok(InterferenceReport {
        meta: misura_cli::meta::meta("misura.clock-interference", started_at),
        complete,
        stop_reason,
        host,
        config: InterferenceConfig {
            clock: plan.clock_name.clone(),
            duration_ns: plan.duration.as_ns(),
            cpu: plan.cpu,
            load_threads: plan.load,
            compare: plan.compare,
            bins_per_decade: plan.bins_per_decade,
            longest_gaps: plan.gaps,
        },
        body: InterferenceFigures {
            resolution_ns: plan.resolution_ns,
            tsc_hz: match plan.source {
                Source::Tsc(s) => Some(1e9 / s),
                Source::Posix(_) => None,
            },
            runs,
        },
        warnings,
    })
}

/// The TSC rate (Hz) against CLOCK_MONOTONIC_RAW over `window`: both read
/// at each end, the raw clock on both sides of the TSC read.
fn tsc_rate_over(window: Duration) -> Option<f64> {
    let take = || {
        let a = monotonic_raw_ns();
        let t = misura_sys::tsc::read();
        let b = monotonic_raw_ns();
        (t, a + (b - a) / 2)
    };
    let (t0, r0) = take();
    std::thread::sleep(window);
    let (t1, r1) = take();
    counter_rate_hz(t0, Instant::from_ns(r0), t1, Instant::from_ns(r1))
}
