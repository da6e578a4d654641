//! The text form of `misura tcp`, `udp`, `rr`, `setup` and `sweep`, and their
//! CSV tables; the result types are in `model::throughput`.

pub use super::throughput_csv::*;
use crate::figure::human_ns;
use crate::model::run::StopReason;
use crate::model::throughput::*;
use crate::model::warning::Warning;
use std::io::{self, Write};

// ---------------------------------------------------------------- text

fn rate(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.3} Gbit/s", bps / 1e9)
    } else if bps >= 1e6 {
        format!("{:.3} Mbit/s", bps / 1e6)
    } else if bps >= 1e3 {
        format!("{:.3} kbit/s", bps / 1e3)
    } else {
        format!("{bps:.0} bit/s")
    }
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |x| x.to_string())
}

fn f1(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.1}"))
}

fn f3(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.3}"))
}

fn us(v: Option<i64>) -> String {
    v.map_or("-".into(), |x| format!("{:.1}", x as f64 / 1000.0))
}

fn status(complete: bool, reason: &StopReason) -> String {
    if complete {
        String::new()
    } else {
        format!("  [PARTIAL: {reason}]")
    }
}

fn cpu_text(c: Option<&CpuUse>) -> String {
    c.map_or("-".into(), |c| format!("{:.1} %", c.utilisation_pct))
}

fn warnings(w: &[Warning], out: &mut dyn Write) -> io::Result<()> {
    for x in w {
        writeln!(out, "warning: {x}")?;
    }
    Ok(())
}

pub fn write_tcp_text(r: &TcpReport, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.config;
    writeln!(
        out,
        "misura tcp -> {} ({}, {} stream{}{}{}, {} B messages{}{}, for {}){}",
        c.endpoint.address,
        c.direction,
        c.streams,
        if c.streams == 1 { "" } else { "s" },
        match c.threads.as_str() {
            "one" => " on one thread",
            "per-stream" => " on a thread each",
            _ => "",
        },
        if c.busy_poll_ns > 0 {
            format!(
                " polling {} before sleeping",
                human_ns(c.busy_poll_ns as f64)
            )
        } else {
            String::new()
        },
        c.msg_size,
        if c.nodelay { ", nodelay" } else { "" },
        if c.endpoint.clients > 1 {
            format!(", {} clients", c.endpoint.clients)
        } else {
            String::new()
        },
        human_ns(c.duration_ns as f64),
        status(r.complete, &r.stop_reason)
    )?;
    for l in &r.intervals {
        writeln!(
            out,
            "  [client {} {:>6.2}-{:<6.2} s] sent {:>12} B received {:>12} B  {}",
            l.client,
            l.start_ns as f64 / 1e9,
            l.end_ns as f64 / 1e9,
            l.sent_bytes,
            l.received_bytes,
            rate(l.throughput_bps)
        )?;
    }
    writeln!(
        out,
        "{:>6} {:>6} {:>14} {:>14} {:>16} {:>7} {:>8} {:>10} {:>10}",
        "client",
        "stream",
        "sent B",
        "received B",
        "throughput",
        "retrans",
        "rtt µs",
        "sndbuf",
        "rcvbuf"
    )?;
    for cl in &r.clients {
        for s in &cl.streams {
            writeln!(
                out,
                "{:>6} {:>6} {:>14} {:>14} {:>16} {:>7} {:>8} {:>10} {:>10}",
                cl.client,
                s.index,
                s.sent_bytes,
                s.received_bytes,
                rate(s.throughput_bps),
                s.retransmits,
                s.rtt_us,
                s.sndbuf_granted,
                s.rcvbuf_granted
            )?;
        }
        writeln!(
            out,
            "{:>6} {:>6} {:>14} {:>14} {:>16} {:>7} {:>8}  receiver counted {} B; CPU local {} remote {}; service demand local {} remote {} µs/KB{}",
            cl.client,
            "all",
            cl.sent_bytes,
            cl.received_bytes,
            rate(cl.throughput_bps),
            cl.retransmits,
            f1(cl.rtt_us_mean),
            cl.receiver_bytes,
            cpu_text(Some(&cl.cpu_local)),
            cpu_text(cl.cpu_remote.as_ref()),
            f3(cl.service_demand_local_us_per_kb),
            f3(cl.service_demand_remote_us_per_kb),
            status(cl.complete, &cl.stop_reason)
        )?;
        if let (Some(f), Some(b)) = (cl.forward_bps, cl.reverse_bps) {
            writeln!(out, "{:>13} forward {} reverse {}", "", rate(f), rate(b))?;
        }
    }
    writeln!(
        out,
        "throughput (receiver): {}   retransmits: {}",
        rate(r.throughput_bps),
        r.retransmits
    )?;
    warnings(&r.warnings, out)
}

pub fn write_udp_text(r: &UdpReport, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.config;
    writeln!(
        out,
        "misura udp -> {} ({}, {} B datagrams at {}{}{}, for {}){}",
        c.endpoint.address,
        c.direction,
        c.msg_size,
        rate(c.rate_bps as f64),
        if c.df { ", don't fragment" } else { "" },
        if c.endpoint.clients > 1 {
            format!(", {} clients", c.endpoint.clients)
        } else {
            String::new()
        },
        human_ns(c.duration_ns as f64),
        status(r.complete, &r.stop_reason)
    )?;
    writeln!(
        out,
        "{:>6} {:>10} {:>10} {:>8} {:>8} {:>5} {:>5} {:>10} {:>12} {:>16} {:>8} {:>8}",
        "client",
        "sent",
        "received",
        "lost",
        "loss %",
        "dup",
        "ooo",
        "jitter µs",
        "owd var µs",
        "throughput",
        "cpu loc",
        "cpu rem"
    )?;
    for cl in &r.clients {
        writeln!(
            out,
            "{:>6} {:>10} {:>10} {:>8} {:>8.3} {:>5} {:>5} {:>10} {:>12} {:>16} {:>8} {:>8}{}",
            cl.client,
            cl.sent_packets,
            cl.received_packets,
            cl.lost,
            100.0 * cl.loss_ratio,
            cl.duplicates,
            cl.reordered,
            us(cl.jitter_ns.map(|x| x as i64)),
            us(cl.owd_variation_ns),
            rate(cl.throughput_bps),
            cpu_text(Some(&cl.cpu_local)),
            cpu_text(cl.cpu_remote.as_ref()),
            status(cl.complete, &cl.stop_reason)
        )?;
        if cl.emsgsize_errors > 0 {
            writeln!(
                out,
                "       {} sends failed with EMSGSIZE",
                cl.emsgsize_errors
            )?;
        }
        if let Some(p) = &cl.pacing {
            super::pacing::write_pacing_text(p, cl.elapsed_ns, out)?;
        }
        if cl.test_id.is_some() {
            super::pacing::write_cpu_text("client", &cl.cpu_local, out)?;
        }
    }
    writeln!(
        out,
        "throughput (receiver): {}   lost {} ({:.3} %)   path MTU: {}",
        rate(r.throughput_bps),
        r.lost,
        100.0 * r.loss_ratio,
        opt(r.clients.first().and_then(|c| c.path_mtu))
    )?;
    warnings(&r.warnings, out)
}

pub fn write_rr_text(r: &RrReport, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.config;
    writeln!(
        out,
        "misura rr -> {} ({}, request {} B, response {} B, burst {}{}, for {}){}",
        c.endpoint.address,
        c.kind,
        c.request_size,
        c.response_size,
        c.burst,
        if c.endpoint.clients > 1 {
            format!(", {} clients", c.endpoint.clients)
        } else {
            String::new()
        },
        crate::figure::human_ns(c.duration_ns as f64),
        status(r.complete, &r.stop_reason)
    )?;
    // The host line (and its load over the run), as rtt and oneway print it:
    // transaction rates spread widely with the host's load and on a VM.
    super::oneway::write_host(&r.host, out)?;
    writeln!(
        out,
        "{:>6} {:>10} {:>12} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>8} {:>8} {:>11} {:>11}",
        "client",
        "trans",
        "trans/s",
        "lost",
        "min µs",
        "mean µs",
        "p50 µs",
        "p99 µs",
        "max µs",
        "connect µs",
        "cpu loc",
        "cpu rem",
        "µs/tr loc",
        "µs/tr rem"
    )?;
    for cl in &r.clients {
        let l = &cl.latency;
        writeln!(
            out,
            "{:>6} {:>10} {:>12.1} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10} {:>8} {:>8} {:>11} {:>11}{}",
            cl.client,
            cl.transactions,
            cl.transactions_per_s,
            cl.lost,
            us(l.min_ns),
            f1(l.mean_ns.map(|x| x / 1000.0)),
            us(l.median_ns),
            us(l.p99_ns),
            us(l.max_ns),
            cl.connect.as_ref().map_or("-".into(), |s| f1(s.mean_ns.map(|x| x / 1000.0))),
            cpu_text(Some(&cl.cpu_local)),
            cpu_text(cl.cpu_remote.as_ref()),
            f3(cl.service_demand_local_us_per_transaction),
            f3(cl.service_demand_remote_us_per_transaction),
            status(cl.complete, &cl.stop_reason)
        )?;
    }
    writeln!(out, "transactions/s: {:.1}", r.transactions_per_s)?;
    warnings(&r.warnings, out)
}

pub fn write_setup_text(r: &SetupReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "misura setup -> {}{}",
        r.config.endpoint.address,
        status(r.complete, &r.stop_reason)
    )?;
    writeln!(out, "method: {}", r.config.method)?;
    writeln!(
        out,
        "{:>8} {:>7} {:>14} {:>14} {:>12} {:>12} {:>12} {:>14}",
        "idle s",
        "samples",
        "1st RTT µs",
        "2nd RTT µs",
        "set-up µs",
        "min µs",
        "max µs",
        "handshake µs"
    )?;
    for g in &r.gaps {
        writeln!(
            out,
            "{:>8.1} {:>7} {:>14} {:>14} {:>12} {:>12} {:>12} {:>14}",
            g.idle_ns as f64 / 1e9,
            g.samples.iter().filter(|s| s.setup_ns.is_some()).count(),
            f1(g.first_rtt_mean_ns.map(|x| x / 1000.0)),
            f1(g.second_rtt_mean_ns.map(|x| x / 1000.0)),
            f1(g.setup_mean_ns.map(|x| x / 1000.0)),
            us(g.setup_min_ns),
            us(g.setup_max_ns),
            f1(g.handshake_mean_ns.map(|x| x / 1000.0)),
        )?;
        for s in &g.samples {
            if let Some(e) = &s.error {
                writeln!(out, "         sample failed: {e}")?;
            }
        }
    }
    warnings(&r.warnings, out)
}

pub fn write_sweep_text(r: &SweepReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "misura sweep {} over {}{}",
        r.test,
        r.parameter,
        status(r.complete, &r.stop_reason)
    )?;
    writeln!(
        out,
        "{:>12} {:>16} {:>12} {:>8} {:>9} {:>9} {:>10} {:>10} {:>8} {:>8} {:>10}",
        r.parameter,
        "throughput",
        "trans/s",
        "retrans",
        "rtt µs",
        "loss %",
        "jitter µs",
        "p50 µs",
        "cpu loc",
        "cpu rem",
        "demand loc"
    )?;
    for p in &r.points {
        let f = &p.figures;
        writeln!(
            out,
            "{:>12} {:>16} {:>12} {:>8} {:>9} {:>9} {:>10} {:>10} {:>8} {:>8} {:>10}{}",
            p.value,
            f.throughput_bps.map_or("-".into(), rate),
            f1(f.transactions_per_s),
            opt(f.retransmits),
            f1(f.rtt_us_mean),
            f3(f.loss_ratio.map(|x| 100.0 * x)),
            us(f.jitter_ns.map(|x| x as i64)),
            us(f.latency_median_ns),
            f1(f.cpu_local_pct),
            f1(f.cpu_remote_pct),
            f3(f.service_demand_local),
            match &f.error {
                Some(e) => format!("  [{e}]"),
                None if !f.complete => "  [partial]".into(),
                None => String::new(),
            }
        )?;
    }
    warnings(&r.warnings, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::meta::{HostFingerprint, Meta};

    #[test]
    fn sweep_csv_has_one_row_per_point() {
        let r = SweepReport {
            meta: Meta {
                format: "misura.sweep".into(),
                format_version: 1,
                tool: "misura".into(),
                tool_version: "0".into(),
                started_at: "2024-01-01T00:00:00Z".into(),
                command: vec![],
            },
            complete: true,
            stop_reason: StopReason::Finished,
            host: HostFingerprint::default(),
            test: "tcp".into(),
            parameter: "msg-size".into(),
            base_args: vec![],
            points: ["10", "100"]
                .iter()
                .map(|v| SweepPoint {
                    parameter: "msg-size".into(),
                    value: v.to_string(),
                    figures: SweepFigures {
                        complete: true,
                        throughput_bps: Some(1e6),
                        ..Default::default()
                    },
                })
                .collect(),
            warnings: vec![],
        };
        let mut out = Vec::new();
        write_sweep_csv(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        let width = lines[0].split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == width));
        assert!(lines[1].starts_with("msg-size,10,1000000,"));
        let mut t = Vec::new();
        write_sweep_text(&r, &mut t).unwrap();
        assert!(String::from_utf8(t).unwrap().contains("1.000 Mbit/s"));
    }
}
