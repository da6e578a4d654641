//! RFC 2544's four tests per frame size on the frame engine: throughput by
//! an NDR/PDR search (`phases`), latency at the throughput rate
//! (`latency`), frame loss rate and back-to-back (`phases`). Each trial's
//! offered and achieved rates, loss and the tester's own limits go into the
//! result; a trial is classified at the rate the tester really sent, and a
//! rate it could not send is never counted as the SUT's loss.

mod latency;
mod phases;
mod plan;
pub mod request;
mod size;

pub use phases::{inconclusive, repeat_note, tester_note};
pub use plan::{Plan, Tests, Trials};
pub use size::{SizeSpec, FRAME_OVERHEAD, MAX_FRAME};

use crate::error::{BenchError, Result};
use misura_engine::open::Engine;
use misura_report::rfc2544::SizeReport;
use plan::Ctx;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Every size of `plan` on `engine` (opened for the plan's engine
/// request), until the sizes are done or `stop` is set. The warnings of
/// the engine and of each size are added to `warnings`.
pub(crate) fn measure_sizes(
    plan: &Plan,
    sizes: &[SizeSpec],
    engine: Engine,
    progress: &dyn crate::Progress,
    stop: &Arc<AtomicUsize>,
    warnings: &mut Vec<misura_report::Warning>,
) -> Result<Vec<SizeReport>, BenchError> {
    let mut ctx = Ctx {
        plan,
        engine: Some(engine),
        stop,
        progress,
        size_no: String::new(),
    };
    let mut out = Vec::new();
    for (i, size) in sizes.iter().enumerate() {
        if ctx.stopped() {
            break;
        }
        ctx.size_no = format!("size {}/{}:", i + 1, sizes.len());
        let s = one_size(&mut ctx, size, warnings)?;
        if let Some(why) = repeat_note(&s) {
            warnings.push(misura_cli::warnings::Warn::TesterRepeated { why }.into());
        }
        if let Some(why) = tester_note(&s) {
            warnings.push(misura_cli::warnings::Warn::TesterLimited { why }.into());
        }
        out.push(s);
    }
    Ok(out)
}

/// The tests asked for, on one frame size.
fn one_size(
    ctx: &mut Ctx,
    size: &SizeSpec,
    warnings: &mut Vec<misura_report::Warning>,
) -> Result<SizeReport> {
    let plan = ctx.plan;
    let mut s = SizeReport {
        label: size.label.clone(),
        frame_bytes: size.frames.clone(),
        line_rate_fps: size.line_rate_fps(&plan.link),
        tester_max_fps: None,
        throughput: None,
        latency: None,
        frame_loss: None,
        back_to_back: None,
    };
    if plan.tests.throughput || plan.tests.latency {
        s.throughput = Some(phases::throughput(ctx, size, &mut s)?);
    }
    if plan.tests.latency && !ctx.stopped() {
        let rate = s.throughput.as_ref().map_or(0.0, |t| t.ndr.lower_fps);
        if rate > 0.0 {
            // The latency trial opens its own rings: close ours first.
            ctx.engine = None;
            ctx.progress.step(
                format!(
                    "{} {} B latency trial at {rate:.0} frames/s",
                    ctx.size_no, size.label
                ),
                std::time::Duration::from_nanos(plan.trials.latency_trial.as_ns().max(0) as u64),
                None,
            );
            let (l, w) = latency::run(plan, size, rate, ctx.stop)?;
            warnings.extend(w);
            s.latency = Some(l);
            ctx.engine = Some(misura_engine::open::open(&plan.engine)?);
        }
    }
    if plan.tests.loss && !ctx.stopped() {
        s.frame_loss = Some(phases::frame_loss(ctx, size, &mut s)?);
    }
    if plan.tests.b2b && !ctx.stopped() {
        let thr = s
            .throughput
            .as_ref()
            .filter(|t| t.ndr.found)
            .map(|t| t.ndr.lower_fps);
        s.back_to_back = Some(phases::back_to_back(ctx, size, &mut s, thr)?);
    }
    Ok(s)
}
