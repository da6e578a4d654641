//! `schema/host-check.schema.json` against real `misura host check --json`
//! output (`tests/fixtures/host-check-*.json`: one on the plain host, one in
//! a lab namespace with veth ports) and against the Rust model
//! (`misura_report::host::HostCheckReport`), as `schema.rs` does for the
//! one-way results. Regenerate the fixtures with
//! `misura host check --json > crates/report/tests/fixtures/host-check-plain.json` and
//! `misura host check --netns misura-tester --json > .../host-check-lab.json`.

mod common;
use common::*;

use misura_report::host::{HostCheckReport, VerdictCounts};
use serde_json::json;

const FIXTURES: &[&str] = &["host-check-plain.json", "host-check-lab.json"];

const HOST_CHECK: &str = "host-check";

#[test]
fn fixtures_validate() {
    for f in FIXTURES {
        assert_valid(HOST_CHECK, f, &fixture(f));
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
        assert_valid(HOST_CHECK, &format!("{f} re-serialised"), &back);
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
    assert_shares_oneway(HOST_CHECK, &["host", "loop_tuning", "utc_time"]);
}

#[test]
fn the_schema_rejects_what_the_model_cannot_write() {
    let good = fixture("host-check-lab.json");
    let mut bad = good.clone();
    bad["items"][0]["verdict"] = json!("fine");
    assert_invalid(HOST_CHECK, "an unknown verdict", &bad);
    let mut bad = good.clone();
    bad["items"][0].as_object_mut().unwrap().remove("command");
    assert_invalid(HOST_CHECK, "an item without command", &bad);
    let mut bad = good.clone();
    bad["format"] = json!("misura.oneway");
    assert_invalid(HOST_CHECK, "another format", &bad);
    let mut bad = good.clone();
    bad["host"]["interfaces"][0]["extra"] = json!(1);
    assert_invalid(HOST_CHECK, "an unknown interface field", &bad);
    let mut bad = good;
    bad["host"].as_object_mut().unwrap().remove("interfaces");
    assert_invalid(HOST_CHECK, "a host without interfaces", &bad);
}
