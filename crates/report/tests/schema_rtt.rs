//! `schema/rtt.schema.json` against real `misura rtt` result files
//! (`tests/fixtures/rtt-*.json`) and against the Rust model
//! `misura_report::rtt::RttReport`.
//!
//! The same conventions as `tests/schema.rs` (the helpers are shared in
//! `tests/common`): the schema is closed and lists every field
//! as required, so the fixtures pass only while schema, files and model agree
//! field by field; each fixture must come back unchanged through the Rust type,
//! and what the type writes must validate.

mod common;
use common::*;

use misura_report::rtt::RttReport;
use serde_json::{json, Value};

const RTT: &str = "rtt";

/// The fixtures, all written by `misura rtt --json` against `misura reflect`.
/// rtt-small: one 44-byte size, --link-speed 1G (ideal RTT present), a
/// threshold, a reflector without Timestamp Information. rtt-stampsuite: two
/// sizes, link rate unknown (ideal null), Timestamp Information present, an
/// offset with a skew fitted over several windows. rtt-irtt: `misura rtt
/// --peer irtt` against irtt 0.9.0's server (transport "irtt", its `irtt` object).
const FIXTURES: &[&str] = &[
    "rtt-small.json",
    "rtt-stampsuite.json",
    "rtt-hdr.json",
    "rtt-irtt.json",
];

/// Definitions `rtt.schema.json` repeats from `oneway.schema.json`.
const SHARED_DEFS: &[&str] = &[
    "utc_time",
    "summary",
    "bucket",
    "pattern",
    "loop_tuning",
    "host",
];

fn small() -> Value {
    fixture("rtt-small.json")
}

fn suite() -> Value {
    fixture("rtt-stampsuite.json")
}

#[test]
fn schema_is_a_valid_draft_2020_12_document() {
    assert_schema_document(RTT);
}

#[test]
fn every_field_is_described_and_required() {
    assert_described_and_required(RTT);
}

/// The definitions repeated from the one-way schema, and the top-level
/// provenance fields (Meta), must not drift apart.
#[test]
fn shared_definitions_are_identical() {
    assert_shares_oneway(RTT, SHARED_DEFS);
}

#[test]
fn fixtures_validate() {
    let mut failures = Vec::new();
    for &file in FIXTURES {
        if let Err(errors) = check(RTT, &fixture(file)) {
            failures.push(format!("{file}:\n    {}", errors.join("\n    ")));
        }
    }
    assert!(
        failures.is_empty(),
        "fixtures fail rtt.schema.json:\n  {}",
        failures.join("\n  ")
    );
}

#[test]
fn fixtures_match_the_model() {
    for &file in FIXTURES {
        assert_valid_and_modelled::<RttReport>(RTT, file, &fixture(file));
    }
}

#[test]
fn fixtures_cover_the_shapes() {
    let s = small();
    let t = suite();
    for v in [&s, &t] {
        assert_eq!(v["format"], "misura.rtt");
        assert_eq!(v["config"]["transport"], "stamp-udp");
        assert!(v["clock_offset"].is_object());
    }
    assert!(s["per_size"][0]["ideal"].is_object() && s["config"]["link_rate_bps"].is_u64());
    assert!(s["timestamps"]["reflector_rx"].is_null() && s["clock_offset"]["skew_ppm"].is_null());
    assert!(t["per_size"][0]["ideal"].is_null() && t["config"]["link_speed_source"] == "unknown");
    assert!(
        t["timestamps"]["reflector_sync"].is_string() && t["clock_offset"]["skew_ppm"].is_number()
    );
    assert_eq!(t["per_size"].as_array().unwrap().len(), 2);
}

#[test]
fn newer_format_version_fails() {
    for &file in FIXTURES {
        assert_refuses_other_versions(RTT, file, &fixture(file));
    }
}

#[test]
fn missing_field_fails() {
    for &file in FIXTURES {
        assert_refuses_each_field_missing(RTT, file, &fixture(file));
    }
    let s = small();
    for pointer in [
        "/config/transport",
        "/config/interface",
        "/config/response_size",
        "/config/pattern/kind",
        "/timestamps/reflector_sync",
        "/clock_offset/skew_ppm",
        "/totals/icmp_errors",
        "/per_size/0/ideal",
        "/per_size/0/ideal/seed_convention_ns",
        "/per_size/0/latency/network_rtt",
        "/per_size/0/latency/jitter_rfc3550_ns",
        "/per_size/0/histogram_user_rtt/0/count",
        "/overall/user_rtt/p999_ns",
        "/overall/ipdv",
        "/host/tuning/memory_locked",
    ] {
        assert_invalid(
            RTT,
            &format!("rtt-small.json without {pointer}"),
            &without(&s, pointer),
        );
    }
}

#[test]
fn unknown_field_fails() {
    for &file in FIXTURES {
        let v = fixture(file);
        assert_invalid(
            RTT,
            &format!("{file} with an extra top-level field"),
            &with(&v, "/extra", json!(1)),
        );
    }
    let s = small();
    for pointer in [
        "/config/port",
        "/timestamps/client_hw",
        "/clock_offset/drift_ns",
        "/totals/dropped",
        "/per_size/0/ideal/hardware_error_percent",
        "/per_size/0/latency/hardware_rtt",
        "/overall/user_rtt/p95_ns",
        "/config/pattern/frames",
        "/host/tuning/nice",
    ] {
        assert_invalid(
            RTT,
            &format!("rtt-small.json with {pointer}"),
            &with(&s, pointer, json!(0)),
        );
    }
}

#[test]
fn renamed_field_fails() {
    let s = small();
    for (pointer, new_key) in [
        ("/overall/network_rtt", "net_rtt"),
        ("/per_size/0/latency/jitter_rfc3550_ns", "jitter_ns"),
        ("/totals/lost", "loss"),
        ("/config/request_sizes", "sizes"),
    ] {
        assert_invalid(
            RTT,
            &format!("rtt-small.json with {pointer} renamed"),
            &renamed(&s, pointer, new_key),
        );
    }
}

#[test]
fn wrong_type_fails() {
    let s = small();
    // A number written as a string: refused by the schema and by the model.
    for pointer in [
        "/config/period_ns",
        "/config/ssid",
        "/config/link_rate_bps",
        "/config/request_sizes/0",
        "/clock_offset/offset_ns",
        "/totals/sent",
        "/per_size/0/request_bytes",
        "/per_size/0/ideal/physical_ns",
        "/per_size/0/latency/jitter_rfc3550_ns",
        "/overall/user_rtt/mean_ns",
        "/elapsed_s",
    ] {
        assert_refuses_string_at::<RttReport>(RTT, "rtt-small.json", &s, pointer);
    }
    // Other wrong types.
    for (pointer, value) in [
        ("/complete", json!("true")),
        ("/config/authenticated", json!(0)),
        ("/timestamps/reflector_two_step", json!(null)),
        ("/warnings", json!("none")),
        ("/command", json!("misura rtt")),
        ("/per_size", json!({})),
        ("/overall/user_rtt", json!(null)),
        // A fraction where the model has an integer. (5000000.0 would pass:
        // JSON Schema counts a number with a zero fraction as an integer, while
        // serde refuses it for an i64; misura never writes integers that way.)
        ("/config/period_ns", json!(5_000_000.5)),
    ] {
        assert_invalid(
            RTT,
            &format!("rtt-small.json with {pointer} = {value}"),
            &with(&s, pointer, value),
        );
    }
}

/// A NaN f64 serialises as null: where the model has a plain number, null fails.
#[test]
fn null_for_required_number_fails() {
    let s = small();
    for pointer in [
        "/elapsed_s",
        "/clock_offset/offset_ns",
        "/clock_offset/uncertainty_ns",
        "/per_size/0/ideal/physical_ns",
        "/per_size/0/ideal/seed_convention_ns",
        "/config/period_ns",
        "/totals/lost",
        "/overall/user_rtt/mean_ns",
    ] {
        assert_invalid(
            RTT,
            &format!("rtt-small.json with null at {pointer}"),
            &with(&s, pointer, Value::Null),
        );
    }
}

#[test]
fn out_of_range_values_fail() {
    let s = small();
    let t = suite();
    let empty = json!({
        "count": 0, "min_ns": null, "max_ns": null, "mean_ns": null, "std_dev_ns": null,
        "median_ns": null, "p90_ns": null, "p99_ns": null, "p999_ns": null,
        "mean_minus_min_ns": null, "threshold_ns": null, "over_threshold": 0, "clamped": 0
    });
    let cases: Vec<(&str, Value)> = vec![
        ("/format", json!("misura.oneway")),
        ("/tool", json!("other")),
        ("/started_at", json!("22 Nov 2026")),
        ("/complete", json!(false)), // with stop_reason "finished"
        ("/config/transport", json!("udp")),
        ("/config/interface", json!("eth0")), // on stamp-udp
        ("/config/request_sizes/0", json!(43)),
        ("/config/request_sizes/0", json!(65508)),
        ("/config/response_size", json!(20)),
        ("/config/period_ns", json!(0)),
        ("/config/count", json!(0)),
        ("/config/ssid", json!(65536)),
        ("/config/link_rate_bps", json!(0)),
        ("/config/link_rate_bps", json!(null)), // with ideal RTTs and a known source
        ("/config/link_speed_source", json!("guessed")),
        ("/config/pattern", json!({ "kind": "burst" })),
        ("/timestamps/client_tx", json!("hardware")),
        ("/timestamps/reflector_stamps/midpoint", json!(-1)),
        ("/irtt", json!({})),                            // on stamp-udp
        ("/timestamps/reflector_rx", json!("software")), // without reflector_tx and reflector_sync
        ("/timestamps/reflector_tx", json!("software and")),
        ("/timestamps/reflector_rx_methods", json!({ "hardware": 3 })),
        ("/timestamps/reflector_rx_methods", json!({ "software": 0 })),
        ("/clock_offset/uncertainty_ns", json!(-1.0)),
        ("/totals/lost", json!(-1)),
        ("/per_size/0/request_bytes", json!(40)),
        ("/per_size/0/ideal/physical_ns", json!(0.0)),
        ("/per_size/0/latency/kernel_rtt", empty.clone()), // a quantity with no value is null
        ("/per_size/0/latency/forward", json!(null)),      // backward without forward
        ("/per_size/0/latency/ipdv", json!(null)),         // jitter without IPDV
        ("/per_size/0/latency/jitter_rfc3550_ns", json!(-1.0)),
        ("/overall/kernel_rtt", json!(null)), // a network RTT without a kernel RTT
        ("/overall/user_rtt/count", json!(0)), // count 0 with figures
        ("/overall/user_rtt/std_dev_ns", json!(null)),
        ("/per_size/0/histogram_user_rtt/0/count", json!(-1)),
    ];
    for (pointer, value) in cases {
        assert_invalid(
            RTT,
            &format!("rtt-small.json with {pointer} = {value}"),
            &with(&s, pointer, value.clone()),
        );
    }
    assert_invalid(
        RTT,
        "stamp-suite with an ideal RTT but no link rate",
        &with(&t, "/per_size/0/ideal", s["per_size"][0]["ideal"].clone()),
    );
    assert_invalid(
        RTT,
        "stamp-suite with a link rate but source unknown",
        &with(&t, "/config/link_rate_bps", json!(1_000_000_000)),
    );
    assert_invalid(
        RTT,
        "l2-probe without an interface",
        &with(&s, "/config/transport", json!("l2-probe")),
    );
    assert_invalid(
        RTT,
        "authenticated with 44-byte requests",
        &with(&s, "/config/authenticated", json!(true)),
    );
    assert_invalid(
        RTT,
        "an interrupted run marked complete",
        &with(
            &s,
            "/stop_reason",
            json!("interrupted by signal 2; partial results"),
        ),
    );
}

/// Shapes the fixtures do not contain but the model writes: each is accepted
/// by the schema and by `RttReport`, unchanged through the model.
#[test]
fn other_valid_shapes_validate_and_round_trip() {
    let s = small();
    let t = suite();
    let empty = json!({
        "count": 0, "min_ns": null, "max_ns": null, "mean_ns": null, "std_dev_ns": null,
        "median_ns": null, "p90_ns": null, "p99_ns": null, "p999_ns": null,
        "mean_minus_min_ns": null, "threshold_ns": 20000, "over_threshold": 0, "clamped": 0
    });
    let no_one_way = |v: &Value| {
        let mut v = with_all(
            v,
            &[
                ("/clock_offset", Value::Null),
                ("/overall/forward", Value::Null),
                ("/overall/backward", Value::Null),
            ],
        );
        for i in 0..v["per_size"].as_array().unwrap().len() {
            v = with_all(
                &v,
                &[
                    (&format!("/per_size/{i}/latency/forward"), Value::Null),
                    (&format!("/per_size/{i}/latency/backward"), Value::Null),
                ],
            );
        }
        v
    };
    let nothing_back = |p: &str| -> Vec<(String, Value)> {
        vec![
            (format!("{p}/user_rtt"), empty.clone()),
            (format!("{p}/kernel_rtt"), Value::Null),
            (format!("{p}/turnaround"), Value::Null),
            (format!("{p}/network_rtt"), Value::Null),
            (format!("{p}/forward"), Value::Null),
            (format!("{p}/backward"), Value::Null),
            (format!("{p}/jitter_rfc3550_ns"), Value::Null),
            (format!("{p}/ipdv"), Value::Null),
        ]
    };
    let all_lost = {
        let mut changes: Vec<(String, Value)> = nothing_back("/overall");
        changes.extend(nothing_back("/per_size/0/latency"));
        changes.extend([
            ("/clock_offset".to_string(), Value::Null),
            ("/totals/received".to_string(), json!(0)),
            ("/totals/lost".to_string(), json!(5)),
            ("/per_size/0/received".to_string(), json!(0)),
            ("/per_size/0/lost".to_string(), json!(5)),
            ("/per_size/0/histogram_network_rtt".to_string(), json!([])),
            ("/per_size/0/histogram_user_rtt".to_string(), json!([])),
            (
                "/per_size/0/ideal/user_error_percent".to_string(),
                Value::Null,
            ),
            (
                "/per_size/0/ideal/kernel_error_percent".to_string(),
                Value::Null,
            ),
            (
                "/per_size/0/ideal/network_error_percent".to_string(),
                Value::Null,
            ),
        ]);
        let refs: Vec<(&str, Value)> = changes
            .iter()
            .map(|(p, v)| (p.as_str(), v.clone()))
            .collect();
        with_all(&s, &refs)
    };
    let cases: Vec<(&str, Value)> = vec![
        (
            "l2-probe with an interface",
            with_all(
                &s,
                &[
                    ("/config/transport", json!("l2-probe")),
                    ("/config/interface", json!("veth-a")),
                    ("/config/target", json!("02:6d:73:00:00:02")),
                    ("/config/local", json!("veth-a (02:6d:73:00:00:01)")),
                    ("/config/netns", json!("misura-a")),
                    ("/config/link_speed_source", json!("interface veth-a")),
                    ("/host/tuning/netns", json!("misura-a")),
                ],
            ),
        ),
        (
            "authenticated",
            with_all(
                &s,
                &[
                    ("/config/authenticated", json!(true)),
                    ("/config/request_sizes", json!([112])),
                    ("/per_size/0/request_bytes", json!(112)),
                    ("/per_size/0/response_bytes", json!(112)),
                    ("/totals/auth_failed", json!(2)),
                ],
            ),
        ),
        ("clock_offset null (no one-way delays)", no_one_way(&s)),
        (
            "ideal null (link rate unknown)",
            with_all(
                &s,
                &[
                    ("/config/link_rate_bps", Value::Null),
                    ("/config/link_speed_source", json!("unknown")),
                    ("/per_size/0/ideal", Value::Null),
                ],
            ),
        ),
        (
            "interrupted run",
            with_all(
                &t,
                &[
                    ("/complete", json!(false)),
                    (
                        "/stop_reason",
                        json!("interrupted by signal 2; partial results"),
                    ),
                    ("/config/count", Value::Null),
                    ("/config/duration_s", json!(60.0)),
                ],
            ),
        ),
        ("every probe lost", all_lost),
        (
            "reflector with hardware stamps, PTP and follow-ups",
            with_all(
                &t,
                &[
                    ("/timestamps/reflector_rx", json!("NIC hardware")),
                    ("/timestamps/reflector_tx", json!("NIC hardware")),
                    ("/timestamps/reflector_sync", json!("PTP-synchronised")),
                    ("/timestamps/reflector_two_step", json!(true)),
                    ("/totals/follow_ups", json!(30)),
                ],
            ),
        ),
        (
            "a reflector whose NIC stamped some requests and not others",
            with_all(
                &t,
                &[
                    (
                        "/timestamps/reflector_rx",
                        json!("software and NIC hardware"),
                    ),
                    (
                        "/timestamps/reflector_tx",
                        json!("software and NIC hardware"),
                    ),
                    (
                        "/timestamps/reflector_rx_methods",
                        json!({ "software": 21, "NIC hardware": 9 }),
                    ),
                    (
                        "/timestamps/reflector_tx_methods",
                        json!({ "software": 21, "NIC hardware": 9 }),
                    ),
                ],
            ),
        ),
        (
            "client on the user clock",
            with_all(
                &s,
                &[
                    ("/timestamps/client_tx", json!("user clock")),
                    ("/timestamps/client_rx", json!("user clock")),
                ],
            ),
        ),
        (
            "response size, burst pattern, frames file, pinned",
            with_all(
                &t,
                &[
                    ("/config/response_size", json!(512)),
                    ("/config/request_sizes", json!([512, 512])),
                    ("/config/pattern", json!({ "kind": "burst", "frames": 4 })),
                    ("/frames_file", json!("/tmp/probes.csv")),
                    ("/host/tuning/cpu", json!(1)),
                ],
            ),
        ),
        (
            "poisson pattern",
            with(&s, "/config/pattern", json!({ "kind": "poisson" })),
        ),
        (
            "no threshold",
            with(&s, "/config/threshold_ns", Value::Null),
        ),
        (
            "offset from synchronised clocks",
            with(
                &s,
                "/clock_offset/method",
                json!("synchronised clocks (both PTP)"),
            ),
        ),
    ];
    for (what, v) in &cases {
        assert_valid_and_modelled::<RttReport>(RTT, what, v);
    }
}
