//! The JSON results of `misura tcp`, `udp` and `rr` (fixtures written by the
//! real tool on the lab hosts topology) validate against their schemas, the
//! schemas' `host` is the one of oneway.schema.json, and the fixtures read
//! back into the Rust model.

mod common;
use common::*;

use serde_json::Value;

/// The fixtures under `tests/fixtures/throughput/` whose names start with
/// `prefix`, by name.
fn fixtures(prefix: &str) -> Vec<(String, Value)> {
    let dir = fixture_path("throughput");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with(prefix))
        .map(|p| (p.display().to_string(), load_json(&p)))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(!v.is_empty(), "no {prefix} fixtures");
    v
}

/// The `name` fixtures, each valid for `name`.schema.json.
fn checked(name: &str) -> Vec<Value> {
    fixtures(name)
        .into_iter()
        .map(|(file, doc)| {
            assert_valid(name, &file, &doc);
            doc
        })
        .collect()
}

#[test]
fn tcp_results_match_the_schema_and_the_model() {
    for d in checked("tcp") {
        assert!(d["throughput_bps"].as_f64().unwrap() > 0.0);
        let r: misura_report::throughput::TcpReport = serde_json::from_value(d).unwrap();
        assert_eq!(r.meta.format, "misura.tcp");
    }
}

#[test]
fn udp_results_match_the_schema_and_the_model() {
    for d in checked("udp") {
        let r: misura_report::throughput::UdpReport = serde_json::from_value(d).unwrap();
        assert_eq!(r.meta.format, "misura.udp");
    }
}

#[test]
fn rr_results_match_the_schema_and_the_model() {
    for d in checked("rr") {
        assert!(d["transactions_per_s"].as_f64().unwrap() > 0.0);
        let r: misura_report::throughput::RrReport = serde_json::from_value(d).unwrap();
        assert_eq!(r.meta.format, "misura.rr");
    }
}

#[test]
fn host_def_is_the_one_of_oneway() {
    for name in ["tcp", "udp", "rr"] {
        assert_same_defs_as_oneway(name, &["host", "loop_tuning"]);
    }
}

#[test]
fn a_wrong_headline_type_is_rejected() {
    let (file, mut d) = fixtures("tcp").remove(0);
    d["throughput_bps"] = Value::String("fast".into());
    assert_invalid("tcp", &format!("{file} with a string throughput"), &d);
}
