//! `misura clock sources | interference | timer` run for real with short
//! durations: exit codes, JSON sanity, and time-sensitive facts with
//! generous bounds (the test machine may be a busy VM). SIGINT: interrupt.rs.

mod common;

use common::{require_root, run};
use serde_json::Value;
use std::time::{Duration, Instant};

fn json_of(args: &[&str]) -> Value {
    let out = run(args);
    assert!(
        out.status.success(),
        "misura {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("misura {args:?} wrote no JSON: {e}"))
}

fn common_fields(v: &Value, format: &str) {
    assert_eq!(v["format"], format);
    assert_eq!(v["complete"], true);
    assert_eq!(v["stop_reason"], "finished");
    assert!(v["host"]["online_cpus"].as_u64().unwrap() >= 1);
    // Warnings are data: a stable code and a sentence that says what to do.
    for w in v["warnings"].as_array().expect("warnings is an array") {
        let code = w["code"].as_str().unwrap_or_else(|| panic!("no code: {w}"));
        assert!(
            code.contains('.')
                && code
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '.' || c == '-'),
            "{code}"
        );
        assert!(!w["text"].as_str().unwrap().is_empty(), "{w}");
    }
    // This command does not pin its loop, so it never warns about that.
    assert!(
        !v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "host.loop-not-pinned")
            || v["format"] == "misura.clock-timer"
            || v["format"] == "misura.clock-interference",
        "{}",
        v["warnings"]
    );
}

#[test]
fn sources_table() {
    let t0 = Instant::now();
    let v = json_of(&["clock", "sources", "--reads", "20000", "--json"]);
    assert!(t0.elapsed() < Duration::from_secs(20));
    common_fields(&v, "misura.clock-sources");
    let rows = v["sources"].as_array().unwrap();
    let row = |n: &str| {
        rows.iter()
            .find(|r| r["name"] == n)
            .unwrap_or_else(|| panic!("no row {n}"))
    };
    for n in [
        "CLOCK_MONOTONIC",
        "CLOCK_MONOTONIC_RAW",
        "CLOCK_MONOTONIC_COARSE",
        "CLOCK_REALTIME",
        "CLOCK_REALTIME_COARSE",
        "CLOCK_TAI",
        "CLOCK_BOOTTIME",
    ] {
        let r = row(n);
        assert_eq!(r["usable"], true, "{n}");
        let med = r["read_cost_median_ns"].as_f64().unwrap();
        assert!(med > 0.0 && med < 100_000.0, "{n}: {med} ns a read");
        assert!(r["read_cost_p99_ns"].as_f64().unwrap() >= med, "{n}");
        assert!(r["reads"].as_u64().unwrap() >= 32, "{n}");
        assert!(!r["good_for"].as_str().unwrap().is_empty());
    }
    // Monotonic clocks never go back.
    for n in ["CLOCK_MONOTONIC", "CLOCK_MONOTONIC_RAW", "CLOCK_BOOTTIME"] {
        assert_eq!(row(n)["monotonicity_violations"], 0, "{n}");
    }
    // A coarse clock repeats itself between ticks; its step is at least its resolution.
    let coarse = row("CLOCK_MONOTONIC_COARSE");
    assert!(coarse["zero_steps"].as_u64().unwrap() > 0);
    if let (Some(step), Some(res)) = (
        coarse["smallest_step_ns"].as_f64(),
        coarse["resolution_ns"].as_f64(),
    ) {
        assert!(step >= res * 0.5, "step {step} vs resolution {res}");
    }
    assert!(row("gettimeofday()")["smallest_step_ns"]
        .as_f64()
        .is_none_or(|s| s >= 1000.0));
    if cfg!(target_arch = "x86_64") {
        let hz = v["tsc"]["measured_hz"].as_f64().unwrap();
        assert!((1e8..1e10).contains(&hz), "TSC at {hz} Hz");
        assert!(row("TSC (RDTSC)")["resolution_ns"].as_f64().unwrap() < 10.0);
    }
    let ptp = v["ptp_clocks"].as_u64().unwrap();
    assert_eq!(
        rows.iter().filter(|r| r["kind"] == "phc").count() as u64,
        ptp
    );
    if ptp == 0 {
        assert!(v["ptp_note"].as_str().unwrap().starts_with("none"));
    }
    // The text form names the same table.
    let text = String::from_utf8(run(&["clock", "sources", "--reads", "1000"]).stdout).unwrap();
    assert!(
        text.contains("CLOCK_MONOTONIC_RAW")
            && text.contains("NIC clocks:")
            && text.contains("kernel clocksource"),
        "{text}"
    );
}

#[test]
fn interference_idle_and_loaded() {
    let v = json_of(&[
        "clock",
        "interference",
        "--duration",
        "300ms",
        "--load",
        "1",
        "--compare",
        "--gaps",
        "4",
        "--json",
    ]);
    common_fields(&v, "misura.clock-interference");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["label"], "idle");
    assert_eq!(runs[1]["label"], "loaded");
    assert_eq!(runs[1]["load_cpus"].as_array().unwrap().len(), 1);
    for r in runs {
        let reads = r["reads"].as_u64().unwrap();
        assert!(reads > 10_000, "only {reads} reads");
        let el = r["elapsed_s"].as_f64().unwrap();
        assert!((0.25..5.0).contains(&el), "run took {el} s");
        assert_eq!(r["backward_steps"], 0);
        // Every step is in the histogram, and the histogram is ordered.
        let hist = r["histogram"].as_array().unwrap();
        let total: u64 = hist.iter().map(|b| b["count"].as_u64().unwrap()).sum();
        assert_eq!(total, r["steps"]["count"].as_u64().unwrap());
        assert!(hist
            .windows(2)
            .all(|w| w[0]["upper_ns"].as_i64() <= w[1]["lower_ns"].as_i64()));
        let gaps = r["longest_gaps"].as_array().unwrap();
        assert!(!gaps.is_empty() && gaps.len() <= 4);
        assert_eq!(gaps[0]["step_ns"], r["steps"]["max_ns"]);
        assert!(gaps
            .windows(2)
            .all(|w| w[0]["step_ns"].as_i64() >= w[1]["step_ns"].as_i64()));
        assert!(gaps
            .iter()
            .all(|g| g["at_ns"].as_i64().unwrap() < 2_000_000_000));
    }
    let tsc = json_of(&[
        "clock",
        "interference",
        "--duration",
        "100ms",
        "--clock",
        "tsc",
        "--json",
    ]);
    if cfg!(target_arch = "x86_64") {
        assert!(tsc["tsc_hz"].as_f64().unwrap() > 1e8);
    }
}

#[test]
fn timer_wakes_up_on_schedule() {
    let v = json_of(&[
        "clock",
        "timer",
        "--duration",
        "500ms",
        "--interval",
        "1ms",
        "--json",
    ]);
    common_fields(&v, "misura.clock-timer");
    let n = v["wakeups"].as_u64().unwrap() + v["missed_periods"].as_u64().unwrap();
    assert!((450..=500).contains(&n), "{n} periods in 500 ms at 1 ms");
    let l = &v["latency"];
    assert!(l["min_ns"].as_i64().unwrap() >= 0, "woke before the target");
    assert!(
        l["median_ns"].as_i64().unwrap() < 5_000_000,
        "median latency {}",
        l["median_ns"]
    );
    let hist: u64 = v["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["count"].as_u64().unwrap())
        .sum();
    assert_eq!(hist, v["wakeups"].as_u64().unwrap());
}

#[test]
#[ignore = "needs root: SCHED_FIFO and locked memory"]
fn timer_with_rt_priority_on_a_pinned_cpu() {
    require_root();
    let f = json_of(&[
        "clock",
        "timer",
        "--duration",
        "200ms",
        "--rt-priority",
        "10",
        "--cpu",
        "0",
        "--json",
    ]);
    assert_eq!(f["host"]["tuning"]["rt_priority"], 10);
    assert_eq!(f["host"]["tuning"]["memory_locked"], true);
    assert_eq!(f["config"]["cpu_dma_latency_us"], 0);
}

#[test]
fn bad_input_is_classified() {
    let code = |args: &[&str]| run(args).status.code();
    assert_eq!(
        code(&["clock", "interference", "--clock", "sundial"]),
        Some(2)
    );
    assert_eq!(code(&["clock", "interference", "--compare"]), Some(2));
    assert_eq!(
        code(&["clock", "timer", "--interval", "5s", "--duration", "1s"]),
        Some(5)
    );
    assert_eq!(code(&["clock", "timer", "--rt-priority", "100"]), Some(2));
    assert_eq!(code(&["clock", "timer", "--duration", "fast"]), Some(2));
    assert_eq!(
        code(&[
            "clock",
            "sources",
            "--export-json",
            "/nonexistent/dir/x.json"
        ]),
        Some(6)
    );
    assert_eq!(
        code(&[
            "clock",
            "interference",
            "--duration",
            "100ms",
            "--cpu",
            "4000"
        ]),
        Some(1)
    );
}

#[test]
fn export_json_writes_the_same_result() {
    let path = std::env::temp_dir().join(format!("misura-clock-timer-{}.json", std::process::id()));
    let p = path.to_str().unwrap();
    let stdout = json_of(&[
        "clock",
        "timer",
        "--duration",
        "50ms",
        "--json",
        "--export-json",
        p,
    ]);
    let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(stdout, file);
    std::fs::remove_file(&path).unwrap();
}
