//! Integration tests on the virtual lab: real frames through veth cables and a
//! Linux bridge, in namespaces each test creates with its own prefix and
//! removes afterwards (also when it fails). Needs root: a plain `cargo test`
//! lists these as ignored. (SIGINT mid-run: interrupt.rs.)

#[macro_use]
mod common;

use common::*;
use serde_json::Value;

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn direct_cable_2000_frames_all_stamped_inside_the_windows() {
    need_root!();
    let lab = Lab::up("it", "d", "direct");
    let csv = lab.path("frames.csv");
    let o = lab.oneway(&[
        "--count",
        "2000",
        "--rate",
        "4000",
        "--sizes",
        "46,512,1500",
        "--frames",
        csv.to_str().unwrap(),
        "--json",
    ]);
    let v = json_of(&o);
    schema_check(&v, "oneway.schema.json");
    assert_eq!(v["complete"], true);
    assert_eq!(v["totals"]["sent"], 2000);
    assert_eq!(v["totals"]["received"], 2000);
    assert_eq!(v["totals"]["lost"], 0);
    assert_eq!(v["timestamps"]["kernel_software_tx"], true);
    assert_eq!(v["timestamps"]["kernel_software_rx"], true);
    assert_eq!(
        v["timestamps"]["hardware_rx"], false,
        "veth has no hardware stamps"
    );

    let (h, rows) = read_csv(&csv);
    for name in [
        "seq",
        "payload_bytes",
        "frame_bytes",
        "tx1_ns",
        "tx2_ns",
        "rx1_ns",
        "rx2_ns",
        "tx_kernel_ns",
        "rx_kernel_ns",
        "tx_hw_ns",
        "rx_hw_ns",
        "lost",
    ] {
        col(&h, name);
    }
    assert_eq!(rows.len(), 2000);
    let (tx1, tx2, rx2) = (col(&h, "tx1_ns"), col(&h, "tx2_ns"), col(&h, "rx2_ns"));
    let (ktx, krx, lost) = (
        col(&h, "tx_kernel_ns"),
        col(&h, "rx_kernel_ns"),
        col(&h, "lost"),
    );
    for r in &rows {
        assert_eq!(r[lost], Some(0));
        let k_tx = r[ktx].expect("every frame has a kernel TX stamp");
        let k_rx = r[krx].expect("every frame has a kernel RX stamp");
        // veth stamps inside the send call, and the receive stamp is taken
        // before recv() returns.
        assert!(
            r[tx1].unwrap() <= k_tx && k_tx <= r[tx2].unwrap(),
            "kernel TX outside the TX window: {r:?}"
        );
        assert!(k_rx <= r[rx2].unwrap(), "kernel RX after RX2: {r:?}");
        assert!(k_rx >= k_tx, "kernel RX before kernel TX: {r:?}");
    }
    // Frame sizes follow the model: 14 + P + 4, at least 64.
    let (p, fb) = (col(&h, "payload_bytes"), col(&h, "frame_bytes"));
    for r in &rows {
        assert_eq!(r[fb].unwrap(), (18 + r[p].unwrap()).max(64));
    }
}

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn the_bridge_adds_kernel_latency() {
    need_root!();
    let lab = Lab::up("it", "s", "direct");
    let direct = json_of(&lab.oneway(&["--count", "1000", "--rate", "4000", "--json"]));
    lab.topology("switch");
    let switch = json_of(&lab.oneway(&["--count", "1000", "--rate", "4000", "--json"]));
    let med = |v: &Value| {
        v["overall"]["kernel"]["median_ns"]
            .as_i64()
            .expect("kernel latency")
    };
    assert_eq!(switch["totals"]["lost"], 0);
    assert!(med(&switch) > 0);
    assert!(
        med(&switch) > med(&direct),
        "bridge kernel latency {} ns not above the direct cable's {} ns",
        med(&switch),
        med(&direct)
    );
}

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn calibration_gives_a_finite_slope_interval_and_a_usable_profile() {
    need_root!();
    let lab = Lab::up("it", "c", "direct");
    let profile = lab.path("cal.json");
    let run_json = lab.path("cal-run.json");
    let o = lab
        .between_ports(
            "calibrate",
            &[
                "--count",
                "1400",
                "--rate",
                "4000",
                "--profile",
                profile.to_str().unwrap(),
                "--export-json",
                run_json.to_str().unwrap(),
            ],
        )
        .output()
        .expect("running misura calibrate");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&run_json).unwrap()).unwrap();
    schema_check(&r, "oneway.schema.json");
    let fit = &r["internal_fit"]["user"]["fit"];
    assert_eq!(fit["n"], 7);
    assert_eq!(fit["dof"], 5);
    let b_ci = fit["b_ci95"].as_f64().unwrap();
    assert!(b_ci.is_finite() && b_ci > 0.0, "β interval {b_ci}");
    assert!(fit["b"].as_f64().unwrap().is_finite());
    let p: Value = serde_json::from_str(&std::fs::read_to_string(&profile).unwrap()).unwrap();
    schema_check(&p, "calibration.schema.json");
    assert_eq!(p["format"], "misura.calibration");

    // The profile applies on the switch: SUT latency and a fit over frame length.
    lab.topology("switch");
    let v = json_of(&lab.oneway(&[
        "--count",
        "700",
        "--rate",
        "4000",
        "--calibration",
        profile.to_str().unwrap(),
        "--json",
    ]));
    schema_check(&v, "oneway.schema.json");
    assert!(v["sut"]["user"]["fit"]["b_ci95"]
        .as_f64()
        .unwrap()
        .is_finite());
    assert!(v["sut"]["user_verdict"].is_string());
    assert_eq!(v["overall"]["msl"]["count"], 700);

    // A profile from another set-up is refused with exit code 7.
    let o = lab.oneway(&[
        "--count",
        "10",
        "--ethertype",
        "0x6006",
        "--calibration",
        profile.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(7),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("another set-up"));
}

#[test]
fn an_unknown_interface_is_named_without_privileges() {
    let o = run(&["oneway", "--tx", "nosuch0", "--rx", "nosuch1"]);
    assert_eq!(
        o.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("nosuch0"));
}

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn bad_input_gets_one_clear_message_and_a_documented_exit_code() {
    need_root!();
    let lab = Lab::up("it", "b", "direct");
    let cases: [(&[&str], i32, &str); 6] = [
        (&["--sizes", "2000"], 5, "MTU"),
        (&["--rate", "50000000"], 5, "more than it carries"),
        (&["--sizes", "12"], 5, "header"),
        (&["--frames", "/nonexistent-dir/x.csv"], 6, "cannot write"),
        (&["--pattern", "bursty"], 2, "unknown pattern"),
        (&["--load", "150%"], 5, "at most 100 %"),
    ];
    for (args, code, text) in cases {
        let o = lab.oneway(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert!(
            err.contains(text),
            "{args:?}: message `{err}` does not mention `{text}`"
        );
    }
    // A namespace that does not exist.
    let o = run(&[
        "oneway",
        "--netns",
        "misura-nonexistent-ns",
        "--tx",
        "p1",
        "--rx",
        "p2",
    ]);
    assert_eq!(o.status.code(), Some(4));
}
