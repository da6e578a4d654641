//! The CI-sized subset of misura's own attack campaign (issue 13):
//! `scripts/campaign.sh --quick` against this build, inside namespaces the
//! script makes and removes. It fails if any goal is missed: a flood with
//! spoofed sources that costs a real session replies, slowloris or silent
//! tests that keep a real test out, an HTTP endpoint one client can hold, a
//! reply longer than its request, a store or log a kill -9 corrupts, or a
//! hostile argument that panics, aborts or hangs.

#[macro_use]
mod common;

use std::process::Command;

#[test]
#[ignore = "needs root: network namespaces"]
fn the_quick_campaign_meets_every_goal() {
    need_root!();
    let _one = common::one_at_a_time();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scripts/campaign/campaign.py"
    );
    let o = Command::new("python3")
        .args([script, "--quick", "--misura", env!("CARGO_BIN_EXE_misura")])
        .output()
        .expect("running python3");
    let table = String::from_utf8_lossy(&o.stdout);
    println!("{table}");
    assert!(
        o.status.success(),
        "the campaign missed goals:\n{table}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(table.contains("goals met"), "{table}");
}
