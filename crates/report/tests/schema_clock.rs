//! `schema/clock-{sources,interference,timer}.schema.json` against real
//! `misura clock … --json` results (`tests/fixtures/clock-*.json`) and the
//! Rust models in `misura_report::clock`.
//!
//! The conventions of `tests/schema.rs` and `tests/schema_rtt.rs` (helpers
//! in `common`): closed schemas listing every field as
//! required and described; each fixture comes back unchanged through its Rust
//! type; broken variants (newer version, missing, unknown, renamed field,
//! wrong type, out of range) fail.

mod common;
use common::*;

use misura_report::clock::{InterferenceReport, SourcesReport, TimerReport};
use serde_json::json;

/// (schema, fixture files). All written by the real tool on the test VM:
/// sources: `--reads 100000` (no /dev/ptp*, TSC present); interference:
/// `--duration 300ms --load 1 --compare --cpu 0 --gaps 5` and `--clock tsc`;
/// timer: `--rt-priority 50 --cpu 1 --interval 500us`, a plain SCHED_OTHER
/// run, and one interrupted by SIGINT (`complete: false`).
const SETS: &[(&str, &[&str])] = &[
    ("clock-sources", &["clock-sources.json"]),
    (
        "clock-interference",
        &[
            "clock-interference-compare.json",
            "clock-interference-tsc.json",
        ],
    ),
    (
        "clock-timer",
        &[
            "clock-timer-fifo.json",
            "clock-timer-plain.json",
            "clock-timer-interrupted.json",
        ],
    ),
];

/// Definitions repeated from `oneway.schema.json`.
const SHARED_DEFS: &[&str] = &["utc_time", "summary", "bucket", "loop_tuning", "host"];

#[test]
fn schemas_are_valid_closed_and_described() {
    for &(name, _) in SETS {
        assert_schema_document(name);
        assert_described_and_required(name);
        assert_shares_oneway(name, SHARED_DEFS);
    }
}

#[test]
fn fixtures_validate_and_match_the_models() {
    for &(name, files) in SETS {
        for &file in files {
            let v = fixture(file);
            assert_valid(name, file, &v);
            let back = match name {
                "clock-sources" => round_trip::<SourcesReport>(file, &v),
                "clock-interference" => round_trip::<InterferenceReport>(file, &v),
                _ => round_trip::<TimerReport>(file, &v),
            };
            assert_eq!(back, v, "{file} changes through the Rust model");
        }
    }
}

#[test]
fn fixtures_cover_the_shapes() {
    let s = fixture("clock-sources.json");
    assert_eq!(s["ptp_clocks"], 0);
    assert!(s["ptp_note"].as_str().unwrap().starts_with("none"));
    let names: Vec<&str> = s["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    for n in [
        "CLOCK_MONOTONIC",
        "CLOCK_MONOTONIC_RAW",
        "CLOCK_REALTIME",
        "CLOCK_TAI",
        "CLOCK_BOOTTIME",
        "gettimeofday()",
        "TSC (RDTSC)",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    let c = fixture("clock-interference-compare.json");
    let labels: Vec<&str> = c["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["idle", "loaded"]);
    assert!(fixture("clock-interference-tsc.json")["tsc_hz"].is_number());
    assert!(fixture("clock-timer-fifo.json")["config"]["rt_priority"].is_number());
    assert!(fixture("clock-timer-plain.json")["config"]["rt_priority"].is_null());
    assert_eq!(fixture("clock-timer-interrupted.json")["complete"], false);
}

#[test]
fn broken_variants_fail() {
    for &(name, files) in SETS {
        for &file in files {
            let v = fixture(file);
            assert_refuses_other_versions(name, file, &v);
            assert_invalid(
                name,
                &format!("{file} with an extra field"),
                &with(&v, "/extra", json!(1)),
            );
            assert_invalid(
                name,
                &format!("{file} with another format"),
                &with(&v, "/format", json!("misura.rtt")),
            );
            assert_refuses_each_field_missing(name, file, &v);
            let flipped = with(&v, "/complete", json!(!v["complete"].as_bool().unwrap()));
            assert_invalid(
                name,
                &format!("{file} with complete contradicting stop_reason"),
                &flipped,
            );
        }
    }
    let s = fixture("clock-sources.json");
    for (pointer, value) in [
        ("/sources/0/kind", json!("sundial")),
        ("/sources/0/read_cost_median_ns", json!(-1.0)),
        ("/sources/0/read_cost_median_ns", json!(null)), // usable without a cost
        ("/sources/0/usable", json!(false)),             // unusable without an error
        ("/sources/0/zero_steps", json!("0")),
        ("/sources/0/monotonicity_violations", json!(-1)),
        ("/sources/0/resolution_ns", json!(0.0)),
        ("/sources/0/good_for", json!("")),
        ("/sources", json!([])),
        ("/ptp_note", json!("no clocks")), // zero clocks must say "none"
        ("/tsc/flags", json!("constant_tsc")),
        ("/config/batch", json!(0)),
        ("/elapsed_s", json!(null)),
    ] {
        assert_invalid(
            "clock-sources",
            &format!("clock-sources.json with {pointer} = {value}"),
            &with(&s, pointer, value),
        );
    }
    assert_invalid(
        "clock-sources",
        "a source row with an extra field",
        &with(&s, "/sources/0/drift_ppm", json!(1)),
    );
    assert_invalid(
        "clock-sources",
        "a source row without good_for",
        &without(&s, "/sources/0/good_for"),
    );
    let c = fixture("clock-interference-compare.json");
    for (pointer, value) in [
        ("/runs/0/load_threads", json!(2)), // idle with load
        ("/runs/1/load_cpus", json!([])),   // loaded without CPUs
        ("/runs/0/label", json!("busy")),
        ("/runs/0/longest_gaps/0/step_ns", json!(0)),
        ("/runs/0/longest_gaps/0/at_ns", json!(-5)),
        ("/runs/0/steps/count", json!(0)), // count 0 with figures
        ("/runs/0/histogram/0/count", json!(-1)),
        ("/runs/0/reads", json!(1.5)),
        ("/config/bins_per_decade", json!(0)),
        ("/resolution_ns", json!(0)),
    ] {
        assert_invalid(
            "clock-interference",
            &format!("compare with {pointer} = {value}"),
            &with(&c, pointer, value),
        );
    }
    assert_invalid(
        "clock-interference",
        "a gap with an extra field",
        &with(&c, "/runs/0/longest_gaps/0/cpu", json!(1)),
    );
    let t = fixture("clock-timer-fifo.json");
    for (pointer, value) in [
        ("/config/rt_priority", json!(100)),
        ("/config/clock", json!("CLOCK_REALTIME")),
        ("/config/interval_ns", json!(0)),
        ("/missed_periods", json!(-1)),
        ("/latency/std_dev_ns", json!(null)),
        ("/latency", json!(null)),
        ("/max_at_ns", json!("1")),
    ] {
        assert_invalid(
            "clock-timer",
            &format!("timer with {pointer} = {value}"),
            &with(&t, pointer, value),
        );
    }
    // The Rust models refuse wrong types too.
    assert!(serde_json::from_value::<TimerReport>(with(&t, "/wakeups", json!("10"))).is_err());
    assert!(serde_json::from_value::<SourcesReport>(with(&s, "/ptp_clocks", json!("0"))).is_err());
}
