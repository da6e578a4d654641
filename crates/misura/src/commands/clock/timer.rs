//! `misura clock timer`: wake-up latency of periodic absolute sleeps, the
//! way cyclictest (rt-tests) measures it.

use crate::shared::exit::Failure;
use crate::shared::output::{completion, duration_flag, host_and_warnings, Finished, Report};
use crate::shared::progress::Progress;
use anyhow::Result;
use misura_report::clock::{TimerConfig, TimerReport};
use misura_report::LoopTuning;
use misura_stats::Summary;
use misura_sys::clock::monotonic_ns;
use misura_sys::timer::{sleep_until_monotonic, Wake};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "\
Wake-up latency of periodic absolute sleeps, measured as cyclictest does:
clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to next = start + k·interval,
then latency = wake time − next. A wake-up later than the following target
skips the periods it missed (counted), as cyclictest does. Memory is locked
(mlockall, like cyclictest -m) and, as cyclictest does, /dev/cpu_dma_latency
is held at 0 µs so the CPUs stay out of deep idle states (--allow-deep-idle:
not, like cyclictest --laptop); --rt-priority runs the loop under SCHED_FIFO
(needs CAP_SYS_NICE) and --cpu pins it. Reports min / mean / percentiles / max,
where the worst wake-up happened, and a log histogram. Memory is bounded.

The same measurement with cyclictest, for comparison (scripts/bench-timer.sh):
  cyclictest -m -q -D 10 -i 1000 -p 80 -a 1 -t 1 -h 1000

Examples:
  misura clock timer
  misura clock timer --duration 60s --interval 200us --rt-priority 80 --cpu 1 --json";

#[derive(clap::Args, Debug, Clone)]
pub struct TimerArgs {
    /// Length of the run (e.g. 10s, 1m).
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub duration: String,
    /// Period of the wake-ups (e.g. 1ms, 200us).
    #[arg(long, default_value = "1ms", value_name = "DURATION")]
    pub interval: String,
    /// Run the loop under SCHED_FIFO at this priority (1..=99); needs CAP_SYS_NICE.
    #[arg(long, value_name = "P")]
    pub rt_priority: Option<i32>,
    /// Pin the loop to this CPU.
    #[arg(long, value_name = "N")]
    pub cpu: Option<usize>,
    /// Do not hold /dev/cpu_dma_latency at 0 µs during the run (cyclictest --laptop).
    #[arg(long)]
    pub allow_deep_idle: bool,
    /// Histogram buckets per decade (log scale).
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub bins_per_decade: u32,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
}

pub fn run(args: &TimerArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let duration_ns = duration_flag("--duration", &args.duration, 1_000_000)?;
    let interval_ns = duration_flag("--interval", &args.interval, 1_000)?;
    if interval_ns > duration_ns {
        return Err(Failure::Params(format!(
            "--interval {} is longer than --duration {}",
            args.interval, args.duration
        ))
        .into());
    }
    if let Some(p) = args.rt_priority {
        if !(1..=99).contains(&p) {
            return Err(Failure::Usage(format!(
                "--rt-priority {p}: SCHED_FIFO priorities are 1..=99"
            ))
            .into());
        }
    }
    let started_at = crate::shared::meta::now_rfc3339();
    let mut warnings = Vec::new();
    let memory_locked = match misura_sys::sched::lock_memory() {
        Ok(()) => true,
        Err(e) => {
            warnings.push(format!(
                "memory not locked ({e}): page faults can add to the latency"
            ));
            false
        }
    };
    // As cyclictest: keep the CPUs out of deep idle states while measuring,
    // or every wake-up pays the exit latency of the idle state.
    let dma_latency = if args.allow_deep_idle {
        None
    } else {
        match misura_sys::timer::hold_cpu_dma_latency(0) {
            Ok(f) => Some(f),
            Err(e) => {
                warnings.push(format!("CPU idle states not limited ({e}): wake-ups from deep idle states add their exit latency"));
                None
            }
        }
    };
    if let Some(cpu) = args.cpu {
        misura_sys::sched::pin_to_cpu(cpu)?;
    }
    if let Some(p) = args.rt_priority {
        misura_sys::sched::set_fifo_priority(p)?;
    }

    let mut latency = Summary::new();
    let (mut missed, mut interrupted, mut max_at, mut max_lat) = (0u64, 0u64, None, i64::MIN);
    let mut progress = Progress::new(
        args.out.quiet,
        Some(Duration::from_nanos(duration_ns as u64)),
    );
    let start = monotonic_ns();
    let end = start + duration_ns;
    let mut next = start + interval_ns;
    let mut next_tick = start + 1_000_000_000;
    while next <= end && stop.load(Ordering::Relaxed) == 0 {
        if sleep_until_monotonic(next)? == Wake::Interrupted {
            interrupted += 1;
            continue;
        }
        let now = monotonic_ns();
        let lat = now - next;
        latency.record(lat);
        if lat > max_lat {
            max_lat = lat;
            max_at = Some(next - start);
        }
        next += interval_ns;
        while next <= now {
            next += interval_ns;
            missed += 1;
        }
        if now >= next_tick {
            next_tick += 1_000_000_000;
            let (n, mx) = (latency.count(), latency.max().unwrap_or(0));
            progress.tick(|| {
                format!(
                    "{n} wake-ups, max latency {}",
                    misura_report::clock::human_ns(mx as f64)
                )
            });
        }
    }
    let elapsed_s = (monotonic_ns() - start) as f64 / 1e9;
    let cpu_dma_latency_us = dma_latency.as_ref().map(|_| 0);
    drop(dma_latency);
    progress.done();
    if args.rt_priority.is_some() {
        let _ = misura_sys::sched::set_normal_scheduling();
    }
    let (complete, stop_reason) = completion(stop);
    let (host, host_warnings) = host_and_warnings(
        LoopTuning {
            netns: None,
            cpu: args.cpu,
            rt_priority: args.rt_priority,
            memory_locked,
        },
        true,
    );
    warnings.extend(
        host_warnings
            .into_iter()
            .filter(|w| !w.contains("memory not locked") || memory_locked),
    );
    if args.rt_priority.is_none() {
        warnings.push("the loop ran under SCHED_OTHER: any runnable task can delay a wake-up; use --rt-priority 80 as cyclictest -p 80 does".into());
    }
    if missed > 0 {
        warnings.push(format!(
            "{missed} period(s) missed: wake-ups came later than the next target"
        ));
    }
    let report = TimerReport {
        meta: crate::shared::meta::meta("misura.clock-timer", started_at),
        complete,
        stop_reason,
        host,
        config: TimerConfig {
            clock: "CLOCK_MONOTONIC".into(),
            interval_ns,
            duration_ns,
            rt_priority: args.rt_priority,
            cpu: args.cpu,
            cpu_dma_latency_us,
            bins_per_decade: args
                .bins_per_decade
                .clamp(1, misura_stats::summary::MAX_BINS_PER_DECADE),
        },
        wakeups: latency.count(),
        missed_periods: missed,
        interrupted_sleeps: interrupted,
        latency: latency.snapshot(),
        max_at_ns: max_at,
        histogram: latency.log_histogram(args.bins_per_decade),
        elapsed_s,
        warnings,
    };
    Ok(Finished::ok(Report::new(
        report,
        "clock-timer",
        "this host",
        misura_report::clock::write_timer_text,
    )))
}
