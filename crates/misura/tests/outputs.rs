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

#[test]
fn a_per_probe_log_that_cannot_be_written_fails_the_run_with_exit_6() {
    // Issue 13, finding 9: it used to exit 0 with no message.
    let r = LocalReflector::start(10);
    let o = run(&[
        "--no-store",
        "rtt",
        &r.target(),
        "--count",
        "5",
        "--period",
        "10ms",
        "-q",
        "--frames",
        "/dev/full",
    ]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(6), "{e}");
    assert!(
        e.contains("per-probe log") && e.contains("/dev/full"),
        "{e}"
    );
    // The summary was still printed.
    assert!(String::from_utf8_lossy(&o.stdout).contains("probes: sent 5"));
}

#[test]
fn reports_write_devices_and_links_in_place_and_never_replace_them() {
    // Issue 13, finding 10: `--html /dev/full` replaced /dev/full.
    use std::os::unix::fs::FileTypeExt;
    let dir = TempDir::new("outputs-link");
    let r = LocalReflector::start(10);
    let json = dir.path("r.json");
    let o = run(&[
        "--no-store",
        "rtt",
        &r.target(),
        "--count",
        "10",
        "--period",
        "5ms",
        "-q",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&[
        "--no-store",
        "report",
        json.to_str().unwrap(),
        "--html",
        "/dev/full",
    ]);
    assert_eq!(
        o.status.code(),
        Some(6),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(std::fs::metadata("/dev/full")
        .unwrap()
        .file_type()
        .is_char_device());
    let real = dir.path("real.html");
    std::fs::write(&real, "old").unwrap();
    let link = dir.path("link.html");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let o = run(&[
        "--no-store",
        "report",
        json.to_str().unwrap(),
        "--html",
        link.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&real).unwrap().contains("<svg"));
}

#[test]
fn a_killed_run_leaves_no_empty_export_and_its_rows_up_to_the_last_second() {
    // Issue 13, finding 11: SIGKILL left a 0-byte --export-json and a CSV
    // written in 1 MiB steps with its last row cut.
    let dir = TempDir::new("outputs-kill");
    let r = LocalReflector::start(15);
    let json = dir.path("r.json");
    let csv = dir.path("probes.csv");
    let mut child = misura()
        .args([
            "--no-store",
            "rtt",
            &r.target(),
            "--count",
            "2000",
            "--period",
            "5ms",
            "-q",
        ])
        .arg("--export-json")
        .arg(&json)
        .arg("--frames")
        .arg(&csv)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_millis(3000));
    child.kill().unwrap();
    let _ = child.wait();
    let ran = t.elapsed().as_secs_f64();
    assert!(
        !json.exists(),
        "the JSON export exists before the run ended"
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(
        text.ends_with('\n'),
        "the last row was cut: {:?}",
        text.lines().last()
    );
    let fields = text.lines().next().unwrap().split(',').count();
    assert!(text.lines().all(|l| l.split(',').count() == fields));
    // At 200 probes/s, everything older than ~1 s (plus the warm-up and
    // start, generously 1.5 s) must be on disk.
    let rows = text.lines().count() - 1;
    assert!(
        rows as f64 >= (ran - 2.5) * 200.0,
        "{rows} rows on disk after {ran:.1} s at 200 probes/s"
    );
}
