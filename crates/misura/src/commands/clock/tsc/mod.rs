//! `misura clock tsc`: the TSC frequency against CLOCK_MONOTONIC_RAW and,
//! with `--ntp`, against an NTP server by seed 003's minimum-RTT method.
//! The estimators are in `misura_measure::tscfreq`; `misura_clock::tsc::raw`
//! reads the clocks, `::ntp` talks SNTP, and this file checks the flags and
//! writes the report.

use misura_clock::tsc::{ntp, raw};

use crate::shared::exit::Failure;
use crate::shared::meta::{meta, now_rfc3339};
use crate::shared::output::{Finished, Report};
use crate::shared::progress::Progress;
use crate::shared::units::DurationArg;
use crate::shared::warnings::Warn;
use anyhow::Result;
use misura_report::tsc::*;
use misura_report::Warning;
use misura_report::{LoopTuning, StopReason};
use misura_sys::tsc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "Measure the frequency of the CPU's time-stamp counter (TSC).

Against CLOCK_MONOTONIC_RAW (default): misura reads the TSC, then the raw clock, then \
the TSC again, many times; the raw reading lies inside the TSC bracket, so each read \
ties the two clocks together within half a bracket. The tightest bracket of each short \
time bin is kept. Reported: ΔTSC/ΔRAW over the run with a bound from the bracket widths, \
the least-squares slope of TSC against RAW with its 95 % interval, the frequency in each \
of --windows windows and their spread (stability, ppm), the kernel's own calibration \
where it says (and how far the measurement is from it), and the TSC flags with what \
they mean.

With --ntp SERVER (Li, Zhang, Xie and Yang, 2006): an SNTP request about every --interval; \
the TSC is read at send (s) and at receive (r), the server's Receive Timestamp (ts) \
is taken from the reply. Exchanges with the minimum round trip have the same one-way \
delay, so f = (s_j − s_i)/(ts_j − ts_i) for two of them far apart. misura keeps the \
fastest exchange of each window and picks the pair with the tightest bound: each \
one-way delay is known to within RTT/2, plus the server's stated precision. The result \
is compared with the MONOTONIC_RAW estimate over the same period. The NTP figure is \
against the server's clock: a server whose clock is off in rate shifts it by as much.

Examples:
  misura clock tsc --duration 30s --windows 10
  misura clock tsc --ntp pool.ntp.org --interval 1s --count 300 --export-json tsc.json
  misura clock tsc --netns misura-h1 --ntp 198.18.0.2 --interval 200ms --count 40";

#[derive(clap::Args, Debug, Clone)]
pub struct TscArgs {
    /// Length of a MONOTONIC_RAW run (e.g. 2s, 1m). Ignored with --ntp,
    /// whose length is --count × --interval.
    #[arg(long, default_value = "10s")]
    pub duration: DurationArg,
    /// Number of windows for the stability figure (and, with --ntp, for
    /// picking the fastest exchange of each).
    #[arg(long, default_value_t = 10)]
    pub windows: u32,
    /// NTP server (name or address, optional :PORT, default 123): estimate
    /// the frequency by the method of Li, Zhang, Xie and Yang (2006).
    #[arg(long, value_name = "SERVER[:PORT]")]
    pub ntp: Option<String>,
    /// Time between SNTP requests. Public servers ask for no more than one
    /// request every few seconds; use a server of your own for short intervals.
    #[arg(long, default_value = "1s")]
    pub interval: DurationArg,
    /// Number of SNTP requests.
    #[arg(long, default_value_t = 60)]
    pub count: u64,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
    #[command(flatten)]
    pub ns: crate::shared::netns::NetnsArgs,
}

/// The run the flags ask for, checked.
enum Plan {
    /// Against CLOCK_MONOTONIC_RAW for this long.
    Raw { duration_ns: i64, windows: u32 },
    /// Against an NTP server.
    Ntp(ntp::NtpPlan),
}

impl Plan {
    fn new(args: &TscArgs) -> Result<Plan> {
        if !tsc::AVAILABLE {
            return Err(
                Failure::Params("this build has no TSC to read (not x86-64)".into()).into(),
            );
        }
        if args.windows == 0 {
            return Err(Failure::Usage("--windows must be at least 1".into()).into());
        }
        let Some(server) = &args.ntp else {
            if args.duration.ns < 10_000_000 {
                return Err(Failure::Usage(format!(
                    "--duration {} is too short: give at least 10ms",
                    args.duration
                ))
                .into());
            }
            return Ok(Plan::Raw {
                duration_ns: args.duration.ns,
                windows: args.windows,
            });
        };
        if args.interval.ns < 1_000_000 {
            return Err(
                Failure::Usage(format!("--interval {} is below 1 ms", args.interval)).into(),
            );
        }
        if args.count < 2 {
            return Err(Failure::Usage(
                "--count must be at least 2: the method needs two exchanges".into(),
            )
            .into());
        }
        Ok(Plan::Ntp(ntp::NtpPlan {
            server: server.clone(),
            interval_ns: args.interval.ns,
            count: args.count,
            windows: args.windows,
        }))
    }

    fn config(&self, netns: Option<String>) -> TscConfig {
        match self {
            Plan::Raw {
                duration_ns,
                windows,
            } => TscConfig {
                mode: "monotonic-raw".into(),
                duration_s: Some(*duration_ns as f64 / 1e9),
                windows: *windows,
                server: None,
                interval_s: None,
                count: None,
                netns,
            },
            Plan::Ntp(n) => TscConfig {
                mode: "ntp".into(),
                duration_s: None,
                windows: n.windows,
                server: Some(n.server.clone()),
                interval_s: Some(n.interval_ns as f64 / 1e9),
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

pub fn run(args: &TscArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let plan = Plan::new(args)?;
    let started_at = now_rfc3339();
    let facts = tsc_facts();
    let kernel_hz = facts.kernel_calibration_hz;
    let wall = Instant::now();
    let (raw, ntp) = match &plan {
        Plan::Raw {
            duration_ns,
            windows,
        } => (
            raw::run(*duration_ns, *windows, kernel_hz, stop, args.out.quiet),
            None,
        ),
        Plan::Ntp(n) => {
            let mut progress = Progress::new(
                args.out.quiet,
                Some(Duration::from_nanos(
                    (n.interval_ns.max(0) as u64).saturating_mul(n.count),
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
    let host = crate::shared::host::fingerprint(LoopTuning {
        netns: args.ns.netns.clone(),
        ..LoopTuning::default()
    });
    let warnings = warnings(&facts, host.virtualized == Some(true), ntp.as_ref());
    let stop_reason = match stop.load(Ordering::Relaxed) {
        0 => StopReason::Finished,
        s => crate::shared::output::signal_reason(s),
    };
    let error = ntp.as_ref().and_then(|n| n.error.clone());
    let report = TscReport {
        meta: meta("misura.clock-tsc", started_at),
        complete: stop_reason.is_finished(),
        stop_reason,
        host,
        config: plan.config(args.ns.netns.clone()),
        body: TscFigures {
            tsc: facts,
            raw,
            ntp,
            elapsed_s: wall.elapsed().as_secs_f64(),
        },
        warnings,
    };
    let target = args
        .ntp
        .clone()
        .unwrap_or_else(|| "CLOCK_MONOTONIC_RAW".into());
    let report = Report::new(report, "clock-tsc", target, write_text);
    Ok(match error {
        // A failure after a complete run (the NTP server stopped answering at
        // the end) still shows what was measured, then fails the run.
        Some(e) if report.value.complete => {
            eprintln!("misura: error: {e}");
            Finished::with_code(report, crate::shared::exit::ERROR)
        }
        _ => Finished::ok(report),
    })
}
