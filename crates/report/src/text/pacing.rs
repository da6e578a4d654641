//! The text form of a paced sender's schedule and the CPU each end used; the
//! result types are in `model::pacing`.

use crate::model::pacing::*;
use std::io::{self, Write};

fn us(v: Option<i64>) -> String {
    v.map_or("-".into(), |x| format!("{:.1} µs", x as f64 / 1000.0))
}

/// The pacing lines of one client's row, indented under it.
pub fn write_pacing_text(pacing: &Pacing, elapsed_ns: u64, out: &mut dyn Write) -> io::Result<()> {
    let p = &pacing.figures;
    let spin_pct = if elapsed_ns > 0 {
        100.0 * p.spin_ns as f64 / elapsed_ns as f64
    } else {
        0.0
    };
    writeln!(
        out,
        "       pacing ({}, {}): {} datagrams in {} sends (largest {}, {} in bursts), {} skipped; \
         {} wake-ups, margin {} (p99 of wake-up lateness; p50 {}), spin {:.1} % of the time",
        pacing.sender,
        pacing.method,
        p.units,
        p.bursts,
        p.max_burst,
        p.burst_units,
        p.skipped,
        p.wakeups,
        us(Some(p.margin_ns as i64)),
        us(p.wake_late_p50_ns),
        spin_pct
    )?;
    writeln!(
        out,
        "       spacing: gap p50 {} p99 {} (target {}); behind schedule p50 {} p99 {} max {}",
        us(p.gap_p50_ns),
        us(p.gap_p99_ns),
        us(Some(p.target_gap_ns.round() as i64)),
        us(p.behind_p50_ns),
        us(p.behind_p99_ns),
        us(p.behind_max_ns)
    )
}

/// The CPU line of one client's row.
pub fn write_cpu_text(who: &str, c: &CpuUse, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "       cpu ({who}): user {:.3} s + system {:.3} s = {:.1} % of one CPU",
        c.user_ns as f64 / 1e9,
        c.system_ns as f64 / 1e9,
        c.utilisation_pct
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::pacing::PacerFigures;

    #[test]
    fn text_names_the_figures() {
        let p = Pacing {
            sender: "client".into(),
            method: "clock_nanosleep".into(),
            figures: PacerFigures {
                target_gap_ns: 11_760.0,
                units: 100,
                bursts: 10,
                max_burst: 12,
                burst_units: 95,
                wakeups: 9,
                margin_ns: 37_000,
                wake_late_p50_ns: Some(18_000),
                spin_ns: 10_000_000,
                gap_p50_ns: Some(1_500),
                ..PacerFigures::default()
            },
            ..Pacing::default()
        };
        let mut v = Vec::new();
        write_pacing_text(&p, 1_000_000_000, &mut v).unwrap();
        write_cpu_text(
            "client",
            &CpuUse::new(100_000_000, 300_000_000, 1_000_000_000),
            &mut v,
        )
        .unwrap();
        let t = String::from_utf8(v).unwrap();
        assert!(
            t.contains("100 datagrams in 10 sends (largest 12, 95 in bursts)"),
            "{t}"
        );
        assert!(t.contains("margin 37.0 µs"), "{t}");
        assert!(t.contains("spin 1.0 %"), "{t}");
        assert!(t.contains("gap p50 1.5 µs p99 - (target 11.8 µs)"), "{t}");
        assert!(
            t.contains("user 0.100 s + system 0.300 s = 40.0 % of one CPU"),
            "{t}"
        );
    }
}
