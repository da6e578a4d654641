//! The CSV tables of `misura tcp`, `udp`, `rr`, `setup` and `sweep`: one
//! row per client (or sample, or sweep point), a header first.

use crate::model::throughput::*;
use std::io::{self, Write};

// ---------------------------------------------------------------- CSV

fn c<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

/// One row per stream and one "all" row per client.
pub fn write_tcp_csv(r: &TcpReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "client,stream,sent_bytes,received_bytes,receiver_bytes,throughput_bps,retransmits,rtt_us,sndbuf_granted,rcvbuf_granted,cpu_local_pct,cpu_remote_pct,complete")?;
    for cl in &r.clients {
        for s in &cl.streams {
            writeln!(
                out,
                "{},{},{},{},{},{:.0},{},{},{},{},,,{}",
                cl.client,
                s.index,
                s.sent_bytes,
                s.received_bytes,
                c(s.receiver_bytes),
                s.throughput_bps,
                s.retransmits,
                s.rtt_us,
                s.sndbuf_granted,
                s.rcvbuf_granted,
                cl.complete as u8
            )?;
        }
        writeln!(
            out,
            "{},all,{},{},{},{:.0},{},{},,,{:.2},{},{}",
            cl.client,
            cl.sent_bytes,
            cl.received_bytes,
            cl.receiver_bytes,
            cl.throughput_bps,
            cl.retransmits,
            c(cl.rtt_us_mean.map(|x| format!("{x:.1}"))),
            cl.cpu_local.utilisation_pct,
            c(cl.cpu_remote.map(|x| format!("{:.2}", x.utilisation_pct))),
            cl.complete as u8
        )?;
    }
    Ok(())
}

pub fn write_udp_csv(r: &UdpReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "client,sent_packets,received_packets,lost,loss_ratio,duplicates,reordered,jitter_ns,owd_min_ns,owd_max_ns,owd_variation_ns,throughput_bps,emsgsize_errors,path_mtu,complete")?;
    for cl in &r.clients {
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{:.0},{},{},{}",
            cl.client,
            cl.sent_packets,
            cl.received_packets,
            cl.lost,
            cl.loss_ratio,
            cl.duplicates,
            cl.reordered,
            c(cl.jitter_ns),
            c(cl.owd_min_ns),
            c(cl.owd_max_ns),
            c(cl.owd_variation_ns),
            cl.throughput_bps,
            cl.emsgsize_errors,
            c(cl.path_mtu),
            cl.complete as u8
        )?;
    }
    Ok(())
}

pub fn write_rr_csv(r: &RrReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "client,transactions,transactions_per_s,lost,min_ns,mean_ns,median_ns,p90_ns,p99_ns,max_ns,connect_mean_ns,cpu_local_pct,cpu_remote_pct,us_per_transaction_local,us_per_transaction_remote,complete")?;
    for cl in &r.clients {
        let l = &cl.latency;
        writeln!(
            out,
            "{},{},{:.1},{},{},{},{},{},{},{},{},{:.2},{},{},{},{}",
            cl.client,
            cl.transactions,
            cl.transactions_per_s,
            cl.lost,
            c(l.min_ns),
            c(l.mean_ns.map(|x| format!("{x:.0}"))),
            c(l.median_ns),
            c(l.p90_ns),
            c(l.p99_ns),
            c(l.max_ns),
            c(cl.connect
                .as_ref()
                .and_then(|s| s.mean_ns)
                .map(|x| format!("{x:.0}"))),
            cl.cpu_local.utilisation_pct,
            c(cl.cpu_remote.map(|x| format!("{:.2}", x.utilisation_pct))),
            c(cl.service_demand_local_us_per_transaction
                .map(|x| format!("{x:.3}"))),
            c(cl.service_demand_remote_us_per_transaction
                .map(|x| format!("{x:.3}"))),
            cl.complete as u8
        )?;
    }
    Ok(())
}

pub fn write_setup_csv(r: &SetupReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "idle_ns,sample,first_rtt_ns,second_rtt_ns,setup_ns,handshake_ns"
    )?;
    for g in &r.gaps {
        for (i, s) in g.samples.iter().enumerate() {
            writeln!(
                out,
                "{},{},{},{},{},{}",
                g.idle_ns,
                i,
                c(s.first_rtt_ns),
                c(s.second_rtt_ns),
                c(s.setup_ns),
                c(s.handshake_ns)
            )?;
        }
    }
    Ok(())
}

/// The curve data: one row per swept value.
pub fn write_sweep_csv(r: &SweepReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "parameter,value,throughput_bps,transactions_per_s,retransmits,rtt_us_mean,loss_ratio,jitter_ns,latency_median_ns,latency_p99_ns,cpu_local_pct,cpu_remote_pct,service_demand_local,service_demand_remote,complete")?;
    for p in &r.points {
        let f = &p.figures;
        let g = |v: Option<f64>| c(v.map(|x| format!("{x:.3}")));
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            p.parameter,
            p.value,
            c(f.throughput_bps.map(|x| format!("{x:.0}"))),
            g(f.transactions_per_s),
            c(f.retransmits),
            g(f.rtt_us_mean),
            c(f.loss_ratio),
            c(f.jitter_ns),
            c(f.latency_median_ns),
            c(f.latency_p99_ns),
            g(f.cpu_local_pct),
            g(f.cpu_remote_pct),
            g(f.service_demand_local),
            g(f.service_demand_remote),
            f.complete as u8
        )?;
    }
    Ok(())
}
