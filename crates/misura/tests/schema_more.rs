//! The schemas of `misura serve`, `setup`, `sweep`, `exchange`, `host tune`
//! (its result and its state file) and `reflect`, checked against what the
//! real commands write: serve, setup, sweep and reflect on loopback ports,
//! exchange between two lab hosts, host tune's plan on this host and its
//! apply/revert on lab veth ports with the host-wide settings made
//! read-only, so the machine's own tuning never changes. Each result is also
//! read back into its Rust type and must come out unchanged.
//!
//! Every command runs with `--no-store` and within a time limit; every
//! process and lab a test starts is stopped or taken down even when it fails.

#[macro_use]
mod common;
/// The schema helpers of misura-report's schema tests (loading, compiling,
/// the checks every schema passes, the round trip through a Rust type): one
/// harness for both crates' schema tests, reached by path rather than
/// through a dev-dependency crate, as `common` is a test module, not a
/// library.
#[path = "../../report/tests/common/mod.rs"]
mod schema_helpers;

use common::*;
use schema_helpers::{
    assert_described_and_required, assert_schema_document, assert_shares_oneway,
    assert_valid_and_modelled, compile, load_json, schema_path,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, UdpSocket};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The schemas this file covers, by file name without `.schema.json`.
const SCHEMAS: &[&str] = &[
    "serve",
    "setup",
    "sweep",
    "exchange",
    "exchange-responder",
    "host-tune",
    "host-tune-state",
    "reflect",
];

/// `$defs` each schema repeats from `oneway.schema.json`.
const SHARED_DEFS: &[(&str, &[&str])] = &[
    ("serve", &["utc_time", "loop_tuning", "host"]),
    ("setup", &["utc_time", "loop_tuning", "host"]),
    ("sweep", &["utc_time", "loop_tuning", "host"]),
    ("exchange", &["utc_time", "summary", "loop_tuning", "host"]),
    ("exchange-responder", &["utc_time", "loop_tuning", "host"]),
    ("host-tune", &["utc_time"]),
    ("host-tune-state", &["utc_time"]),
    ("reflect", &["utc_time", "loop_tuning", "host"]),
];

fn load_schema(name: &str) -> Value {
    load_json(&schema_path(name))
}

/// Valid for `name`.schema.json, unchanged through the Rust type `T`, and
/// what `T` writes back valid too.
fn check_modelled<T: DeserializeOwned + Serialize>(v: &Value, name: &str) {
    assert_valid_and_modelled::<T>(name, &format!("the {name} result"), v);
}

// ---- processes, bounded in time ---------------------------------------------

/// `misura ARGS`, killed and failed if it runs longer than `limit`.
fn run_within(limit: Duration, args: &[&str]) -> Output {
    run_command_within(limit, misura().args(args), &args.join(" "))
}

fn run_command_within(limit: Duration, cmd: &mut Command, what: &str) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(o) => o.expect("waiting for misura"),
        Err(_) => {
            signal(pid, "KILL");
            panic!("`{what}` did not end within {limit:?}");
        }
    }
}

fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status();
}

/// A long-running misura (serve, reflect): started once its first stderr
/// line shows it is listening; its stdout collected; killed on drop unless
/// stopped with [`Daemon::terminate`].
struct Daemon {
    child: Option<Child>,
    stdout: Option<JoinHandle<String>>,
}

impl Daemon {
    fn start(args: &[&str], ready: &str) -> Daemon {
        let mut child = misura()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting misura");
        let mut out = child.stdout.take().unwrap();
        let stdout = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = out.read_to_string(&mut s);
            s
        });
        let err = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(err).lines();
            let first = lines.next().and_then(|l| l.ok()).unwrap_or_default();
            let _ = tx.send(first);
            for _ in lines {} // keep draining so the child never blocks on stderr
        });
        let d = Daemon {
            child: Some(child),
            stdout: Some(stdout),
        };
        let first = rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("`misura {}` did not start within 10 s", args.join(" ")));
        assert!(first.contains(ready), "start-up line: {first}");
        d
    }

    /// SIGTERM, then the exit code and stdout, within 10 s.
    fn terminate(mut self) -> (Option<i32>, String) {
        let mut child = self.child.take().unwrap();
        signal(child.id(), "TERM");
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if t0.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("misura did not stop within 10 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let stdout = self.stdout.take().unwrap().join().unwrap();
        (status.code(), stdout)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The first port from `base` that nothing on 127.0.0.1 holds (TCP or UDP).
fn free_port(base: u16, udp: bool) -> u16 {
    (base..base + 50)
        .find(|&p| {
            if udp {
                UdpSocket::bind(("127.0.0.1", p)).is_ok()
            } else {
                TcpListener::bind(("127.0.0.1", p)).is_ok()
            }
        })
        .unwrap_or_else(|| panic!("no free port in {base}..{}", base + 50))
}

// ---- the schemas themselves ---------------------------------------------------

#[test]
fn schemas_are_closed_described_and_share_their_definitions() {
    for &name in SCHEMAS {
        assert_schema_document(name);
        let s = load_schema(name);
        let version = s["properties"]["format_version"]["maximum"]
            .as_u64()
            .unwrap();
        assert!(
            s["title"]
                .as_str()
                .unwrap()
                .ends_with(&format!("(format_version {version})")),
            "{name}: the title names the version"
        );
        assert_described_and_required(name);
        let shared = SHARED_DEFS.iter().find(|(n, _)| *n == name).unwrap().1;
        assert_shares_oneway(name, shared);
    }
    assert_eq!(
        load_schema("host-tune")["$defs"]["change"],
        load_schema("host-tune-state")["$defs"]["change"],
        "the two copies of $defs/change differ"
    );
}

#[test]
fn every_schema_is_listed_in_the_readme() {
    let dir = schema_path("oneway").parent().unwrap().to_path_buf();
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    for e in std::fs::read_dir(&dir).unwrap() {
        let file = e.unwrap().file_name().to_string_lossy().to_string();
        if file.ends_with(".schema.json") {
            assert!(
                readme.contains(&format!("`{file}`")),
                "schema/README.md does not list {file}"
            );
        }
    }
}

// ---- host tune: the plan, here ---------------------------------------------

#[test]
fn host_tune_plan_matches_its_schema_and_broken_variants_fail() {
    let v = json_of(&run_within(
        Duration::from_secs(30),
        &["--no-store", "host", "tune", "--json"],
    ));
    assert_eq!(v["format"], "misura.host-tune");
    assert_eq!(v["action"], "plan");
    check_modelled::<misura_report::host::TuneReport>(&v, "host-tune");
    assert!(!v["entries"].as_array().unwrap().is_empty());

    let schema = compile("host-tune");
    let broken = |f: &dyn Fn(&mut Value)| {
        let mut b = v.clone();
        f(&mut b);
        b
    };
    for (what, b) in [
        (
            "a newer format_version",
            broken(&|b| b["format_version"] = json!(3)),
        ),
        ("an unknown field", broken(&|b| b["extra"] = json!(true))),
        (
            "a missing field",
            broken(&|b| {
                b.as_object_mut().unwrap().remove("entries");
            }),
        ),
        (
            "a plan that names a state file",
            broken(&|b| b["state_file"] = json!("/tmp/x.json")),
        ),
        (
            "an entry of an unknown status",
            broken(&|b| b["entries"][0]["status"] = json!("maybe")),
        ),
        (
            "another format",
            broken(&|b| b["format"] = json!("misura.host-check")),
        ),
    ] {
        assert!(!schema.is_valid(&b), "{what} passes host-tune.schema.json");
    }
}

// ---- serve, setup and sweep on loopback -------------------------------------------

#[test]
fn serve_setup_and_sweep_results_match_their_schemas() {
    let port = free_port(47000, false).to_string();
    let dir = std::env::temp_dir().join(format!("misura-schema-more-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let report = dir.join("serve.json");
    let server = Daemon::start(
        &[
            "--no-store",
            "serve",
            "--listen",
            "127.0.0.1",
            "--port",
            &port,
            "--max-duration",
            "10s",
            "--report-json",
            report.to_str().unwrap(),
        ],
        "misura serve: listening on",
    );
    let target = format!("127.0.0.1:{port}");
    let limit = Duration::from_secs(60);

    // Two gaps × two samples.
    let setup = json_of(&run_within(
        limit,
        &[
            "--no-store",
            "setup",
            &target,
            "--idle",
            "0s,50ms",
            "--count",
            "2",
            "--json",
        ],
    ));
    assert_eq!(setup["format"], "misura.setup");
    check_modelled::<misura_report::throughput::SetupReport>(&setup, "setup");
    assert_eq!(setup["complete"], true, "{setup}");
    let gaps = setup["gaps"].as_array().unwrap();
    assert_eq!(gaps.len(), 2);
    assert_eq!(setup["config"]["idle_ns"], json!([0, 50_000_000]));
    for (g, idle) in gaps.iter().zip([0, 50_000_000]) {
        assert_eq!(g["idle_ns"], idle);
        for s in g["samples"].as_array().unwrap() {
            let (a, b) = (s["first_rtt_ns"].as_i64(), s["second_rtt_ns"].as_i64());
            assert_eq!(s["setup_ns"].as_i64(), Some(a.unwrap() - b.unwrap()));
        }
    }

    // A tiny sweep: two message sizes, one second each.
    let sweep = json_of(&run_within(
        limit,
        &[
            "--no-store",
            "sweep",
            "tcp",
            &target,
            "--msg-size",
            "1000,2000",
            "--duration",
            "1s",
            "--json",
        ],
    ));
    assert_eq!(sweep["format"], "misura.sweep");
    check_modelled::<misura_report::throughput::SweepReport>(&sweep, "sweep");
    assert_eq!(sweep["complete"], true, "{sweep}");
    assert_eq!(sweep["parameter"], "msg-size");
    let points = sweep["points"].as_array().unwrap();
    let values: Vec<&str> = points
        .iter()
        .map(|p| p["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["1000", "2000"]);
    for p in points {
        assert_eq!(p["parameter"], sweep["parameter"]);
        assert!(p["figures"]["throughput_bps"].as_f64().unwrap() > 0.0);
    }

    let (code, _) = server.terminate();
    assert_eq!(code, Some(143));
    let serve: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(serve["format"], "misura.serve");
    check_modelled::<misura_report::serve::ServeReport>(&serve, "serve");
    // Every test ended before the stop.
    assert_eq!(serve["complete"], true);
    let tests = serve["tests"].as_array().unwrap();
    let kinds = |k: &str| tests.iter().filter(|t| t["kind"] == k).count();
    assert_eq!((kinds("rr-udp"), kinds("tcp")), (4, 2), "{tests:?}");
    assert_eq!(serve["counters"]["tests_accepted"], 6);
    let sizes: Vec<u64> = serve["by_msg_size"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["msg_size"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, [1000, 2000]);
}

// ---- reflect on loopback -------------------------------------------------------

#[test]
fn reflect_report_matches_its_schema() {
    let port = free_port(47050, true).to_string();
    let reflector = Daemon::start(
        &[
            "--no-store",
            "reflect",
            "--listen",
            "127.0.0.1",
            "--port",
            &port,
            "--json",
        ],
        "misura reflect:",
    );
    let rtt = json_of(&run_within(
        Duration::from_secs(30),
        &[
            "--no-store",
            "rtt",
            &format!("127.0.0.1:{port}"),
            "--count",
            "20",
            "--period",
            "5ms",
            "-q",
            "--json",
        ],
    ));
    assert_eq!(rtt["totals"]["received"], 20);
    schema_check(&rtt, "rtt.schema.json");

    let (code, stdout) = reflector.terminate();
    assert_eq!(code, Some(143));
    let v: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("the reflector's report is not JSON ({e}):\n{stdout}"));
    assert_eq!(v["format"], "misura.reflect");
    assert_eq!(v["format_version"], 2);
    schema_check(&v, "reflect.schema.json");
    assert_eq!(v["transport"], "udp");
    assert_eq!(v["listen"], format!("127.0.0.1:{port}"));
    // rtt's probes, and the few it sends before measuring.
    assert!(v["counters"]["received"].as_u64().unwrap() >= 20, "{v}");
    assert_eq!(v["counters"]["replied"], v["counters"]["received"]);
    assert_eq!(v["dropped"], 0);

    let schema = compile("reflect");
    let mut old = v.clone();
    old["format"] = json!("misura-reflect");
    assert!(!schema.is_valid(&old), "the old format name still passes");
    let mut newer = v.clone();
    newer["format_version"] = json!(3);
    assert!(!schema.is_valid(&newer), "format_version 3 passes");
}

// ---- exchange between two lab hosts ----------------------------------------

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn exchange_result_matches_its_schema() {
    need_root!();
    let h = Lab::up("sm", "x", "hosts");
    let ns2 = h.ns(2);
    let export = h.path("responder.json");
    let export = export.to_str().unwrap();
    // The responder runs until SIGTERM, then writes its counters (stdout
    // and --export-json) and exits 143 like every interrupted command.
    let responder = Daemon::start(
        &[
            "--no-store",
            "exchange",
            "--respond",
            "--netns",
            &ns2,
            "--interface",
            "m0",
            "--peer",
            "02:6d:73:00:02:01",
            "--duration",
            "30s",
            "--json",
            "--export-json",
            export,
        ],
        "responding on m0",
    );
    let ns1 = h.ns(1);
    let v = json_of(&run_within(
        Duration::from_secs(30),
        &[
            "--no-store",
            "exchange",
            "--netns",
            &ns1,
            "--interface",
            "m0",
            "--peer",
            "02:6d:73:00:02:02",
            "--count",
            "50",
            "--period",
            "2ms",
            "--timeout",
            "50ms",
            "--json",
        ],
    ));
    assert_eq!(v["format"], "misura.exchange");
    check_modelled::<misura_report::exchange::ExchangeReport>(&v, "exchange");
    assert_eq!(v["complete"], true);
    assert_eq!((&v["cycles"], &v["completed"]), (&json!(50), &json!(50)));
    assert!(v["t3_kernel"].is_object(), "veth gives kernel stamps: {v}");
    assert_eq!(v["host"]["tuning"]["netns"], ns1);

    let (code, stdout) = responder.terminate();
    assert_eq!(code, Some(143), "the responder's exit code after SIGTERM");
    let r: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("responder stdout is not JSON ({e}): {stdout}"));
    assert_eq!(
        load_json(&h.path("responder.json")),
        r,
        "--export-json differs from stdout"
    );
    assert_eq!(r["format"], "misura.exchange-responder");
    check_modelled::<misura_report::exchange::ResponderReport>(&r, "exchange-responder");
    assert_eq!(r["complete"], false);
    assert_eq!(
        r["stop_reason"],
        "interrupted by signal 15; partial results"
    );
    assert_eq!((&r["triggers"], &r["answered"]), (&json!(50), &json!(50)));
    assert_eq!(r["peer_data_frames"], 50);
    assert_eq!(r["host"]["tuning"]["netns"], ns2);
    let schema = compile("exchange-responder");
    let mut finished = r.clone();
    finished["stop_reason"] = json!("finished");
    assert!(
        !schema.is_valid(&finished),
        "a finished run that says it is not complete passes"
    );
    let mut initiator = r.clone();
    initiator["format"] = json!("misura.exchange");
    assert!(
        !schema.is_valid(&initiator),
        "the initiator's format passes"
    );
}

// ---- host tune: apply and revert on lab ports -------------------------------------

#[test]
#[ignore = "needs root: network namespaces, raw sockets and a mount namespace"]
fn host_tune_apply_and_revert_match_their_schemas() {
    need_root!();
    // unshare(1) keeps the host-wide settings read-only during the apply.
    let unshare = require_tool("unshare", "apt-get install util-linux");
    let lab = Lab::up("sm", "t", "direct");
    let t = lab.tester();
    let limit = Duration::from_secs(30);
    let tune = |extra: &[&str]| -> Vec<String> {
        [
            "--no-store",
            "host",
            "tune",
            "--netns",
            &t,
            "-i",
            "p1",
            "-i",
            "p2",
            "--json",
        ]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
    };

    let plan_args = tune(&[]);
    let plan = json_of(&run_within(
        limit,
        &plan_args.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    check_modelled::<misura_report::host::TuneReport>(&plan, "host-tune");
    assert_eq!(plan["interfaces"], json!(["p1", "p2"]));

    // Apply where the host-wide settings are read-only, so only the lab's
    // veth ports can change.
    let state = lab.path("state.json");
    let state_s = state.to_str().unwrap();
    let apply = tune(&["--apply", "--state-file", state_s]);
    let o = run_command_within(
        limit,
        &mut misura_host_read_only(
            &unshare,
            &apply.iter().map(String::as_str).collect::<Vec<_>>(),
        ),
        "host tune --apply",
    );
    let applied = json_of(&o);
    check_modelled::<misura_report::host::TuneReport>(&applied, "host-tune");
    assert_eq!(applied["action"], "apply");
    assert_eq!(applied["state_file"], state_s);
    let changed: Vec<&Value> = applied["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["status"] == "change")
        .collect();
    assert!(
        changed.iter().all(|e| e["interface"].is_string()),
        "a host-wide setting was applied: {applied}"
    );

    let st: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(st["format"], "misura.host-tune-state");
    check_modelled::<misura_report::host::TuneState>(&st, "host-tune-state");
    assert_eq!(st["netns"], t.as_str());
    let changes = st["changes"].as_array().unwrap();
    assert_eq!(changes.len(), changed.len());
    assert!(!changes.is_empty(), "veth offloads start on: {applied}");

    let reverted = json_of(&run_within(
        limit,
        &["--no-store", "host", "tune", "--revert", state_s, "--json"],
    ));
    check_modelled::<misura_report::host::TuneReport>(&reverted, "host-tune");
    assert_eq!(reverted["action"], "revert");
    let entries = reverted["entries"].as_array().unwrap();
    assert_eq!(entries.len(), changes.len());
    assert!(
        entries.iter().all(|e| e["outcome"] == "restored"),
        "{reverted}"
    );
}
