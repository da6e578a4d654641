//! The results of `misura clock sources`, `misura clock interference` and
//! `misura clock timer`, and their text forms.

use crate::model::{HostFingerprint, Meta};
use misura_measure::clockstats::Gap;
use misura_stats::{Bucket, SummarySnapshot};
use serde::{Deserialize, Serialize};
use std::io::{self, Write};

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
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SourcesReport {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: String,
    pub host: HostFingerprint,
    pub config: SourcesConfig,
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
    pub warnings: Vec<crate::Warning>,
}

fn f1(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| {
        if x >= 100.0 {
            format!("{x:.0}")
        } else {
            format!("{x:.1}")
        }
    })
}

/// Nanoseconds for people: 37 ns, 4.00 µs, 12.3 ms, 1.20 s.
pub fn human_ns(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{ns:.0} ns")
    } else if a < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if a < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn write_host_line(h: &HostFingerprint, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "host: {} · kernel {} ({}) · clocksource {} · {} CPU(s){}",
        h.hostname.as_deref().unwrap_or("?"),
        h.kernel_release.as_deref().unwrap_or("?"),
        h.preempt_model.as_deref().unwrap_or("preemption ?"),
        h.clocksource.as_deref().unwrap_or("?"),
        h.online_cpus,
        if h.virtualized == Some(true) {
            " · virtual machine"
        } else {
            ""
        }
    )
}

fn write_end(
    complete: bool,
    stop_reason: &str,
    warnings: &[crate::Warning],
    out: &mut dyn Write,
) -> io::Result<()> {
    if !complete {
        writeln!(out, "PARTIAL RESULT: {stop_reason}")?;
    }
    for w in warnings {
        writeln!(out, "warning: {w}")?;
    }
    Ok(())
}

/// Human output of `misura clock sources`: seed 003's Table 1 for this machine.
pub fn write_sources_text(r: &SourcesReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "misura clock sources: read cost, resolution and steps of every time source"
    )?;
    write_host_line(&r.host, out)?;
    writeln!(
        out,
        "kernel clocksource: {} (available: {})",
        r.clocksource.current.as_deref().unwrap_or("unreadable"),
        if r.clocksource.available.is_empty() {
            "unreadable".into()
        } else {
            r.clocksource.available.join(" ")
        }
    )?;
    if let Some(t) = &r.tsc {
        write!(
            out,
            "TSC: flags {}",
            if t.flags.is_empty() {
                "none".into()
            } else {
                t.flags.join(" ")
            }
        )?;
        if let Some(hz) = t.measured_hz {
            write!(
                out,
                "; {:.3} MHz measured against CLOCK_MONOTONIC_RAW over {}",
                hz / 1e6,
                human_ns(t.measured_over_ns as f64)
            )?;
        }
        if let Some(k) = t.kernel_hz {
            write!(out, "; kernel {:.3} MHz", k / 1e6)?;
            if let Some(hz) = t.measured_hz {
                write!(out, " ({:+.1} ppm)", (hz - k) / k * 1e6)?;
            }
        }
        writeln!(out)?;
    }
    writeln!(out, "NIC clocks: {}", r.ptp_note)?;
    write_phcs(&r.phcs, &r.ptp_daemons, out)?;
    writeln!(out, "read cost: {}", r.config.cost_method)?;
    writeln!(out)?;
    writeln!(
        out,
        "{:<24} {:>9} {:>9} {:>10} {:>10} {:>9} {:>7}  good for",
        "source", "median ns", "p99 ns", "resol. ns", "min step", "zero", "backw."
    )?;
    for s in &r.sources {
        if !s.usable {
            writeln!(
                out,
                "{:<24} unusable: {}",
                s.name,
                s.error.as_deref().unwrap_or("?")
            )?;
            continue;
        }
        writeln!(
            out,
            "{:<24} {:>9} {:>9} {:>10} {:>10} {:>9} {:>7}  {}",
            s.name,
            f1(s.read_cost_median_ns),
            f1(s.read_cost_p99_ns),
            f1(s.resolution_ns),
            f1(s.smallest_step_ns),
            s.zero_steps,
            s.monotonicity_violations,
            s.good_for
        )?;
        if !s.interfaces.is_empty() {
            writeln!(out, "{:<24} interface(s): {}", "", s.interfaces.join(", "))?;
        }
    }
    writeln!(
        out,
        "(zero: consecutive reads with the same value; backw.: reads lower than the previous one)"
    )?;
    writeln!(
        out,
        "seed 003 (2011): TSC 37 ns a read, gettimeofday() 430 ns."
    )?;
    write_end(r.complete, &r.stop_reason, &r.warnings, out)
}

/// The NIC clocks against the system clock, one line each, and the PTP
/// daemons (shared by `clock sources` and `host check`).
pub fn write_phcs(phcs: &[PhcInfo], daemons: &[PtpDaemon], out: &mut dyn Write) -> io::Result<()> {
    for p in phcs {
        let name = format!(
            "{} ({}{})",
            p.device,
            p.clock_name.as_deref().unwrap_or("unnamed"),
            if p.interfaces.is_empty() {
                String::new()
            } else {
                format!(", {}", p.interfaces.join(" "))
            }
        );
        if !p.usable {
            writeln!(
                out,
                "  {name}: cannot be read: {}",
                p.error.as_deref().unwrap_or("?")
            )?;
            continue;
        }
        let opt = |v: Option<f64>| v.map_or("-".to_string(), human_ns);
        write!(
            out,
            "  {name}: read {} (median of {}, p99 {}); PHC − CLOCK_REALTIME {} ± {}",
            opt(p.read_cost_median_ns),
            p.reads,
            opt(p.read_cost_p99_ns),
            opt(p.offset_ns),
            opt(p.offset_uncertainty_ns),
        )?;
        match (p.drift_ppm, p.drift_uncertainty_ppm) {
            (Some(d), Some(u)) => write!(out, ", drift {d:+.3} ± {u:.3} ppm")?,
            (Some(d), None) => write!(out, ", drift {d:+.3} ppm")?,
            _ => {}
        }
        writeln!(
            out,
            " ({}, {} samples over {}); {}",
            p.method.as_deref().unwrap_or("?"),
            p.samples,
            p.span_ns.map_or("-".into(), |s| human_ns(s as f64)),
            if p.disciplined_by.is_empty() {
                "free-running (no ptp4l/phc2sys names it)".to_string()
            } else {
                format!("disciplined by {}", p.disciplined_by.join(", "))
            }
        )?;
    }
    if daemons.is_empty() {
        writeln!(
            out,
            "  PTP daemons: none running (no ptp4l, phc2sys, ts2phc, timemaster)"
        )?;
    } else {
        for d in daemons {
            writeln!(
                out,
                "  PTP daemon: {} (pid {}): {}",
                d.name, d.pid, d.cmdline
            )?;
        }
    }
    Ok(())
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

/// The result of `misura clock interference`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct InterferenceReport {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: String,
    pub host: HostFingerprint,
    pub config: InterferenceConfig,
    /// clock_getres of the clock (TSC: one tick), ns.
    pub resolution_ns: f64,
    /// TSC rate used to turn ticks into ns (clock TSC only).
    pub tsc_hz: Option<f64>,
    pub runs: Vec<InterferenceRun>,
    pub warnings: Vec<crate::Warning>,
}

fn bar(count: u64, max: u64, width: usize) -> String {
    if max == 0 || count == 0 {
        return String::new();
    }
    // Log scale: counts span many decades.
    let f = ((count as f64).ln_1p() / (max as f64).ln_1p()).clamp(0.0, 1.0);
    "#".repeat(((f * width as f64).round() as usize).max(1))
}

fn opt_ns(v: Option<i64>) -> String {
    v.map_or("-".into(), |x| human_ns(x as f64))
}

/// Human output of `misura clock interference`.
pub fn write_interference_text(r: &InterferenceReport, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.config;
    writeln!(
        out,
        "misura clock interference: tight loop of {} reads, {} per run, loop {}",
        c.clock,
        human_ns(c.duration_ns as f64),
        c.cpu
            .map_or("not pinned".into(), |n| format!("pinned to CPU {n}"))
    )?;
    write_host_line(&r.host, out)?;
    writeln!(
        out,
        "clock resolution {}{}",
        human_ns(r.resolution_ns),
        r.tsc_hz
            .map_or(String::new(), |h| format!(" (TSC at {:.3} MHz)", h / 1e6))
    )?;
    for run in &r.runs {
        writeln!(out)?;
        let load = if run.load_threads == 0 {
            "no load".to_string()
        } else {
            format!(
                "{} busy thread(s) on CPU(s) {:?}",
                run.load_threads, run.load_cpus
            )
        };
        writeln!(
            out,
            "[{}] {}: {} reads in {:.2} s = {:.1} M reads/s; {} zero steps, {} backward{}",
            run.label,
            load,
            run.reads,
            run.elapsed_s,
            run.reads_per_s / 1e6,
            run.zero_steps,
            run.backward_steps,
            if run.complete { "" } else { " (interrupted)" }
        )?;
        let s = &run.steps;
        writeln!(
            out,
            "  non-zero steps: {} · min {} · median {} · p99 {} · p99.9 {} · max {} · time lost in steps > 10 µs: {}",
            s.count,
            opt_ns(s.min_ns),
            opt_ns(s.median_ns),
            opt_ns(s.p99_ns),
            opt_ns(s.p999_ns),
            opt_ns(s.max_ns),
            human_ns(run.time_in_gaps_over_10us_ns as f64)
        )?;
        let max = run.histogram.iter().map(|b| b.count).max().unwrap_or(0);
        writeln!(out, "  {:>21}  {:>12}", "step", "count")?;
        for b in &run.histogram {
            writeln!(
                out,
                "  {:>9} – {:>9}  {:>12}  {}",
                human_ns(b.lower_ns as f64),
                human_ns(b.upper_ns as f64),
                b.count,
                bar(b.count, max, 40)
            )?;
        }
        if !run.longest_gaps.is_empty() {
            writeln!(out, "  longest gaps (step @ offset from start):")?;
            for g in &run.longest_gaps {
                writeln!(
                    out,
                    "    {:>10} @ {:.6} s",
                    human_ns(g.step_ns as f64),
                    g.at_ns as f64 / 1e9
                )?;
            }
        }
    }
    if r.runs.len() == 2 {
        let (a, b) = (&r.runs[0], &r.runs[1]);
        writeln!(out)?;
        writeln!(
            out,
            "{:<22} {:>12} {:>12}",
            "side by side", a.label, b.label
        )?;
        let rows: [(&str, String, String); 6] = [
            (
                "reads/s",
                format!("{:.2} M", a.reads_per_s / 1e6),
                format!("{:.2} M", b.reads_per_s / 1e6),
            ),
            (
                "median step",
                opt_ns(a.steps.median_ns),
                opt_ns(b.steps.median_ns),
            ),
            ("p99 step", opt_ns(a.steps.p99_ns), opt_ns(b.steps.p99_ns)),
            (
                "p99.9 step",
                opt_ns(a.steps.p999_ns),
                opt_ns(b.steps.p999_ns),
            ),
            ("max step", opt_ns(a.steps.max_ns), opt_ns(b.steps.max_ns)),
            (
                "lost in steps > 10 µs",
                human_ns(a.time_in_gaps_over_10us_ns as f64),
                human_ns(b.time_in_gaps_over_10us_ns as f64),
            ),
        ];
        for (k, x, y) in rows {
            writeln!(out, "{k:<22} {x:>12} {y:>12}")?;
        }
    }
    write_end(r.complete, &r.stop_reason, &r.warnings, out)
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
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TimerReport {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: String,
    pub host: HostFingerprint,
    pub config: TimerConfig,
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
    pub warnings: Vec<crate::Warning>,
}

/// Human output of `misura clock timer`.
pub fn write_timer_text(r: &TimerReport, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.config;
    writeln!(
        out,
        "misura clock timer: clock_nanosleep({}, TIMER_ABSTIME) every {} for {}; {} · {}",
        c.clock,
        human_ns(c.interval_ns as f64),
        human_ns(c.duration_ns as f64),
        c.rt_priority
            .map_or("SCHED_OTHER".into(), |p| format!("SCHED_FIFO {p}")),
        c.cpu.map_or("not pinned".into(), |n| format!("CPU {n}"))
    )?;
    write_host_line(&r.host, out)?;
    writeln!(
        out,
        "idle states: {}",
        c.cpu_dma_latency_us
            .map_or("not limited".into(), |u| format!(
                "held at {u} µs exit latency (/dev/cpu_dma_latency)"
            ))
    )?;
    let l = &r.latency;
    writeln!(
        out,
        "{} wake-ups in {:.2} s, {} missed period(s), {} interrupted sleep(s)",
        r.wakeups, r.elapsed_s, r.missed_periods, r.interrupted_sleeps
    )?;
    writeln!(out, "wake-up latency (wake − target):")?;
    writeln!(
        out,
        "  min {} · mean {} · median {} · p90 {} · p99 {} · p99.9 {} · max {}{}",
        opt_ns(l.min_ns),
        l.mean_ns.map_or("-".into(), human_ns),
        opt_ns(l.median_ns),
        opt_ns(l.p90_ns),
        opt_ns(l.p99_ns),
        opt_ns(l.p999_ns),
        opt_ns(l.max_ns),
        r.max_at_ns
            .map_or(String::new(), |t| format!(" (at {:.3} s)", t as f64 / 1e9))
    )?;
    let max = r.histogram.iter().map(|b| b.count).max().unwrap_or(0);
    for b in &r.histogram {
        writeln!(
            out,
            "  {:>9} – {:>9}  {:>9}  {}",
            human_ns(b.lower_ns as f64),
            human_ns(b.upper_ns as f64),
            b.count,
            bar(b.count, max, 40)
        )?;
    }
    write_end(r.complete, &r.stop_reason, &r.warnings, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_units() {
        assert_eq!(human_ns(37.0), "37 ns");
        assert_eq!(human_ns(4000.0), "4.00 µs");
        assert_eq!(human_ns(12_300_000.0), "12.30 ms");
        assert_eq!(human_ns(1.2e9), "1.20 s");
        assert_eq!(bar(0, 10, 40), "");
        assert_eq!(bar(10, 10, 40).len(), 40);
        assert_eq!(bar(1, 1_000_000, 40), "##");
    }
}
