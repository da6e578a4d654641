//! The round-trip benchmark and tracer run (issue 35): a short smoke of
//! `scripts/bench-rtt.sh --rows pinned` (misura rtt beside sockperf, every
//! pinned row, one repeat of 200 round trips) and of `scripts/trace-rtt.sh`
//! (one second of bpftrace on both tools). Not a timed assertion: each must
//! finish, print every row with a figure for both tools, and leave no
//! namespace behind. The figures themselves are for docs/own-cost.md, from
//! a release build on a quiet host.

#[macro_use]
mod common;

use std::process::{Command, Output};

fn script(name: &str, args: &[&str]) -> Output {
    let path = format!("{}/../../scripts/{name}", env!("CARGO_MANIFEST_DIR"));
    Command::new("timeout")
        .arg("600")
        .arg("bash")
        .arg(&path)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {path}: {e}"))
}

fn prefix(family: &str) -> String {
    format!("misura-{family}{}-", std::process::id() % 100_000)
}

fn no_namespaces_left(prefix: &str) {
    let o = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let list = String::from_utf8_lossy(&o.stdout);
    assert!(
        !list.contains(prefix),
        "namespaces {prefix}* left behind:\n{list}"
    );
}

#[test]
#[ignore = "needs root and sockperf: network namespaces"]
fn bench_rtt_prints_every_pinned_row_beside_sockperf() {
    need_root!();
    common::require_tool("sockperf", "apt-get install sockperf");
    let _one = common::one_at_a_time();
    let dir = common::TempDir::new("bench-rtt");
    let out = dir.0.join("bench-rtt.json");
    let pre = prefix("br");
    let o = script(
        "bench-rtt.sh",
        &[
            "--rows",
            "pinned",
            "--repeats",
            "1",
            "--count",
            "200",
            "--misura",
            env!("CARGO_BIN_EXE_misura"),
            "--prefix",
            &pre,
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let text = String::from_utf8_lossy(&o.stdout);
    println!("{text}");
    assert!(
        o.status.success(),
        "bench-rtt.sh failed: {}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    for row in [
        "same CPU, misura sleeping",
        "same CPU, misura client spinning",
        "same CPU, sleeping, user clock only",
        "same CPU, client spinning, user clock only",
        "split CPUs, misura sleeping",
        "split CPUs, misura client spinning",
        "split CPUs, both ends spinning",
        "split CPUs, sleeping, user clock only",
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("no row `{row}` in:\n{text}"));
        // sockperf p50, misura p50 and their ratio, as numbers.
        let nums: Vec<f64> = line[row.len()..]
            .split_whitespace()
            .take(3)
            .filter_map(|w| w.trim_end_matches('x').parse().ok())
            .collect();
        assert_eq!(nums.len(), 3, "row `{row}` lacks a figure: {line}");
        assert!(nums.iter().all(|v| *v > 0.0), "row `{row}`: {line}");
    }
    let pinned = dir.0.join("bench-rtt-pinned.json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&pinned).expect("the pinned rows' JSON"))
            .expect("the pinned rows' JSON parses");
    assert!(v.is_object() || v.is_array(), "{v}");
    no_namespaces_left(&pre);
}

#[test]
#[ignore = "needs root, sockperf and bpftrace: namespaces and tracing"]
fn trace_rtt_follows_each_round_trip_for_both_tools() {
    need_root!();
    common::require_tool("sockperf", "apt-get install sockperf");
    common::require_tool("bpftrace", "apt-get install bpftrace");
    let _one = common::one_at_a_time();
    let pre = prefix("tr");
    let o = script(
        "trace-rtt.sh",
        &[
            "--seconds",
            "1",
            "--misura",
            env!("CARGO_BIN_EXE_misura"),
            "--prefix",
            &pre,
        ],
    );
    let text = String::from_utf8_lossy(&o.stdout);
    println!("{text}");
    assert!(
        o.status.success(),
        "trace-rtt.sh failed: {}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    for step in [
        "| veth hand-over (the request's RX stamp is taken here) |",
        "| the reflector's own work (parse, build the reply) |",
        "| **send to the reply's receive, median (round trips)** |",
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(step))
            .unwrap_or_else(|| panic!("no step `{step}` in:\n{text}"));
        let cells: Vec<&str> = line[step.len()..]
            .split('|')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(cells.len(), 2, "misura and sockperf: {line}");
        for c in cells {
            let v: f64 = c
                .split_whitespace()
                .next()
                .and_then(|w| w.parse().ok())
                .unwrap_or_else(|| panic!("no figure in `{c}`: {line}"));
            assert!(v > 0.0, "{line}");
        }
    }
    // The client's kernel TX stamp is on misura's timeline, not sockperf's.
    let queued = text
        .lines()
        .find(|l| l.starts_with("| client's TX stamp queued"))
        .expect("the TX-stamp row");
    assert!(queued.trim_end().ends_with("| - |"), "{queued}");
    no_namespaces_left(&pre);
}
