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

/// `bash scripts/NAME ARGS` (at most 10 minutes), which must succeed; its
/// stdout, printed.
fn script(name: &str, args: &[&str]) -> String {
    let path = format!("{}/../../scripts/{name}", env!("CARGO_MANIFEST_DIR"));
    let o: Output = Command::new("timeout")
        .arg("600")
        .arg("bash")
        .arg(&path)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {path}: {e}"));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    println!("{text}");
    assert!(
        o.status.success(),
        "{name} failed: {}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    text
}

/// The line of `text` that starts with `head`, and what follows `head`.
fn row<'t>(text: &'t str, head: &str) -> &'t str {
    let line = text
        .lines()
        .find(|l| l.starts_with(head))
        .unwrap_or_else(|| panic!("no row `{head}` in:\n{text}"));
    &line[head.len()..]
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
    let text = script(
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
    for head in [
        "same CPU, misura sleeping",
        "same CPU, misura client spinning",
        "same CPU, sleeping, user clock only",
        "same CPU, client spinning, user clock only",
        "split CPUs, misura sleeping",
        "split CPUs, misura client spinning",
        "split CPUs, both ends spinning",
        "split CPUs, sleeping, user clock only",
    ] {
        let line = row(&text, head);
        // sockperf p50, misura p50 and their ratio, as numbers.
        let nums: Vec<f64> = line
            .split_whitespace()
            .take(3)
            .filter_map(|w| w.trim_end_matches('x').parse().ok())
            .collect();
        assert_eq!(nums.len(), 3, "row `{head}` lacks a figure: {line}");
        assert!(nums.iter().all(|v| *v > 0.0), "row `{head}`: {line}");
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
    let text = script(
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
    for step in [
        "| veth hand-over (the request's RX stamp is taken here) |",
        "| the reflector's own work (parse, build the reply) |",
        "| **send to the reply's receive, median (round trips)** |",
    ] {
        let line = row(&text, step);
        let cells: Vec<&str> = line
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
    let queued = row(&text, "| client's TX stamp queued");
    assert!(queued.trim_end().ends_with("| - |"), "{queued}");
    no_namespaces_left(&pre);
}
