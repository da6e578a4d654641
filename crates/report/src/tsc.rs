//! The result of `misura clock tsc` (format "misura.clock-tsc"): the TSC
//! frequency against CLOCK_MONOTONIC_RAW and, with `--ntp`, against an NTP
//! server by seed 003's minimum-RTT method; the TSC flags and the kernel's
//! own calibration. Schema: `schema/clock-tsc.schema.json`.
//!
//! Long: `write_text` prints the report's sections in order, one `writeln!` per
//! line of the output; cut, it would only pass the writer around.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use crate::{HostFingerprint, Meta};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TscReport {
    #[serde(flatten)]
    pub meta: Meta,
    pub complete: bool,
    pub stop_reason: String,
    pub host: HostFingerprint,
    pub config: TscConfig,
    pub tsc: TscFacts,
    /// The estimate against CLOCK_MONOTONIC_RAW (None if too little was
    /// measured, e.g. interrupted at once).
    pub raw: Option<RawEstimate>,
    /// Seed 003's method, with `--ntp`.
    pub ntp: Option<NtpReport>,
    pub elapsed_s: f64,
    pub warnings: Vec<crate::Warning>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TscConfig {
    /// "monotonic-raw" or "ntp".
    pub mode: String,
    /// Planned length of a monotonic-raw run (s); None with --ntp.
    pub duration_s: Option<f64>,
    pub windows: u32,
    pub server: Option<String>,
    pub interval_s: Option<f64>,
    pub count: Option<u64>,
    pub netns: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TscFacts {
    /// This build can read a TSC (x86-64).
    pub available: bool,
    pub flags: Vec<TscFlag>,
    pub clocksource: Option<String>,
    /// The kernel's calibration (Hz), where it says.
    pub kernel_calibration_hz: Option<f64>,
    /// Where the kernel's figure came from, or why there is none.
    pub kernel_calibration_source: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TscFlag {
    pub name: String,
    pub present: bool,
    pub meaning: String,
}

/// A frequency with a worst-case bound.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BoundedFrequency {
    pub frequency_hz: f64,
    pub bound_hz: f64,
    pub bound_ppm: f64,
    pub span_s: f64,
}

/// A frequency from a least-squares line.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FittedFrequency {
    pub frequency_hz: f64,
    pub ci95_hz: f64,
    pub ci95_ppm: f64,
    pub points: usize,
    pub residual_std_ns: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RawEstimate {
    /// Reads of (TSC, MONOTONIC_RAW, TSC) made.
    pub pairs_read: u64,
    /// Tightest pair of each time bin, the ones used.
    pub pairs_kept: usize,
    pub min_bracket_ns: f64,
    pub median_bracket_ns: f64,
    /// ΔTSC/ΔRAW between the first and the last kept pair.
    pub endpoints: BoundedFrequency,
    pub fit: Option<FittedFrequency>,
    pub windows: Vec<RawWindow>,
    pub stability: Option<StabilityReport>,
    /// (measured − kernel)/kernel, ppm.
    pub kernel_difference_ppm: Option<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RawWindow {
    pub start_s: f64,
    pub end_s: f64,
    pub pairs: usize,
    pub frequency_hz: f64,
    pub bound_ppm: f64,
    /// (window − whole run)/whole run, ppm.
    pub deviation_ppm: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StabilityReport {
    pub windows: usize,
    pub std_dev_ppm: f64,
    pub spread_ppm: f64,
    pub max_deviation_ppm: f64,
    pub resolution_ppm: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NtpReport {
    pub server: String,
    pub address: Option<String>,
    pub requests: u64,
    pub replies: u64,
    pub timeouts: u64,
    pub rejected: u64,
    pub stratum: Option<u8>,
    pub reference_id: Option<String>,
    pub precision_ns: Option<f64>,
    pub rtt_min_ns: Option<f64>,
    pub rtt_median_ns: Option<f64>,
    pub estimate: Option<NtpFrequency>,
    /// The MONOTONIC_RAW estimate between the same two exchanges.
    pub raw_same_period: Option<BoundedFrequency>,
    pub comparison: Option<Comparison>,
    /// Rate of CLOCK_REALTIME against CLOCK_MONOTONIC_RAW over the run (ppm):
    /// the frequency correction a time daemon applies to this host's clock.
    pub realtime_vs_raw_ppm: Option<f64>,
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NtpFrequency {
    pub frequency_hz: f64,
    pub bound_hz: f64,
    pub bound_ppm: f64,
    pub span_s: f64,
    pub first: ExchangeRef,
    pub last: ExchangeRef,
    /// Windows whose fastest exchange was kept.
    pub windows: usize,
    pub fit: Option<FittedFrequency>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExchangeRef {
    pub seq: u64,
    pub rtt_ns: f64,
    /// Time of the request since the first one (s).
    pub at_s: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Comparison {
    /// (NTP − RAW)/RAW, ppm.
    pub difference_ppm: f64,
    pub combined_bound_ppm: f64,
    pub within_uncertainty: bool,
}

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
