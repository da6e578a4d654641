//! The text form of `misura serve`: the line per served test and the tables per
//! client and size; the result types are in `model::serve`.

pub use crate::figure::human_bps;
use crate::model::serve::*;
use std::io::{self, Write};

/// The one line printed when a test ends.
pub fn test_line(t: &ServedTest) -> String {
    let headline = match (t.throughput_bps, t.transactions_per_s) {
        (_, Some(tps)) if t.kind.starts_with("rr") || t.kind == "crr" => {
            format!("{tps:.0} transactions/s")
        }
        (Some(b), _) => human_bps(b),
        _ => "no figure".to_string(),
    };
    let loss = match (t.lost, t.loss_ratio) {
        (Some(l), Some(r)) => format!(", lost {l} ({:.3} %)", r * 100.0),
        _ => String::new(),
    };
    let partial = if t.partial {
        format!(" [partial: {}]", t.partial_reason.as_deref().unwrap_or("?"))
    } else {
        String::new()
    };
    format!(
        "test {:016x} {} {} {} {} stream(s) {:.2} s: {headline}{loss}{partial}",
        t.test_id,
        client_key(t),
        t.kind,
        t.direction,
        t.streams,
        t.elapsed_ns as f64 / 1e9,
    )
}

/// The per-client table, the per-size table and the aggregate.
pub fn write_text(r: &ServeReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "misura serve: {} test(s) from {} client(s)",
        r.tests.len(),
        r.clients.len()
    )?;
    writeln!(
        out,
        "{:<40} {:>6} {:>8} {:>16} {:>14} {:>14} {:>10}",
        "client", "tests", "partial", "throughput", "bytes rx", "transactions", "lost"
    )?;
    for c in &r.clients {
        let name = match &c.client_name {
            Some(n) if !n.is_empty() => format!("{n} ({})", c.client),
            _ => c.client.clone(),
        };
        writeln!(
            out,
            "{:<40} {:>6} {:>8} {:>16} {:>14} {:>14} {:>10}",
            name,
            c.tests,
            c.partial_tests,
            c.mean_throughput_bps
                .map(human_bps)
                .unwrap_or_else(|| "-".into()),
            c.bytes_received,
            c.transactions,
            c.lost
        )?;
    }
    writeln!(
        out,
        "aggregate throughput (sum of the clients): {}",
        human_bps(r.aggregate_throughput_bps)
    )?;
    if !r.by_msg_size.is_empty() {
        writeln!(
            out,
            "throughput by message size (Alborghetti et al., INFN 1998, Tables 4-5):"
        )?;
        let names: Vec<&String> = {
            let mut v: Vec<&String> = r
                .by_msg_size
                .iter()
                .flat_map(|s| s.per_client_bps.keys())
                .collect();
            v.sort();
            v.dedup();
            v
        };
        write!(out, "{:>10}", "msg size")?;
        for n in &names {
            write!(out, " {:>22}", n)?;
        }
        writeln!(out, " {:>16}", "aggregate")?;
        for s in &r.by_msg_size {
            write!(out, "{:>10}", s.msg_size)?;
            for n in &names {
                write!(
                    out,
                    " {:>22}",
                    s.per_client_bps
                        .get(*n)
                        .map(|b| human_bps(*b))
                        .unwrap_or_else(|| "-".into())
                )?;
            }
            writeln!(out, " {:>16}", human_bps(s.aggregate_bps))?;
        }
    }
    let c = &r.counters;
    writeln!(
        out,
        "connections: {} accepted, {} refused (server full), {} evicted, {} handshake timeouts, {} malformed, {} unknown test id; tests: {} accepted, {} refused",
        c.connections_accepted,
        c.connections_refused_full,
        c.connections_evicted,
        c.handshake_timeouts,
        c.malformed,
        c.unknown_test_id,
        c.tests_accepted,
        c.tests_refused
    )?;
    for (why, n) in &c.refusals {
        writeln!(out, "  refused {n}×: {why}")?;
    }
    Ok(())
}
