//! `misura calibrate`: measure on a cable and save the tester's profile.

use super::profile::{default_profile_path, prepare, profile_from, save_profile};
use super::{measure, CalibrateArgs, Mode, Outputs, Request};
use crate::shared::exit::Failure;
use crate::shared::output::{Finished, RunReport};
use anyhow::Result;
use misura_report::OnewayReport;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// A calibration run's report and the profile it saved: printed as the
/// one-way report followed by how to use the profile.
pub struct CalibrationRun {
    pub report: OnewayReport,
    pub saved: Option<PathBuf>,
    /// `--tx … --rx … [--netns …]` for the hint.
    ports: String,
}

impl RunReport for CalibrationRun {
    fn write_json(&self, w: &mut dyn Write) -> std::io::Result<()> {
        misura_report::write_json(&self.report, w)
    }
    fn write_text(&self, w: &mut dyn Write) -> std::io::Result<()> {
        misura_report::text::write_oneway(&self.report, w)?;
        match &self.saved {
            Some(p) => writeln!(
                w,
                "\nprofile saved: {}\nuse it: misura oneway {} --calibration {}",
                p.display(),
                self.ports,
                p.display()
            ),
            None => {
                eprintln!(
                    "no profile saved: {}",
                    if self.report.complete {
                        "the fit failed (see warnings)"
                    } else {
                        "the run did not complete"
                    }
                );
                Ok(())
            }
        }
    }
    fn write_csv(&self, w: &mut dyn Write) -> Option<std::io::Result<()>> {
        Some(misura_report::csv::write_oneway_summary(&self.report, w))
    }
    fn to_value(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::to_value(&self.report)
    }
    fn store_key(&self) -> (&str, &str) {
        (&self.report.mode, &self.ports)
    }
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
        report,
        saved,
        ports,
    })
}

/// Refuses what cannot give a profile: the lab's switch between the ports
/// (calibration measures the tester alone, on a cable), and `--no-store`
/// without `--profile` (the default profile lives in the data directory,
/// which `--no-store` leaves untouched).
fn check(req: &Request, profile: Option<&PathBuf>) -> Result<(), Failure> {
    if let Some(ns) = req.netns.as_deref() {
        if misura_lab::tester_topology(ns) == Some(misura_lab::Topology::Switch) {
            return Err(Failure::Usage(format!(
                "{ns} is wired as the switch topology (p1 -> bridge -> p2): calibration \
                 measures the tester alone and needs a cable between its ports. Run `misura \
                 lab up --topology direct` first (and switch back after)"
            )));
        }
    }
    if profile.is_none() && !crate::shared::store::config().enabled {
        return Err(Failure::Usage(format!(
            "--no-store without --profile: the default profile ({}) is in the data directory, \
             which --no-store leaves untouched; give --profile FILE to save it elsewhere",
            default_profile_path(req.netns.as_deref(), &req.tx, &req.rx).display()
        )));
    }
    Ok(())
}

/// `misura calibrate`.
pub fn run(args: &CalibrateArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let req = args.m.request();
    check(&req, args.profile.as_ref())?;
    Ok(Finished::ok(calibrate(&req, args.profile.clone(), stop)?))
}
