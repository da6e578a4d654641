//! A Y.1564 run from what it is asked ([`Request`], plain values) to its
//! result: the ports checked, the services against their link and MTU, the
//! frame format settled for the RX port, the engine opened, both tests run,
//! the verdict taken and the result assembled.

use super::{fit, measure_services, payload, Plan};
use crate::error::Result;
use crate::ports::{self, Ports};
use misura_cli::warnings::Warn;
use misura_engine::{self as frames, EngineRequest};
use misura_measure::time::Span;
use misura_report::y1564::{ServiceConfig, Y1564Config, Y1564Report};
use misura_wire::MacAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What a Y.1564 run is asked: the services (1 to 8, distinct names, each
/// figure in its bounds) and the tests' lengths.
#[derive(Clone, Debug)]
pub struct Request {
    pub ports: Ports,
    /// The network namespace the ports are in, as the result records it.
    pub netns: Option<String>,
    pub services: Vec<ServiceConfig>,
    /// A configuration-test step.
    pub step: Span,
    /// The performance test (zero: none).
    pub perf: Span,
}

/// The run `req` asks, until both tests are done or `stop` is set (the
/// result then says it is incomplete), its progress told to `progress`.
/// The result carries the run's verdict (`pass`, `inconclusive`).
pub fn measure(
    req: &Request,
    progress: &dyn crate::Progress,
    stop: &Arc<AtomicUsize>,
) -> Result<Y1564Report> {
    let started = std::time::Instant::now();
    let started_at = misura_cli::meta::now_rfc3339();
    let p = &req.ports;
    let services = &req.services;
    let checked = ports::check(p)?;
    let (tx, rx) = (&checked.tx, &checked.rx);
    let link_bps = rx.speed_mbps.or(tx.speed_mbps).filter(|&m| m > 0);
    let mtu = tx.mtu.min(rx.mtu) as usize;
    fit::check_ports(
        services,
        link_bps.map(|m| m * 1_000_000),
        mtu,
        req.perf.is_positive(),
    )?;
    // The frame format settled for the RX port: PTP-wrapped where that
    // gets NIC RX stamps.
    let payloads: Vec<usize> = services.iter().map(payload).collect();
    let format = frames::format::settle(p.frame_format, &p.rx, p.ethertype, &payloads);
    if format.format == frames::FrameFormat::Ptp {
        fit::check_ptp_room(services, &payloads)?;
    }
    let mut engine = frames::open::open(&EngineRequest {
        tx: p.tx.clone(),
        rx: p.rx.clone(),
        ethertype: format.ethertype,
        choice: p.choice,
        cores: p.args.cores as usize,
        max_frame: services.iter().map(|s| s.frame_bytes).max().unwrap_or(64),
        qdisc_bypass: p.args.qdisc_bypass,
        hardware_stamps: format.hardware_stamps,
    })?;
    let mut warnings = engine
        .facts()
        .notes
        .iter()
        .chain(format.note.iter())
        .map(|n| Warn::EngineFallback { note: n.clone() }.into())
        .collect();
    let hardware = engine.rx_clock.is_some();
    let plan = Plan {
        services: services.clone(),
        step: req.step,
        perf: req.perf,
        tester_retries: p.tester_retries,
        ethertype: format.ethertype,
        dst: MacAddr(rx.mac),
        src: MacAddr(tx.mac),
        cpus: checked.cpus.clone(),
    };
    let figures = measure_services(&plan, &mut engine, progress, stop, &mut warnings)?;
    // The engine as it ends: its RX clock's fit over the whole run.
    let mut facts = engine.facts();
    if let Some(c) = facts.rx_clock.as_mut() {
        c.u95_ns = figures.fd_u95_max_ns();
    }
    let signal = stop.load(Ordering::Relaxed);
    let verdict = figures.verdict(signal != 0);
    let super::Figures {
        services: reports,
        performance,
    } = figures;
    Ok(Y1564Report {
        meta: misura_cli::meta::meta("misura.y1564", started_at),
        complete: signal == 0,
        stop_reason: misura_cli::exit::stop_reason(signal),
        host: ports::host(p),
        ports: checked.infos(),
        config: Y1564Config {
            tx: p.tx.clone(),
            rx: p.rx.clone(),
            netns: req.netns.clone(),
            step_s: req.step.as_secs_f64(),
            performance_s: req.perf.as_secs_f64(),
            rate_basis: "Ethernet frames with FCS (no preamble or gap)".into(),
            delay_source: if hardware {
                "sender's user clock in the frame to the NIC RX stamp (the RX port's PTP clock converted to system time), for the frames the NIC stamped; the send side's host delay is in it"
            } else {
                "sender's user clock in the frame to the kernel RX stamp (an upper bound)"
            }
            .into(),
            ethertype: format.ethertype,
            tester_retries: p.tester_retries,
        },
        engine: facts,
        services: reports,
        performance,
        pass: verdict.pass,
        inconclusive: verdict.inconclusive,
        elapsed_s: started.elapsed().as_secs_f64(),
        warnings,
    })
}
