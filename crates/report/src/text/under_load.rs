//! The text form of `misura load`; the result types are in `model::under_load`.

use crate::figure::human_ns;
use crate::model::under_load::*;
use std::io::{self, Write};

/// A time in the unit that suits it (37 ns, 4.00 µs, 212.50 ms), as the
/// other reports print them.
fn us(v: Option<f64>) -> String {
    v.map_or("-".into(), human_ns)
}

fn mbps(v: f64) -> String {
    format!("{:.2} Mbit/s", v / 1e6)
}

/// Human output.
pub fn write_text(r: &UnderLoadReport, out: &mut dyn Write) -> io::Result<()> {
    let c = &r.config;
    writeln!(
        out,
        "misura load: {} (probes to {}); idle {:.0} s, loaded {:.0} s, idle {:.0} s",
        c.server, c.reflector, c.idle_s, c.duration_s, c.idle_s
    )?;
    writeln!(out, "timestamps: {}", c.timestamps)?;
    super::oneway::write_host(&r.host, out)?;
    if let Some(o) = &r.clock_offset {
        writeln!(
            out,
            "clock offset (reflector − client, idle phase): {} ± {} ({})",
            us(Some(o.offset_ns)),
            us(Some(o.uncertainty_ns)),
            o.method
        )?;
    }
    writeln!(
        out,
        "\nphase         probes  lost      network RTT (p50 / p99)      user RTT (p50 / p99)   forward p50   backward p50   throughput"
    )?;
    for p in &r.phases {
        let pair = |x: Option<&Percentiles>| {
            x.map_or("-".to_string(), |x| {
                format!("{} / {}", us(x.median_ns), us(x.p99_ns))
            })
        };
        writeln!(
            out,
            "{:<12} {:>7} {:>5}   {:>26}   {:>23}   {:>11}   {:>12}   {}",
            p.name,
            p.sent,
            p.lost,
            pair(p.network_rtt.as_ref()),
            pair(Some(&p.user_rtt)),
            us(p.forward.as_ref().and_then(|f| f.median_ns)),
            us(p.backward.as_ref().and_then(|f| f.median_ns)),
            if p.flows.is_empty() {
                "-".to_string()
            } else {
                let flows: Vec<String> = p
                    .flows
                    .iter()
                    .map(|f| format!("{} {}", f.direction, mbps(f.throughput_bps)))
                    .collect();
                format!("{} (total {})", flows.join(", "), mbps(p.total_bps))
            }
        )?;
    }
    if r.phases.iter().any(|p| p.rr.is_some()) {
        writeln!(
            out,
            "\nrequest/response (UDP, one in flight)   transactions/s   lost   latency (p50 / p99)"
        )?;
        for p in &r.phases {
            if let Some(x) = &p.rr {
                writeln!(
                    out,
                    "{:<38} {:>16.0} {:>6}   {} / {}{}",
                    p.name,
                    x.transactions_per_s,
                    x.lost,
                    us(x.latency.median_ns),
                    us(x.latency.p99_ns),
                    x.error
                        .as_ref()
                        .map_or(String::new(), |e| format!("   ({e})"))
                )?;
            }
        }
        writeln!(
            out,
            "(closed loop, one transaction in flight: while a queue is full each one waits for it, while it is empty many complete, so these percentiles count quiet moments more often than the open-loop probes above; compare transactions/s across phases)"
        )?;
    }
    let i = &r.inflation;
    let pm = |v: Option<f64>, u: Option<f64>| match (v, u) {
        (Some(v), Some(u)) => format!("{} ± {}", us(Some(v)), us(Some(u))),
        (Some(v), None) => us(Some(v)),
        _ => "-".into(),
    };
    writeln!(
        out,
        "\ninflation (loaded − idle, medians): network RTT {}, user RTT {}; forward {}, backward {}",
        pm(i.network_rtt_ns, i.network_rtt_uncertainty_ns),
        pm(i.user_rtt_ns, i.user_rtt_uncertainty_ns),
        us(i.forward_ns),
        us(i.backward_ns)
    )?;
    let rpm = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.0}"));
    writeln!(
        out,
        "responsiveness under load: {} RPM (user RTT), {} RPM (network RTT); {}",
        rpm(r.responsiveness.rpm_user),
        rpm(r.responsiveness.rpm_network),
        r.responsiveness.method
    )?;
    for w in &r.warnings {
        writeln!(out, "warning: {}", w.text)?;
    }
    Ok(())
}
