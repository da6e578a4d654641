//! The text form of `misura y1564`; the result types are in `model::y1564`.

use crate::figure::human_ns;
use crate::model::y1564::*;
use std::io::{self, Write};

use super::heading::{in_netns, partial};

fn mbps(v: f64) -> String {
    format!("{:.3} Mb/s", v / 1e6)
}

fn ns(v: Option<i64>) -> String {
    v.map_or("-".into(), |v| human_ns(v as f64))
}

fn verdict(p: bool, inconclusive: bool) -> &'static str {
    match (p, inconclusive) {
        (true, _) => "PASS",
        (false, true) => "INCONCLUSIVE",
        (false, false) => "FAIL",
    }
}

/// A step rests on the tester: judged at the rate it sent (issue 37), a
/// step the tester fell short in may still FAIL, so `inconclusive` alone
/// says so (`tester_limit` names the shortfall either way).
fn step_inconclusive(s: &StepReport) -> bool {
    s.inconclusive
}

fn write_step(out: &mut dyn Write, s: &StepReport) -> io::Result<()> {
    writeln!(
        out,
        "  {:<12} offered {:>14}  received {:>14}  FLR {:.4} %  FD mean {}  max {}  FDV {}  {}{}",
        s.label,
        mbps(s.offered_bps),
        mbps(s.received_bps),
        100.0 * s.flr,
        s.fd_mean_ns.map_or("-".into(), human_ns),
        ns(s.fd_max_ns),
        ns(s.fdv_ns),
        verdict(s.pass, step_inconclusive(s)),
        if s.reasons.is_empty() {
            String::new()
        } else {
            format!(" ({})", s.reasons.join("; "))
        }
    )?;
    for (i, w) in s.spoiled_attempts.iter().enumerate() {
        writeln!(
            out,
            "      attempt {} repeated, the tester fell behind: {w}",
            i + 1
        )?;
    }
    if let Some(t) = &s.tester_limit {
        writeln!(out, "      tester limit: {t}")?;
    }
    Ok(())
}

/// The text report.
pub fn write_text(r: &Y1564Report, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.config;
    writeln!(
        out,
        "misura y1564: {} -> {}{}, engine {} on {} core(s): {}{}",
        c.tx,
        c.rx,
        in_netns(c.netns.as_deref()),
        r.engine.engine,
        r.engine.cores,
        verdict(r.pass, r.inconclusive),
        partial(r.complete, &r.stop_reason)
    )?;
    writeln!(out, "rates: {}; delay: {}", c.rate_basis, c.delay_source)?;
    if r.inconclusive {
        writeln!(
            out,
            "INCONCLUSIVE: no step failed, but a step rests on the tester (it fell short of the step's rate, or its own catch-up bursts may explain the loss; below): no verdict on the SUT; free the tester's CPUs, give it --cores or --cpu, or lower the rates"
        )?;
    }
    for s in &r.services {
        let v = &s.service;
        writeln!(
            out,
            "\nservice {} (vlan {}, pcp {}, {} B): CIR {} EIR {}; FD ≤ {} FDV ≤ {} FLR ≤ {:.4} %  configuration test {}",
            v.name,
            v.vlan.map_or("-".into(), |x| x.to_string()),
            v.pcp.map_or("-".into(), |x| x.to_string()),
            v.frame_bytes,
            mbps(v.cir_bps),
            mbps(v.eir_bps),
            human_ns(v.fd_ns as f64),
            human_ns(v.fdv_ns as f64),
            100.0 * v.flr,
            verdict(s.config_pass, s.config_inconclusive)
        )?;
        for st in &s.config_test {
            write_step(out, st)?;
        }
    }
    if let Some(p) = &r.performance {
        writeln!(
            out,
            "\nperformance test, {:.0} s, all services at CIR: {}",
            p.duration_s,
            verdict(p.pass, p.inconclusive)
        )?;
        for row in &p.services {
            write!(out, "  {:<10}", row.name)?;
            writeln!(
                out,
                " availability {:.3} % ({} s unavailable)",
                100.0 * row.availability,
                row.unavailable_s
            )?;
            write_step(out, &row.step)?;
        }
    }
    for w in &r.warnings {
        writeln!(out, "warning: {w}")?;
    }
    Ok(())
}
