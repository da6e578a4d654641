//! `misura demo`: the whole method on the virtual lab, cleaned up afterwards
//! (also when interrupted: the signal only stops the measurement, and the lab
//! guard removes the namespaces on the way out).

pub mod args;
pub use args::DemoArgs;

use crate::commands::oneway::calibrate;
use crate::commands::oneway::{self, Calibration, Mode, Outputs, SEED_SIZES};
use crate::commands::oneway::{CalibrateArgs, MeasureArgs};
use anyhow::{Context, Result};
use misura_lab::{Lab, LabGuard, Topology, PORT_RX, PORT_TX};
use misura_report::OnewayReport;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn measure_args(d: &DemoArgs, netns: &str) -> MeasureArgs {
    MeasureArgs {
        tx: PORT_TX.into(),
        rx: PORT_RX.into(),
        netns: Some(netns.into()),
        pattern: "periodic".into(),
        period: None,
        rate: Some(d.rate),
        load: None,
        count: Some(d.count * SEED_SIZES.len() as u64),
        duration: None,
        sizes: SEED_SIZES.to_vec(),
        order: "interleaved".into(),
        timeout: "100ms".into(),
        late_tolerance: None,
        threshold: None,
        link_speed: None,
        vlan: false,
        ethertype: "0x88B5".into(),
        warmup: 64,
        cpu: d.cpu,
        rt_priority: None,
        no_mlock: false,
        seed: 1,
        frames: None,
        json: false,
        export_json: None,
        export_csv: None,
        quiet: d.quiet,
    }
}

/// Returns the SUT report (None when interrupted before it).
pub fn run(d: &DemoArgs, stop: &Arc<AtomicUsize>) -> Result<Option<OnewayReport>> {
    let lab = Lab::new(&d.prefix)?;
    let tester = lab.tester_ns();
    let say = |s: &str| {
        if !d.json {
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
    let mut m = measure_args(d, &tester);
    m.json = d.json;
    let cal_args = CalibrateArgs {
        m: m.clone(),
        profile: Some(profile.clone()),
    };
    let (_cal_report, saved) = if d.json {
        // Keep stdout for the one JSON document: run quietly.
        let mut outputs = Outputs::open(&cal_args.m)?;
        let r = oneway::measure(&cal_args.m, Mode::Calibrate, None, &mut outputs, stop)?;
        let p = calibrate::profile_from(&r).filter(|_| r.complete);
        if let Some(p) = &p {
            calibrate::save_profile(p, &profile)?;
        }
        (r, p.map(|_| profile.clone()))
    } else {
        calibrate::run(&cal_args, stop)?
    };
    if stop.load(Ordering::Relaxed) != 0 || saved.is_none() {
        say("stopped before the calibration completed; taking the lab down");
        drop(guard);
        return Ok(None);
    }

    say(&format!(
        "\n[3/4] rewiring: {PORT_TX} and {PORT_RX} now cabled to bridge br0 in {} (the SUT)",
        lab.sut_ns()
    ));
    lab.up(Topology::Switch)?;
    say("[4/4] measuring the bridge");
    let profile_data = oneway::read_profile(&profile)?;
    let cal = Calibration {
        path: profile.clone(),
        profile: profile_data,
        accept_mismatch: false,
    };
    let mut m = measure_args(d, &tester);
    m.json = d.json;
    m.export_json = d.export_json.clone();
    m.frames = d.frames.clone();
    let mut outputs = Outputs::open(&m)?;
    let report = oneway::measure(&m, Mode::Oneway, Some(&cal), &mut outputs, stop)?;
    oneway::emit(&report, d.json, &mut outputs)?;
    if d.profile.is_none() {
        let _ = std::fs::remove_file(&profile);
    }
    say("\ntaking the lab down");
    drop(guard);
    Ok(Some(report))
}
