//! `misura oneway` and the measurement shared with `misura calibrate`: the
//! request resolved against the interfaces (`plan`), the ports opened
//! (`ports`) and warmed up (`warmup`), the loop (`engine`) on a tuned thread
//! (`tuning`) with the analysis thread beside it (`analysis`), and the
//! report built from what they measured (`build`, `fit`, `profile`);
//! `misura oneway` as one call on its plain request (`session`).
//! The method's one-way half beside the frame engine (`misura_engine`, which
//! `loaded` drives above the per-frame loop's rates); the flags and the
//! printing are the binary's.
#![forbid(unsafe_code)]

pub mod analysis;
pub mod build;
pub mod calibrate;
mod clocks;
pub mod consistency;
pub mod engine;
pub mod error;
mod exit_class;
pub mod fit;
pub mod loaded;
pub mod mode;
pub mod plan;
pub mod ports;
pub mod profile;
pub mod recalibrate;
pub mod session;
pub mod tuning;
pub mod warmup;

pub use plan::Request;
pub use plan::{Mode, SEED_SIZES};
pub use profile::Calibration;
pub use session::{oneway, OnewayRequest};

use crate::error::Result;
use analysis::{AnalysisPlan, AnalysisThread};
use build::Measured;
use engine::Stop;
use misura_cli::meta::now_rfc3339;
use misura_cli::outfile::RowLog;
use misura_cli::warnings::Warn;
use misura_measure::oneway_session::OnewayCounters;
use misura_measure::time::Span;
use misura_report::OnewayReport;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// The per-frame log, opened (and so checked writable) before anything is
/// measured. The result's own files are `shared::output`'s.
pub struct Outputs {
    pub frames: Option<RowLog>,
}

impl Outputs {
    pub fn open(req: &Request) -> Result<Outputs> {
        Ok(Outputs {
            frames: misura_cli::outfile::open_rows(&req.frames, "per-frame log")?,
        })
    }
}

/// Run one measurement. Returns the report even when interrupted (then
/// `complete` is false).
pub fn measure(
    req: &Request,
    mode: Mode,
    calibration: Option<&Calibration>,
    outputs: &mut Outputs,
    stop: &Arc<AtomicUsize>,
) -> Result<OnewayReport> {
    let req = &ports::settle_frame_format(req);
    let ptp = req.frame_format == plan::FrameFormat::Ptp;
    let default_sizes: Vec<usize> = match (mode, calibration) {
        (Mode::Calibrate, _) if ptp => plan::PTP_SEED_SIZES.to_vec(),
        (Mode::Calibrate, _) => SEED_SIZES.to_vec(),
        (Mode::Oneway, Some(c)) => c.profile.sizes.clone(),
        (Mode::Oneway, None) if ptp => vec![plan::PTP_MIN_PAYLOAD],
        (Mode::Oneway, None) => vec![misura_wire::probe::MIN_PAYLOAD],
    };
    let resolved = plan::resolve(req, &default_sizes, mode)?;
    let load_opts = req.load.as_ref().filter(|_| mode == Mode::Oneway);
    let decided = loaded::decide(load_opts, &resolved)?;
    let started_at = now_rfc3339();
    let port_facts = vec![
        ports::port_info("tx", &resolved.tx),
        ports::port_info("rx", &resolved.rx),
    ];
    let mut warnings = Vec::new();
    let calibration_use = calibration
        .map(|c| profile::check(c, &resolved.config, &port_facts, &mut warnings))
        .transpose()?;

    let ports::Opened {
        ports,
        mut frames,
        stamping,
    } = ports::open(&resolved)?;
    let expect_tx_stamp = stamping.tx.any_tx();
    let mut oneway_plan = plan::session_plan(&resolved, expect_tx_stamp);
    let warm = warmup::warm_up(
        &ports,
        &mut frames,
        &oneway_plan,
        resolved.config.warmup,
        stop,
        stamping.hardware_asked && stamping.tx.hardware_tx,
    )?;
    warmup::settle(&warm, &mut oneway_plan, &stamping, &mut warnings);
    let clocks = clocks::start(&stamping, &req.phc_cross, &mut warnings);

    let mut engine = match (decided, req.load.as_ref()) {
        (Some(d), Some(o)) => Some((loaded::open(&ports, &resolved, o, d)?, o, d)),
        _ => None,
    };
    if let Some((e, _, _)) = &engine {
        for note in &e.notes {
            warnings.push(Warn::EngineFallback { note: note.clone() }.into());
        }
    }
    // The analysis thread starts before the loop thread is pinned, so it
    // keeps the default affinity.
    let cfg = &resolved.config;
    let analysis = AnalysisThread::start(
        AnalysisPlan {
            sizes: cfg.sizes.clone(),
            link: cfg.link.into(),
            threshold: cfg.threshold_ns.map(Span::from_ns),
            calibrating: mode == Mode::Calibrate,
            user_line: calibration.map(|c| c.profile.user.clone().into()),
            kernel_line: calibration.and_then(|c| c.profile.kernel.clone().map(Into::into)),
            hardware_line: calibration.and_then(|c| c.profile.hardware.clone().map(Into::into)),
            hardware_expected: stamping.hardware_asked
                && stamping.tx.hardware_tx
                && stamping.rx.hardware_rx,
            phc: clocks.converter(),
            hardware_unrelated: clocks.unrelated,
            progress: misura_cli::progress::can_draw(req.quiet),
            expected_frames: resolved.expected_frames,
        },
        outputs.frames.take(),
    )?;
    let tuning = tuning::tune(&req.tuning, cfg.netns.clone(), &mut warnings)?;
    let (result, load) = match engine.as_mut() {
        None => (
            engine::run(&ports, &mut frames, &oneway_plan, analysis.queue(), stop),
            None,
        ),
        Some((e, o, d)) => {
            let q = analysis.queue();
            let (plan, r) = (&oneway_plan, &resolved);
            match loaded::run(e, &ports, &mut frames, plan, r, q, stop, o, *d) {
                Ok((c, s, l)) => (Ok((c, s)), Some(l)),
                Err(e) => (Err(e), None),
            }
        }
    };
    if let Some(w) = load.as_ref().and_then(|l| l.trial.tester_limit.clone()) {
        warnings.push(Warn::TesterLimited { why: w }.into());
    }
    let analysis = analysis.finish()?;
    tuning::untune(&tuning);
    let mid_sys = match &result {
        Ok((c, _)) if c.ended > c.started => c.started.as_ns() + (c.ended - c.started).as_ns() / 2,
        _ => misura_sys::clock::realtime_ns(),
    };
    let hardware_clocks = clocks.finish(mid_sys, &analysis.hw_u95, &mut warnings);
    let (counters, stop_reason, loop_error) = match result {
        Ok((c, s)) => (c, s, None),
        Err(e) => (
            OnewayCounters::default(),
            Stop::Finished,
            Some(misura_cli::exit::one_line(&e)),
        ),
    };
    log::debug!("debug: {counters:?}");
    let measured = Measured {
        mode,
        resolved,
        calibration,
        calibration_use,
        started_at,
        ports: port_facts,
        stamping,
        expect_tx_stamp: oneway_plan.expect_tx_stamp,
        warm,
        tuning,
        analysis,
        counters,
        stop: stop_reason,
        loop_error,
        frames_file: req.frames.clone(),
        load,
        hardware_clocks,
    };
    Ok(build::report(measured, warnings))
}
