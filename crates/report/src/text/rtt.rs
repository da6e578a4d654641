//! The text form of `misura rtt`, its CSV summary and the per-probe log
//! (`--probes`); the result types are in `model::rtt`.

use crate::figure::human_ns;
use crate::frames::Cell;
use crate::model::rtt::*;
use crate::model::SummarySnapshot;
use misura_measure::stamp_client::ProbeRecord;
use misura_measure::time::{Instant, Span};
use std::io::{self, Write};

use super::heading::partial;

use super::percentiles::{write_rows, Columns};

/// The schedule as run: pattern, period, how many probes or how long, and
/// how long a reply is waited for (a period given as `--period 5` once ran
/// 5 s apart with nothing in the output to show it).
fn schedule(c: &RttConfig) -> String {
    let pattern = match c.pattern {
        crate::model::Pattern::Periodic => "periodic".to_string(),
        crate::model::Pattern::Burst { frames } => format!("bursts of {frames}"),
        crate::model::Pattern::Poisson => "Poisson (mean gap)".to_string(),
    };
    let period = human_ns(c.period_ns as f64);
    let length = match (c.count, c.duration_s) {
        (Some(n), Some(d)) => format!("{n} probes or {d} s, whichever ends first"),
        (Some(n), None) => {
            let per = misura_measure::Pattern::from(c.pattern)
                .frames_per_period()
                .max(1) as f64;
            let s = n as f64 / per * c.period_ns as f64;
            format!("{n} probes (about {})", human_ns(s))
        }
        (None, Some(d)) => format!("for {d} s"),
        (None, None) => "until stopped".to_string(),
    };
    format!(
        "schedule: {pattern}, every {period}, {length}; reply timeout {}",
        human_ns(c.timeout_ns as f64)
    )
}

/// Human output.
pub fn write_text(r: &RttReport, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.config;
    writeln!(
        out,
        "misura rtt: {} -> {} ({}{}{}){}",
        c.local,
        c.target,
        c.transport,
        if c.frame_format.as_deref() == Some("ptp") {
            ", PTP-wrapped"
        } else {
            ""
        },
        if c.authenticated {
            ", authenticated"
        } else {
            ""
        },
        partial(r.complete, &r.stop_reason)
    )?;
    writeln!(out, "{}", schedule(c))?;
    let t = &r.timestamps;
    if r.irtt.is_some() {
        super::rtt_irtt::write_timestamps(t, r.totals.received, out)?;
    } else {
        writeln!(
            out,
            "timestamps: client TX {} / RX {}; reflector RX {} / TX {}{}; reflector clock {}",
            t.client_tx,
            t.client_rx,
            reflector_methods(&t.reflector_rx, &t.reflector_rx_methods),
            reflector_methods(&t.reflector_tx, &t.reflector_tx_methods),
            if t.reflector_two_step {
                " (precise two-step follow-up)"
            } else {
                " (no follow-up: reply timestamp used)"
            },
            t.reflector_sync.as_deref().unwrap_or("not stated")
        )?;
    }
    if let Some(n) = &t.hardware_note {
        writeln!(out, "NIC hardware stamps: not used: {n}")?;
    }
    super::oneway::write_host(&r.host, out)?;
    let o = &r.totals;
    writeln!(
        out,
        "probes: sent {}  received {}  lost {}  duplicates {}  reordered {}  late {}  follow-ups {}",
        o.sent, o.received, o.lost, o.duplicates, o.reordered, o.late, o.follow_ups
    )?;
    if o.stamped_hardware + o.hw_tx_stamp_missing + o.hw_rx_stamp_missing > 0 {
        writeln!(
            out,
            "RTT stamps per probe: NIC hardware {}  kernel {}  user clock {}; without the NIC's TX stamp {}, without its RX stamp {}",
            o.stamped_hardware, o.stamped_kernel, o.stamped_user, o.hw_tx_stamp_missing, o.hw_rx_stamp_missing
        )?;
    }
    if let Some(off) = &r.clock_offset {
        writeln!(
            out,
            "clock offset (reflector − client): {:.3} µs ± {:.3} µs, {}{}",
            off.offset_ns / 1000.0,
            off.uncertainty_ns / 1000.0,
            off.method,
            off.skew_ppm
                .map(|s| format!(", skew {s:.3} ppm"))
                .unwrap_or_default()
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{:<10} {:<12} {:>8} {:>9} {:>9} {:>9} {:>9} {:>10} {:>9} {:>9}",
        "req/resp B", "µs", "count", "min", "median", "p90", "p99", "max", "mean", "stddev"
    )?;
    for s in &r.per_size {
        write_lat(
            &format!("{}/{}", s.request_bytes, s.response_bytes),
            &s.latency,
            out,
        )?;
    }
    if r.per_size.len() > 1 {
        write_lat("all", &r.overall, out)?;
    }
    let with_ideal: Vec<&RttSizeResult> = r.per_size.iter().filter(|s| s.ideal.is_some()).collect();
    if !with_ideal.is_empty() {
        writeln!(out, "\nideal RTT of the link (request + reply wire time) and how far each median is above it (Li et al. 2006, Table 2):")?;
        writeln!(
            out,
            "{:<10} {:>12} {:>14} {:>20} {:>20} {:>20}",
            "req/resp B", "ideal µs", "4·P·8/R µs", "user", "kernel", "network"
        )?;
        for s in with_ideal {
            let i = s.ideal.as_ref().unwrap();
            let pct = |v: Option<f64>| v.map_or("-".into(), |x| above_ideal(x, i.physical_ns));
            writeln!(
                out,
                "{:<10} {:>12.3} {:>14.3} {:>20} {:>20} {:>20}",
                format!("{}/{}", s.request_bytes, s.response_bytes),
                i.physical_ns / 1000.0,
                i.seed_convention_ns / 1000.0,
                pct(i.user_error_percent),
                pct(i.kernel_error_percent),
                pct(i.network_error_percent)
            )?;
        }
    }
    if let Some(s) = &r.irtt {
        super::rtt_irtt::write_session(s, out)?;
    }
    if let Some(f) = &r.frames_file {
        writeln!(out, "\nper-probe log: {f}")?;
    }
    for w in &r.warnings {
        writeln!(out, "warning: {w}")?;
    }
    Ok(())
}

/// A median's distance above the ideal RTT, from its error in percent:
/// the time, and the percent while the wire time is a fair part of the
/// RTT; far above it (a fast link, where the hosts' own time dominates: a
/// 20 µs RTT over a 40 ns ideal was "44756.6 %") the ratio instead.
fn above_ideal(error_percent: f64, ideal_ns: f64) -> String {
    let excess = error_percent / 100.0 * ideal_ns;
    let time = human_ns(excess);
    let sign = if excess >= 0.0 { "+" } else { "" };
    if error_percent.abs() < 1000.0 {
        format!("{sign}{time} ({error_percent:.1} %)")
    } else {
        format!("{sign}{time} ({:.0}×)", 1.0 + error_percent / 100.0)
    }
}

fn write_lat(label: &str, l: &RttLatencies, out: &mut dyn Write) -> io::Result<()> {
    let rows: [(&str, Option<&SummarySnapshot>); 7] = [
        ("user RTT", Some(&l.user_rtt)),
        ("kernel RTT", l.kernel_rtt.as_ref()),
        ("hw RTT", l.hardware_rtt.as_ref()),
        ("turnaround", l.turnaround.as_ref()),
        ("network RTT", l.network_rtt.as_ref()),
        ("forward", l.forward.as_ref()),
        ("backward", l.backward.as_ref()),
    ];
    let columns = Columns {
        label: 10,
        name: 12,
        count: 8,
        p999: false,
    };
    write_rows(label, &rows, &columns, out)?;
    if let Some(j) = l.jitter_rfc3550_ns {
        writeln!(
            out,
            "{:<10} {:<12} {:>8} {:>9.3}",
            "",
            "jitter 3550",
            "",
            j / 1000.0
        )?;
    }
    Ok(())
}

/// Summary CSV in long form, one row per quantity and size.
pub fn write_csv(r: &RttReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "quantity,request_bytes,response_bytes,count,min_ns,mean_ns,median_ns,p90_ns,p99_ns,p999_ns,max_ns,std_dev_ns,over_threshold")?;
    let mut rows = |label_req: String, label_resp: String, l: &RttLatencies| -> io::Result<()> {
        let items = [
            ("user_rtt", Some(&l.user_rtt)),
            ("kernel_rtt", l.kernel_rtt.as_ref()),
            ("hardware_rtt", l.hardware_rtt.as_ref()),
            ("turnaround", l.turnaround.as_ref()),
            ("network_rtt", l.network_rtt.as_ref()),
            ("forward", l.forward.as_ref()),
            ("backward", l.backward.as_ref()),
        ];
        for (q, s) in items {
            let Some(s) = s else { continue };
            let o = |v: Option<i64>| v.map(|x| x.to_string()).unwrap_or_default();
            let f = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
            writeln!(
                out,
                "{q},{label_req},{label_resp},{},{},{},{},{},{},{},{},{},{}",
                s.count,
                o(s.min_ns),
                f(s.mean_ns),
                o(s.median_ns),
                o(s.p90_ns),
                o(s.p99_ns),
                o(s.p999_ns),
                o(s.max_ns),
                f(s.std_dev_ns),
                s.over_threshold
            )?;
        }
        Ok(())
    };
    for s in &r.per_size {
        rows(
            s.request_bytes.to_string(),
            s.response_bytes.to_string(),
            &s.latency,
        )?;
    }
    rows("all".into(), String::new(), &r.overall)
}

/// Per-probe CSV columns. Timestamps: client instants on the client's
/// CLOCK_REALTIME, reflector instants on the reflector's clock; durations in
/// ns; empty when unknown.
/// `kernel_rtt_ns` is from the software stamps, `hardware_rtt_ns` from the
/// NIC's (`tx_hw_ns`, `rx_hw_ns`, on its PTP clock); `hw_stamped` is 1 when
/// `network_rtt_ns` and the one-way delays are on the NIC's stamps, 0 when
/// on the kernel's (or, without kernel stamps, none).
/// The reflector's stamps as named, with each method's count of replies
/// when they were mixed ("software (156) and NIC hardware (44)").
fn reflector_methods(
    named: &Option<String>,
    counts: &std::collections::BTreeMap<String, u64>,
) -> String {
    match named {
        None => "not stated".into(),
        Some(n) if counts.len() < 2 => n.clone(),
        Some(n) => n
            .split(" and ")
            .map(|m| match counts.get(m) {
                Some(c) => format!("{m} ({c})"),
                None => m.to_string(),
            })
            .collect::<Vec<_>>()
            .join(" and "),
    }
}

pub const PROBES_HEADER: &str = "seq,request_bytes,response_bytes,tx1_ns,tx2_ns,tx_kernel_ns,reflector_rx_ns,reflector_tx_ns,reflector_tx_precise,rx_kernel_ns,rx2_ns,user_rtt_ns,kernel_rtt_ns,turnaround_ns,network_rtt_ns,forward_ns,backward_ns,sender_ttl,lost,reordered,duplicates,tx_hw_ns,rx_hw_ns,hardware_rtt_ns,hw_stamped";

/// One per-probe row; `one_way` is (forward, backward) with the offset used.
pub fn write_probe_row(
    out: &mut dyn Write,
    p: &ProbeRecord,
    one_way: Option<(Span, Span)>,
) -> io::Result<()> {
    let t = p.times();
    let ok = !p.lost;
    let c = |v: Option<i64>| Cell(if ok { v } else { None });
    // Stamps and durations become integer ns in their cells.
    let at = |v: Option<Instant>| v.map(Instant::as_ns);
    let ns = |v: Option<Span>| v.map(Span::as_ns);
    let hw = p.stamp_source() == misura_measure::TimestampSource::NicHardware;
    writeln!(
        out,
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
        p.seq,
        p.request_bytes,
        if ok {
            p.response_bytes.to_string()
        } else {
            String::new()
        },
        p.tx1.as_ns(),
        p.tx2.as_ns(),
        Cell(at(p.tx_kernel)),
        c(at(p.reflector_rx)),
        c(at(p.reflector_tx)),
        if ok {
            u8::from(p.reflector_tx_precise).to_string()
        } else {
            String::new()
        },
        c(at(p.rx_kernel)),
        c(Some(p.rx2.as_ns())),
        c(Some(t.user_rtt().as_ns())),
        c(ns(p.software_times().kernel_rtt())),
        c(ns(t.turnaround())),
        c(ns(t.network_rtt())),
        c(ns(one_way.map(|o| o.0))),
        c(ns(one_way.map(|o| o.1))),
        c(p.sender_ttl.map(i64::from)),
        u8::from(p.lost),
        u8::from(p.reordered),
        p.duplicates,
        Cell(at(p.tx_hw)),
        c(at(p.rx_hw)),
        c(ns(p.hardware_rtt())),
        c(Some(i64::from(hw)))
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_median_far_above_the_ideal_reads_as_time_and_ratio() {
        assert_eq!(super::above_ideal(44756.6, 40.0), "+17.90 µs (449×)");
        assert_eq!(super::above_ideal(12.5, 80_000.0), "+10.00 µs (12.5 %)");
    }

    use super::*;

    #[test]
    fn probe_rows_match_the_header() {
        let mut out = Vec::new();
        writeln!(out, "{PROBES_HEADER}").unwrap();
        let p = ProbeRecord {
            seq: 3,
            request_bytes: 44,
            response_bytes: 44,
            tx1: Instant::from_ns(100),
            tx2: Instant::from_ns(150),
            tx_kernel: Some(Instant::from_ns(140)),
            reflector_rx: Some(Instant::from_ns(5_000)),
            reflector_tx: Some(Instant::from_ns(5_020)),
            reflector_tx_precise: true,
            rx_kernel: Some(Instant::from_ns(300)),
            rx2: Instant::from_ns(330),
            sender_ttl: Some(64),
            ..Default::default()
        };
        let seventy = Span::from_ns(70);
        write_probe_row(&mut out, &p, Some((seventy, seventy))).unwrap();
        let lost = ProbeRecord {
            seq: 4,
            request_bytes: 44,
            tx1: Instant::from_ns(1),
            tx2: Instant::from_ns(2),
            lost: true,
            ..Default::default()
        };
        write_probe_row(&mut out, &lost, None).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let n = lines[0].split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == n));
        for col in [
            "seq",
            "request_bytes",
            "response_bytes",
            "user_rtt_ns",
            "kernel_rtt_ns",
            "turnaround_ns",
            "network_rtt_ns",
            "forward_ns",
            "backward_ns",
            "lost",
        ] {
            assert!(lines[0].split(',').any(|c| c == col), "{col}");
        }
        // user 230, kernel 160, turnaround 20, network 140.
        assert_eq!(
            lines[1],
            "3,44,44,100,150,140,5000,5020,1,300,330,230,160,20,140,70,70,64,0,0,0,,,,0"
        );
        assert_eq!(lines[2], "4,44,,1,2,,,,,,,,,,,,,,1,0,0,,,,");
        // With the NIC's stamps: the network RTT is theirs, the kernel RTT
        // stays the software one.
        let mut out = Vec::new();
        let hw = ProbeRecord {
            tx_hw: Some(Instant::from_ns(1_000_145)),
            rx_hw: Some(Instant::from_ns(1_000_290)),
            ..p
        };
        write_probe_row(&mut out, &hw, None).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap().trim_end(),
            "3,44,44,100,150,140,5000,5020,1,300,330,230,160,20,125,,,64,0,0,0,1000145,1000290,145,1"
        );
    }
}
