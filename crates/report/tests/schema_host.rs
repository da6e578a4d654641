//! `schema/host-check.schema.json` against real `misura host check --json`
//! output (`tests/fixtures/host-check-*.json`: one on the plain host, one in
//! a lab namespace with veth ports) and against the Rust model
//! (`misura_report::host::HostCheckReport`), as `schema.rs` does for the
//! one-way results. Regenerate the fixtures with
//! `misura host check --json > crates/report/tests/fixtures/host-check-plain.json` and
//! `misura host check --netns misura-tester --json > .../host-check-lab.json`.

use std::path::{Path, PathBuf};

use misura_report::host::{HostCheckReport, VerdictCounts};
use serde_json::{json, Value};

const FIXTURES: &[&str] = &["host-check-plain.json", "host-check-lab.json"];

fn schema_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../schema")
        .join(format!("{name}.schema.json"))
}

fn load(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

fn fixture(file: &str) -> Value {
    load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(file),
    )
}

fn errors(instance: &Value) -> Vec<String> {
    let schema = load(&schema_path("host-check"));
    let v = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("host-check.schema.json compiles");
    v.iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn fixtures_validate() {
    for f in FIXTURES {
        let e = errors(&fixture(f));
        assert!(
            e.is_empty(),
            "{f} fails host-check.schema.json:\n  {}",
            e.join("\n  ")
        );
    }
}

#[test]
fn fixtures_match_the_model() {
    for f in FIXTURES {
        let v = fixture(f);
        let r: HostCheckReport =
            serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert_eq!(
            r.counts,
            VerdictCounts::of(&r.items),
            "{f}: counts disagree with the items"
        );
        let back = serde_json::to_value(&r).unwrap();
        assert_eq!(
            back, v,
            "{f}: the model does not hold every field of the file"
        );
        assert!(errors(&back).is_empty());
    }
}

#[test]
fn the_lab_fixture_reads_veth_honestly() {
    let v = fixture("host-check-lab.json");
    assert!(v["netns"].is_string());
    let items = v["items"].as_array().unwrap();
    let find = |scope: &str, item: &str| {
        items
            .iter()
            .find(|i| i["scope"] == scope && i["item"] == item)
            .unwrap_or_else(|| panic!("no {scope} {item}"))
    };
    for port in ["p1", "p2"] {
        assert_eq!(
            find(port, "coalescing")["state"],
            "not supported by driver veth"
        );
        assert_eq!(find(port, "coalescing")["verdict"], "n/a");
        assert_eq!(find(port, "EEE")["state"], "not supported by driver veth");
    }
    let ifs = v["host"]["interfaces"].as_array().unwrap();
    assert_eq!(ifs.len(), 2);
    assert!(ifs
        .iter()
        .all(|i| i["driver"] == "veth" && i["rx_usecs"].is_null()));
}

#[test]
fn shared_definitions_are_identical() {
    let host = load(&schema_path("host-check"));
    let oneway = load(&schema_path("oneway"));
    for name in ["host", "loop_tuning", "utc_time"] {
        assert_eq!(
            host["$defs"][name], oneway["$defs"][name],
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
            host["properties"][key], oneway["properties"][key],
            "properties/{key} differs"
        );
    }
}

#[test]
fn the_schema_rejects_what_the_model_cannot_write() {
    let good = fixture("host-check-lab.json");
    let mut bad = good.clone();
    bad["items"][0]["verdict"] = json!("fine");
    assert!(!errors(&bad).is_empty(), "an unknown verdict passes");
    let mut bad = good.clone();
    bad["items"][0].as_object_mut().unwrap().remove("command");
    assert!(!errors(&bad).is_empty(), "an item without command passes");
    let mut bad = good.clone();
    bad["format"] = json!("misura.oneway");
    assert!(!errors(&bad).is_empty(), "another format passes");
    let mut bad = good.clone();
    bad["host"]["interfaces"][0]["extra"] = json!(1);
    assert!(
        !errors(&bad).is_empty(),
        "an unknown interface field passes"
    );
    let mut bad = good;
    bad["host"].as_object_mut().unwrap().remove("interfaces");
    assert!(!errors(&bad).is_empty(), "a host without interfaces passes");
}
