//! `schema/clock-tsc.schema.json` against real `misura clock tsc` result
//! files (`tests/fixtures/clock-tsc-*.json`) and against the Rust model
//! `misura_report::tsc::TscReport`, with the conventions of `tests/schema.rs`
//! (helpers repeated so each test file stands alone): closed objects, every
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

fn check(instance: &Value) -> Result<(), Vec<String>> {
    let validator = compile(TSC);
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| {
            let at = e.instance_path().to_string();
            let at = if at.is_empty() { "/".to_string() } else { at };
            format!("{at}: {e} (schema {})", e.schema_path())
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

fn raw() -> Value {
    fixture("clock-tsc-raw.json")
}

fn ntp() -> Value {
    fixture("clock-tsc-ntp.json")
}

fn assert_valid(what: &str, instance: &Value) {
    if let Err(errors) = check(instance) {
        panic!(
            "{what} fails clock-tsc.schema.json with {} error(s):\n  {}",
            errors.len(),
            errors.join("\n  ")
        );
    }
}

fn assert_invalid(what: &str, instance: &Value) {
    if check(instance).is_ok() {
        panic!("{what} should fail clock-tsc.schema.json but passes");
    }
}

/// Deserialise into `TscReport`, serialise back, and return the result.
fn model_round_trip(what: &str, v: &Value) -> Value {
    let typed: TscReport = serde_json::from_value(v.clone())
        .unwrap_or_else(|e| panic!("{what} does not deserialise: {e}"));
    serde_json::to_value(&typed).unwrap_or_else(|e| panic!("{what} does not serialise: {e}"))
}

/// Valid for the schema, and unchanged through the Rust model, whose output
/// validates too.
fn assert_valid_and_modelled(what: &str, v: &Value) {
    assert_valid(what, v);
    let back = model_round_trip(what, v);
    if let Some(d) = first_difference("", v, &back) {
        panic!("{what} changes through the Rust model (input vs re-serialised) at {d}");
    }
    assert_valid(&format!("{what} re-serialised from the model"), &back);
}

#[test]
fn schema_is_a_valid_draft_2020_12_document() {
    let schema = load_json(&schema_path(TSC));
    if let Err(e) = jsonschema::meta::validate(&schema) {
        panic!("clock-tsc.schema.json is not a valid schema: {e}");
    }
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    for key in ["$id", "title", "description"] {
        assert!(
            schema[key].as_str().is_some_and(|s| !s.is_empty()),
            "{key} missing"
        );
    }
    assert!(schema["$id"]
        .as_str()
        .unwrap()
        .ends_with("/clock-tsc.schema.json"));
    compile(TSC);
}

/// Each property of a closed object has a description, and the closed object
/// requires exactly its properties (the model writes every field).
fn check_object_schemas(at: &str, s: &Value, problems: &mut Vec<String>) {
    match s {
        Value::Object(m) => {
            if let Some(Value::Object(props)) = m.get("properties") {
                let closed = m.get("additionalProperties") == Some(&Value::Bool(false));
                if closed {
                    for (k, p) in props {
                        if p.get("description")
                            .and_then(Value::as_str)
                            .is_none_or(str::is_empty)
                        {
                            problems.push(format!("{at}/properties/{k}: no description"));
                        }
                    }
                }
                if closed && m.contains_key("type") {
                    let mut required: Vec<&str> = m
                        .get("required")
                        .and_then(Value::as_array)
                        .map(|r| r.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
                    required.sort_unstable();
                    names.sort_unstable();
                    if required != names {
                        problems.push(format!(
                            "{at}: required {required:?} differs from properties {names:?}"
                        ));
                    }
                }
            }
            for (k, v) in m {
                check_object_schemas(&format!("{at}/{k}"), v, problems);
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                check_object_schemas(&format!("{at}/{i}"), v, problems);
            }
        }
        _ => {}
    }
}

#[test]
fn every_field_is_described_and_required() {
    let schema = load_json(&schema_path(TSC));
    let mut problems = Vec::new();
    check_object_schemas("#", &schema, &mut problems);
    assert!(
        problems.is_empty(),
        "clock-tsc.schema.json:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn shared_definitions_are_identical() {
    let tsc = load_json(&schema_path(TSC));
    let oneway = load_json(&schema_path("oneway"));
    for name in SHARED_DEFS {
        assert!(
            tsc["$defs"].get(name).is_some(),
            "clock-tsc.schema.json has no $defs/{name}"
        );
        assert_eq!(
            tsc["$defs"].get(name),
            oneway["$defs"].get(name),
            "$defs/{name} differs from oneway.schema.json"
        );
    }
    for key in [
        "format_version",
        "tool",
        "tool_version",
        "started_at",
        "command",
    ] {
        assert_eq!(
            tsc["properties"][key], oneway["properties"][key],
            "properties/{key} differs from oneway.schema.json"
        );
    }
}

#[test]
fn fixtures_validate_and_match_the_model() {
    for &file in FIXTURES {
        assert_valid_and_modelled(file, &fixture(file));
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
        let v = fixture(file);
        assert_invalid(
            &format!("{file} with format_version 3"),
            &with(&v, "/format_version", json!(3)),
        );
    }
}

#[test]
fn missing_field_fails() {
    for &file in FIXTURES {
        let v = fixture(file);
        let keys: Vec<String> = v
            .as_object()
            .expect("fixture is an object")
            .keys()
            .cloned()
            .collect();
        for key in keys {
            assert_invalid(
                &format!("{file} without {key}"),
                &without(&v, &format!("/{key}")),
            );
        }
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
            &format!("clock-tsc-ntp.json with {pointer}"),
            &with(&n, pointer, json!(0)),
        );
    }
    for (pointer, new_key) in [
        ("/ntp/estimate/bound_ppm", "uncertainty_ppm"),
        ("/raw/pairs_kept", "pairs"),
    ] {
        assert_invalid(
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
        let as_string = n
            .pointer(pointer)
            .unwrap_or_else(|| panic!("no {pointer}"))
            .to_string();
        let bad = with(&n, pointer, Value::String(as_string));
        assert_invalid(
            &format!("clock-tsc-ntp.json with a string at {pointer}"),
            &bad,
        );
        assert!(
            serde_json::from_value::<TscReport>(bad).is_err(),
            "the Rust model accepts a string at {pointer}"
        );
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
        assert_invalid(what, v);
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
        assert_valid_and_modelled(what, v);
    }
}
