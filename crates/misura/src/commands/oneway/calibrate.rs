//! `misura calibrate`: measure on a cable and save the tester's profile.

use super::CalibrateArgs;
use crate::commands::oneway::{self, Mode, Outputs};
use crate::shared::exit::Failure;
use crate::shared::output::{Finished, RunReport};
use anyhow::Result;
use misura_report::{CalibrationProfile, OnewayReport};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Default profile location: `$XDG_DATA_HOME/misura/calibration/<netns>-<tx>-<rx>.json`.
pub fn default_profile_path(netns: Option<&str>, tx: &str, rx: &str) -> PathBuf {
    let base = dirs::data_dir().unwrap_or_else(|| PathBuf::from("."));
    let ns = netns
        .map(|n| n.trim_start_matches('/').replace('/', "_"))
        .unwrap_or_else(|| "host".into());
    base.join("misura")
        .join("calibration")
        .join(format!("{ns}-{tx}-{rx}.json"))
}

/// Build the profile from a finished calibration run.
pub fn profile_from(report: &OnewayReport) -> Option<CalibrationProfile> {
    let fit = report.internal_fit.as_ref()?;
    let mut meta = report.meta.clone();
    meta.format = "misura.calibration".into();
    Some(CalibrationProfile {
        meta,
        host: report.host.clone(),
        ports: report.ports.clone(),
        netns: report.config.netns.clone(),
        ethertype: report.config.ethertype,
        link: report.config.link,
        pattern: report.config.pattern,
        rate_fps: report.config.rate_fps,
        offered_load: report.config.offered_load,
        sizes: report.config.sizes.clone(),
        timestamps: report.timestamps.clone(),
        user: fit.user.clone(),
        kernel: fit.kernel.clone(),
    })
}

/// Create the profile's directory and check it can be written, before measuring.
fn prepare(path: &PathBuf) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            Failure::Output(format!(
                "cannot create {} for the calibration profile: {e}; choose --profile FILE",
                dir.display()
            ))
        })?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| {
            Failure::Output(format!(
                "cannot write the calibration profile {}: {e}; choose --profile FILE",
                path.display()
            ))
        })?;
    Ok(())
}

pub fn save_profile(p: &CalibrationProfile, path: &PathBuf) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    let mut f = std::fs::File::create(&tmp)
        .map_err(|e| Failure::Output(format!("cannot write {}: {e}", tmp.display())))?;
    misura_report::write_json(p, &mut f)?;
    f.flush()?;
    std::fs::rename(&tmp, path)
        .map_err(|e| Failure::Output(format!("cannot write {}: {e}", path.display())))?;
    Ok(())
}

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

/// Run a calibration. No profile is written from partial data (an
/// interrupted run) or when the fit failed.
pub fn calibrate(args: &CalibrateArgs, stop: &Arc<AtomicUsize>) -> Result<CalibrationRun> {
    let path = args.profile.clone().unwrap_or_else(|| {
        default_profile_path(args.m.ns.netns.as_deref(), &args.m.tx, &args.m.rx)
    });
    let existed = path.exists();
    prepare(&path)?;
    let mut outputs = Outputs::open(&args.m)?;
    let measured = oneway::measure(&args.m, Mode::Calibrate, None, &mut outputs, stop);
    let report = match measured {
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
        args.m.tx,
        args.m.rx,
        args.m
            .ns
            .netns
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

/// `misura calibrate`.
pub fn run(args: &CalibrateArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    Ok(Finished::ok(calibrate(args, stop)?))
}
