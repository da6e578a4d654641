//! `misura clock timer`'s method: wake-up latency of periodic absolute
//! sleeps, the way cyclictest (rt-tests) measures it.

use crate::error::MeasureError;
use crate::error::{Knob, PlanError};
use crate::finish::{completion, host_and_warnings_after_lock};

type Result<T, E = MeasureError> = std::result::Result<T, E>;
use misura_cli::progress::Progress;
use misura_cli::warnings::Warn;
use misura_measure::time::{Instant, Span};
use misura_report::clock::{TimerConfig, TimerFigures, TimerReport};
use misura_report::LoopTuning;
use misura_report::Warning;
use misura_stats::Summary;
use misura_sys::clock::monotonic_ns;
use misura_sys::timer::{sleep_until_monotonic, Wake};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// What the flags ask of `misura clock timer`, before it is checked.
#[derive(Debug, Clone)]
pub struct TimerRequest {
    pub duration: Span,
    pub interval: Span,
    pub rt_priority: Option<i32>,
    pub cpu: Option<usize>,
    /// Hold /dev/cpu_dma_latency at 0 µs during the run.
    pub limit_idle: bool,
    /// Clamped to what the histogram takes.
    pub bins_per_decade: u32,
}

/// The run the flags ask for, checked.
#[derive(Debug, Clone)]
pub struct TimerPlan {
    r: TimerRequest,
}

/// The shortest run.
pub const MIN_DURATION: Span = Span::from_ns(1_000_000);
/// The shortest period of the wake-ups.
pub const MIN_INTERVAL: Span = Span::from_ns(1_000);

impl TimerPlan {
    /// The request checked, in the order the flags were always checked.
    pub fn new(r: TimerRequest) -> Result<TimerPlan, PlanError> {
        let too_short = |knob, min| PlanError::TooShort { knob, min };
        if r.duration < MIN_DURATION {
            return Err(too_short(Knob::Duration, MIN_DURATION));
        }
        if r.interval < MIN_INTERVAL {
            return Err(too_short(Knob::Interval, MIN_INTERVAL));
        }
        if r.interval > r.duration {
            return Err(PlanError::IntervalOverDuration);
        }
        if let Some(p) = r.rt_priority {
            if !(1..=99).contains(&p) {
                return Err(PlanError::RtPriority { asked: p });
            }
        }
        let bins_per_decade = r
            .bins_per_decade
            .clamp(1, misura_stats::summary::MAX_BINS_PER_DECADE);
        Ok(TimerPlan {
            r: TimerRequest {
                bins_per_decade,
                ..r
            },
        })
    }

    /// The run's length.
    pub fn duration(&self) -> Span {
        self.r.duration
    }
}

/// What the loop was given: locked memory, idle states held back (the open
/// /dev/cpu_dma_latency, released on drop).
struct Tuned {
    memory_locked: bool,
    dma_latency: Option<std::fs::File>,
}

/// Lock memory, hold the CPUs out of deep idle states, pin, raise the
/// priority; what cannot be had is a warning, except pinning and priority.
fn tune(plan: &TimerPlan, warnings: &mut Vec<Warning>) -> Result<Tuned> {
    let memory_locked = misura_run::host::lock_memory(warnings);
    // As cyclictest: keep the CPUs out of deep idle states while measuring,
    // or every wake-up pays the exit latency of the idle state.
    let dma_latency = if plan.r.limit_idle {
        match misura_sys::timer::hold_cpu_dma_latency(0) {
            Ok(f) => Some(f),
            Err(e) => {
                warnings.push(
                    Warn::IdleStatesNotLimited {
                        error: e.to_string(),
                    }
                    .into(),
                );
                None
            }
        }
    } else {
        None
    };
    if let Some(cpu) = plan.r.cpu {
        misura_sys::sched::pin_to_cpu(cpu)?;
    }
    if let Some(p) = plan.r.rt_priority {
        misura_sys::sched::set_fifo_priority(p)?;
    }
    Ok(Tuned {
        memory_locked,
        dma_latency,
    })
}

/// The wake-ups of one run.
struct Wakeups {
    latency: Summary,
    missed: u64,
    interrupted: u64,
    /// Offset from the start of the target of the latest wake-up.
    max_at: Option<i64>,
    elapsed_s: f64,
}

/// Sleep to each target start + k·interval and record how late the wake-up
/// was; a wake-up past later targets skips them (counted as missed).
fn wake_loop(plan: &TimerPlan, stop: &AtomicUsize, progress: &mut Progress) -> Result<Wakeups> {
    let mut w = Wakeups {
        latency: Summary::new(),
        missed: 0,
        interrupted: 0,
        max_at: None,
        elapsed_s: 0.0,
    };
    let mut max_lat = i64::MIN;
    let start = monotonic_ns();
    let end = start + plan.r.duration.as_ns();
    let mut next = start + plan.r.interval.as_ns();
    let mut next_tick = start + 1_000_000_000;
    while next <= end && stop.load(Ordering::Relaxed) == 0 {
        if sleep_until_monotonic(Instant::from_ns(next))? == Wake::Interrupted {
            w.interrupted += 1;
            continue;
        }
        let now = monotonic_ns();
        let lat = now - next;
        w.latency.record(lat);
        if lat > max_lat {
            max_lat = lat;
            w.max_at = Some(next - start);
        }
        next += plan.r.interval.as_ns();
        // Targets this wake-up came too late for are skipped; only those
        // inside the run count as missed (a late last wake-up must not
        // count periods after the end).
        while next <= now {
            if next <= end {
                w.missed += 1;
            }
            next += plan.r.interval.as_ns();
        }
        if now >= next_tick {
            next_tick += 1_000_000_000;
            let (n, mx) = (w.latency.count(), w.latency.max().unwrap_or(0));
            progress.tick(|| {
                format!(
                    "{n} wake-ups, max latency {}",
                    misura_report::clock::human_ns(mx as f64)
                )
            });
        }
    }
    w.elapsed_s = (monotonic_ns() - start) as f64 / 1e9;
    Ok(w)
}

/// Tune the thread, run the wake-ups (progress on stderr unless `quiet`)
/// and make the report.
pub fn measure(plan: &TimerPlan, stop: &AtomicUsize, quiet: bool) -> Result<TimerReport> {
    let started_at = misura_cli::meta::now_rfc3339();
    let mut warnings = Vec::new();
    let tuned = tune(plan, &mut warnings)?;
    let mut progress = Progress::new(
        quiet,
        Some(Duration::from_nanos(plan.r.duration.as_ns() as u64)),
    );
    let w = wake_loop(plan, stop, &mut progress)?;
    let cpu_dma_latency_us = tuned.dma_latency.as_ref().map(|_| 0);
    drop(tuned.dma_latency);
    progress.done();
    if plan.r.rt_priority.is_some() {
        let _ = misura_sys::sched::set_normal_scheduling();
    }
    let (complete, stop_reason) = completion(stop);
    let memory_locked = tuned.memory_locked;
    let (host, host_warnings) = host_and_warnings_after_lock(LoopTuning {
        netns: None,
        cpu: plan.r.cpu,
        rt_priority: plan.r.rt_priority,
        memory_locked,
        ..Default::default()
    });
    warnings.extend(host_warnings);
    if plan.r.rt_priority.is_none() {
        warnings.push(Warn::SchedOther.into());
    }
    if w.missed > 0 {
        warnings.push(Warn::MissedPeriods { missed: w.missed }.into());
    }
    Ok(TimerReport {
        meta: misura_cli::meta::meta("misura.clock-timer", started_at),
        complete,
        stop_reason,
        host,
        config: TimerConfig {
            clock: "CLOCK_MONOTONIC".into(),
            interval_ns: plan.r.interval.as_ns(),
            duration_ns: plan.r.duration.as_ns(),
            rt_priority: plan.r.rt_priority,
            cpu: plan.r.cpu,
            cpu_dma_latency_us,
            bins_per_decade: plan.r.bins_per_decade,
        },
        body: TimerFigures {
            wakeups: w.latency.count(),
            missed_periods: w.missed,
            interrupted_sleeps: w.interrupted,
            latency: w.latency.snapshot().into(),
            max_at_ns: w.max_at,
            histogram: misura_report::model::summary::buckets(
                w.latency.log_histogram(plan.r.bins_per_decade),
            ),
            hdr: misura_report::model::summary::buckets(w.latency.hdr_buckets()),
            elapsed_s: w.elapsed_s,
        },
        warnings,
    })
}
