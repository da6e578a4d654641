//! RFC 2544 §26.2 at the throughput rate: `misura oneway` in engine mode
//! (the load at the rate, a latency stream of tagged frames inside it with
//! their TX/RX windows and kernel stamps, and the SUT latency when a
//! calibration is given), reported as RFC 8219 asks: at least 500 tagged
//! frames; minimum, median, 99.9th percentile and PDV = p99.9 − min. On
//! ports with NIC stamps (`--frame-format auto` wraps the frames in PTP
//! where the NIC stamps only that) the figures are the hardware ones.

use super::plan::Plan;
use super::size::SizeSpec;
use crate::error::{BenchError, Result};
use misura_engine::{EngineChoice, FrameFormat};
use misura_oneway::mode::{LoadOptions, OnewayEngine};
use misura_oneway::{self as oneway, Mode, Request};
use misura_report::rfc2544::LatencyResult;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Tagged frames RFC 8219 asks for at least; the stream aims at twice that.
pub const MIN_TAGGED: u64 = 500;

/// Run the latency trial for `size` at `rate_fps`.
pub fn run(
    plan: &Plan,
    size: &SizeSpec,
    rate_fps: f64,
    stop: &Arc<AtomicUsize>,
) -> Result<(LatencyResult, Vec<misura_report::Warning>)> {
    let frames = (rate_fps * plan.trials.latency_trial.as_ns() as f64 / 1e9) as u64;
    let every = (frames / (2 * MIN_TAGGED)).clamp(2, 1_000_000);
    let ethertype = plan.engine.ethertype;
    let mut req = Request::new(&plan.tx, &plan.rx);
    req.netns = plan.netns.clone();
    req.pace = oneway::plan::Pace::Rate(rate_fps);
    req.duration = Some(plan.trials.latency_trial);
    req.sizes = size.payloads();
    req.link_rate_bps = Some(plan.link.rate_bps);
    req.ethertype = ethertype;
    // Auto takes PTP only where that gives NIC stamps and every frame of
    // the size carries the envelope (a 64-byte frame cannot).
    let format = misura_engine::format::settle(plan.frame_format, &plan.rx, ethertype, &req.sizes);
    req.frame_format = match format.format {
        FrameFormat::Ptp => oneway::plan::FrameFormat::Ptp,
        _ => oneway::plan::FrameFormat::Misura,
    };
    req.quiet = true;
    req.tuning.cpu = plan.cpu;
    req.load = Some(LoadOptions {
        mode: match plan.engine_choice {
            EngineChoice::Auto => OnewayEngine::Auto,
            EngineChoice::Packet => OnewayEngine::Packet,
            EngineChoice::Mmap => OnewayEngine::Mmap,
            EngineChoice::Xdp => OnewayEngine::Xdp,
        },
        engine: plan.engine_args.clone(),
        latency_every: Some(every),
        cpu: plan.cpu,
    });
    let mut outputs = oneway::Outputs { frames: None };
    let r = oneway::measure(
        &req,
        Mode::Oneway,
        plan.calibration.as_ref(),
        &mut outputs,
        stop,
    )?;
    let o = &r.overall;
    // NIC stamps at both ends first (the RX clock converted to the TX
    // clock when they differ), then kernel stamps, then the user clock.
    let (source, fig) = match (&o.hardware, &o.kernel) {
        (Some(h), _) if h.count > 0 => ("hardware", h),
        (_, Some(k)) if k.count > 0 => ("kernel", k),
        _ => ("user", &o.mul),
    };
    let hardware_u95_ns = r
        .timestamps
        .hardware_clocks
        .as_ref()
        .and_then(|c| c.per_frame_u95.as_ref())
        .and_then(|u| u.max_ns);
    let pdv = match (fig.p999_ns, fig.min_ns) {
        (Some(p), Some(m)) => Some(p - m),
        _ => None,
    };
    let load = r
        .load
        .as_ref()
        .map(|l| l.trial.clone())
        .ok_or(BenchError::NoLoadStream)?;
    Ok((
        LatencyResult {
            rate_fps,
            tagged_frames: o.mul.count,
            source: source.into(),
            min_ns: fig.min_ns,
            median_ns: fig.median_ns,
            p999_ns: fig.p999_ns,
            pdv_ns: pdv,
            mul: o.mul.clone(),
            kernel: o.kernel.clone(),
            msl: o.msl.clone(),
            hardware: o.hardware.clone(),
            hardware_sut: o.hardware_sut.clone(),
            hardware_u95_ns,
            hardware_clocks: r.timestamps.hardware_clocks.clone(),
            load,
        },
        r.warnings
            .into_iter()
            .chain(
                format
                    .note
                    .map(|note| misura_cli::warnings::Warn::EngineFallback { note }.into()),
            )
            .collect(),
    ))
}
