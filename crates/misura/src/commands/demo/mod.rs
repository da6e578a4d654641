//! `misura demo`: the whole method on the virtual lab, cleaned up afterwards
//! (also when interrupted: the signal only stops the measurement, and the lab
//! guard removes the namespaces on the way out).

pub mod args;
pub use args::DemoArgs;

use crate::commands::oneway::calibrate;
use crate::commands::oneway::plan::Pace;
use crate::commands::oneway::{self, Calibration, Mode, Outputs, Request, SEED_SIZES};
use crate::shared::output::{Finished, RunReport};
use anyhow::{Context, Result};
use misura_lab::{Lab, LabGuard, Topology, PORT_RX, PORT_TX};
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
    say(&format!("[1/4] building the lab: {tester} with ports {PORT_TX} and {PORT_RX} joined by a veth cable"));
    let guard = LabGuard::new(lab.clone());
    lab.up(Topology::Direct)?;
    misura_sys::netns::enter(&tester).context("entering the lab's tester namespace")?;

    let profile = d.profile.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("misura-demo-{}.json", std::process::id()))
    });
    say(&format!(
        "[2/4] calibrating the tester: {} frames over payload sizes {:?} at {} frames/s",
        d.count * SEED_SIZES.len() as u64,
        SEED_SIZES,
        d.rate
    ));
    let cal = calibrate::calibrate(&request(d, &tester), Some(profile.clone()), stop)?;
    if !d.out.json {
        // The calibration's report comes first, as a run of its own; stdout
        // keeps one JSON document (the bridge's) under --json.
        cal.write_text(&mut std::io::stdout().lock())?;
    }
    crate::shared::output::keep(&cal, d.out.quiet || d.out.json);
    if stop.load(Ordering::Relaxed) != 0 || cal.saved.is_none() {
        say("stopped before the calibration completed; taking the lab down");
        drop(guard);
        return Ok(Finished::ok(cal));
    }

    say(&format!(
        "\n[3/4] rewiring: {PORT_TX} and {PORT_RX} now cabled to bridge br0 in {} (the SUT)",
        lab.sut_ns()
    ));
    lab.up(Topology::Switch)?;
    say("[4/4] measuring the bridge");
    let cal = Calibration::read(&profile, false)?;
    let req = Request {
        frames: d.frames.clone(),
        ..request(d, &tester)
    };
    let mut outputs = Outputs::open(&req)?;
    let report = oneway::measure(&req, Mode::Oneway, Some(&cal), &mut outputs, stop)?;
    if d.profile.is_none() {
        let _ = std::fs::remove_file(&profile);
    }
    say("\ntaking the lab down");
    drop(guard);
    Ok(oneway::finished(report))
}
