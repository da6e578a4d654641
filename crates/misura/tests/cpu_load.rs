//! Host load on record (issue 12): every result's host fingerprint carries
//! the CPUs' busy share over the run, and `--cpu-load N` adds N busy
//! threads whose load shows in it.

#[macro_use]
mod common;

use common::*;
use serde_json::Value;

fn rtt(r: &LocalReflector, extra: &[&str]) -> Value {
    let target = r.target();
    let mut args = vec![
        "--no-store",
        "rtt",
        &target,
        "--count",
        "100",
        "--period",
        "5ms",
        "--cpu",
        "0",
        "--json",
        "-q",
    ];
    args.extend_from_slice(extra);
    json_of(&run(&args))
}

#[test]
fn busy_threads_show_in_the_recorded_host_load() {
    let _one = one_at_a_time();
    let r = LocalReflector::start(20);
    let idle = rtt(&r, &[]);
    schema_check(&idle, "rtt.schema.json");
    let load = &idle["host"]["load"];
    assert_eq!(load["busy_threads"], 0, "{load}");
    assert!(load["window_s"].as_f64().unwrap() > 0.3, "{load}");
    let busy = rtt(&r, &["--cpu-load", "1"]);
    schema_check(&busy, "rtt.schema.json");
    let load = &busy["host"]["load"];
    assert_eq!(load["busy_threads"], 1, "{load}");
    let cpu = load["busy_thread_cpus"][0].as_u64().unwrap();
    if busy["host"]["online_cpus"].as_u64().unwrap() > 1 {
        // The first busy thread goes to the CPU after the measuring one.
        assert_eq!(cpu, 1, "{load}");
    }
    let share = load["cpu_busy"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["cpu"].as_u64() == Some(cpu))
        .and_then(|c| c["busy"].as_f64())
        .unwrap();
    // The thread spins for the whole run: its CPU was busy nearly all of it.
    assert!(share > 0.7, "CPU {cpu} busy {share}: {load}");
    // misura's own CPU time holds the spinning thread's: a whole CPU on a
    // quiet machine; on one that others load (the idle run's CPUs already
    // busy), only the scheduler's share of it, but clearly more than the
    // idle run's own time (it failed at 0.056 on a loaded machine).
    let own = |v: &Value| v["host"]["load"]["process_cpus"].as_f64().unwrap();
    let others = idle["host"]["load"]["mean_busy"].as_f64().unwrap();
    if others < 0.2 {
        assert!(own(&busy) > 0.7, "quiet machine ({others} busy): {load}");
    } else {
        assert!(
            own(&busy) > own(&idle) + 0.02,
            "{} CPUs busy, {} idle ({others} busy): {load}",
            own(&busy),
            own(&idle)
        );
    }
    // The busy thread moves what the user clock sees (wake-ups, sharing);
    // the network RTT, with both hosts' time removed, stays flat.
    let p50 = |v: &Value, k: &str| v["overall"][k]["median_ns"].as_f64().unwrap();
    let (idle_net, busy_net) = (p50(&idle, "network_rtt"), p50(&busy, "network_rtt"));
    assert!(
        (busy_net - idle_net).abs() < 50_000.0,
        "network RTT p50 {idle_net} ns idle, {busy_net} ns with a busy thread"
    );
    assert!(p50(&busy, "user_rtt") >= busy_net && p50(&idle, "user_rtt") >= idle_net);
    let o = run(&["--no-store", "rtt", &r.target(), "--cpu-load", "100000"]);
    assert_eq!(o.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--cpu-load 100000"));
}
