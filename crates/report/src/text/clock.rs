//! The text form of `misura clock sources`, `clock interference` and `clock
//! timer`; the result types are in `model::clock`.

pub use crate::figure::human_ns;
use crate::model::clock::*;
use crate::model::meta::HostFingerprint;
use crate::model::run::StopReason;
use crate::model::summary::Bucket;
use crate::model::warning::Warning;
use std::io::{self, Write};

fn f1(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| {
        if x >= 100.0 {
            format!("{x:.0}")
        } else {
            format!("{x:.1}")
        }
    })
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
    stop_reason: &StopReason,
    warnings: &[Warning],
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
        "Li et al. (2006): TSC 37 ns a read, gettimeofday() 430 ns."
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

fn bar(count: u64, max: u64, width: usize) -> String {
    if max == 0 || count == 0 {
        return String::new();
    }
    // Log scale: counts span many decades.
    let f = ((count as f64).ln_1p() / (max as f64).ln_1p()).clamp(0.0, 1.0);
    "#".repeat(((f * width as f64).round() as usize).max(1))
}

/// A histogram's rows: each bucket's bounds, its count (`width` wide) and a
/// bar scaled to the largest count.
fn write_histogram(buckets: &[Bucket], width: usize, out: &mut dyn Write) -> io::Result<()> {
    let max = buckets.iter().map(|b| b.count).max().unwrap_or(0);
    for b in buckets {
        writeln!(
            out,
            "  {:>9} – {:>9}  {:>width$}  {}",
            human_ns(b.lower_ns as f64),
            human_ns(b.upper_ns as f64),
            b.count,
            bar(b.count, max, 40)
        )?;
    }
    Ok(())
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
        writeln!(out, "  {:>21}  {:>12}", "step", "count")?;
        write_histogram(&run.histogram, 12, out)?;
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
    write_histogram(&r.histogram, 9, out)?;
    write_end(r.complete, &r.stop_reason, &r.warnings, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_bars() {
        assert_eq!(bar(0, 10, 40), "");
        assert_eq!(bar(10, 10, 40).len(), 40);
        assert_eq!(bar(1, 1_000_000, 40), "##");
    }
}
