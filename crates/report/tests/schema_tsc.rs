//! `schema/clock-tsc.schema.json` against real `misura clock tsc` result
//! files (`tests/fixtures/clock-tsc-*.json`) and against the Rust model
//! `misura_report::tsc::TscReport`, with the conventions of `tests/schema.rs`
//! (helpers in `common`): closed objects, every
//! field required and described, fixtures unchanged through the model, and
//! broken variants refused.

mod common;
use common::*;

use misura_report::tsc::TscReport;
use serde_json::{json, Value};

const TSC: &str = "clock-tsc";

/// The fixtures, both written by `misura clock tsc`: clock-tsc-raw.json by
/// `--duration 2s --windows 5 --json` on the plain host (kernel calibration
/// not readable there), clock-tsc-ntp.json by `--netns …h1 --ntp 198.18.0.2
/// --interval 200ms --count 40 --windows 8` against chrony in the lab.
const FIXTURES: &[&str] = &["clock-tsc-raw.json", "clock-tsc-ntp.json"];

/// Definitions `clock-tsc.schema.json` repeats from `oneway.schema.json`.
const SHARED_DEFS: &[&str] = &["utc_time", "loop_tuning", "host"];

fn raw() -> Value {
    fixture("clock-tsc-raw.json")
}

fn ntp() -> Value {
    fixture("clock-tsc-ntp.json")
}

#[test]
fn schema_is_a_valid_draft_2020_12_document() {
    assert_schema_document(TSC);
}

#[test]
fn every_field_is_described_and_required() {
    assert_described_and_required(TSC);
}

#[test]
fn shared_definitions_are_identical() {
    assert_shares_oneway(TSC, SHARED_DEFS);
}

#[test]
fn fixtures_validate_and_match_the_model() {
    for &file in FIXTURES {
        assert_valid_and_modelled::<TscReport>(TSC, file, &fixture(file));
    }
}

#[test]
fn fixtures_cover_the_shapes() {
    let r = raw();
    let n = ntp();
    for v in [&r, &n] {
        assert_eq!(v["format"], "misura.clock-tsc");
        assert!(v["raw"]["endpoints"]["frequency_hz"].as_f64().unwrap() > 1e8);
        assert_eq!(v["tsc"]["flags"].as_array().unwrap().len(), 7);
    }
    assert_eq!(r["config"]["mode"], "monotonic-raw");
    assert!(r["ntp"].is_null() && r["raw"]["stability"].is_object());
    assert_eq!(n["config"]["mode"], "ntp");
    assert!(
        n["ntp"]["estimate"].is_object() && n["ntp"]["comparison"]["within_uncertainty"] == true
    );
    assert!(n["ntp"]["error"].is_null());
}

#[test]
fn newer_format_version_fails() {
    for &file in FIXTURES {
        assert_refuses_other_versions(TSC, file, &fixture(file));
    }
}

#[test]
fn missing_field_fails() {
    for &file in FIXTURES {
        assert_refuses_each_field_missing(TSC, file, &fixture(file));
    }
    let n = ntp();
    for pointer in [
        "/config/mode",
        "/tsc/kernel_calibration_hz",
        "/tsc/flags/0/meaning",
        "/raw/endpoints/bound_hz",
        "/raw/fit/ci95_hz",
        "/raw/windows/0/deviation_ppm",
        "/raw/stability/spread_ppm",
        "/raw/kernel_difference_ppm",
        "/ntp/estimate/first/rtt_ns",
        "/ntp/estimate/fit",
        "/ntp/comparison/within_uncertainty",
        "/ntp/realtime_vs_raw_ppm",
        "/ntp/error",
        "/host/tuning/netns",
    ] {
        assert_invalid(
            TSC,
            &format!("clock-tsc-ntp.json without {pointer}"),
            &without(&n, pointer),
        );
    }
}

#[test]
fn unknown_or_renamed_field_fails() {
    let n = ntp();
    for pointer in [
        "/extra",
        "/config/port",
        "/tsc/tsc_khz",
        "/raw/endpoints/ci95_hz",
        "/ntp/estimate/offset_ns",
        "/ntp/leap",
    ] {
        assert_invalid(
            TSC,
            &format!("clock-tsc-ntp.json with {pointer}"),
            &with(&n, pointer, json!(0)),
        );
    }
    for (pointer, new_key) in [
        ("/ntp/estimate/bound_ppm", "uncertainty_ppm"),
        ("/raw/pairs_kept", "pairs"),
    ] {
        assert_invalid(
            TSC,
            &format!("clock-tsc-ntp.json with {pointer} renamed"),
            &renamed(&n, pointer, new_key),
        );
    }
}

#[test]
fn wrong_type_fails() {
    let n = ntp();
    for pointer in [
        "/config/windows",
        "/raw/endpoints/frequency_hz",
        "/raw/pairs_read",
        "/ntp/requests",
        "/ntp/estimate/first/seq",
        "/ntp/comparison/difference_ppm",
        "/elapsed_s",
    ] {
        assert_refuses_string_at::<TscReport>(TSC, "clock-tsc-ntp.json", &n, pointer);
    }
    for (pointer, value) in [
        ("/complete", json!("true")),
        ("/raw/endpoints/frequency_hz", Value::Null),
        ("/raw/endpoints/frequency_hz", json!(0)),
        ("/raw/endpoints/bound_hz", json!(-1)),
        ("/tsc/flags/0/name", json!("fast_tsc")),
        ("/ntp/stratum", json!(0)),
        ("/ntp/stratum", json!(16)),
        ("/config/mode", json!("gps")),
        ("/warnings", json!("none")),
    ] {
        assert_invalid(
            TSC,
            &format!("clock-tsc-ntp.json with {value} at {pointer}"),
            &with(&n, pointer, value),
        );
    }
}

#[test]
fn inconsistent_combinations_fail() {
    let r = raw();
    let n = ntp();
    let cases: Vec<(&str, Value)> = vec![
        (
            "complete but interrupted",
            with(
                &r,
                "/stop_reason",
                json!("interrupted by signal 2; partial results"),
            ),
        ),
        (
            "incomplete but finished",
            with(&r, "/complete", json!(false)),
        ),
        (
            "monotonic-raw mode with NTP results",
            with(&r, "/ntp", n["ntp"].clone()),
        ),
        (
            "ntp mode without NTP results",
            with(&n, "/ntp", Value::Null),
        ),
        (
            "ntp mode with a duration",
            with(&n, "/config/duration_s", json!(10.0)),
        ),
        (
            "monotonic-raw mode with a server",
            with(&r, "/config/server", json!("pool.ntp.org")),
        ),
        (
            "an estimate and an error",
            with(&n, "/ntp/error", json!("no answer")),
        ),
        (
            "neither estimate nor error",
            with_all(
                &n,
                &[
                    ("/ntp/estimate", Value::Null),
                    ("/ntp/comparison", Value::Null),
                ],
            ),
        ),
        (
            "a comparison without an estimate",
            with_all(
                &n,
                &[
                    ("/ntp/estimate", Value::Null),
                    ("/ntp/error", json!("too few replies")),
                ],
            ),
        ),
    ];
    for (what, v) in &cases {
        assert_invalid(TSC, what, v);
    }
}

#[test]
fn other_valid_shapes_pass() {
    let r = raw();
    let n = ntp();
    let no_answer = with_all(
        &n,
        &[
            ("/ntp/replies", json!(0)),
            ("/ntp/timeouts", json!(40)),
            ("/ntp/stratum", Value::Null),
            ("/ntp/reference_id", Value::Null),
            ("/ntp/precision_ns", Value::Null),
            ("/ntp/rtt_min_ns", Value::Null),
            ("/ntp/rtt_median_ns", Value::Null),
            ("/ntp/estimate", Value::Null),
            ("/ntp/raw_same_period", Value::Null),
            ("/ntp/comparison", Value::Null),
            ("/ntp/error", json!("no answer from NTP server 198.18.0.9 (198.18.0.9:123) to 40 requests within 200 ms each")),
        ],
    );
    let cases: Vec<(&str, Value)> = vec![
        ("no answer from the server", no_answer),
        (
            "kernel calibration known",
            with_all(
                &r,
                &[
                    ("/tsc/kernel_calibration_hz", json!(2_600_000_000.0)),
                    (
                        "/tsc/kernel_calibration_source",
                        json!("kernel log: tsc: Refined TSC clocksource calibration: 2600.000 MHz"),
                    ),
                    ("/raw/kernel_difference_ppm", json!(-0.715)),
                ],
            ),
        ),
        (
            "interrupted at once",
            with_all(
                &r,
                &[
                    ("/complete", json!(false)),
                    (
                        "/stop_reason",
                        json!("interrupted by signal 2; partial results"),
                    ),
                    ("/raw", Value::Null),
                ],
            ),
        ),
        (
            "no fit, no stability",
            with_all(
                &r,
                &[
                    ("/raw/fit", Value::Null),
                    ("/raw/stability", Value::Null),
                    ("/raw/windows", json!([])),
                ],
            ),
        ),
        (
            "the NTP estimate disagrees",
            with(&n, "/ntp/comparison/within_uncertainty", json!(false)),
        ),
    ];
    for (what, v) in &cases {
        assert_valid_and_modelled::<TscReport>(TSC, what, v);
    }
}
