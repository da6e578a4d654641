//! `misura oneway` and `misura calibrate`: their flags and glue. The
//! measurement (the profile read, the busy threads, the request resolved
//! against the interfaces, the ports, the loop, the analysis, the report)
//! is the `misura-oneway` library's, one call; here the flags become its
//! request (`args.rs`), a refusal is worded with them, and the report
//! printed (`shared/oneway_output.rs`).

pub mod args;
pub use args::{CalibrateArgs, OnewayArgs};

use crate::shared::exit::Failure;
pub use crate::shared::oneway_output::{finished, worded};
use crate::shared::output::Finished;
use anyhow::Result;
use misura_oneway::profile::default_profile_path;
use misura_oneway::{calibrate::calibrate, oneway, Request};
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// `misura oneway`.
pub fn run(a: &OnewayArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    Ok(finished(oneway(&a.request(), stop).map_err(worded)?))
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
