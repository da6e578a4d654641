//! The text form of `misura rfc2544`; the result types are in `model::rfc2544`.

use crate::figure::human_ns;
use crate::model::rfc2544::*;
use std::io::{self, Write};

use super::heading::{in_netns, partial};

fn fps(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.3} M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} k", v / 1e3)
    } else {
        format!("{v:.0} ")
    }
}

fn ns(v: Option<i64>) -> String {
    v.map_or("-".into(), |v| human_ns(v as f64))
}

/// The text report.
pub fn write_text(r: &Rfc2544Report, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.config;
    writeln!(
        out,
        "misura rfc2544: {} -> {}{}, link {} Mb/s ({}), engine {} on {} core(s){}",
        c.tx,
        c.rx,
        in_netns(c.netns.as_deref()),
        c.link_rate_bps / 1_000_000,
        c.link_speed_source,
        r.engine.engine,
        r.engine.cores,
        partial(r.complete, &r.stop_reason)
    )?;
    writeln!(
        out,
        "load frames: TX time {}, RX stamps {} ({} ring); tests: {}",
        r.engine.tx_time,
        r.engine.rx_stamps,
        r.engine.rx_path,
        c.tests.join(", ")
    )?;
    if is_inconclusive(r) {
        writeln!(
            out,
            "INCONCLUSIVE: part of the result is the tester's own limit, not the SUT's (free the tester's CPUs, give it --cores or --cpu, or lower the rates)"
        )?;
        for why in &r.inconclusive {
            writeln!(out, "  - {why}")?;
        }
    }
    for s in &r.sizes {
        writeln!(
            out,
            "\nframe {} B  (line rate {}frames/s{})",
            s.label,
            fps(s.line_rate_fps),
            s.tester_max_fps
                .map(|t| format!(", tester reached {}frames/s", fps(t)))
                .unwrap_or_default()
        )?;
        if let Some(t) = &s.throughput {
            for (name, b) in [("NDR", &t.ndr), ("PDR", &t.pdr)] {
                if rests_on_tester(t, b, s.line_rate_fps) {
                    writeln!(
                        out,
                        "  throughput {name}: INCONCLUSIVE  {}: the SUT's rate is not known",
                        if b.lower_fps > 0.0 {
                            format!(
                                "no loss up to {}frames/s, all the tester could send",
                                fps(b.lower_fps)
                            )
                        } else {
                            "the tester could not send steadily at any rate tried".into()
                        }
                    )?;
                    write_evidence(out, b)?;
                    continue;
                }
                writeln!(
                    out,
                    "  throughput {name}: {}  {}frames/s ({:.2} % of line, {:.1} Mb/s), next failed at {}frames/s",
                    if b.found { "found" } else { "NOT FOUND" },
                    fps(b.lower_fps),
                    100.0 * b.lower_load,
                    b.lower_bps / 1e6,
                    fps(b.upper_fps)
                )?;
                write_evidence(out, b)?;
            }
            writeln!(
                out,
                "  search: {} trials in {:.1} s, stopped by {}",
                t.trials.len(),
                t.elapsed_s,
                t.stopped_by
            )?;
        }
        if let Some(l) = &s.latency {
            writeln!(
                out,
                "  latency at {}frames/s ({} tagged, {}): min {}  median {}  p99.9 {}  PDV {}",
                fps(l.rate_fps),
                l.tagged_frames,
                l.source,
                ns(l.min_ns),
                ns(l.median_ns),
                ns(l.p999_ns),
                ns(l.pdv_ns)
            )?;
            if let Some(m) = &l.msl {
                writeln!(
                    out,
                    "  SUT latency Msl: median {}  p99.9 {}",
                    ns(m.median_ns),
                    ns(m.p999_ns)
                )?;
            }
        }
        if let Some(steps) = &s.frame_loss {
            let rows: Vec<&TrialRow> = standing(steps).collect();
            let row: Vec<String> = rows
                .iter()
                .map(|t| match t.tester_limit {
                    Some(_) => format!(
                        "{} INCONCLUSIVE (tester sent {}frames/s)",
                        t.phase,
                        fps(t.achieved_fps)
                    ),
                    None => format!("{} {:.3} %", t.phase, 100.0 * t.loss_ratio),
                })
                .collect();
            writeln!(out, "  frame loss rate: {}", row.join(", "))?;
        }
        if let Some(b) = &s.back_to_back {
            writeln!(
                out,
                "  back-to-back at {}frames/s: {}mean {:.1} frames (min {}, max {}) over {} trials; implied buffer {}{}",
                fps(b.burst_fps),
                if b.tester_limited {
                    "INCONCLUSIVE (the tester could not send the bursts) "
                } else {
                    ""
                },
                b.mean_frames,
                b.min_frames,
                b.max_frames,
                b.trials,
                human_ns(b.implied_buffer_s * 1e9),
                b.corrected_buffer_s
                    .map(|v| format!(", corrected (RFC 9004) {}", human_ns(v * 1e9)))
                    .unwrap_or_default()
            )?;
        }
    }
    for w in &r.warnings {
        writeln!(out, "warning: {w}")?;
    }
    Ok(())
}

/// The trials that set a bound (issue 37): each at the rate the tester
/// really sent, so a reader can check the verdict.
fn write_evidence(out: &mut dyn Write, b: &RateBound) -> io::Result<()> {
    for (side, t) in [("lower", &b.lower_trial), ("upper", &b.upper_trial)] {
        if let Some(t) = t {
            writeln!(
                out,
                "      {side} bound from the {} trial: offered {}frames/s, sent {}frames/s ({} frames), received {}, loss {:.4} %{}",
                t.phase,
                fps(t.offered_fps),
                fps(t.achieved_fps),
                t.sent,
                t.received,
                100.0 * t.loss_ratio,
                if t.tester_limit.is_some() {
                    " (the tester fell short: classified at the rate it sent)"
                } else {
                    ""
                }
            )?;
        }
    }
    Ok(())
}
