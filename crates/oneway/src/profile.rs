//! The calibration profile (seed 000): the tester's internal latency line
//! Amil(P) = α + β·P, fitted by `misura calibrate` on a cable and used by
//! `misura oneway --calibration` to take the tester out of the SUT latency
//! Msl. Where it is kept, how it is made from a run, saved and read, and
//! whether it fits the set-up it is used on.

use crate::error::{ProfileError, Result};
use misura_cli::warnings::Warn;
use misura_measure::calibration;
use misura_report::Warning;
use misura_report::{
    CalibrationLine, CalibrationProfile, CalibrationUse, LoopTuning, OnewayConfig, OnewayReport,
    PortInfo, TimestampInfo, FORMAT_VERSION,
};
use misura_run::host::fingerprint;
use std::path::{Path, PathBuf};

/// A calibration profile and where it came from.
pub struct Calibration {
    pub path: PathBuf,
    pub profile: CalibrationProfile,
    pub accept_mismatch: bool,
}

impl Calibration {
    pub fn read(path: &Path, accept_mismatch: bool) -> Result<Calibration> {
        Ok(Calibration {
            path: path.to_path_buf(),
            profile: read_profile(path)?,
            accept_mismatch,
        })
    }
}

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
        hardware: fit.hardware.clone(),
    })
}

/// Create the profile's directory and check it can be written, before measuring.
pub fn prepare(path: &PathBuf) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|error| ProfileError::CreateDir {
            dir: dir.to_path_buf(),
            error,
        })?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|error| ProfileError::NotWritable {
            path: path.clone(),
            error,
        })?;
    Ok(())
}

pub fn save_profile(p: &CalibrationProfile, path: &Path) -> Result<()> {
    misura_cli::outfile::replace(path, |w| misura_report::write_json(p, w)).map_err(|error| {
        ProfileError::Save {
            path: path.to_path_buf(),
            error,
        }
    })?;
    Ok(())
}

pub fn read_profile(path: &Path) -> Result<CalibrationProfile> {
    let text = misura_cli::files::read_string_bounded(path, misura_cli::files::PROFILE_MAX)
        .map_err(|error| ProfileError::Unreadable {
            path: path.to_path_buf(),
            error,
        })?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|error| ProfileError::NotJson {
            path: path.to_path_buf(),
            error,
        })?;
    if v.get("format").and_then(|f| f.as_str()) != Some("misura.calibration") {
        return Err(ProfileError::NotProfile {
            path: path.to_path_buf(),
        }
        .into());
    }
    let ver = v
        .get("format_version")
        .and_then(|f| f.as_u64())
        .unwrap_or(0);
    if ver > FORMAT_VERSION as u64 {
        return Err(ProfileError::Newer {
            path: path.to_path_buf(),
            version: ver,
            max: FORMAT_VERSION,
        }
        .into());
    }
    let p: CalibrationProfile =
        serde_json::from_value(v).map_err(|error| ProfileError::Damaged {
            path: path.to_path_buf(),
            error,
        })?;
    check_bounds(&p).map_err(|error| ProfileError::OutOfBounds {
        path: path.to_path_buf(),
        error,
    })?;
    Ok(p)
}

/// Every number of a profile within what a cable and a PC can give (issue
/// 33, item 10: α = 1e308 gave an SUT latency of i64::MIN with exit 0).
fn check_bounds(p: &CalibrationProfile) -> Result<(), calibration::OutOfBounds> {
    // The method's bounds, on the method's line.
    let bounds = |l: &CalibrationLine, name: &str| {
        calibration::CalibrationLine::from(l.clone()).check_bounds(name)
    };
    bounds(&p.user, "user")?;
    for (name, line) in [("kernel", &p.kernel), ("hardware", &p.hardware)] {
        if let Some(l) = line {
            bounds(l, name)?;
        }
    }
    // 1 kbit/s to 1.6 Tbit/s: beyond any Ethernet port, and never 0.
    calibration::within(
        "link.rate_bps",
        p.link.rate_bps as f64,
        1e3,
        1.6e12,
        "bit/s",
    )?;
    // The frame rate of 1.6 Tbit/s in 84-byte slots is 2.4e9 frames/s.
    calibration::within("rate_fps", p.rate_fps, 0.0, 1e10, "frames/s")?;
    calibration::within(
        "offered_load",
        p.offered_load,
        0.0,
        1.0,
        "(a share of the link)",
    )?;
    if p.sizes.len() > calibration::MAX_POINTS {
        return Err(calibration::OutOfBounds {
            field: "sizes".into(),
            value: format!("{} sizes", p.sizes.len()),
            bound: format!("at most {}", calibration::MAX_POINTS),
        });
    }
    if let Some((i, s)) = p
        .sizes
        .iter()
        .enumerate()
        .find(|(_, s)| **s > calibration::MAX_POINT_BYTES)
    {
        return Err(calibration::OutOfBounds {
            field: format!("sizes[{i}]"),
            value: s.to_string(),
            bound: format!("at most {} bytes", calibration::MAX_POINT_BYTES),
        });
    }
    Ok(())
}

/// Check the profile against this set-up (host, ports, ethertype, link):
/// a mismatch fails unless accepted, and is then a warning.
pub fn check(
    c: &Calibration,
    cfg: &OnewayConfig,
    ports: &[PortInfo],
    warnings: &mut Vec<Warning>,
) -> Result<CalibrationUse> {
    let host_now = fingerprint(LoopTuning::default());
    let mism = c
        .profile
        .mismatches(&host_now, ports, cfg.ethertype, &cfg.link);
    if !mism.is_empty() && !c.accept_mismatch {
        return Err(ProfileError::Mismatch {
            path: c.path.clone(),
            mismatches: mism,
            calibrate: crate::recalibrate::calibrate_command(cfg, &c.path),
        }
        .into());
    }
    for x in &mism {
        warnings.push(Warn::ProfileMismatch { detail: x.clone() }.into());
    }
    Ok(CalibrationUse {
        profile: c.path.display().to_string(),
        created_at: c.profile.meta.started_at.clone(),
        user: c.profile.user.clone(),
        kernel: c.profile.kernel.clone(),
        hardware: c.profile.hardware.clone(),
        mismatches: mism,
    })
}

/// Warn when this run's timestamp sources differ from the profile's: a
/// source the profile lacks has no Amil line to correct it.
pub fn check_timestamps(c: &Calibration, now: &TimestampInfo, warnings: &mut Vec<Warning>) {
    let t = &c.profile.timestamps;
    let sources = |t: &TimestampInfo| {
        (
            t.kernel_software_tx,
            t.kernel_software_rx,
            t.hardware_tx,
            t.hardware_rx,
        )
    };
    if sources(t) != sources(now) {
        let (p, r) = (sources(t), sources(now));
        warnings.push(
            Warn::ProfileTimestampsDiffer {
                profile: [p.0, p.1, p.2, p.3],
                run: [r.0, r.1, r.2, r.3],
            }
            .into(),
        );
    }
}
