//! `misura host check` and `misura host tune`: the check on the plain host
//! and inside a lab namespace (its JSON against the schema), the plan,
//! `--apply` then `--revert` on lab veth ports restoring every value it
//! changed, and `--apply` without root. Lab parts need root: a plain
//! `cargo test` lists them as ignored.

mod common;

use common::{
    is_root, json_of, misura_host_read_only, require_root, require_tool, run, schema_check,
    test_home, BIN,
};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// A lab with a unique prefix, taken down on drop.
struct TestLab {
    prefix: String,
    dir: PathBuf,
}

impl TestLab {
    fn up(tag: &str) -> TestLab {
        let prefix = format!("misura-ht{}{}-", std::process::id() % 100_000, tag);
        let dir = std::env::temp_dir().join(format!("misura-ht-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let o = run(&["lab", "up", "--topology", "direct", "--prefix", &prefix]);
        assert!(
            o.status.success(),
            "lab up: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        TestLab { prefix, dir }
    }
    fn tester(&self) -> String {
        format!("{}tester", self.prefix)
    }
}

impl Drop for TestLab {
    fn drop(&mut self) {
        let _ = run(&["lab", "down", "--prefix", &self.prefix]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn item<'a>(v: &'a Value, scope: &str, name: &str) -> &'a Value {
    v["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["scope"] == scope && i["item"] == name)
        .unwrap_or_else(|| panic!("no item {scope} {name}"))
}

#[test]
fn check_on_the_plain_host() {
    let v = json_of(&run(&["host", "check", "--json"]));
    schema_check(&v, "host-check.schema.json");
    assert_eq!(v["format"], "misura.host-check");
    for name in [
        "cpu governor",
        "idle states",
        "SMT",
        "isolated CPUs",
        "preemption model",
        "clocksource",
        "memlock limit",
    ] {
        let i = item(&v, "host", name);
        assert!(!i["state"].as_str().unwrap().is_empty());
    }
    item(&v, "time sync", "kernel clock");
    // A KVM guest whose haltpoll idle driver has polling off is told so.
    let driver = std::fs::read_to_string("/sys/devices/system/cpu/cpuidle/current_driver");
    let poll = std::fs::read_to_string(HALT_POLL_NS);
    if driver.is_ok_and(|d| d.trim() == "haltpoll") && poll.is_ok_and(|p| p.trim() == "0") {
        let i = item(&v, "host", "idle states");
        assert_eq!(i["verdict"], "hurts precision", "{i}");
        assert!(
            i["state"]
                .as_str()
                .unwrap()
                .contains("guest_halt_poll_ns 0"),
            "{i}"
        );
        assert!(i["command"].as_str().unwrap().contains(HALT_POLL_NS), "{i}");
    }
    // The human table says the same, one row per item.
    let o = run(&["host", "check"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("clocksource") && text.contains("why:"),
        "{text}"
    );
}

#[test]
fn an_unknown_interface_is_a_clear_error() {
    let o = run(&["host", "check", "--interface", "misura-nope0"]);
    assert_eq!(o.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&o.stderr).contains("misura-nope0"));
}

#[test]
#[ignore = "needs root: network namespaces"]
fn check_in_the_lab() {
    require_root();
    let lab = TestLab::up("c");
    let v = json_of(&run(&["host", "check", "--netns", &lab.tester(), "--json"]));
    schema_check(&v, "host-check.schema.json");
    assert_eq!(v["interfaces"], serde_json::json!(["p1", "p2"]));
    for p in ["p1", "p2"] {
        assert_eq!(
            item(&v, p, "coalescing")["state"],
            "not supported by driver veth"
        );
        assert_eq!(item(&v, p, "EEE")["verdict"], "n/a");
        assert!(item(&v, p, "link")["state"]
            .as_str()
            .unwrap()
            .contains("Mb/s"));
        assert_eq!(item(&v, p, "PTP clock")["state"], "none");
        // veth's LRO is off: ok, and no "change" that would turn it on.
        assert_eq!(item(&v, p, "lro")["verdict"], "ok");
    }
    for i in v["items"].as_array().unwrap() {
        if i["verdict"] == "ok" {
            assert!(i["command"].is_null(), "an ok row proposes a change: {i}");
        }
    }
    let one = json_of(&run(&[
        "host",
        "check",
        "--netns",
        &lab.tester(),
        "-i",
        "p1",
        "--json",
    ]));
    schema_check(&one, "host-check.schema.json");
    assert_eq!(one["host"]["interfaces"][0]["driver"], "veth");
}

/// The values `host check` shows for a port's offloads.
fn offloads(tester: &str, port: &str) -> Vec<(String, String)> {
    let v = json_of(&run(&[
        "host", "check", "--netns", tester, "-i", port, "--json",
    ]));
    ["gro", "lro", "gso", "tso"]
        .iter()
        .map(|o| {
            (
                o.to_string(),
                item(&v, port, o)["state"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
#[ignore = "needs root: network namespaces and ethtool changes"]
fn apply_then_revert_restores_every_value() {
    require_root();
    let lab = TestLab::up("t");
    let t = lab.tester();
    // Give GRO a value to change too (veth starts with it off).
    let o = Command::new("ip")
        .args(["netns", "exec", &t, "ethtool", "-K", "p1", "gro", "on"])
        .output();
    let gro_on = o.is_ok_and(|o| o.status.success());
    let before = [offloads(&t, "p1"), offloads(&t, "p2")];
    // Host-wide settings (guest halt polling here) stay as they were.
    let halt_poll = || std::fs::read_to_string(HALT_POLL_NS).ok();
    let halt_poll_before = halt_poll();

    // The plan changes nothing.
    let plan = json_of(&run(&[
        "host", "tune", "--netns", &t, "-i", "p1", "-i", "p2", "--json",
    ]));
    assert_eq!(plan["action"], "plan");
    assert_eq!([offloads(&t, "p1"), offloads(&t, "p2")], before);

    let state = lab.dir.join("state.json");
    let state_s = state.to_str().unwrap();
    // The host-wide settings are read-only here: only the lab's ports change.
    let unshare = require_tool("unshare", "apt-get install util-linux");
    let mut apply = vec!["host", "tune", "--netns", t.as_str()];
    apply.extend([
        "-i",
        "p1",
        "-i",
        "p2",
        "--apply",
        "--state-file",
        state_s,
        "--json",
    ]);
    let applied = json_of(
        &misura_host_read_only(&unshare, &apply)
            .output()
            .expect("running misura host tune --apply"),
    );
    let entries = applied["entries"].as_array().unwrap();
    // Coalescing and EEE cannot be changed on veth: skipped, with the reason.
    for p in ["p1", "p2"] {
        for what in ["coalescing", "eee"] {
            let e = entries
                .iter()
                .find(|e| e["scope"] == p && e["item"] == what)
                .unwrap_or_else(|| panic!("no entry for {p} {what}: {applied}"));
            assert_eq!(e["status"], "skipped");
            assert_eq!(e["reason"], "not supported by driver veth");
        }
    }
    let changed: Vec<&Value> = entries.iter().filter(|e| e["status"] == "change").collect();
    assert!(
        changed.iter().all(|e| e["outcome"] == "applied"),
        "{applied}"
    );
    let keys: Vec<String> = changed
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["interface"].as_str().unwrap(),
                e["key"].as_str().unwrap()
            )
        })
        .collect();
    for k in ["p1 gso", "p1 tso", "p2 gso", "p2 tso"] {
        assert!(keys.contains(&k.to_string()), "{k} not changed: {keys:?}");
    }
    if gro_on {
        assert!(keys.contains(&"p1 gro".to_string()), "{keys:?}");
    }
    for port in ["p1", "p2"] {
        assert!(
            offloads(&t, port).iter().all(|(_, s)| s == "off"),
            "{port} after apply: {:?}",
            offloads(&t, port)
        );
    }
    let st: Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(st["format"], "misura.host-tune-state");
    assert_eq!(st["changes"].as_array().unwrap().len(), changed.len());

    // Revert needs no --netns: the state file names it.
    let o = run(&["host", "tune", "--revert", state_s]);
    assert!(
        o.status.success(),
        "revert: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("restored"), "{text}");
    assert_eq!([offloads(&t, "p1"), offloads(&t, "p2")], before);
    assert_eq!(halt_poll(), halt_poll_before);
}

const HALT_POLL_NS: &str = "/sys/module/haltpoll/parameters/guest_halt_poll_ns";

#[test]
fn apply_without_root_is_refused() {
    if !is_root() {
        let o = run(&["host", "tune", "--apply", "-i", "lo"]);
        assert_eq!(o.status.code(), Some(3));
        return;
    }
    // As user nobody, from a copy of the binary in a directory nobody may
    // enter (the build tree may be under a home only root can read).
    use std::os::unix::fs::PermissionsExt;
    let su = require_tool("su", "apt-get install util-linux");
    let dir = test_home().join("nobody");
    std::fs::create_dir_all(&dir).unwrap();
    for d in [test_home(), dir.as_path()] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let bin = dir.join("misura");
    std::fs::copy(BIN, &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let state = dir.join("state.json");
    let cmd = format!(
        "HOME={0} XDG_DATA_HOME={0}/data {1} host tune --apply --interface lo --state-file {2}",
        dir.display(),
        bin.display(),
        state.display()
    );
    let o = Command::new(su)
        .args(["nobody", "-s", "/bin/sh", "-c", &cmd])
        .output()
        .expect("running su");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("needs root"), "{err}");
    assert!(!state.exists());
}
