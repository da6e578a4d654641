//! `misura y1564`: ITU-T Y.1564 service activation on the frame engine.
//! The flags resolve into `misura_bench::y1564::Plan` here, the ports and
//! the frame format are checked and the engine opened; the method (steps,
//! trials, verdicts at the rate the tester sent) is `misura_bench::y1564`'s;
//! so is the run's verdict; the result, the verdict's exit code (0 PASS,
//! 9 FAIL, 8 inconclusive) and the printing are this command's.

pub mod args;

pub use args::Y1564Args;

use crate::shared::exit::Failure;
use crate::shared::meta::{meta, now_rfc3339};
use crate::shared::output::{Finished, Report};
use crate::shared::warnings::Warn;
use anyhow::Result;
use misura_bench::y1564::fit::{self, FitError};
use misura_bench::y1564::{self as bench, payload};
use misura_engine::{self as frames, EngineRequest};
use misura_report::y1564::{ServiceConfig, Y1564Config, Y1564Report};
use misura_report::StopReason;
use misura_wire::MacAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A refusal of the services by the ports, in the command's words.
fn fit_sentence(e: FitError) -> Failure {
    Failure::Params(match &e {
        FitError::OverLink { .. } => format!("{e}: lower cir/eir"),
        FitError::CirsOverLink { .. } => {
            format!("{e}: lower a cir, or --duration 0 to skip it")
        }
        FitError::OverMtu { .. } => e.to_string(),
        FitError::NoRoomInPtp {
            service,
            frame,
            min_frame,
        } => format!(
            "service {service}: a {frame}-byte frame cannot carry misura's header inside a PTP Sync message (--frame-format ptp): give frame={min_frame} or more, or --frame-format misura"
        ),
    })
}

/// The frame engine for `services`, in the frame format settled for the
/// RX port (PTP-wrapped where that gets NIC RX stamps), and the notes it
/// gave as warnings.
fn open_engine(
    a: &Y1564Args,
    services: &[ServiceConfig],
) -> Result<(
    frames::open::Engine,
    frames::format::Settled,
    Vec<misura_report::Warning>,
)> {
    let payloads: Vec<usize> = services.iter().map(payload).collect();
    let format = frames::format::settle(
        a.p.frame_format.into(),
        &a.p.rx,
        a.p.ethertype.value,
        &payloads,
    );
    if format.format == frames::FrameFormat::Ptp {
        fit::check_ptp_room(services, &payloads).map_err(fit_sentence)?;
    }
    let engine = frames::open::open(&EngineRequest {
        tx: a.p.tx.clone(),
        rx: a.p.rx.clone(),
        ethertype: format.ethertype,
        choice: a.p.engine.into(),
        cores: a.p.engine_args.cores as usize,
        max_frame: services.iter().map(|s| s.frame_bytes).max().unwrap_or(64),
        qdisc_bypass: a.p.engine_args.qdisc_bypass,
        hardware_stamps: format.hardware_stamps,
    })?;
    let warnings = engine
        .facts()
        .notes
        .iter()
        .chain(format.note.iter())
        .map(|n| Warn::EngineFallback { note: n.clone() }.into())
        .collect();
    Ok((engine, format, warnings))
}

/// `misura y1564`.
pub fn run(a: &Y1564Args, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let started = std::time::Instant::now();
    let started_at = now_rfc3339();
    let services = a.services()?;
    let (step, perf) = a.durations()?;
    a.p.check_ports()?;
    let cpus = a.p.cpus()?;
    let tx = misura_oneway::plan::interface(&a.p.tx)?;
    let rx = misura_oneway::plan::interface(&a.p.rx)?;
    a.p.check_macs(&tx, &rx)?;
    let link_bps = rx.speed_mbps.or(tx.speed_mbps).filter(|&m| m > 0);
    let mtu = tx.mtu.min(rx.mtu) as usize;
    fit::check_ports(
        &services,
        link_bps.map(|m| m * 1_000_000),
        mtu,
        perf.is_positive(),
    )
    .map_err(fit_sentence)?;
    let (mut engine, format, mut warnings) = open_engine(a, &services)?;
    let hardware = engine.rx_clock.is_some();
    let plan = bench::Plan {
        services: services.clone(),
        step,
        perf,
        tester_retries: a.p.tester_retries,
        ethertype: format.ethertype,
        dst: MacAddr(rx.mac),
        src: MacAddr(tx.mac),
        cpus,
    };
    let status = misura_cli::status_line::StatusLine::new(a.out.quiet);
    let figures = bench::measure(&plan, &mut engine, &status, stop, &mut warnings)?;
    drop(status);
    // The engine as it ends: its RX clock's fit over the whole run.
    let mut facts = engine.facts();
    if let Some(c) = facts.rx_clock.as_mut() {
        c.u95_ns = figures.fd_u95_max_ns();
    }
    let signal = stop.load(Ordering::Relaxed);
    let verdict = figures.verdict(signal != 0);
    let bench::Figures {
        services: reports,
        performance,
    } = figures;
    let report = Y1564Report {
        meta: meta("misura.y1564", started_at),
        complete: signal == 0,
        stop_reason: if signal == 0 {
            StopReason::Finished
        } else {
            crate::shared::output::signal_reason(signal as i32)
        },
        host: crate::shared::host::fingerprint_with_interfaces(
            Default::default(),
            &[&a.p.tx, &a.p.rx],
        ),
        ports: vec![
            misura_oneway::ports::port_info("tx", &tx),
            misura_oneway::ports::port_info("rx", &rx),
        ],
        config: Y1564Config {
            tx: a.p.tx.clone(),
            rx: a.p.rx.clone(),
            netns: a.ns.netns.clone(),
            step_s: step.as_ns() as f64 / 1e9,
            performance_s: perf.as_secs_f64(),
            rate_basis: "Ethernet frames with FCS (no preamble or gap)".into(),
            delay_source: if hardware {
                "sender's user clock in the frame to the NIC RX stamp (the RX port's PTP clock converted to system time), for the frames the NIC stamped; the send side's host delay is in it"
            } else {
                "sender's user clock in the frame to the kernel RX stamp (an upper bound)"
            }
            .into(),
            ethertype: format.ethertype,
            tester_retries: a.p.tester_retries,
        },
        engine: facts,
        services: reports,
        performance,
        pass: verdict.pass,
        inconclusive: verdict.inconclusive,
        elapsed_s: started.elapsed().as_secs_f64(),
        warnings,
    };
    let target = format!("{}->{}", a.p.tx, a.p.rx);
    let code = if verdict.pass || signal != 0 {
        crate::shared::exit::OK
    } else if verdict.inconclusive {
        crate::shared::exit::INCONCLUSIVE
    } else {
        // The SUT's own failure: the tool worked (exit 9, not 1).
        crate::shared::exit::FAIL
    };
    Ok(Finished::with_code(
        Report::new(report, "y1564", target, misura_report::y1564::write_text),
        code,
    ))
}
