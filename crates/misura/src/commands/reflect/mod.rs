//! `misura reflect`: the STAMP Session-Reflector (UDP) and the raw-probe reflector.
//!
//! The decisions (checks, limits, the reply's bytes, follow-ups, HMACs) are
//! all in `misura_measure::reflector`; this file is the I/O loop around it:
//! receive with the kernel's RX stamp, read the user clock, let the core
//! decide, send, then read the reply's TX stamp back from the error queue
//! and hand it to the core for the next reply's Follow-Up Telemetry TLV.
//!
//! Nothing a peer sends can stop the loop: every receive, send and
//! error-queue failure is counted and the loop goes on. Only setting the
//! socket up can fail.

pub mod args;
pub use args::ReflectArgs;
mod clock;
mod irtt;
mod l2;
mod turn;
mod udp;

use crate::shared::exit::Failure;
use crate::shared::output::{Finished, Report};
use crate::shared::stamping::{FrameFormat, Timestamps};
use anyhow::Result;
use misura_measure::auth::StampKey;
use misura_measure::reflector::{Reflector, ReflectorConfig};
use misura_report::reflect::{write_summary, IoCounters, NicClockReport, Summary};
use misura_sys::packet::TimestampingGranted;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Instant;
use turn::Loop;

/// Most sources `--max-sources` may ask the reflector to track (its tables
/// grow on demand up to this; issue 13, finding 5).
pub const MAX_SOURCES: usize = 1_000_000;

struct Setup {
    config: ReflectorConfig,
    deadline: Option<Instant>,
}

fn setup(args: &ReflectArgs) -> Result<Setup> {
    let key = match &args.key_file {
        None => None,
        Some(path) => {
            let bytes =
                crate::shared::files::read_bounded(path, crate::shared::files::KEY_FILE_MAX)
                    .map_err(|e| {
                        Failure::Usage(format!(
                    "cannot read the key file {}: {e}; create one with `openssl rand -hex 32 > {}`",
                    path.display(),
                    path.display()
                ))
                    })?;
            Some(
                StampKey::from_file_contents(&bytes)
                    .map_err(|e| Failure::Usage(format!("key file {}: {e}", path.display())))?,
            )
        }
    };
    if args.rate_limit == 0 {
        return Err(
            Failure::Usage("--rate-limit must be at least 1 reply per second".into()).into(),
        );
    }
    if args.l2.is_none() && args.frame_format == FrameFormat::Ptp {
        return Err(Failure::Usage(
            "--frame-format ptp is for the raw-probe reflector (--l2 IF); STAMP over UDP has no PTP form".into(),
        )
        .into());
    }
    if args.l2.is_some() && args.timestamps == Timestamps::User {
        return Err(Failure::Usage(
            "--timestamps user is for STAMP over UDP; the raw-probe reflector (--l2) always takes kernel stamps".into(),
        )
        .into());
    }
    if args.max_sources == 0 {
        return Err(Failure::Usage("--max-sources must be at least 1".into()).into());
    }
    if args.max_sources > MAX_SOURCES {
        return Err(Failure::Params(format!(
            "--max-sources {} is over the limit of {MAX_SOURCES} sources tracked at once: use at most {MAX_SOURCES}",
            args.max_sources
        ))
        .into());
    }
    let deadline = args.duration.as_ref().map(|d| Instant::now() + d.std());
    Ok(Setup {
        config: ReflectorConfig {
            key,
            stateful: args.stateful,
            rate_per_s: args.rate_limit,
            // A tenth of a second's worth back to back.
            burst: (args.rate_limit / 10).max(1),
            max_sources: args.max_sources,
            listen_port: if args.l2.is_some() {
                None
            } else {
                Some(args.port())
            },
        },
        deadline,
    })
}

fn source_names(g: &TimestampingGranted) -> (&'static str, &'static str) {
    let rx = if g.hardware_rx {
        "NIC hardware"
    } else if g.software_rx {
        "kernel software"
    } else {
        "user clock"
    };
    let tx = if g.hardware_tx {
        "NIC hardware"
    } else if g.software_tx {
        "kernel software"
    } else {
        "user clock (no follow-up stamps)"
    };
    (rx, tx)
}

/// The interface whose NIC stamps the reflector's datagrams: `--interface`,
/// else the one holding the listening address (a wildcard has none).
fn stamping_interface(args: &ReflectArgs) -> Option<String> {
    if let Some(i) = &args.interface {
        return Some(i.clone());
    }
    if let Some(i) = &args.l2 {
        return Some(i.clone());
    }
    let ip = args.ip();
    if ip.is_unspecified() {
        return None;
    }
    crate::shared::stamping::address_interface(ip)
}

pub fn run(args: &ReflectArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    if let Some(port) = args.irtt {
        return irtt::run(args, port, MAX_SOURCES, stop);
    }
    let s = setup(args)?;
    let started_at = crate::shared::meta::now_rfc3339();
    if let Some(cpu) = args.cpu {
        misura_sys::sched::pin_to_cpu(cpu)?;
    }
    let mode = if s.config.key.is_some() {
        "authenticated"
    } else {
        "unauthenticated"
    };
    let stateful = s.config.stateful;
    let iface = stamping_interface(args);
    if iface.is_none() && args.timestamps == Timestamps::Hardware {
        return Err(Failure::Usage(
            "--timestamps hardware on a wildcard address: name the interface whose NIC stamps (--interface IF) or listen on its address (--listen ADDR)".into(),
        )
        .into());
    }
    // Raw probes may come PTP-wrapped: a NIC that stamps only PTP event
    // messages then stamps those.
    let ptp = args.l2.is_some() && args.frame_format != FrameFormat::Misura;
    let mut hw = crate::shared::stamping::hardware_for(iface.as_deref(), args.timestamps, ptp)?;
    if iface.is_none() && hw.note.is_some() {
        hw.note = Some(
            "listening on a wildcard address: give --interface IF for the NIC's stamps (software stamps)"
                .into(),
        );
    }
    let mut lp = Loop {
        reflector: Reflector::new(s.config),
        clocks: clock::Clocks::new(hw.phc_index.filter(|_| hw.enabled)),
        io: IoCounters::default(),
        stop,
        deadline: s.deadline,
        busy_poll: args.busy_poll,
        turnaround_nic: misura_stats::Summary::new(),
        turnaround_kernel: misura_stats::Summary::new(),
    };
    let started = Instant::now();
    let mut busy = args.busy_poll.then(crate::shared::busy_poll::raw);
    let (transport, listen, granted) = match &args.l2 {
        Some(ifname) => {
            let ethertype = args.ethertype.value;
            let types = l2::ethertypes(args.frame_format, ethertype);
            let (socks, mac, granted) = l2::open(ifname, &types, hw.enabled)?;
            let names: Vec<String> = types
                .iter()
                .map(|&t| match t {
                    misura_wire::ptp::ETHERTYPE_PTP => "PTP-wrapped 0x88F7".to_string(),
                    t => format!("0x{t:04X}"),
                })
                .collect();
            let listen = format!("{ifname} ({mac}, ethertype {})", names.join(" and "));
            announce(
                args,
                "raw Ethernet",
                &listen,
                mode,
                stateful,
                &granted,
                &lp,
                &hw,
            );
            l2::run(&mut lp, &socks, ethertype, mac, granted.hardware_rx);
            ("l2", listen, granted)
        }
        None => {
            let (sock, granted) = udp::open(args.ip(), args.port(), args.timestamps, &hw)?;
            busy = udp::wait_mode(&sock, args.busy_poll)?;
            let listen = sock.local_addr().to_string();
            announce(
                args,
                "STAMP over UDP",
                &listen,
                mode,
                stateful,
                &granted,
                &lp,
                &hw,
            );
            udp::run(&mut lp, &sock, &granted);
            ("udp", listen, granted)
        }
    };
    let (rx, tx) = source_names(&granted);
    let nic = lp.clocks.nic.as_ref();
    let snap = |s: &misura_stats::Summary| (s.count() > 0).then(|| s.snapshot());
    let counters = *lp.reflector.counters();
    // A reflector runs until it is stopped: a signal is its normal end.
    let (_, stop_reason) = crate::shared::output::completion(stop);
    let summary = Summary {
        meta: crate::shared::meta::meta("misura.reflect", started_at),
        complete: true,
        stop_reason,
        host: crate::shared::host::fingerprint(misura_report::LoopTuning {
            netns: args.ns.netns.clone(),
            cpu: args.cpu,
            busy_poll: busy,
            ..Default::default()
        }),
        transport: transport.into(),
        listen,
        mode: mode.into(),
        stateful,
        rx_timestamps: rx.into(),
        tx_timestamps: tx.into(),
        clock_synchronized: lp.clocks.system.synchronized,
        duration_s: started.elapsed().as_secs_f64(),
        counters,
        dropped: counters.dropped(),
        io: lp.io,
        interface: hw.interface.clone(),
        hardware_note: hw.note.clone(),
        nic_clock: nic.map(|n| NicClockReport {
            device: n.device.clone(),
            offset_ns: n.offset.map(|o| o.0),
            offset_uncertainty_ns: n.offset.map(|o| o.1),
            disciplined_by: n.disciplined_by.clone(),
            synchronized: n.state.synchronized,
            error_estimate_ns: n.state.uncertainty_ns,
            error: n.error.clone(),
        }),
        turnaround_nic: snap(&lp.turnaround_nic),
        turnaround_kernel: snap(&lp.turnaround_kernel),
    };
    let target = summary.listen.clone();
    Ok(Finished::ok(Report::new(
        summary,
        "reflect",
        target,
        write_summary,
    )))
}

#[allow(clippy::too_many_arguments)]
fn announce(
    args: &ReflectArgs,
    what: &str,
    listen: &str,
    mode: &str,
    stateful: bool,
    g: &TimestampingGranted,
    lp: &Loop<'_>,
    hw: &crate::shared::stamping::Hardware,
) {
    if args.out.quiet {
        return;
    }
    let clock = &lp.clocks.system;
    let (rx, tx) = source_names(g);
    if let Some(n) = &hw.note {
        eprintln!("misura reflect: NIC hardware stamps not used: {n}");
    }
    if let Some(n) = &lp.clocks.nic {
        eprintln!(
            "misura reflect: NIC stamps on {} ({}): PHC − CLOCK_REALTIME {}; replies to NIC-stamped requests in PTPv2 format, {}, error estimate {} µs",
            n.device,
            hw.interface.as_deref().unwrap_or("?"),
            n.offset.map_or_else(
                || format!("unknown ({})", n.error.as_deref().unwrap_or("not read")),
                |(o, u)| format!("{:.3} µs ± {:.3} µs", o / 1e3, u / 1e3)
            ),
            if n.state.synchronized { "PTP-synchronised" } else { "free-running" },
            n.state.uncertainty_ns / 1000
        );
    }
    let sync = if clock.synchronized {
        format!(
            "synchronised (kernel NTP state, max error {} µs)",
            clock.uncertainty_ns / 1000
        )
    } else {
        "not known to be synchronised (free-running)".to_string()
    };
    eprintln!(
        "misura reflect: {what} on {listen}, {mode}, {}; RX stamps: {rx}, TX stamps: {tx}; clock {sync}; \
         rate limit {}/s per source, at most {} sources",
        if stateful { "stateful" } else { "stateless" },
        args.rate_limit,
        args.max_sources
    );
}
