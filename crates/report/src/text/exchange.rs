//! The text form of `misura exchange` and its responder; the result types are
//! in `model::exchange`.

use crate::model::exchange::*;
use std::io::{self, Write};

use super::heading::partial;

fn us(v: Option<i64>) -> String {
    v.map_or("-".into(), |x| format!("{:.3}", x as f64 / 1000.0))
}

pub fn write_text(r: &ExchangeReport, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.config;
    writeln!(
        out,
        "misura exchange: {} <-> {} on {}: trigger {} B, then {} B each way, every {:.3} ms{}",
        c.interface,
        c.peer,
        c.netns.as_deref().unwrap_or("this namespace"),
        c.trigger_bytes,
        c.data_bytes,
        c.period_ns as f64 / 1e6,
        partial(r.complete, &r.stop_reason)
    )?;
    writeln!(
        out,
        "cycles {}  completed {}  timeouts {}",
        r.cycles, r.completed, r.timeouts
    )?;
    writeln!(
        out,
        "\n{:<10} {:>9} {:>9} {:>9} {:>9} {:>10} {:>8} {:>9}   meaning",
        "phase µs",
        "Ave",
        "median",
        "Max",
        "Min",
        "Ave−Min",
        format!(">{:.0}µs", c.threshold_ns as f64 / 1000.0),
        "p99"
    )?;
    let mut phases = vec![("t1", &r.t1), ("t2", &r.t2), ("t3", &r.t3)];
    if let Some(k) = &r.t3_kernel {
        phases.push(("t3 kernel", k));
    }
    if let Some(h) = &r.t3_hardware {
        phases.push(("t3 hw", h));
    }
    for (name, p) in phases {
        let s = &p.summary;
        writeln!(
            out,
            "{:<10} {:>9} {:>9} {:>9} {:>9} {:>10} {:>8} {:>9}   {}",
            name,
            s.mean_ns
                .map_or("-".into(), |m| format!("{:.3}", m / 1000.0)),
            us(s.median_ns),
            us(s.max_ns),
            us(s.min_ns),
            s.mean_minus_min_ns
                .map_or("-".into(), |m| format!("{:.3}", m / 1000.0)),
            s.over_threshold,
            us(s.p99_ns),
            p.meaning
        )?;
    }
    match (&r.phc, &r.hardware_note) {
        (Some(phc), _) => writeln!(
            out,
            "NIC hardware stamps on ({phc}); cycles without them: {}",
            r.hw_stamp_missing
        )?,
        (None, Some(n)) => writeln!(out, "NIC hardware stamps not used: {n}")?,
        _ => {}
    }
    if let Some(w) = r.wire_time_ns {
        writeln!(out, "\nwire time of trigger + data: {:.3} µs", w / 1000.0)?;
    }
    for w in &r.warnings {
        writeln!(out, "warning: {w}")?;
    }
    Ok(())
}

pub fn write_responder_text(r: &ResponderReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "misura exchange --respond: triggers {}, answered {}, peer data frames {}, other frames {}",
        r.triggers, r.answered, r.peer_data_frames, r.other_frames
    )
}
