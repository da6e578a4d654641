//! `misura oneway` and `misura calibrate`: their flags and glue. The
//! measurement (the request resolved against the interfaces, the ports,
//! the loop, the analysis, the report) is the `misura-oneway` library's.

pub mod args;
pub use args::{CalibrateArgs, OnewayArgs};

use crate::shared::exit::Failure;
pub use crate::shared::oneway_output::{finished, worded};
use crate::shared::output::Finished;
use crate::shared::warnings::Warn;
use anyhow::Result;
use misura_oneway::profile::default_profile_path;
use misura_oneway::{calibrate::calibrate, measure, mode, Calibration, Mode, Outputs, Request};
use misura_run::cpuload::CpuLoad;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// `misura oneway`.
pub fn run(a: &OnewayArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let req = a.m.request();
    let cal = a
        .calibration
        .as_ref()
        .map(|p| Calibration::read(p, a.accept_profile_mismatch))
        .transpose()?;
    let mut req = req;
    req.load = Some(mode::LoadOptions {
        mode: a.engine_mode.into(),
        engine: (&a.engine).into(),
        latency_every: a.latency_every,
        cpu: req.tuning.cpu,
    });
    let load = CpuLoad::from(&a.load);
    load.check()?;
    let mut outputs = Outputs::open(&req)?;
    // --cpu-load's busy threads run until the result (and its host load)
    // is made.
    let busy = load.start(req.tuning.cpu);
    let mut report =
        measure(&req, Mode::Oneway, cal.as_ref(), &mut outputs, stop).map_err(worded)?;
    for e in busy.iter().flat_map(|b| &b.pin_errors) {
        report
            .warnings
            .push(Warn::LoadThreadNotPinned { error: e.clone() }.into());
    }
    drop(busy);
    Ok(finished(report))
}

/// `misura calibrate`.
pub fn calibrate_run(args: &CalibrateArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let req = args.m.request();
    check(&req, args.profile.as_ref())?;
    Ok(Finished::ok(
        calibrate(&req, args.profile.clone(), stop).map_err(worded)?,
    ))
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
