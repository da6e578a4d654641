//! The text form of `misura oneway` (and of a calibration run): compact
//! tables in microseconds, and the host and timestamp-source lines other
//! commands print too.

use crate::model::meta::*;
use crate::model::oneway::*;
use crate::model::CalibrationLine;
use crate::model::SummarySnapshot;
use std::io::{self, Write};

use super::heading::{in_netns, partial};

use super::percentiles::{us, write_rows, Columns};

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// Write one oneway/calibrate result for a person to read.
pub fn write_oneway(r: &OnewayReport, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.config;
    let title = if r.mode == "calibrate" {
        "misura calibrate"
    } else {
        "misura oneway"
    };
    writeln!(
        out,
        "{title}: {} -> {}{}  {}",
        c.tx,
        c.rx,
        in_netns(c.netns.as_deref()),
        partial(r.complete, &r.stop_reason).trim_start()
    )?;
    writeln!(
        out,
        "schedule: {:?}, period {:.3} µs ({:.0} frames/s, offered load {:.4} %), link {} Mb/s ({}), ethertype {:#06x}",
        c.pattern,
        c.period_ns as f64 / 1000.0,
        c.rate_fps,
        c.offered_load * 100.0,
        c.link.rate_bps / 1_000_000,
        c.link_speed_source,
        c.ethertype
    )?;
    write_sources(&r.timestamps, out)?;
    if let Some(hc) = &r.timestamps.hardware_clocks {
        super::hardware::write_clocks(hc, out)?;
    }
    write_host(&r.host, out)?;
    let t = &r.totals;
    writeln!(
        out,
        "frames: sent {}  received {}  lost {}  duplicates {}  late {}  reordered {}  postponed {}  foreign {}  malformed {}",
        t.sent, t.received, t.lost, t.duplicates, t.late, t.reordered, t.postponed, t.foreign_frames, t.malformed_frames
    )?;
    writeln!(
        out,
        "loop: {:.0} frames/s over {:.2} s; send() takes {} µs (median TX window)",
        r.loop_stats.achieved_rate_fps,
        r.loop_stats.elapsed_s,
        us(r.loop_stats.tx_window.as_ref().and_then(|s| s.median_ns))
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{:<8} {:<13} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9} {:>9}",
        "P bytes",
        "latency µs",
        "count",
        "min",
        "median",
        "p90",
        "p99",
        "p99.9",
        "max",
        "mean",
        "stddev"
    )?;
    for s in &r.per_size {
        write_latencies(&format!("{}", s.payload_bytes), &s.latency, out)?;
    }
    if r.per_size.len() > 1 {
        write_latencies("all", &r.overall, out)?;
    }
    if let Some(fit) = &r.internal_fit {
        writeln!(out)?;
        writeln!(out, "calibration: mean internal latency Amil(P) = α + β·P, least squares over payload sizes, 95 % intervals (Student t, n−2 dof):")?;
        write_line_table(
            &[
                ("user Mil", Some(&fit.user)),
                ("kernel", fit.kernel.as_ref()),
                ("hardware", fit.hardware.as_ref()),
            ],
            out,
        )?;
    }
    if let Some(cal) = &r.calibration {
        writeln!(out)?;
        writeln!(
            out,
            "calibration used: {} (made {})",
            cal.profile, cal.created_at
        )?;
    }
    if let Some(sut) = &r.sut {
        writeln!(out)?;
        writeln!(
            out,
            "SUT latency Msl = Mul − Amil(P) − C, fitted as α' + β'·L over frame length L (byte time 8/R = {:.4} ns):",
            sut.byte_time_ns
        )?;
        write_line_table(
            &[
                ("user Msl", sut.user.as_ref()),
                ("kernel", sut.kernel.as_ref()),
                ("hardware", sut.hardware.as_ref()),
            ],
            out,
        )?;
        if let Some(v) = sut.user_verdict {
            writeln!(out, "verdict (user windows): {}", v.explain())?;
        }
        if let Some(v) = sut.kernel_verdict {
            writeln!(out, "verdict (kernel stamps): {}", v.explain())?;
        }
        if let Some(v) = sut.hardware_verdict {
            writeln!(out, "verdict (NIC hardware stamps): {}", v.explain())?;
        }
        if let Some(c) = &sut.consistency {
            write_headline(c, out)?;
        }
        if let Some(n) = &sut.note {
            writeln!(out, "note: {n}")?;
        }
    }
    if let Some(l) = &r.load {
        super::load::write_oneway_load(l, out)?;
    }
    if let Some(f) = &r.frames_file {
        writeln!(out, "\nper-frame log: {f}")?;
    }
    for w in &r.warnings {
        writeln!(out, "warning: {w}")?;
    }
    Ok(())
}

/// The verdict the run stands by, the estimate it rests on, and whether
/// the others agree with it.
fn write_headline(c: &SutConsistency, out: &mut dyn Write) -> io::Result<()> {
    let agree = match c.agreement {
        SutAgreement::Single => "the only estimate this run has".to_string(),
        SutAgreement::Consistent => "the other estimates agree within their 95 % intervals".into(),
        SutAgreement::Inconsistent => {
            let mut others: Vec<&str> = Vec::new();
            for d in &c.disagreements {
                for e in [&d.first, &d.second] {
                    if e.source != c.rests_on && !others.contains(&e.source.words()) {
                        others.push(e.source.words());
                    }
                }
            }
            if others.is_empty() {
                "the other estimates disagree with each other (see the warning)".into()
            } else {
                format!(
                    "the {} disagree (see the warning)",
                    others.join(" and the ")
                )
            }
        }
    };
    writeln!(
        out,
        "verdict: {}, resting on the {} (SUT latency α' {:.3} ± {:.3} µs); {agree}",
        c.verdict.explain().split(':').next().unwrap_or_default(),
        c.rests_on.words(),
        c.latency.value / 1000.0,
        c.latency.ci95 / 1000.0,
    )
}

fn write_sources(ts: &TimestampInfo, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "timestamps: user windows on {}; kernel software TX {} RX {}; NIC hardware TX {} RX {}{}",
        ts.user_clock,
        yes(ts.kernel_software_tx),
        yes(ts.kernel_software_rx),
        yes(ts.hardware_tx),
        yes(ts.hardware_rx),
        ts.hardware_note
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default()
    )
}

/// One line about the host and how the loop ran.
pub fn write_host(h: &HostFingerprint, out: &mut dyn Write) -> io::Result<()> {
    let t = &h.tuning;
    writeln!(
        out,
        "host: {} kernel {} ({}), clocksource {}, governor {}{}; loop {}{}{}{}",
        h.hostname.as_deref().unwrap_or("?"),
        h.kernel_release.as_deref().unwrap_or("?"),
        h.preempt_model
            .as_deref()
            .unwrap_or("preemption model unknown"),
        h.clocksource.as_deref().unwrap_or("?"),
        h.governor.as_deref().unwrap_or("n/a"),
        if h.virtualized == Some(true) {
            ", virtual machine"
        } else {
            ""
        },
        t.cpu
            .map(|c| format!("pinned to CPU {c}"))
            .unwrap_or_else(|| "not pinned".into()),
        t.rt_priority
            .map(|p| format!(", SCHED_FIFO {p}"))
            .unwrap_or_default(),
        if t.memory_locked {
            ", memory locked"
        } else {
            ""
        },
        busy_poll_text(t.busy_poll.as_ref())
    )?;
    if let Some(l) = &h.load {
        let per_cpu: Vec<String> = l
            .cpu_busy
            .iter()
            .map(|c| format!("CPU {} {:.0} %", c.cpu, c.busy * 100.0))
            .collect();
        writeln!(
            out,
            "host load over the run ({:.1} s, /proc/stat): {} busy (mean {:.0} %); misura used {:.2} CPUs{}",
            l.window_s,
            per_cpu.join(", "),
            l.mean_busy * 100.0,
            l.process_cpus,
            if l.busy_threads > 0 {
                format!(", {} busy thread(s) added (--cpu-load)", l.busy_threads)
            } else {
                String::new()
            }
        )?;
    }
    Ok(())
}

fn busy_poll_text(b: Option<&BusyPoll>) -> String {
    match b {
        None => String::new(),
        Some(b) => match (b.so_busy_poll_us, &b.so_busy_poll_error) {
            (Some(us), _) => format!(", busy-polling (SO_BUSY_POLL {us} µs)"),
            (None, Some(e)) => format!(", busy-polling (no SO_BUSY_POLL: {e})"),
            (None, None) => ", busy-polling".into(),
        },
    }
}

fn write_latencies(label: &str, l: &Latencies, out: &mut dyn Write) -> io::Result<()> {
    let rows: [(&str, Option<&SummarySnapshot>); 11] = [
        ("Mul", Some(&l.mul)),
        ("Bul", Some(&l.bul)),
        ("Wul", Some(&l.wul)),
        ("kernel", l.kernel.as_ref()),
        ("hardware", l.hardware.as_ref()),
        ("Mil=Mul−C", l.mil.as_ref()),
        ("kernel−C", l.kernel_internal.as_ref()),
        ("Msl", l.msl.as_ref()),
        ("kernel SUT", l.kernel_sut.as_ref()),
        ("hardware−C", l.hardware_internal.as_ref()),
        ("hardware SUT", l.hardware_sut.as_ref()),
    ];
    let columns = Columns {
        label: 8,
        name: 13,
        count: 9,
        p999: true,
    };
    write_rows(label, &rows, &columns, out)
}

fn write_line_table(
    lines: &[(&str, Option<&CalibrationLine>)],
    out: &mut dyn Write,
) -> io::Result<()> {
    writeln!(
        out,
        "  {:<10} {:>4} {:>12} {:>10} {:>14} {:>12} {:>26} {:>28}",
        "", "n", "a (µs)", "s_a (µs)", "b (ns/byte)", "s_b", "α 95 % (µs)", "β 95 % (ns/byte)"
    )?;
    for (name, line) in lines {
        let Some(l) = line else { continue };
        let f = &l.fit;
        writeln!(
            out,
            "  {:<10} {:>4} {:>12.3} {:>10.3} {:>14.5} {:>12.5} {:>26} {:>28}",
            name,
            f.n,
            f.a / 1000.0,
            f.s_a / 1000.0,
            f.b,
            f.s_b,
            format!("{:.3} ± {:.3}", f.a / 1000.0, f.a_ci95 / 1000.0),
            format!("{:.5} ± {:.5}", f.b, f.b_ci95)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SutVerdict;

    fn estimate(source: SutSource, value: f64, ci95: f64) -> SutEstimate {
        SutEstimate {
            source,
            value,
            ci95,
            calibration_ci95: 0.0,
        }
    }

    fn headline(c: &SutConsistency) -> String {
        let mut out = Vec::new();
        write_headline(c, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The line names the verdict, the estimate it rests on with its
    /// figure, and whether the others agree.
    #[test]
    fn the_headline_names_its_basis_and_the_disagreement() {
        let kernel = estimate(SutSource::Kernel, 1400.3, 11.8);
        let mut c = SutConsistency {
            agreement: SutAgreement::Inconsistent,
            rests_on: SutSource::Kernel,
            verdict: SutVerdict::CutThrough,
            latency: kernel.clone(),
            disagreements: vec![SutDisagreement {
                quantity: "alpha_ns".into(),
                first: kernel,
                second: estimate(SutSource::User, 352.0, 17.0),
                gap: 1019.5,
            }],
            causes: vec![],
        };
        assert_eq!(
            headline(&c),
            "verdict: cut-through, resting on the kernel stamps (SUT latency α' 1.400 ± 0.012 \
             µs); the user windows disagree (see the warning)\n"
        );
        c.agreement = SutAgreement::Consistent;
        c.disagreements.clear();
        c.verdict = SutVerdict::StoreAndForward;
        assert!(
            headline(&c).starts_with("verdict: store-and-forward, resting on the kernel stamps")
        );
        assert!(headline(&c).ends_with("the other estimates agree within their 95 % intervals\n"));
    }
}
