//! The result envelope (`misura_report::Envelope`) writes the JSON the
//! results had before it, byte for byte: each stored result of a type that
//! uses it, read through its Rust type and written again, is the file it
//! was; and the stop reason is the sentence it always was.

use std::path::Path;

use misura_report::clock::{InterferenceReport, SourcesReport, TimerReport};
use misura_report::rtt::RttReport;
use misura_report::tsc::TscReport;
use misura_report::StopReason;
use serde::{de::DeserializeOwned, Serialize};

/// `file` read through `T` and written again: the same bytes (`exact`), or
/// (for a file whose numbers an older serializer spelled otherwise) the same
/// keys in the same order with the same values.
fn comes_back<T: Serialize + DeserializeOwned>(file: &str, exact: bool) -> T {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let typed: T = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{file} does not read as its type: {e}"));
    let mut out = Vec::new();
    misura_report::write_json(&typed, &mut out).unwrap();
    let again = String::from_utf8(out).unwrap();
    let keys = |s: &str| -> Vec<String> {
        s.lines()
            .filter_map(|l| l.trim_start().strip_prefix('"'))
            .filter_map(|l| l.split_once("\": ").map(|(k, _)| k.to_string()))
            .collect()
    };
    assert_eq!(
        keys(&again),
        keys(&text),
        "{file}: the keys or their order changed"
    );
    let (a, b): (serde_json::Value, serde_json::Value) = (
        serde_json::from_str(&again).unwrap(),
        serde_json::from_str(&text).unwrap(),
    );
    assert_eq!(a, b, "{file}: a value changed");
    if exact && again != text {
        let at = again
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "{file} changed through its type at line {}: {:?} instead of {:?}",
            at + 1,
            again.lines().nth(at),
            text.lines().nth(at)
        );
    }
    typed
}

#[test]
fn stored_results_come_back_byte_for_byte() {
    let t: TimerReport = comes_back("clock-timer-interrupted.json", true);
    assert!(!t.complete && t.stop_reason.is_interrupted());
    let t: TimerReport = comes_back("clock-timer-plain.json", true);
    assert!(t.stop_reason.is_finished() && t.wakeups > 0);
    comes_back::<TimerReport>("clock-timer-fifo.json", true);
    comes_back::<SourcesReport>("clock-sources.json", true);
    comes_back::<InterferenceReport>("clock-interference-compare.json", true);
    comes_back::<InterferenceReport>("clock-interference-tsc.json", true);
    comes_back::<TscReport>("clock-tsc-ntp.json", false);
    comes_back::<TscReport>("clock-tsc-raw.json", false);
    for f in ["rtt-hdr.json", "rtt-small.json", "rtt-stampsuite.json"] {
        comes_back::<RttReport>(f, true);
    }
}

#[test]
fn an_unknown_stop_reason_still_reads() {
    let r: StopReason = serde_json::from_str("\"the peer went away\"").unwrap();
    assert_eq!(r, StopReason::Other("the peer went away".into()));
    assert_eq!(serde_json::to_string(&r).unwrap(), "\"the peer went away\"");
}
