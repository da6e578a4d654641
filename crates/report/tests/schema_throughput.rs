//! The JSON results of `misura tcp`, `udp` and `rr` (fixtures written by the
//! real tool on the lab hosts topology) validate against their schemas, the
//! schemas' `host` is the one of oneway.schema.json, and the fixtures read
//! back into the Rust model.

use serde_json::Value;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn load(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn fixtures(prefix: &str) -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/throughput");
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with(prefix))
        .map(|p| (p.display().to_string(), load(&p)))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(!v.is_empty(), "no {prefix} fixtures");
    v
}

fn check(schema_file: &str, prefix: &str) -> Vec<Value> {
    let schema = load(&root().join("schema").join(schema_file));
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let mut out = Vec::new();
    for (name, doc) in fixtures(prefix) {
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{name} does not match {schema_file}:\n{}",
            errors.join("\n")
        );
        out.push(doc);
    }
    out
}

#[test]
fn tcp_results_match_the_schema_and_the_model() {
    for d in check("tcp.schema.json", "tcp") {
        assert!(d["throughput_bps"].as_f64().unwrap() > 0.0);
        let r: misura_report::throughput::TcpReport = serde_json::from_value(d).unwrap();
        assert_eq!(r.meta.format, "misura.tcp");
    }
}

#[test]
fn udp_results_match_the_schema_and_the_model() {
    for d in check("udp.schema.json", "udp") {
        let r: misura_report::throughput::UdpReport = serde_json::from_value(d).unwrap();
        assert_eq!(r.meta.format, "misura.udp");
    }
}

#[test]
fn rr_results_match_the_schema_and_the_model() {
    for d in check("rr.schema.json", "rr") {
        assert!(d["transactions_per_s"].as_f64().unwrap() > 0.0);
        let r: misura_report::throughput::RrReport = serde_json::from_value(d).unwrap();
        assert_eq!(r.meta.format, "misura.rr");
    }
}

#[test]
fn host_def_is_the_one_of_oneway() {
    let one = load(&root().join("schema/oneway.schema.json"));
    for f in ["tcp.schema.json", "udp.schema.json", "rr.schema.json"] {
        let s = load(&root().join("schema").join(f));
        assert_eq!(
            s["$defs"]["host"], one["$defs"]["host"],
            "{f}: host differs from oneway.schema.json"
        );
        assert_eq!(
            s["$defs"]["loop_tuning"], one["$defs"]["loop_tuning"],
            "{f}: loop_tuning differs"
        );
    }
}

#[test]
fn a_wrong_headline_type_is_rejected() {
    let schema = load(&root().join("schema/tcp.schema.json"));
    let v = jsonschema::validator_for(&schema).unwrap();
    let (_, mut d) = fixtures("tcp").remove(0);
    d["throughput_bps"] = Value::String("fast".into());
    assert!(!v.is_valid(&d));
}
