//! `misura tcp`'s two ways of driving its streams (issue 10): one thread
//! for all of a client's streams (the default: non-blocking sockets and one
//! poll loop) and one thread per stream (`--threads`). Both move data
//! against `misura serve` on 127.0.0.1 and report per-stream bytes that sum
//! to the client's; the one-thread loop also runs reverse and bidir, and a
//! SIGINT still ends either with exit code 130 and the partial result.
//!
//! No root needed. Every run uses `--no-store` in the tests' own data home
//! (`common::misura`); every process is killed and reaped when its guard
//! drops, and every wait is bounded.

mod common;

use common::*;
use serde_json::Value;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// `misura serve` on 127.0.0.1, for as long and as fast as a test asks.
fn serve() -> LocalServe {
    LocalServe::start(&["--max-duration", "600s", "--max-rate", "100G"])
}

/// `misura tcp` against `srv` with `extra`, its JSON result checked
/// against the schema.
fn tcp(srv: &LocalServe, extra: &[&str]) -> Value {
    let target = srv.target();
    let mut args = vec!["--no-store", "tcp", &target, "--json"];
    args.extend_from_slice(extra);
    let v = json_of(&run(&args));
    schema_check(&v, "tcp.schema.json");
    v
}

fn n(v: &Value, k: &str) -> u64 {
    v[k].as_u64()
        .unwrap_or_else(|| panic!("{k} is not a count in {v}"))
}

/// The streams' `key` figures sum to the client's, and every stream moved
/// something; returns the client's figure.
fn streams_sum_to_the_total(c: &Value, key: &str, streams: usize) -> u64 {
    let rows = c["streams"].as_array().expect("streams");
    assert_eq!(rows.len(), streams, "one row per stream: {c}");
    let each: Vec<u64> = rows.iter().map(|s| n(s, key)).collect();
    assert!(
        each.iter().all(|b| *b > 0),
        "every stream moved data ({key}): {each:?}"
    );
    let total = n(c, key);
    assert_eq!(each.iter().sum::<u64>(), total, "streams' {key} {each:?}");
    total
}

#[test]
fn both_modes_move_data_and_their_streams_sum_to_the_total() {
    let srv = serve();
    for (flags, mode) in [(&[][..], "one"), (&["--threads"][..], "per-stream")] {
        let mut args = vec!["--streams", "3", "--duration", "1s", "--msg-size", "64K"];
        args.extend_from_slice(flags);
        let v = tcp(&srv, &args);
        assert_eq!(v["config"]["threads"], mode, "{flags:?}");
        assert_eq!(v["complete"], true, "{flags:?}: {}", v["stop_reason"]);
        let c = &v["clients"][0];
        let sent = streams_sum_to_the_total(c, "sent_bytes", 3);
        let counted = streams_sum_to_the_total(c, "receiver_bytes", 3);
        assert!(
            counted > 0 && counted <= sent,
            "{flags:?}: {counted} of {sent}"
        );
        assert_eq!(
            n(c, "received_bytes"),
            0,
            "forward: the client reads nothing"
        );
        assert!(v["throughput_bps"].as_f64().unwrap() > 0.0);
        let cpu = &c["cpu_local"];
        assert!(
            n(cpu, "user_ns") + n(cpu, "system_ns") > 0,
            "{flags:?}: the sending thread's CPU time is counted: {cpu}"
        );
    }
}

/// A reverse test's two streams: the client read every byte it counts
/// as received. Returns the client's result.
fn reverse_read_by_the_client<'a>(v: &'a Value, what: &str) -> &'a Value {
    let c = &v["clients"][0];
    let received = streams_sum_to_the_total(c, "received_bytes", 2);
    assert_eq!(
        n(c, "receiver_bytes"),
        received,
        "{what}: the client counts"
    );
    c
}

#[test]
fn one_thread_runs_reverse_and_bidir() {
    let srv = serve();
    let v = tcp(&srv, &["--streams", "2", "--duration", "1s", "--reverse"]);
    assert_eq!(
        (v["config"]["threads"].as_str(), v["complete"].as_bool()),
        (Some("one"), Some(true)),
        "{}",
        v["stop_reason"]
    );
    let c = reverse_read_by_the_client(&v, "reverse");
    assert_eq!(n(c, "sent_bytes"), 0);

    let v = tcp(&srv, &["--streams", "2", "--duration", "1s", "--bidir"]);
    assert_eq!(v["config"]["threads"], "one");
    assert_eq!(v["complete"], true, "{}", v["stop_reason"]);
    let c = &v["clients"][0];
    streams_sum_to_the_total(c, "sent_bytes", 2);
    let received = streams_sum_to_the_total(c, "received_bytes", 2);
    let counted = streams_sum_to_the_total(c, "receiver_bytes", 2);
    assert!(counted > received, "bidir: the server's count is added");
    for k in ["forward_bps", "reverse_bps"] {
        assert!(c[k].as_f64().unwrap() > 0.0, "{k}: {c}");
    }
}

#[test]
fn the_receiving_clients_poll_window_reads_every_byte_and_is_reported() {
    let srv = serve();
    for (window, ns) in [("200us", 200_000), ("0", 0)] {
        let v = tcp(
            &srv,
            &[
                "--streams",
                "2",
                "--duration",
                "1s",
                "--reverse",
                "--busy-poll",
                window,
            ],
        );
        assert_eq!(v["config"]["busy_poll_ns"], ns, "--busy-poll {window}");
        assert_eq!(v["complete"], true, "{window}: {}", v["stop_reason"]);
        reverse_read_by_the_client(&v, window);
    }
    // The default is 5 µs; --threads readers block, so none is recorded.
    let v = tcp(&srv, &["--duration", "0.3s", "--reverse"]);
    assert_eq!(v["config"]["busy_poll_ns"], 5000);
    let v = tcp(&srv, &["--duration", "0.3s", "--reverse", "--threads"]);
    assert_eq!(v["config"]["busy_poll_ns"], 0);
    // A forward client reads nothing: no window is used or recorded.
    let v = tcp(&srv, &["--duration", "0.3s"]);
    assert_eq!(v["config"]["busy_poll_ns"], 0);
    let o = run(&["--no-store", "tcp", &srv.target(), "--busy-poll", "2ms"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("--busy-poll 2ms") && e.contains("1ms"), "{e}");
}

/// SIGINT to a running `misura tcp`: exit code 130 within the limit and
/// the partial result in the file.
fn interrupted(srv: &LocalServe, flags: &[&str]) -> Value {
    let d = TempDir::new("tcp-threads-int");
    let json = d.path("partial.json");
    let mut child = misura()
        .args([
            "--no-store",
            "tcp",
            &srv.target(),
            "-q",
            "--duration",
            "60s",
        ])
        .args(["--streams", "2", "--export-json", json.to_str().unwrap()])
        .args(flags)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting misura tcp");
    std::thread::sleep(Duration::from_millis(1500));
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("running kill");
    assert!(killed.success());
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{flags:?}: misura tcp did not stop within 20 s of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(
        status.code(),
        Some(130),
        "{flags:?}: exit code after SIGINT"
    );
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "{flags:?}: stopping took {:?}",
        t.elapsed()
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    schema_check(&v, "tcp.schema.json");
    assert_eq!(v["complete"], false);
    let reason = v["stop_reason"].as_str().unwrap();
    assert!(reason.contains("signal 2"), "{flags:?}: {reason}");
    v
}

#[test]
fn ctrl_c_writes_the_partial_result_in_both_modes() {
    let srv = serve();
    for (flags, mode) in [
        (&[][..], "one"),
        (&["--threads"][..], "per-stream"),
        (&["--bidir"][..], "one"),
    ] {
        let v = interrupted(&srv, flags);
        assert_eq!(v["config"]["threads"], mode);
        let c = &v["clients"][0];
        streams_sum_to_the_total(c, "sent_bytes", 2);
        let elapsed = n(c, "elapsed_ns");
        assert!(
            (1_000_000_000..10_000_000_000).contains(&elapsed),
            "{flags:?}: measured until the signal, not the planned 60 s: {elapsed} ns"
        );
    }
}
