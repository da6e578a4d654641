//! Issue 26, items 2 and 3: `lab up` over another topology and `lab down`
//! stop the misura servers running in the namespaces they delete or rewire
//! (and name them), and `--shape` goes to the topology it was asked for,
//! with `lab status` listing every shape and the addresses.

#[macro_use]
mod common;

use common::*;
use std::process::Output;
use std::time::{Duration, Instant};

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Waits (up to 10 s) for the lab's last child to end.
fn ended(lab: &mut Lab) -> bool {
    let c = lab.children.last_mut().unwrap();
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
        if c.try_wait().unwrap().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
#[ignore = "needs root: network namespaces"]
fn rewiring_or_removing_the_lab_stops_its_servers_and_names_them() {
    need_root!();
    let mut lab = Lab::up("rw", "s", "hosts");
    lab.reflector(&[]);
    let pid = lab.children.last().unwrap().id();
    // Hosts -> routed rewires h2: the reflector there is stopped, not stranded.
    let o = lab.bring_up("routed", &[]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!("stopped misura process {pid} in {}", lab.ns(2)))
            && err.contains("reflect"),
        "{err}"
    );
    assert!(
        ended(&mut lab),
        "the reflector still runs after the rewiring"
    );
    // lab down stops a serve in the router's host 2 the same way.
    lab.server(2, "serve");
    std::thread::sleep(Duration::from_millis(500));
    let pid = lab.children.last().unwrap().id();
    let o = run(&["lab", "down", "--prefix", &lab.prefix]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!("stopped misura process {pid}")) && err.contains("serve"),
        "{err}"
    );
    assert!(out.contains("removed:"), "{out}");
    assert!(ended(&mut lab), "serve still runs after lab down");
}

#[test]
#[ignore = "needs root: network namespaces and tc"]
fn a_switch_shape_goes_to_the_switch_even_with_the_router_built() {
    need_root!();
    require_tool("tc", "apt-get install iproute2");
    let lab = Lab::new("rw", "h");
    let o = lab.routed("20M");
    assert!(o.status.success(), "{}", text(&o).1);
    let o = lab.bring_up("switch", &["--shape", "100M"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        out.contains(&format!("shape: tbf on {}sut/s2", lab.prefix)),
        "{out}"
    );
    // Both shapes listed, each where it was asked, and the hosts' addresses.
    assert!(
        out.contains(&format!("shape: tbf on {}r/r2", lab.prefix)),
        "{out}"
    );
    let s = json_of(&run(&["lab", "status", "--json", "--prefix", &lab.prefix]));
    let shapes: Vec<(String, u64)> = s["shapes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["netns"].as_str().unwrap().to_string(),
                x["rate_bps"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shapes,
        vec![
            (format!("{}sut", lab.prefix), 100_000_000),
            (format!("{}r", lab.prefix), 20_000_000)
        ]
    );
    let (out, _) = text(&run(&["lab", "status", "--prefix", &lab.prefix]));
    assert!(
        out.contains("m0 02:6d:73:00:02:01 UP 198.18.0.1/24 2001:2::1/64"),
        "{out}"
    );
    // fq_codel is the router's: refused for the switch before anything changes.
    let o = lab.bring_up("switch", &["--shape", "20M,qdisc=fq_codel"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o).1);
    assert!(text(&o).1.contains("fq_codel applies to --topology routed"));
}

#[test]
#[ignore = "needs root: network namespaces"]
fn calibrate_needs_a_cable_and_no_store_keeps_the_default_profile() {
    need_root!();
    let lab = Lab::up("rw", "c", "switch");
    let o = lab
        .between_ports("calibrate", &["--count", "100"])
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("switch topology") && err.contains("lab up --topology direct"),
        "{err}"
    );
    lab.topology("direct");
    let mut c = lab.between_ports("calibrate", &["--count", "100"]);
    let o = c.arg("--no-store").output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--no-store without --profile"), "{err}");
    let profiles = test_home().join("data/misura/calibration");
    assert!(
        std::fs::read_dir(&profiles).map_or(true, |d| d.count() == 0),
        "a profile was written in {}",
        profiles.display()
    );
}
