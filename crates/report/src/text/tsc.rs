//! The text form of `misura clock tsc`; the result types are in `model::tsc`.
//!
//! Long: `write_text` prints the report's sections in order, one `writeln!` per
//! line of the output; cut, it would only pass the writer around.

use crate::model::tsc::*;
use std::io::{self, Write};

fn mhz(hz: f64) -> String {
    format!("{:.6} MHz", hz / 1e6)
}

fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref().map_or("-".into(), |x| x.to_string())
}

/// Human output.
pub fn write_text(r: &TscReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "misura clock tsc: TSC frequency against {}",
        if r.config.mode == "ntp" {
            format!(
                "CLOCK_MONOTONIC_RAW and NTP server {}",
                opt(&r.config.server)
            )
        } else {
            "CLOCK_MONOTONIC_RAW".to_string()
        }
    )?;
    if !r.complete {
        writeln!(out, "  PARTIAL: {}", r.stop_reason)?;
    }
    let t = &r.tsc;
    writeln!(out, "\nTSC flags (clocksource: {})", opt(&t.clocksource))?;
    for f in &t.flags {
        writeln!(
            out,
            "  {:<15} {:<4} {}",
            f.name,
            if f.present { "yes" } else { "NO" },
            f.meaning
        )?;
    }
    match t.kernel_calibration_hz {
        Some(k) => writeln!(
            out,
            "  kernel calibration: {} ({})",
            mhz(k),
            t.kernel_calibration_source
        )?,
        None => writeln!(
            out,
            "  kernel calibration: unknown ({})",
            t.kernel_calibration_source
        )?,
    }
    if let Some(raw) = &r.raw {
        writeln!(
            out,
            "\nAgainst CLOCK_MONOTONIC_RAW ({} reads, tightest {} kept)",
            raw.pairs_read, raw.pairs_kept
        )?;
        writeln!(
            out,
            "  bracket (TSC around the RAW read): min {:.1} ns, median {:.1} ns",
            raw.min_bracket_ns, raw.median_bracket_ns
        )?;
        let e = &raw.endpoints;
        writeln!(
            out,
            "  ΔTSC/ΔRAW over {:.3} s:   {} ± {:.3} kHz (± {:.4} ppm, bound from the brackets)",
            e.span_s,
            mhz(e.frequency_hz),
            e.bound_hz / 1e3,
            e.bound_ppm
        )?;
        if let Some(f) = &raw.fit {
            writeln!(
                out,
                "  least-squares fit:        {} ± {:.3} kHz (± {:.4} ppm, 95 %; {} points, residual {:.1} ns)",
                mhz(f.frequency_hz),
                f.ci95_hz / 1e3,
                f.ci95_ppm,
                f.points,
                f.residual_std_ns
            )?;
        }
        if let Some(s) = &raw.stability {
            writeln!(
                out,
                "  stability over {} windows: std dev {:.4} ppm, spread {:.4} ppm, max deviation {:.4} ppm (resolution {:.4} ppm)",
                s.windows, s.std_dev_ppm, s.spread_ppm, s.max_deviation_ppm, s.resolution_ppm
            )?;
        }
        match raw.kernel_difference_ppm {
            Some(d) => writeln!(out, "  measured − kernel calibration: {d:+.3} ppm")?,
            None => writeln!(
                out,
                "  measured − kernel calibration: - (the kernel's calibration is unknown)"
            )?,
        }
    } else {
        writeln!(
            out,
            "\nAgainst CLOCK_MONOTONIC_RAW: too little measured for an estimate"
        )?;
    }
    if let Some(n) = &r.ntp {
        writeln!(
            out,
            "\nAgainst NTP server {} ({}): {} requests, {} replies, {} timeouts, {} rejected",
            n.server,
            opt(&n.address),
            n.requests,
            n.replies,
            n.timeouts,
            n.rejected
        )?;
        if n.stratum.is_some() {
            writeln!(
                out,
                "  server: stratum {}, reference {}, precision {} ns",
                opt(&n.stratum),
                opt(&n.reference_id),
                n.precision_ns.map_or("-".into(), |p| format!("{p:.0}"))
            )?;
        }
        if let (Some(a), Some(m)) = (n.rtt_min_ns, n.rtt_median_ns) {
            writeln!(
                out,
                "  RTT (TSC at send → receive): min {:.1} µs, median {:.1} µs",
                a / 1e3,
                m / 1e3
            )?;
        }
        if let Some(e) = &n.estimate {
            writeln!(
                out,
                "  minimum-RTT pair #{} (RTT {:.1} µs) → #{} (RTT {:.1} µs), {:.3} s apart; {} windows",
                e.first.seq,
                e.first.rtt_ns / 1e3,
                e.last.seq,
                e.last.rtt_ns / 1e3,
                e.span_s,
                e.windows
            )?;
            writeln!(
                out,
                "  f = (s_j − s_i)/(ts_j − ts_i): {} ± {:.3} kHz (± {:.3} ppm, bound from RTT/2 each and the server's precision)",
                mhz(e.frequency_hz),
                e.bound_hz / 1e3,
                e.bound_ppm
            )?;
            if let Some(f) = &e.fit {
                writeln!(
                    out,
                    "  fit through the fastest exchange of each window: {} ± {:.3} ppm (95 %)",
                    mhz(f.frequency_hz),
                    f.ci95_ppm
                )?;
            }
        }
        if let Some(rs) = &n.raw_same_period {
            writeln!(
                out,
                "  MONOTONIC_RAW, same period:  {} ± {:.4} ppm",
                mhz(rs.frequency_hz),
                rs.bound_ppm
            )?;
        }
        if let Some(c) = &n.comparison {
            writeln!(
                out,
                "  NTP − RAW: {:+.3} ppm; combined uncertainty ± {:.3} ppm: {}",
                c.difference_ppm,
                c.combined_bound_ppm,
                if c.within_uncertainty {
                    "agree"
                } else {
                    "DISAGREE"
                }
            )?;
        }
        if let Some(p) = n.realtime_vs_raw_ppm {
            writeln!(out, "  CLOCK_REALTIME runs {p:+.3} ppm against MONOTONIC_RAW here (time daemon's correction)")?;
        }
        if let Some(e) = &n.error {
            writeln!(out, "  error: {e}")?;
        }
    }
    for w in &r.warnings {
        writeln!(out, "warning: {w}")?;
    }
    Ok(())
}
