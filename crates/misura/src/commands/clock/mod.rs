//! `misura clock`: know the instrument's clocks. The method (the reads,
//! the loops, the TSC's estimates, the reports) is `misura-clock`'s; here
//! the flags become a plan once, what the plan refuses becomes a sentence
//! that names the flags, and the result is printed, exported and kept.

pub mod args;
pub use args::{ClockCommand, InterferenceArgs, SourcesArgs, TimerArgs, TscArgs};

use crate::shared::exit::Failure;
use crate::shared::output::{Finished, Report};
use crate::shared::units::DurationArg;
use anyhow::Result;
use misura_clock::interference::{InterferencePlan, InterferenceRequest};
use misura_clock::sources::SourcesPlan;
use misura_clock::timer::{TimerPlan, TimerRequest};
use misura_clock::tsc::TscPlan;
use misura_clock::{Knob, MeasureError, PlanError};
use misura_report::clock::{write_interference_text, write_sources_text, write_timer_text};
use misura_time::Span;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Run one `misura clock` subcommand to its report.
pub fn run(c: &ClockCommand, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    match c {
        ClockCommand::Sources(a) => sources(a, stop),
        ClockCommand::Interference(a) => interference(a, stop),
        ClockCommand::Timer(a) => timer(a, stop),
        ClockCommand::Tsc(a) => tsc(a, stop),
    }
}

/// What a plan refused, in the flags' words; `durations` names the flag and
/// its value for each duration knob of the command. Every refusal is a
/// [`Failure`] but an unmeasurable TSC rate, which was always an error.
fn flag_sentence(e: PlanError, durations: &[(Knob, &str, &DurationArg)]) -> anyhow::Error {
    let usage = |m: String| Failure::Usage(m).into();
    let params = |m: String| Failure::Params(m).into();
    let arg = |k: Knob| durations.iter().find(|d| d.0 == k).map(|d| d.2);
    match e {
        PlanError::NoReads => params("--reads 0: give at least one read per source".into()),
        PlanError::TooShort { knob, min } => match durations.iter().find(|d| d.0 == knob) {
            Some((_, flag, value)) => value.too_short(flag, min).into(),
            None => params(e.to_string()),
        },
        PlanError::IntervalOverDuration => match (arg(Knob::Interval), arg(Knob::Duration)) {
            (Some(i), Some(d)) => params(format!("--interval {i} is longer than --duration {d}")),
            _ => params(e.to_string()),
        },
        PlanError::RtPriority { asked } => usage(format!(
            "--rt-priority {asked}: SCHED_FIFO priorities are 1..=99"
        )),
        PlanError::NoTsc => params("--clock tsc: this build has no TSC (x86-64 only)".into()),
        PlanError::TscRateUnknown => anyhow::anyhow!("{e}"),
        PlanError::TooMuchLoad { asked, max } => params(format!(
            "--load {asked} is more than this host can run usefully: at most {max} busy threads (4 per online CPU); more only queue behind each other"
        )),
        PlanError::CompareWithoutLoad => usage("--compare needs --load N with N ≥ 1".into()),
        e => tsc_sentence(e, durations),
    }
}

/// `clock tsc`'s refusals.
fn tsc_sentence(e: PlanError, durations: &[(Knob, &str, &DurationArg)]) -> anyhow::Error {
    let usage = |m: String| Failure::Usage(m).into();
    let arg = |k: Knob| durations.iter().find(|d| d.0 == k).map(|d| d.2);
    match (&e, arg(Knob::Duration), arg(Knob::Interval)) {
        (PlanError::NoTsc, ..) => {
            Failure::Params("this build has no TSC to read (not x86-64)".into()).into()
        }
        (PlanError::NoWindows, ..) => usage("--windows must be at least 1".into()),
        (PlanError::RawRunTooShort { .. }, Some(d), _) => {
            usage(format!("--duration {d} is too short: give at least 10ms"))
        }
        (PlanError::NtpIntervalTooShort { .. }, _, Some(i)) => {
            usage(format!("--interval {i} is below 1 ms"))
        }
        (PlanError::TooFewExchanges, ..) => {
            usage("--count must be at least 2: the method needs two exchanges".into())
        }
        _ => Failure::Usage(e.to_string()).into(),
    }
}

/// A measurement's failure with its exit class: the host's own error as it
/// is (its class is the host error's: a capability, an interface), an NTP
/// server that names no address as a parameter to change.
fn measure_failure(e: MeasureError) -> anyhow::Error {
    match e {
        MeasureError::Sys(s) => s.into(),
        e @ (MeasureError::NtpNoAddress { .. } | MeasureError::NtpUnresolved { .. }) => {
            Failure::Params(e.to_string()).into()
        }
        e => e.into(),
    }
}

/// A finished measurement of this host's clocks.
fn this_host<T: serde::Serialize + 'static>(
    report: T,
    subcommand: &str,
    text: fn(&T, &mut dyn std::io::Write) -> std::io::Result<()>,
) -> Finished {
    Finished::ok(Report::new(report, subcommand, "this host", text))
}

fn sources(a: &SourcesArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let plan = SourcesPlan::new(a.reads, Span::from_ns(a.budget.ns))
        .map_err(|e| flag_sentence(e, &[(Knob::Budget, "--budget", &a.budget)]))?;
    let report = misura_clock::sources::measure(&plan, stop, a.out.quiet);
    Ok(this_host(report, "clock-sources", write_sources_text))
}

fn interference(a: &InterferenceArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let plan = InterferencePlan::new(&InterferenceRequest {
        duration: Span::from_ns(a.duration.ns),
        clock: a.clock.posix(),
        load: a.load,
        compare: a.compare,
        cpu: a.cpu,
        gaps: a.gaps,
        bins_per_decade: a.bins_per_decade,
    })
    .map_err(|e| flag_sentence(e, &[(Knob::Duration, "--duration", &a.duration)]))?;
    let report =
        misura_clock::interference::measure(&plan, stop, a.out.quiet).map_err(measure_failure)?;
    Ok(this_host(
        report,
        "clock-interference",
        write_interference_text,
    ))
}

fn timer(a: &TimerArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let plan = TimerPlan::new(TimerRequest {
        duration: Span::from_ns(a.duration.ns),
        interval: Span::from_ns(a.interval.ns),
        rt_priority: a.rt_priority,
        cpu: a.cpu,
        limit_idle: !a.allow_deep_idle,
        bins_per_decade: a.bins_per_decade,
    })
    .map_err(|e| {
        let d = [
            (Knob::Duration, "--duration", &a.duration),
            (Knob::Interval, "--interval", &a.interval),
        ];
        flag_sentence(e, &d)
    })?;
    let report = misura_clock::timer::measure(&plan, stop, a.out.quiet).map_err(measure_failure)?;
    Ok(this_host(report, "clock-timer", write_timer_text))
}

fn tsc(a: &TscArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let plan = TscPlan::new(
        a.ntp.as_deref(),
        Span::from_ns(a.duration.ns),
        a.windows,
        Span::from_ns(a.interval.ns),
        a.count,
    )
    .map_err(|e| {
        let d = [
            (Knob::Duration, "--duration", &a.duration),
            (Knob::Interval, "--interval", &a.interval),
        ];
        tsc_sentence(e, &d)
    })?;
    let m = misura_clock::tsc::measure(&plan, a.ns.netns.clone(), stop, a.out.quiet)
        .map_err(measure_failure)?;
    let target = a
        .ntp
        .clone()
        .unwrap_or_else(|| "CLOCK_MONOTONIC_RAW".into());
    let report = Report::new(
        m.report,
        "clock-tsc",
        target,
        misura_report::tsc::write_text,
    );
    Ok(match m.error {
        // A failure after a complete run (the NTP server stopped answering at
        // the end) still shows what was measured, then fails the run.
        Some(e) if report.value.complete => {
            eprintln!("misura: error: {e}");
            Finished::with_code(report, crate::shared::exit::ERROR)
        }
        _ => Finished::ok(report),
    })
}
