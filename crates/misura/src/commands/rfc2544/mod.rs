//! `misura rfc2544`: RFC 2544's four tests per frame size on the frame
//! engine. The flags resolve into `misura_bench::rfc2544::Plan` here (sizes
//! against the MTU, durations, the link speed, the calibration profile) and
//! the engine is opened; the method (the search, the latency trial, frame
//! loss, back-to-back, each trial classified at the rate the tester sent)
//! is `misura_bench::rfc2544`'s; the result, its exit code and the printing
//! are this command's.

pub mod args;
pub mod sizes;

pub use args::Rfc2544Args;

use crate::shared::exit::Failure;
use crate::shared::meta::{meta, now_rfc3339};
use crate::shared::output::{Finished, Report};
use crate::shared::warnings::Warn;
use anyhow::Result;
use args::Test;
use misura_bench::rfc2544::{self as bench, inconclusive};
use misura_engine::{self as frames, EngineRequest};
use misura_measure::wire_time::LinkModel;
use misura_oneway::Calibration;
use misura_report::rfc2544::{Rfc2544Config, Rfc2544Report};
use misura_report::StopReason;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// `misura rfc2544`.
pub fn run(a: &Rfc2544Args, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let started = std::time::Instant::now();
    let started_at = now_rfc3339();
    // What the flags alone make impossible, before any port is looked at.
    sizes::parse(&a.sizes, sizes::MAX_FRAME - sizes::FRAME_OVERHEAD)?;
    let args::Durations {
        trial,
        short,
        latency_trial,
        b2b_max_burst,
    } = a.durations()?;
    a.p.check_ports()?;
    let cpus = a.p.cpus()?;
    let tx = misura_oneway::plan::interface(&a.p.tx)?;
    let rx = misura_oneway::plan::interface(&a.p.rx)?;
    a.p.check_macs(&tx, &rx)?;
    let sizes = sizes::parse(&a.sizes, tx.mtu.min(rx.mtu) as usize)?;
    let (link_bps, link_source) = link_speed(a, &tx, &rx)?;
    let link = LinkModel::new(link_bps, false);
    let calibration = a
        .calibration
        .as_ref()
        .map(|p| Calibration::read(p, a.accept_profile_mismatch))
        .transpose()?;
    let mut tests = a.tests.clone();
    tests.sort();
    tests.dedup();
    let mut warnings = Vec::new();
    let req = EngineRequest {
        tx: a.p.tx.clone(),
        rx: a.p.rx.clone(),
        ethertype: a.p.ethertype.value,
        choice: a.p.engine.into(),
        cores: a.p.engine_args.cores as usize,
        max_frame: sizes
            .iter()
            .flat_map(|s| s.frames.iter())
            .max()
            .copied()
            .unwrap_or(64),
        qdisc_bypass: a.p.engine_args.qdisc_bypass,
        hardware_stamps: false,
    };
    let engine = frames::open::open(&req)?;
    let facts = engine.facts();
    for n in &facts.notes {
        warnings.push(Warn::EngineFallback { note: n.clone() }.into());
    }
    let plan = bench::Plan {
        tx: a.p.tx.clone(),
        rx: a.p.rx.clone(),
        netns: a.ns.netns.clone(),
        tests: bench::Tests {
            throughput: tests.contains(&Test::Throughput),
            latency: tests.contains(&Test::Latency),
            loss: tests.contains(&Test::Loss),
            b2b: tests.contains(&Test::B2b),
        },
        link,
        trial,
        short,
        resolution: a.resolution.share,
        pdr: a.pdr.share,
        max_trials: a.max_trials,
        latency_trial,
        b2b_trials: a.b2b_trials,
        b2b_max_burst,
        tester_retries: a.p.tester_retries,
        engine: req,
        engine_choice: a.p.engine.into(),
        engine_args: (&a.p.engine_args).into(),
        frame_format: a.p.frame_format.into(),
        cpu: a.p.cpu,
        cpus,
        dst: misura_wire::MacAddr(rx.mac),
        src: misura_wire::MacAddr(tx.mac),
        calibration,
    };
    let status = misura_cli::status_line::StatusLine::new(a.out.quiet);
    let out = bench::measure(&plan, &sizes, engine, &status, stop, &mut warnings)?;
    drop(status);
    let inconclusive: Vec<String> = out.iter().flat_map(inconclusive).collect();
    // The latency trials repeat the engine's notes: keep each warning once.
    let mut seen = std::collections::HashSet::new();
    warnings.retain(|w| seen.insert((w.code.clone(), w.text.clone())));
    let signal = stop.load(Ordering::Relaxed);
    let host =
        crate::shared::host::fingerprint_with_interfaces(Default::default(), &[&a.p.tx, &a.p.rx]);
    let report = Rfc2544Report {
        meta: meta("misura.rfc2544", started_at),
        complete: signal == 0,
        stop_reason: if signal == 0 {
            StopReason::Finished
        } else {
            crate::shared::output::signal_reason(signal as i32)
        },
        host,
        ports: vec![
            misura_oneway::ports::port_info("tx", &tx),
            misura_oneway::ports::port_info("rx", &rx),
        ],
        config: Rfc2544Config {
            tx: a.p.tx.clone(),
            rx: a.p.rx.clone(),
            netns: a.ns.netns.clone(),
            link_rate_bps: link_bps,
            link_speed_source: link_source.into(),
            tests: tests.iter().map(|t| t.name().to_string()).collect(),
            trial_s: trial.as_secs_f64(),
            short_trial_s: short.as_secs_f64(),
            resolution: a.resolution.share,
            pdr_ratio: a.pdr.share,
            latency_trial_s: latency_trial.as_secs_f64(),
            b2b_trials: a.b2b_trials,
            b2b_max_burst_s: b2b_max_burst.as_secs_f64(),
            tester_retries: a.p.tester_retries,
            ethertype: a.p.ethertype.value,
            calibration: a.calibration.as_ref().map(|p| p.display().to_string()),
        },
        engine: facts,
        sizes: out,
        elapsed_s: started.elapsed().as_secs_f64(),
        warnings,
        inconclusive,
    };
    let target = format!("{}->{}", a.p.tx, a.p.rx);
    // A result that rests on the tester's limit is no verdict on the SUT.
    let code = if report.inconclusive.is_empty() || signal != 0 {
        crate::shared::exit::OK
    } else {
        crate::shared::exit::INCONCLUSIVE
    };
    Ok(Finished::with_code(
        Report::new(
            report,
            "rfc2544",
            target,
            misura_report::rfc2544::write_text,
        ),
        code,
    ))
}

/// The link rate and where it came from: --link-speed, else the ports.
fn link_speed(
    a: &Rfc2544Args,
    tx: &misura_sys::iface::InterfaceInfo,
    rx: &misura_sys::iface::InterfaceInfo,
) -> Result<(u64, &'static str), Failure> {
    match &a.link_speed {
        Some(l) => Ok((l.bps, "--link-speed")),
        None => match rx.speed_mbps.or(tx.speed_mbps) {
            Some(m) if m > 0 => Ok((m * 1_000_000, "interface")),
            _ => Err(Failure::Params(format!(
                "cannot read the link speed of {} (the driver does not report it): give it with --link-speed, e.g. --link-speed 1G",
                a.p.rx
            ))),
        },
    }
}
