//! The two fits of seed 000 over the payload sizes of a run: on a cable, the
//! tester's internal latency Amil(P) = α + β·P (Mil = Mul − C); through a
//! SUT, its latency over frame length Msl = α' + β'·L, with the verdict
//! store-and-forward (β' = the byte time 8/R) or cut-through (β' ≈ 0).

use super::analysis::{Analysis, Group};
use misura_cli::warnings::Warn;
use misura_measure::{sut_verdict, CalibrationLine, LinkModel, SizePoint};
use misura_report::Warning;
use misura_report::{InternalFit, OnewayConfig, SutResult};
use misura_stats::Summary;

/// One point per payload size: the mean of `pick`'s summary; `None` when
/// some size has no received frame.
fn points(
    a: &Analysis,
    sizes: &[usize],
    link: &LinkModel,
    pick: impl Fn(&Group) -> &Summary,
) -> Option<Vec<SizePoint>> {
    let mut v = Vec::new();
    for (g, &p) in a.per_size.iter().zip(sizes) {
        let s = pick(g);
        v.push(SizePoint {
            payload_bytes: p,
            frame_bytes: link.frame_bytes(p),
            count: s.count(),
            mean_ns: s.mean()?,
            std_dev_ns: s.std_dev(),
        });
    }
    Some(v)
}

/// The calibration's Amil(P) lines, from the user windows and the kernel
/// stamps.
pub fn internal_fit(
    a: &Analysis,
    cfg: &OnewayConfig,
    warnings: &mut Vec<Warning>,
) -> Option<InternalFit> {
    let link = LinkModel::from(cfg.link);
    let user = points(a, &cfg.sizes, &link, |g| &g.mil).map(CalibrationLine::internal);
    let kernel =
        points(a, &cfg.sizes, &link, |g| &g.kernel_internal).map(CalibrationLine::internal);
    let hardware =
        points(a, &cfg.sizes, &link, |g| &g.hardware_internal).map(CalibrationLine::internal);
    match user {
        Some(Ok(u)) => Some(InternalFit {
            user: u.into(),
            kernel: kernel.and_then(|k| k.ok()).map(Into::into),
            hardware: hardware.and_then(|k| k.ok()).map(Into::into),
        }),
        Some(Err(e)) => {
            warnings.push(
                Warn::CalibrationFitFailed {
                    error: e.to_string(),
                }
                .into(),
            );
            None
        }
        None => {
            warnings.push(Warn::CalibrationFitImpossible.into());
            None
        }
    }
}

/// The SUT's Msl lines over frame length and their verdicts.
pub fn sut_fit(a: &Analysis, cfg: &OnewayConfig) -> SutResult {
    let link = LinkModel::from(cfg.link);
    let byte_time_ns = link.byte_time_ns();
    let mut note = None;
    let user = match points(a, &cfg.sizes, &link, |g| &g.msl).map(CalibrationLine::sut) {
        Some(Ok(l)) => Some(l),
        Some(Err(e)) => {
            note = Some(format!(
                "SUT fit over frame length impossible: {e} (measure at least 3 sizes)"
            ));
            None
        }
        None => {
            note = Some("SUT fit impossible: some payload size has no received frame".into());
            None
        }
    };
    let line = |pick: fn(&Group) -> &Summary| {
        points(a, &cfg.sizes, &link, pick).and_then(|p| CalibrationLine::sut(p).ok())
    };
    let kernel = line(|g| &g.kernel_sut);
    let hardware = line(|g| &g.hardware_sut);
    let verdict =
        |l: &Option<CalibrationLine>| l.as_ref().map(|l| sut_verdict(&l.fit, byte_time_ns).into());
    SutResult {
        byte_time_ns,
        user_verdict: verdict(&user),
        kernel_verdict: verdict(&kernel),
        hardware_verdict: verdict(&hardware),
        user: user.map(Into::into),
        kernel: kernel.map(Into::into),
        hardware: hardware.map(Into::into),
        note,
        consistency: None,
    }
}
