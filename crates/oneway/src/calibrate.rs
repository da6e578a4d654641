//! `misura calibrate`: measure on a cable and save the tester's profile.

use super::profile::{default_profile_path, prepare, profile_from, save_profile};
use super::{measure, Mode, Outputs, Request};
use crate::error::Result;
use misura_report::OnewayReport;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// A calibration run's report and the profile it saved: printed as the
/// one-way report followed by how to use the profile.
pub struct CalibrationRun {
    pub report: OnewayReport,
    pub saved: Option<PathBuf>,
    /// `--tx … --rx … [--netns …]` for the hint.
    pub ports: String,
    /// `TX->RX`, the results store's target, as `oneway`'s (history once
    /// showed calibrate's as `--tx p1 --rx p2 --netns…` beside `p1->p2`).
    pub target: String,
}

/// Run a calibration, saving the profile at `profile` (default: the user's
/// data directory). No profile is written from partial data (an interrupted
/// run) or when the fit failed.
pub fn calibrate(
    req: &Request,
    profile: Option<PathBuf>,
    stop: &Arc<AtomicUsize>,
) -> Result<CalibrationRun> {
    let path =
        profile.unwrap_or_else(|| default_profile_path(req.netns.as_deref(), &req.tx, &req.rx));
    let existed = path.exists();
    prepare(&path)?;
    let mut outputs = Outputs::open(req)?;
    let report = match measure(req, Mode::Calibrate, None, &mut outputs, stop) {
        Ok(r) => r,
        Err(e) => {
            if !existed {
                let _ = std::fs::remove_file(&path);
            }
            return Err(e);
        }
    };
    let mut saved = None;
    if report.complete {
        if let Some(p) = profile_from(&report) {
            save_profile(&p, &path)?;
            saved = Some(path.clone());
        }
    }
    if saved.is_none() && !existed {
        let _ = std::fs::remove_file(&path);
    }
    let ports = format!(
        "--tx {} --rx {}{}",
        req.tx,
        req.rx,
        req.netns
            .as_deref()
            .map(|n| format!(" --netns {n}"))
            .unwrap_or_default()
    );
    Ok(CalibrationRun {
        target: format!("{}->{}", req.tx, req.rx),
        report,
        saved,
        ports,
    })
}
