//! The hand-written JSON Schemas in `schema/` against real result files
//! (`tests/fixtures/`, written by `misura` on the virtual lab) and against the
//! Rust result model.
//!
//! The schemas use `additionalProperties: false` and list every field as
//! required, so the fixtures pass only while schema, files and model agree
//! field by field. Each fixture is also deserialised into its Rust type and
//! serialised back: the round trip must give the fixture unchanged (the model
//! holds every field of the file) and must itself validate (the schema holds
//! every field of the model — a field added to or renamed in the model fails
//! here until the schema follows).

mod common;
use common::*;

use misura_report::{CalibrationProfile, OnewayReport};
use serde_json::{json, Value};

/// The two schemas, by file stem under `schema/`.
const ONEWAY: &str = "oneway";
const CALIBRATION: &str = "calibration";

/// Each fixture with the schema it must satisfy.
const FIXTURES: &[(&str, &str)] = &[
    ("oneway-plain.json", ONEWAY),
    ("oneway-sut.json", ONEWAY),
    ("calibrate-run.json", ONEWAY),
    ("profile.json", CALIBRATION),
];

fn model_round_trip(schema: &str, what: &str, v: &Value) -> Value {
    match schema {
        ONEWAY => round_trip::<OnewayReport>(what, v),
        CALIBRATION => round_trip::<CalibrationProfile>(what, v),
        other => panic!("unknown schema {other}"),
    }
}

#[test]
fn schemas_are_valid_draft_2020_12_documents() {
    for name in [ONEWAY, CALIBRATION] {
        assert_schema_document(name);
    }
}

#[test]
fn every_field_is_described_and_required() {
    for name in [ONEWAY, CALIBRATION] {
        assert_described_and_required(name);
    }
}

/// The profile schema repeats the definitions it shares with the one-way
/// schema (so each file stands alone); they must not drift apart.
#[test]
fn shared_definitions_are_identical() {
    let oneway = load_json(&schema_path(ONEWAY));
    let calibration = load_json(&schema_path(CALIBRATION));
    let defs = calibration["$defs"]
        .as_object()
        .expect("calibration.schema.json has $defs");
    for (name, def) in defs {
        assert_eq!(
            Some(def),
            oneway["$defs"].get(name),
            "$defs/{name} differs between calibration.schema.json and oneway.schema.json"
        );
    }
}

#[test]
fn fixtures_validate() {
    let mut failures = Vec::new();
    for &(file, name) in FIXTURES {
        if let Err(errors) = check(name, &fixture(file)) {
            failures.push(format!(
                "{file} against {name}.schema.json:\n    {}",
                errors.join("\n    ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "fixtures fail their schema:\n  {}",
        failures.join("\n  ")
    );
}

#[test]
fn fixtures_match_the_model() {
    for &(file, name) in FIXTURES {
        let v = fixture(file);
        let back = model_round_trip(name, file, &v);
        if let Some(d) = first_difference("", &v, &back) {
            panic!("{file} changes through the Rust model (fixture vs re-serialised) at {d}");
        }
        // What the model writes (not only what the fixture holds) fits the schema.
        assert_valid(name, &format!("{file} re-serialised from the model"), &back);
    }
}

#[test]
fn fixtures_cover_the_modes() {
    let plain = fixture("oneway-plain.json");
    let sut = fixture("oneway-sut.json");
    let run = fixture("calibrate-run.json");
    assert_eq!(plain["mode"], "oneway");
    assert!(plain["calibration"].is_null() && plain["sut"].is_null());
    assert_eq!(sut["mode"], "oneway");
    assert!(
        sut["calibration"].is_object()
            && sut["sut"].is_object()
            && sut["overall"]["msl"].is_object()
    );
    assert_eq!(run["mode"], "calibrate");
    assert_eq!(run["format"], "misura.calibration-run");
    assert!(run["internal_fit"].is_object());
    assert_eq!(fixture("profile.json")["format"], "misura.calibration");
}

#[test]
fn newer_format_version_fails() {
    for &(file, name) in FIXTURES {
        assert_refuses_other_versions(name, file, &fixture(file));
    }
}

#[test]
fn missing_field_fails() {
    for &(file, name) in FIXTURES {
        assert_refuses_each_field_missing(name, file, &fixture(file));
    }
    let oneway = fixture("oneway-sut.json");
    for pointer in [
        "/config/period_ns",
        "/config/pattern/kind",
        "/host/tuning/cpu",
        "/ports/0/phc_index",
        "/overall/mul/p99_ns",
        "/overall/hardware",
        "/per_size/0/latency/msl",
        "/per_size/0/histogram_kernel/0/upper_ns",
        "/loop_stats/tx_window",
        "/calibration/user/fit/t95",
        "/sut/note",
    ] {
        assert_invalid(
            ONEWAY,
            &format!("oneway-sut.json without {pointer}"),
            &without(&oneway, pointer),
        );
    }
    let profile = fixture("profile.json");
    for pointer in [
        "/user/points/0/std_dev_ns",
        "/link/vlan",
        "/timestamps/sources_used",
    ] {
        assert_invalid(
            CALIBRATION,
            &format!("profile.json without {pointer}"),
            &without(&profile, pointer),
        );
    }
}

#[test]
fn unknown_field_fails() {
    for &(file, name) in FIXTURES {
        let v = fixture(file);
        assert_invalid(
            name,
            &format!("{file} with an extra top-level field"),
            &with(&v, "/extra", json!(1)),
        );
    }
    let oneway = fixture("oneway-sut.json");
    for pointer in [
        "/totals/dropped",
        "/overall/mul/p95_ns",
        "/config/pattern/frames",
        "/sut/user/fit/t99",
    ] {
        assert_invalid(
            ONEWAY,
            &format!("oneway-sut.json with {pointer}"),
            &with(&oneway, pointer, json!(0)),
        );
    }
    let profile = fixture("profile.json");
    assert_invalid(
        CALIBRATION,
        "profile.json with /host/tuning/nice",
        &with(&profile, "/host/tuning/nice", json!(0)),
    );
}

#[test]
fn renamed_field_fails() {
    let oneway = fixture("oneway-sut.json");
    for (pointer, new_key) in [
        ("/per_size", "sizes_results"),
        ("/overall/mul", "mean_user"),
        ("/totals/lost", "loss"),
    ] {
        assert_invalid(
            ONEWAY,
            &format!("oneway-sut.json with {pointer} renamed"),
            &renamed(&oneway, pointer, new_key),
        );
    }
    let profile = fixture("profile.json");
    assert_invalid(
        CALIBRATION,
        "profile.json with user renamed",
        &renamed(&profile, "/user", "amil"),
    );
}

#[test]
fn string_for_number_fails() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "oneway-sut.json",
            ONEWAY,
            &[
                "/config/rate_fps",
                "/config/period_ns",
                "/totals/sent",
                "/overall/mul/mean_ns",
                "/per_size/0/payload_bytes",
                "/per_size/0/wire_time_ns",
                "/sut/byte_time_ns",
                "/calibration/user/alpha_ns",
            ],
        ),
        (
            "calibrate-run.json",
            ONEWAY,
            &["/loop_stats/elapsed_s", "/internal_fit/user/fit/s_b"],
        ),
        (
            "profile.json",
            CALIBRATION,
            &[
                "/rate_fps",
                "/ethertype",
                "/user/alpha_ns",
                "/user/points/0/mean_ns",
            ],
        ),
    ];
    for &(file, name, pointers) in cases {
        let v = fixture(file);
        for &pointer in pointers {
            match name {
                ONEWAY => assert_refuses_string_at::<OnewayReport>(name, file, &v, pointer),
                _ => assert_refuses_string_at::<CalibrationProfile>(name, file, &v, pointer),
            }
        }
    }
}

/// A NaN f64 serialises as null: where the model has a plain number, null fails.
#[test]
fn null_for_required_number_fails() {
    let oneway = fixture("oneway-sut.json");
    for pointer in [
        "/config/rate_fps",
        "/config/offered_load",
        "/per_size/0/wire_time_ns",
        "/loop_stats/achieved_rate_fps",
        "/sut/byte_time_ns",
        "/sut/user/fit/r_squared",
        "/calibration/user/points/0/mean_ns",
        "/overall/mul/mean_ns",
    ] {
        assert_invalid(
            ONEWAY,
            &format!("oneway-sut.json with null at {pointer}"),
            &with(&oneway, pointer, Value::Null),
        );
    }
    let profile = fixture("profile.json");
    for pointer in [
        "/offered_load",
        "/user/beta_ns_per_byte",
        "/user/fit/a_ci95",
    ] {
        assert_invalid(
            CALIBRATION,
            &format!("profile.json with null at {pointer}"),
            &with(&profile, pointer, Value::Null),
        );
    }
}

#[test]
fn out_of_range_values_fail() {
    let oneway = fixture("oneway-sut.json");
    let cases = [
        ("/mode", json!("measure")),
        ("/format", json!("misura.calibration")),
        ("/format", json!("misura.calibration-run")), // with mode "oneway"
        ("/tool", json!("other")),
        ("/started_at", json!("22 Nov 2026")),
        ("/totals/lost", json!(-1)),
        ("/per_size/0/payload_bytes", json!(39)),
        ("/per_size/0/frame_bytes", json!(63)),
        ("/config/sizes/0", json!(12)),
        ("/config/link/rate_bps", json!(0)),
        ("/config/ethertype", json!(0x05ff)),
        ("/config/order", json!("random")),
        ("/config/pattern", json!({ "kind": "burst" })),
        ("/config/pattern", json!({ "kind": "burst", "frames": 0 })),
        ("/config/pattern", json!({ "kind": "uniform" })),
        ("/ports/0/role", json!("both")),
        ("/ports/0/mac", json!("02-6d-73-00-00-01")),
        ("/sut/user_verdict", json!("store-and-forward")),
        ("/sut/user_verdict", json!(null)), // a fit without its verdict
        ("/sut", json!(null)),              // a calibration without the SUT fit
        ("/overall/mul/count", json!(0)),   // count 0 with figures
        ("/overall/mul/std_dev_ns", json!(null)),
        ("/calibration/user/x", json!("bytes")),
        ("/calibration/user/fit/n", json!(2)),
    ];
    for (pointer, value) in cases {
        let v = with(&oneway, pointer, value.clone());
        assert_invalid(
            ONEWAY,
            &format!("oneway-sut.json with {pointer} = {value}"),
            &v,
        );
    }
    let run = fixture("calibrate-run.json");
    assert_invalid(
        ONEWAY,
        "calibrate run with format misura.oneway",
        &with(&run, "/format", json!("misura.oneway")),
    );
    let sut = fixture("oneway-sut.json");
    assert_invalid(
        ONEWAY,
        "calibrate run with a calibration",
        &with(&run, "/calibration", sut["calibration"].clone()),
    );
    let plain = fixture("oneway-plain.json");
    assert_invalid(
        ONEWAY,
        "measurement with an internal fit",
        &with(&plain, "/internal_fit", run["internal_fit"].clone()),
    );
    assert_invalid(
        ONEWAY,
        "measurement with a SUT fit but no calibration",
        &with(&plain, "/sut", sut["sut"].clone()),
    );
    let profile = fixture("profile.json");
    assert_invalid(
        CALIBRATION,
        "profile with format misura.oneway",
        &with(&profile, "/format", json!("misura.oneway")),
    );
    assert_invalid(
        CALIBRATION,
        "profile with an Msl line as user",
        &with(&profile, "/user/x", json!("frame_bytes")),
    );
}

/// Shapes the four fixtures do not contain but the model writes: each is
/// accepted by the schema and by the Rust model, unchanged through the model.
#[test]
fn other_valid_shapes_validate_and_deserialise() {
    let plain = fixture("oneway-plain.json");
    let sut = fixture("oneway-sut.json");
    let empty_summary = json!({
        "count": 0, "min_ns": null, "max_ns": null, "mean_ns": null, "std_dev_ns": null,
        "median_ns": null, "p90_ns": null, "p99_ns": null, "p999_ns": null,
        "mean_minus_min_ns": null, "threshold_ns": null, "over_threshold": 0, "clamped": 0
    });
    let one_value = json!({
        "count": 1, "min_ns": -5, "max_ns": -5, "mean_ns": -5.0, "std_dev_ns": null,
        "median_ns": -5, "p90_ns": -5, "p99_ns": -5, "p999_ns": -5,
        "mean_minus_min_ns": 0.0, "threshold_ns": 30000, "over_threshold": 0, "clamped": 0
    });
    let cases = [
        (
            "burst pattern",
            with(
                &plain,
                "/config/pattern",
                json!({ "kind": "burst", "frames": 8 }),
            ),
        ),
        (
            "poisson pattern",
            with(&plain, "/config/pattern", json!({ "kind": "poisson" })),
        ),
        (
            "blocks order",
            with(&plain, "/config/order", json!("blocks")),
        ),
        (
            "run bounded by duration",
            with_all(
                &plain,
                &[
                    ("/config/count", Value::Null),
                    ("/config/duration_s", json!(2.5)),
                ],
            ),
        ),
        (
            "summary of no values",
            with(&plain, "/overall/mul", empty_summary),
        ),
        (
            "summary of one value",
            with(&plain, "/overall/bul", one_value.clone()),
        ),
        (
            "hardware latency",
            with(&plain, "/overall/hardware", one_value),
        ),
        (
            "interrupted run",
            with_all(
                &plain,
                &[
                    ("/complete", json!(false)),
                    (
                        "/stop_reason",
                        json!("interrupted by signal 2; partial results"),
                    ),
                ],
            ),
        ),
        (
            "frames file",
            with(&plain, "/frames_file", json!("/tmp/frames.csv")),
        ),
        (
            "vlan and phc",
            with_all(
                &plain,
                &[
                    ("/config/link/vlan", json!(true)),
                    ("/ports/1/phc_index", json!(0)),
                ],
            ),
        ),
        (
            "pinned rt loop",
            with_all(
                &plain,
                &[
                    ("/host/tuning/cpu", json!(1)),
                    ("/host/tuning/rt_priority", json!(50)),
                ],
            ),
        ),
        (
            "SUT fit impossible",
            with_all(
                &sut,
                &[
                    ("/sut/user", Value::Null),
                    ("/sut/user_verdict", Value::Null),
                    ("/sut/kernel", Value::Null),
                    ("/sut/kernel_verdict", Value::Null),
                    (
                        "/sut/note",
                        json!("SUT fit over frame length impossible: need at least 3 points"),
                    ),
                ],
            ),
        ),
    ];
    for (what, v) in &cases {
        assert_valid(ONEWAY, what, v);
        let back = model_round_trip(ONEWAY, what, v);
        if let Some(d) = first_difference("", v, &back) {
            panic!("{what} changes through the Rust model at {d}");
        }
    }
    let run = fixture("calibrate-run.json");
    let failed_fit = with(&run, "/internal_fit", Value::Null);
    assert_valid(ONEWAY, "calibrate run whose fit failed", &failed_fit);
    model_round_trip(ONEWAY, "calibrate run whose fit failed", &failed_fit);
    let profile = fixture("profile.json");
    for (what, v) in [
        (
            "profile without kernel line",
            with(&profile, "/kernel", Value::Null),
        ),
        (
            "profile without netns",
            with(&profile, "/netns", Value::Null),
        ),
    ] {
        assert_valid(CALIBRATION, what, &v);
        model_round_trip(CALIBRATION, what, &v);
    }
}
