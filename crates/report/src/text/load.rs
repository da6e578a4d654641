//! The text form of the frame engine's trials under a one-way run
//! (`OnewayLoad`); the result types are in `model::load`.

use crate::figure::human_ns;
use crate::model::load::*;
use std::io::{self, Write};

/// The load section of `misura oneway`'s text report.
pub fn write_oneway_load(l: &OnewayLoad, out: &mut dyn Write) -> io::Result<()> {
    let t = &l.trial;
    writeln!(
        out,
        "load stream: engine {} (RX {}), {} core(s), every {}th slot a latency frame; TX time {}, RX stamps {}",
        l.engine.engine, l.engine.rx_path, l.engine.cores, l.latency_every, l.engine.tx_time, l.engine.rx_stamps
    )?;
    writeln!(
        out,
        "  offered {:.0} frames/s, achieved {:.0}; sent {}, received {}, lost {} ({:.4} %), duplicates {}, reordered {}; stamped {} of {}",
        t.offered_fps(),
        t.achieved_fps(),
        t.sent(),
        t.received(),
        t.lost(),
        100.0 * t.loss_ratio(),
        t.flows.iter().map(|f| f.duplicates).sum::<u64>(),
        t.flows.iter().map(|f| f.reordered).sum::<u64>(),
        t.stamped + t.hardware_stamped,
        t.received()
    )?;
    if let Some(f) = t.flows.first() {
        let q = |v: Option<i64>| v.map_or("-".into(), |v| human_ns(v as f64));
        writeln!(
            out,
            "  load transit (user TX clock to kernel RX stamp, an upper bound): min {}  median {}  p99.9 {}  max {}",
            q(f.transit.min_ns),
            q(f.transit.median_ns),
            q(f.transit.p999_ns),
            q(f.transit.max_ns)
        )?;
    }
    writeln!(
        out,
        "  tester: ring drops {}, transmit path full {} times, CPU {:.2} s{}",
        t.ring_drops,
        t.tx_full,
        t.cpu_s,
        t.tester_limit
            .as_deref()
            .map(|w| format!("; LIMITED BY THE TESTER: {w}"))
            .unwrap_or_default()
    )?;
    for n in &l.engine.notes {
        writeln!(out, "  note: {n}")?;
    }
    Ok(())
}
