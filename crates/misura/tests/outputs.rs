//! The one output path's promises when a run fails: an export file that was
//! there is left as it was, one opened for the run is removed, and a sweep
//! in which no run produced figures fails like the test alone would.

#[macro_use]
mod common;

use common::*;

/// A loopback port nobody listens on (bound, read, released).
fn closed_port() -> String {
    format!("127.0.0.1:{}", free_port())
}

#[test]
fn a_failed_run_leaves_earlier_exports_alone_and_removes_new_ones() {
    let dir = TempDir::new("outputs");
    let kept = dir.path("kept.json");
    std::fs::write(&kept, "{\"earlier\": true}\n").unwrap();
    let fresh = dir.path("fresh.csv");
    let target = closed_port();
    let o = run(&[
        "--no-store",
        "tcp",
        &target,
        "--duration",
        "1s",
        "--export-json",
        kept.to_str().unwrap(),
        "--export-csv",
        fresh.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&kept).unwrap(),
        "{\"earlier\": true}\n",
        "an earlier export was overwritten by a run that produced nothing"
    );
    assert!(!fresh.exists(), "an empty export was left behind");
}

#[test]
fn a_sweep_where_no_run_produced_figures_exits_1() {
    let target = closed_port();
    let o = run(&[
        "--no-store",
        "sweep",
        "tcp",
        &target,
        "--msg-size",
        "1K,2K",
        "--duration",
        "300ms",
        "--json",
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the sweep's JSON");
    assert_eq!(v["complete"], false);
    assert_eq!(v["points"].as_array().unwrap().len(), 2);
    for w in v["warnings"].as_array().unwrap() {
        assert_eq!(w["code"], "sweep.point-failed", "{w}");
    }
}

#[test]
fn a_closed_stderr_never_aborts_the_run() {
    // The reader of stderr goes away at once (`misura … 2>&1 | head -c0`):
    // the run still ends with its own exit code, never a panic (101).
    let target = closed_port();
    let mut child = misura()
        .args(["--no-store", "tcp", &target, "--duration", "300ms"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    let st = child.wait().unwrap();
    assert_eq!(
        st.code(),
        Some(1),
        "unreachable server: exit 1, not a panic"
    );
}
