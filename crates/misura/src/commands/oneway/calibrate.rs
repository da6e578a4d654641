//! `misura calibrate`: measure on a cable and save the tester's profile.

use super::CalibrateArgs;
use crate::commands::oneway::{self, Mode, Outputs};
use crate::shared::exit::Failure;
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

/// Run a calibration; returns the report and the saved profile's path (None
/// when the run was interrupted or the fit failed: no profile is written
/// from partial data).
pub fn run(
    args: &CalibrateArgs,
    stop: &Arc<AtomicUsize>,
) -> Result<(OnewayReport, Option<PathBuf>)> {
    let path = args
        .profile
        .clone()
        .unwrap_or_else(|| default_profile_path(args.m.netns.as_deref(), &args.m.tx, &args.m.rx));
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
    oneway::emit(&report, args.m.json, &mut outputs)?;
    match &saved {
        Some(p) if !args.m.json => println!(
            "\nprofile saved: {}\nuse it: misura oneway --tx {} --rx {}{} --calibration {}",
            p.display(),
            args.m.tx,
            args.m.rx,
            args.m
                .netns
                .as_deref()
                .map(|n| format!(" --netns {n}"))
                .unwrap_or_default(),
            p.display()
        ),
        None if !args.m.json => eprintln!(
            "no profile saved: {}",
            if report.complete {
                "the fit failed (see warnings)"
            } else {
                "the run did not complete"
            }
        ),
        _ => {}
    }
    Ok((report, saved))
}
