//! `misura clock interference`: seed 000's experiment — a tight loop of
//! clock reads; the steps between consecutive reads show when the kernel,
//! the hardware or other threads took the CPU away.

use crate::shared::cpuload::BusyThreads;
use crate::shared::exit::Failure;
use crate::shared::output::{completion, host_and_warnings_after_lock, Finished, Report};
use crate::shared::progress::Progress;
use crate::shared::units::DurationArg;
use crate::shared::warnings::Warn;
use anyhow::Result;
use misura_measure::clockstats::counter_rate_hz;
use misura_measure::clockstats::StepTracker;
use misura_report::clock::{
    InterferenceConfig, InterferenceFigures, InterferenceReport, InterferenceRun,
};
use misura_report::LoopTuning;
use misura_report::Warning;
use misura_sys::clock::monotonic_raw_ns;
use misura_sys::clock::{now_ns, resolution_ns};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "\
The interference test of Cena, Cibrario Bertolotti and Valenzano: a tight loop reads a clock as fast as it can
for --duration; every non-zero step between consecutive reads goes into a log
histogram (buckets from the resolution up to seconds), and the longest steps
are kept with their offsets from the start. A step of a few tens of ns is the
read itself; anything longer is time the loop did not run: interrupts, the
scheduler, the hypervisor, SMIs. Memory is bounded (no per-read storage).

--load N starts N busy threads for the run, pinned round-robin to all online
CPUs starting with the CPU after the measuring one (so the measuring CPU gets
a load thread last, when N reaches the number of CPUs), and stops them after.
--compare (with --load) runs idle first, then loaded, and shows both side by side.

Examples:
  misura clock interference --duration 5s
  misura clock interference --duration 5s --load 2 --compare --cpu 1
  misura clock interference --clock tsc --json";

#[derive(clap::Args, Debug, Clone)]
pub struct InterferenceArgs {
    /// Length of each run (e.g. 5s, 500ms).
    #[arg(long, default_value = "5s", value_name = "DURATION")]
    pub duration: DurationArg,
    /// Busy threads to run beside the loop (0: idle).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub load: u32,
    /// Run idle, then with --load N, and show both side by side.
    #[arg(long, requires = "load")]
    pub compare: bool,
    /// The clock to read.
    #[arg(
        long,
        value_enum,
        ignore_case = true,
        default_value = "monotonic",
        value_name = "NAME"
    )]
    pub clock: ClockName,
    /// Pin the reading loop to this CPU.
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
    /// How many of the longest gaps to report.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub gaps: usize,
    /// Histogram buckets per decade (log scale).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub bins_per_decade: u32,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
}

/// The clocks the loop can read: the POSIX clocks by their `<time.h>` names
/// without `CLOCK_` (which may be written too), and the TSC.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockName {
    #[value(name = "monotonic", alias = "clock_monotonic")]
    Monotonic,
    #[value(name = "monotonic_raw", alias = "clock_monotonic_raw")]
    MonotonicRaw,
    #[value(name = "monotonic_coarse", alias = "clock_monotonic_coarse")]
    MonotonicCoarse,
    #[value(name = "realtime", alias = "clock_realtime")]
    Realtime,
    #[value(name = "realtime_coarse", alias = "clock_realtime_coarse")]
    RealtimeCoarse,
    #[value(name = "tai", alias = "clock_tai")]
    Tai,
    #[value(name = "boottime", alias = "clock_boottime")]
    Boottime,
    /// The CPU's time-stamp counter (x86-64), scaled by its measured rate.
    #[value(name = "tsc")]
    Tsc,
}

impl ClockName {
    /// The POSIX clock, `None` for the TSC.
    fn posix(self) -> Option<misura_sys::clocks::PosixClock> {
        let short = match self {
            ClockName::Monotonic => "monotonic",
            ClockName::MonotonicRaw => "monotonic_raw",
            ClockName::MonotonicCoarse => "monotonic_coarse",
            ClockName::Realtime => "realtime",
            ClockName::RealtimeCoarse => "realtime_coarse",
            ClockName::Tai => "tai",
            ClockName::Boottime => "boottime",
            ClockName::Tsc => return None,
        };
        misura_sys::clocks::POSIX_CLOCKS
            .iter()
            .copied()
            .find(|c| c.short == short)
    }
}

#[derive(Clone, Copy)]
enum Source {
    Posix(misura_sys::clocks::PosixClock),
    /// TSC ticks turned into ns at this many ns per tick.
    Tsc(f64),
}

/// Reads in the hot loop between checks of the deadline and the stop flag.
const CHUNK: u32 = 1024;

fn read_loop<F: FnMut() -> i64>(
    mut read: F,
    duration_ns: i64,
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
        if span >= duration_ns || stop.load(Ordering::Relaxed) != 0 {
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
struct Plan {
    duration_ns: i64,
    clock_name: String,
    source: Source,
    resolution_ns: f64,
    /// (label, load threads) of each run, in order.
    runs: Vec<(&'static str, u32)>,
    cpu: Option<usize>,
    gaps: usize,
    bins_per_decade: u32,
}

impl Plan {
    fn new(args: &InterferenceArgs) -> Result<Plan> {
        let duration_ns = args.duration.not_under("--duration", 1_000_000)?;
        let (clock_name, source, resolution_ns) = match args.clock.posix() {
            Some(c) => (
                c.name.to_string(),
                Source::Posix(c),
                resolution_ns(c.id) as f64,
            ),
            None => {
                if !misura_sys::tsc::AVAILABLE {
                    return Err(Failure::Params(
                        "--clock tsc: this build has no TSC (x86-64 only)".into(),
                    )
                    .into());
                }
                let hz = tsc_rate_over(Duration::from_millis(100)).ok_or_else(|| {
                    anyhow::anyhow!(
                        "cannot measure the TSC rate: CLOCK_MONOTONIC_RAW did not advance"
                    )
                })?;
                ("TSC".to_string(), Source::Tsc(1e9 / hz), 1e9 / hz)
            }
        };
        let max_load = crate::shared::cpuload::max_busy_threads();
        if args.load > max_load {
            return Err(Failure::Params(format!(
                "--load {} is more than this host can run usefully: at most {max_load} busy threads (4 per online CPU); more only queue behind each other",
                args.load
            ))
            .into());
        }
        if args.load == 0 && args.compare {
            return Err(Failure::Usage("--compare needs --load N with N ≥ 1".into()).into());
        }
        Ok(Plan {
            duration_ns,
            clock_name,
            source,
            resolution_ns,
            runs: match (args.load, args.compare) {
                (0, _) => vec![("idle", 0)],
                (n, false) => vec![("loaded", n)],
                (n, true) => vec![("idle", 0), ("loaded", n)],
            },
            cpu: args.cpu,
            gaps: args.gaps,
            bins_per_decade: args
                .bins_per_decade
                .clamp(1, misura_stats::summary::MAX_BINS_PER_DECADE),
        })
    }

    /// Read the clock for one run.
    fn read(&self, stop: &AtomicUsize, progress: &mut Progress, label: &str) -> StepTracker {
        match self.source {
            Source::Posix(c) => read_loop(
                || now_ns(c.id),
                self.duration_ns,
                self.gaps,
                stop,
                progress,
                label,
            ),
            Source::Tsc(scale) => {
                let base = misura_sys::tsc::read();
                read_loop(
                    || (misura_sys::tsc::read().wrapping_sub(base) as f64 * scale) as i64,
                    self.duration_ns,
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
    plan: &Plan,
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
        complete: tracker.span_ns() >= plan.duration_ns,
        elapsed_s: elapsed,
        reads: tracker.reads(),
        reads_per_s: tracker.reads() as f64 / elapsed.max(1e-9),
        zero_steps: tracker.zero_steps(),
        backward_steps: tracker.backward_steps(),
        steps: tracker.steps().snapshot(),
        histogram: tracker.steps().log_histogram(plan.bins_per_decade),
        longest_gaps: tracker.longest_gaps().to_vec(),
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
    let memory_locked = crate::shared::host::lock_memory(warnings);
    Ok((allowed, memory_locked))
}

pub fn run(args: &InterferenceArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let plan = Plan::new(args)?;
    let started_at = crate::shared::meta::now_rfc3339();
    let mut warnings = Vec::new();
    let (allowed, memory_locked) = place_loop(plan.cpu, &mut warnings)?;
    let total =
        Duration::from_nanos((plan.duration_ns as u64).saturating_mul(plan.runs.len() as u64));
    let mut progress = Progress::new(args.out.quiet, Some(total));
    let mut runs = Vec::new();
    for &r in &plan.runs {
        if stop.load(Ordering::Relaxed) != 0 {
            break;
        }
        runs.push(one_run(
            &plan,
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
    let report = InterferenceReport {
        meta: crate::shared::meta::meta("misura.clock-interference", started_at),
        complete,
        stop_reason,
        host,
        config: InterferenceConfig {
            clock: plan.clock_name,
            duration_ns: plan.duration_ns,
            cpu: plan.cpu,
            load_threads: args.load,
            compare: args.compare,
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
    };
    Ok(Finished::ok(Report::new(
        report,
        "clock-interference",
        "this host",
        misura_report::clock::write_interference_text,
    )))
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
    counter_rate_hz(t0, r0, t1, r1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn clock_names_are_the_posix_short_names_or_tsc() {
        for c in ClockName::value_variants() {
            let name = c.to_possible_value().unwrap().get_name().to_string();
            match c.posix() {
                Some(p) => assert_eq!(p.short, name),
                None => assert_eq!(name, "tsc"),
            }
        }
        // As `misura_sys::clocks::by_name` took them: any case, with CLOCK_.
        assert_eq!(
            ClockName::from_str("CLOCK_MONOTONIC_RAW", true),
            Ok(ClockName::MonotonicRaw)
        );
        assert_eq!(ClockName::from_str("Tai", true), Ok(ClockName::Tai));
        assert!(ClockName::from_str("sundial", true).is_err());
    }
}
