//! `misura demo`: the whole method on the virtual lab, cleaned up afterwards
//! (also when interrupted: the signal only stops the measurement, and the lab
//! guard removes the namespaces on the way out).

pub mod args;
pub use args::DemoArgs;

use crate::shared::oneway_output;
use crate::shared::output::{Finished, RunReport};
use anyhow::{Context, Result};
use misura_lab::{Lab, LabGuard, Topology, PORT_RX, PORT_TX};
use misura_oneway::calibrate;
use misura_oneway::plan::Pace;
use misura_oneway::{self as oneway, Calibration, Mode, Outputs, Request, SEED_SIZES};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What the demo measures: `misura oneway`'s defaults on the lab's ports,
/// at the demo's rate, over the seed's sizes.
fn request(d: &DemoArgs, netns: &str) -> Request {
    let mut r = Request::new(PORT_TX, PORT_RX);
    r.netns = Some(netns.into());
    r.pace = Pace::Rate(d.rate);
    r.count = Some(d.count * SEED_SIZES.len() as u64);
    r.sizes = SEED_SIZES.to_vec();
    r.tuning.cpu = d.cpu;
    r.quiet = d.out.quiet;
    r
}

/// The calibration profile the demo makes: removed on the way out, however
/// the demo ends, unless the user named it with --profile.
struct ProfileFile {
    path: PathBuf,
    keep: bool,
}

impl Drop for ProfileFile {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// `misura demo`: the bridge's report, or the calibration's when the run
/// stopped before the bridge was measured.
pub fn run(d: &DemoArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let lab = Lab::new(&d.prefix)?;
    let tester = lab.tester_ns();
    let say = |s: &str| {
        if !d.out.json {
            println!("{s}")
        }
    };
    // The bridge's per-frame log is opened (and so checked writable) before
    // anything is measured, like every output file.
    let bridge = Request {
        frames: d.frames.clone(),
        ..request(d, &tester)
    };
    let mut outputs = Outputs::open(&bridge)?;
    say(&format!("[1/4] building the lab: {tester} with ports {PORT_TX} and {PORT_RX} joined by a veth cable"));
    let guard = LabGuard::new(lab.clone());
    lab.up(Topology::Direct)?;
    misura_sys::netns::enter(&tester).context("entering the lab's tester namespace")?;

    let profile = ProfileFile {
        path: d.profile.clone().unwrap_or_else(|| {
            std::env::temp_dir().join(format!("misura-demo-{}.json", std::process::id()))
        }),
        keep: d.profile.is_some(),
    };
    say(&format!(
        "[2/4] calibrating the tester: {} frames over payload sizes {:?} at {} frames/s",
        d.count * SEED_SIZES.len() as u64,
        SEED_SIZES,
        d.rate
    ));
    let cal = calibrate::calibrate(&request(d, &tester), Some(profile.path.clone()), stop)
        .map_err(oneway_output::worded)?;
    let interrupted = stop.load(Ordering::Relaxed) != 0;
    if interrupted || cal.saved.is_none() {
        say(if interrupted {
            "interrupted: the bridge is not measured; taking the lab down"
        } else {
            "no calibration profile (see the warnings), so the bridge is not measured; taking the lab down"
        });
        drop(guard);
        // `main` prints, exports and keeps it as the demo's result.
        return Ok(Finished::ok(cal));
    }
    if !d.out.json {
        // The calibration's report comes first, as a run of its own; stdout
        // keeps one JSON document (the bridge's) under --json. Its hint on
        // using the profile is left out when the profile is the demo's
        // temporary one, removed before the user could use it.
        let mut out = std::io::stdout().lock();
        match d.profile {
            None => misura_report::text::write_oneway(&cal.report, &mut out)?,
            Some(_) => cal.write_text(&mut out)?,
        }
    }
    crate::shared::output::keep(&cal, d.out.quiet || d.out.json);

    say(&format!(
        "\n[3/4] rewiring: {PORT_TX} and {PORT_RX} now cabled to bridge br0 in {} (the SUT)",
        lab.sut_ns()
    ));
    lab.up(Topology::Switch)?;
    say("[4/4] measuring the bridge");
    let cal = Calibration::read(&profile.path, false)?;
    let mut report = oneway::measure(&bridge, Mode::Oneway, Some(&cal), &mut outputs, stop)
        .map_err(oneway_output::worded)?;
    if !profile.keep {
        // The temporary profile is removed when the demo ends: the report
        // names the calibration printed above, not a file that is gone.
        if let Some(c) = report.calibration.as_mut() {
            c.profile = "the demo's calibration above (a temporary profile, removed; \
                         --profile FILE keeps one)"
                .into();
        }
    }
    say("\ntaking the lab down; the bridge's report:\n");
    drop(guard);
    Ok(oneway_output::finished(report))
}
