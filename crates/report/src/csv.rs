//! Summary CSV: one row per latency quantity and payload size ("all" for the
//! whole run), in long ("tidy") form so any tool can pivot it.

use crate::model::SummarySnapshot;
use crate::model::*;
use std::io::{self, Write};

pub const SUMMARY_HEADER: &str = "quantity,payload_bytes,frame_bytes,wire_time_ns,count,min_ns,mean_ns,median_ns,p90_ns,p99_ns,p999_ns,max_ns,std_dev_ns,mean_minus_min_ns,threshold_ns,over_threshold";

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn row(
    out: &mut dyn Write,
    q: &str,
    size: &str,
    frame: &str,
    wire: &str,
    s: &SummarySnapshot,
) -> io::Result<()> {
    writeln!(
        out,
        "{q},{size},{frame},{wire},{},{},{},{},{},{},{},{},{},{},{},{}",
        s.count,
        opt(s.min_ns),
        opt(s.mean_ns),
        opt(s.median_ns),
        opt(s.p90_ns),
        opt(s.p99_ns),
        opt(s.p999_ns),
        opt(s.max_ns),
        opt(s.std_dev_ns),
        opt(s.mean_minus_min_ns),
        opt(s.threshold_ns),
        s.over_threshold
    )
}

fn quantities(l: &Latencies) -> Vec<(&'static str, &SummarySnapshot)> {
    let mut v = vec![("mul", &l.mul), ("bul", &l.bul), ("wul", &l.wul)];
    let optional = [
        ("kernel", &l.kernel),
        ("hardware", &l.hardware),
        ("mil", &l.mil),
        ("kernel_internal", &l.kernel_internal),
        ("msl", &l.msl),
        ("kernel_sut", &l.kernel_sut),
    ];
    for (name, s) in optional {
        if let Some(s) = s {
            v.push((name, s));
        }
    }
    v
}

/// Write the per-size and overall summaries of a oneway/calibrate result.
pub fn write_oneway_summary(r: &OnewayReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{SUMMARY_HEADER}")?;
    for s in &r.per_size {
        for (q, snap) in quantities(&s.latency) {
            row(
                out,
                q,
                &s.payload_bytes.to_string(),
                &s.frame_bytes.to_string(),
                &s.wire_time_ns.to_string(),
                snap,
            )?;
        }
    }
    for (q, snap) in quantities(&r.overall) {
        row(out, q, "all", "", "", snap)?;
    }
    Ok(())
}
