//! `misura sweep` on loopback, without root: its command line is parsed
//! once (the test's flags, the swept one a list or range, and the global
//! flags anywhere), and every run is the base plan with one field varied.

mod common;
use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Output, Stdio};

/// `misura serve` on a loopback port of the kernel's choosing; stopped on drop.
struct Server {
    child: Child,
    target: String,
}

impl Server {
    fn start() -> Server {
        let mut child = misura()
            .args([
                "--no-store",
                "serve",
                "--listen",
                "127.0.0.1",
                "--port",
                "0",
            ])
            .args(["--max-duration", "10s"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting misura serve");
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        // Keep reading what it says (a line per test), so it never writes
        // into a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        // "misura serve: listening on 127.0.0.1:PORT (max …)"
        let target = line
            .split_whitespace()
            .nth(4)
            .unwrap_or_else(|| panic!("no address in `{line}`"))
            .to_string();
        Server { child, target }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `misura BEFORE… sweep TEST TARGET FLAG VALUES --duration 200ms AFTER…`.
fn sweep((before, after): (&[&str], &[&str]), [test, t, flag, values]: [&str; 4]) -> Output {
    let mut args = before.to_vec();
    args.extend(["sweep", test, t, flag, values, "--duration", "200ms"]);
    args.extend_from_slice(after);
    run(&args)
}

/// The runs a results store holds.
fn history(store: &str) -> Vec<Value> {
    let v = json_of(&run(&["--store", store, "history", "--json"]));
    v.as_array().unwrap().clone()
}

/// Regression (issue 9): the sweep rebuilt an argument list for each run
/// and parsed it again, so a global flag after `sweep` was refused with
/// "unexpected argument '--no-store' found".
#[test]
fn sweep_takes_the_global_store_flags_before_and_after_it() {
    let server = Server::start();
    let t = server.target.as_str();
    let dir = TempDir::new("sweep-store");
    let store = dir.path("runs.sqlite");
    let store = store.to_str().unwrap();

    let before = json_of(&sweep(
        (&["--no-store"], &["--json"]),
        ["tcp", t, "--msg-size", "1000,2000"],
    ));
    assert_eq!(before["parameter"], "msg-size");
    assert_eq!(before["complete"], true, "{before}");

    // After the test's flags, beside --store: nothing is kept.
    let o = sweep(
        (&[], &["-q", "--store", store, "--no-store"]),
        ["tcp", t, "--msg-size", "1000,2000"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).lines().count(),
        4,
        "title, header, 2 rows"
    );
    assert!(
        !std::path::Path::new(store).exists(),
        "--no-store after the sweep is obeyed: no store was even opened"
    );

    // --store alone after them: the sweep is kept, under its server.
    let o = sweep(
        (&[], &["-q", "--store", store]),
        ["rr", t, "--burst", "1..2"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let runs = history(store);
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(
        (runs[0]["subcommand"].as_str(), runs[0]["target"].as_str()),
        (Some("sweep"), Some(t))
    );
}

#[test]
fn every_run_is_the_base_plan_with_the_swept_value() {
    let server = Server::start();
    let t = server.target.as_str();
    let dir = TempDir::new("sweep-plans");
    let json = dir.path("sweep.json");
    let csv = dir.path("sweep.csv");
    let v = json_of(&run(&[
        "--no-store",
        "sweep",
        "udp",
        t,
        "--rate",
        "20M",
        "--msg-size",
        "100..101,1472",
        "--duration",
        "200ms",
        "--json",
        "--export-json",
        json.to_str().unwrap(),
        "--export-csv",
        csv.to_str().unwrap(),
        "--clients",
        "2",
    ]));
    assert_eq!(
        (v["test"].as_str(), v["parameter"].as_str()),
        (Some("udp"), Some("msg-size"))
    );
    let values: Vec<&str> = v["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["100", "101", "1472"]);
    // The arguments every run shared, as written: not the swept flag, not the sweep's outputs.
    let base: Vec<&str> = v["base_args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        base,
        [t, "--rate", "20M", "--duration", "200ms", "--clients", "2"]
    );
    for p in v["points"].as_array().unwrap() {
        assert!(
            p["figures"]["throughput_bps"].as_f64().unwrap() > 0.0,
            "{p}"
        );
    }
    let exported: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(exported["points"], v["points"]);
    assert_eq!(std::fs::read_to_string(&csv).unwrap().lines().count(), 4);
    schema_check(&v, "sweep.schema.json");

    // A value out of bounds stops the sweep before its first run, naming it.
    let o = run(&[
        "--no-store",
        "sweep",
        "tcp",
        t,
        "--streams",
        "1,2000",
        "--duration",
        "200ms",
    ]);
    assert_eq!(o.status.code(), Some(5));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("the run with --streams 2000: --streams must be between 1 and 1024"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    // Nothing or two things to sweep: bad usage.
    for args in [
        &["--msg-size", "1000"][..],
        &["--msg-size", "1,2", "--streams", "1..2"][..],
    ] {
        let mut argv = vec!["--no-store", "sweep", "tcp", t];
        argv.extend_from_slice(args);
        assert_eq!(run(&argv).status.code(), Some(2), "{argv:?}");
    }
}
