//! `misura clock tsc`'s run: the TSC frequency against CLOCK_MONOTONIC_RAW
//! and, with an NTP server, by seed 003's minimum-RTT method. The
//! estimators are in `misura_measure::tscfreq`; [`raw`] reads the clocks,
//! [`ntp`] talks SNTP, and this file checks the plan, reads the TSC's facts
//! and makes the report.

use super::{ntp, raw};
use crate::error::MeasureError;
use crate::error::PlanError;
use misura_measure::time::Span;

type Result<T, E = MeasureError> = std::result::Result<T, E>;
use misura_cli::meta::{meta, now_rfc3339};
use misura_cli::progress::Progress;
use misura_cli::warnings::Warn;
use misura_report::tsc::*;
use misura_report::LoopTuning;
use misura_report::Warning;
use misura_sys::tsc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The run the flags ask for, checked.
pub enum TscPlan {
    /// Against CLOCK_MONOTONIC_RAW for this long.
    Raw { duration: Span, windows: u32 },
    /// Against an NTP server.
    Ntp(ntp::NtpPlan),
}

/// The shortest MONOTONIC_RAW run.
pub const MIN_RAW: Span = Span::from_ns(10_000_000);
/// The shortest time between SNTP requests.
pub const MIN_NTP_INTERVAL: Span = Span::from_ns(1_000_000);

impl TscPlan {
    /// `server`: the NTP server, or `None` for a MONOTONIC_RAW run of
    /// `duration` (with a server, the run is `count` requests
    /// `interval` apart and `duration` is not used).
    pub fn new(
        server: Option<&str>,
        duration: Span,
        windows: u32,
        interval: Span,
        count: u64,
    ) -> Result<TscPlan, PlanError> {
        if !tsc::AVAILABLE {
            return Err(PlanError::NoTsc);
        }
        if windows == 0 {
            return Err(PlanError::NoWindows);
        }
        let Some(server) = server else {
            if duration < MIN_RAW {
                return Err(PlanError::RawRunTooShort { min: MIN_RAW });
            }
            return Ok(TscPlan::Raw { duration, windows });
        };
        if interval < MIN_NTP_INTERVAL {
            return Err(PlanError::NtpIntervalTooShort {
                min: MIN_NTP_INTERVAL,
            });
        }
        if count < 2 {
            return Err(PlanError::TooFewExchanges);
        }
        Ok(TscPlan::Ntp(ntp::NtpPlan {
            server: server.to_string(),
            interval,
            count,
            windows,
        }))
    }

    fn config(&self, netns: Option<String>) -> TscConfig {
        match self {
            TscPlan::Raw { duration, windows } => TscConfig {
                mode: "monotonic-raw".into(),
                duration_s: Some(duration.as_ns() as f64 / 1e9),
                windows: *windows,
                server: None,
                interval_s: None,
                count: None,
                netns,
            },
            TscPlan::Ntp(n) => TscConfig {
                mode: "ntp".into(),
                duration_s: None,
                windows: n.windows,
                server: Some(n.server.clone()),
                interval_s: Some(n.interval.as_ns() as f64 / 1e9),
                count: Some(n.count),
                netns,
            },
        }
    }
}

const FLAG_MEANINGS: [(&str, &str); 7] = [
    ("tsc", "the CPU has a time-stamp counter"),
    ("rdtscp", "RDTSCP reads it in order, with the CPU number"),
    (
        "constant_tsc",
        "ticks at a fixed rate whatever the CPU frequency (P-state)",
    ),
    (
        "nonstop_tsc",
        "keeps ticking in deep idle states (C-states)",
    ),
    (
        "tsc_known_freq",
        "the CPU or hypervisor states the TSC frequency; the kernel does not calibrate it",
    ),
    (
        "tsc_reliable",
        "the kernel trusts it without the clocksource watchdog",
    ),
    (
        "tsc_adjust",
        "IA32_TSC_ADJUST: the kernel can keep all CPUs' counters in step",
    ),
];

fn tsc_facts() -> TscFacts {
    let have = tsc::flags();
    let flags = FLAG_MEANINGS
        .iter()
        .map(|(n, m)| TscFlag {
            name: n.to_string(),
            present: have.iter().any(|h| h == n),
            meaning: m.to_string(),
        })
        .collect();
    let (kernel_calibration_hz, kernel_calibration_source) = match tsc::kernel_khz() {
        Some((khz, src)) => (Some(khz * 1e3), src),
        None => (
            None,
            "not reported: no tsc_khz in sysfs and no calibration line readable in the kernel log (dmesg needs root or kernel.dmesg_restrict=0)"
                .to_string(),
        ),
    };
    TscFacts {
        available: tsc::AVAILABLE,
        flags,
        clocksource: misura_sys::host::host_facts().clocksource,
        kernel_calibration_hz,
        kernel_calibration_source,
    }
}

/// What the facts and the estimates say to look at.
fn warnings(facts: &TscFacts, virtualized: bool, ntp: Option<&NtpReport>) -> Vec<Warning> {
    let mut warnings = Vec::new();
    let has = |n: &str| facts.flags.iter().any(|f| f.name == n && f.present);
    if !has("constant_tsc") {
        warnings.push(Warn::NoConstantTsc);
    }
    if !has("nonstop_tsc") {
        warnings.push(Warn::NoNonstopTsc);
    }
    match &facts.clocksource {
        Some(cs) if cs != "tsc" => warnings.push(Warn::ClocksourceNotTsc {
            clocksource: cs.clone(),
        }),
        _ => {}
    }
    if virtualized {
        warnings.push(Warn::VirtualTsc);
    }
    if let Some(c) = ntp.and_then(|n| n.comparison.as_ref()) {
        if !c.within_uncertainty {
            warnings.push(Warn::NtpRateDiffers {
                difference_ppm: c.difference_ppm,
                bound_ppm: c.combined_bound_ppm,
            });
        }
    }
    warnings.into_iter().map(Warning::from).collect()
}

/// A finished `clock tsc` run: the report, and the NTP failure that ended a
/// complete run (the server stopped answering at the end), which fails the
/// run after the report is shown.
pub struct Measured {
    pub report: TscReport,
    pub error: Option<String>,
}

/// Read the TSC's facts, run the plan (progress on stderr unless `quiet`)
/// and make the report; `netns` is the namespace the run is in.
pub fn measure(
    plan: &TscPlan,
    netns: Option<String>,
    stop: &AtomicUsize,
    quiet: bool,
) -> Result<Measured> {
    let started_at = now_rfc3339();
    let facts = tsc_facts();
    let kernel_hz = facts.kernel_calibration_hz;
    let wall = Instant::now();
    let (raw, ntp) = match plan {
        TscPlan::Raw { duration, windows } => {
            (raw::run(*duration, *windows, kernel_hz, stop, quiet), None)
        }
        TscPlan::Ntp(n) => {
            let mut progress = Progress::new(
                quiet,
                Some(Duration::from_nanos(
                    (n.interval.as_ns().max(0) as u64).saturating_mul(n.count),
                )),
            );
            let hint = kernel_hz.unwrap_or_else(raw::quick_frequency);
            let run = ntp::run(n, stop, &mut progress, hint)?;
            progress.done();
            (
                raw::estimate(&run.pairs, run.read, n.windows, kernel_hz),
                Some(run.report),
            )
        }
    };
    let host = misura_run::host::fingerprint(LoopTuning {
        netns: netns.clone(),
        ..LoopTuning::default()
    });
    let warnings = warnings(&facts, host.virtualized == Some(true), ntp.as_ref());
    let stop_reason = misura_cli::exit::stop_reason(stop.load(Ordering::Relaxed));
    let error = ntp.as_ref().and_then(|n| n.error.clone());
    let report = TscReport {
        meta: meta("misura.clock-tsc", started_at),
        complete: stop_reason.is_finished(),
        stop_reason,
        host,
        config: plan.config(netns),
        body: TscFigures {
            tsc: facts,
            raw,
            ntp,
            elapsed_s: wall.elapsed().as_secs_f64(),
        },
        warnings,
    };
    Ok(Measured { report, error })
}
