//! As root: programs named `misura` running inside lab namespaces are found
//! and stopped when `lab up` rewires their namespace or `lab down` deletes
//! it, SIGKILL for one that ignores SIGTERM.

use super::*;
use crate::tests::{guard, require_lab};
use crate::Topology;
use std::process::Child;

/// A copy of `program` named `misura` in a fresh directory (the lab finds
/// processes by that name), removed on drop.
struct Named(std::path::PathBuf);
impl Named {
    fn copy(program: &str) -> Named {
        let dir =
            std::env::temp_dir().join(format!("misura-procs-{}-{program}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let to = dir.join("misura");
        std::fs::copy(format!("/bin/{program}"), &to).expect("copying a program");
        Named(to)
    }
}
impl Drop for Named {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(self.0.parent().unwrap());
    }
}

/// Runs `prog ARGS` in namespace `ns` and waits (up to 5 s) until the lab
/// sees it there.
fn start_in(ns: &str, prog: &Named, args: &[&str]) -> Child {
    let child = Command::new("ip")
        .args(["netns", "exec", ns])
        .arg(&prog.0)
        .args(args)
        .spawn()
        .expect("ip netns exec");
    let end = Instant::now() + Duration::from_secs(5);
    while !misura_in(ns).iter().any(|(p, _)| *p == child.id()) {
        assert!(
            Instant::now() < end,
            "process {} never seen in {ns}",
            child.id()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[test]
#[ignore = "needs root: network namespaces (CAP_NET_ADMIN)"]
fn processes_in_a_rewired_or_removed_namespace_are_stopped_and_named() {
    require_lab();
    let g = guard();
    let lab = g.lab();
    lab.up(Topology::Hosts).unwrap();
    let sleep = Named::copy("sleep");
    let mut server = start_in(&lab.host_ns(2), &sleep, &["60"]);
    // Hosts → routed rewires h2's cable: the "server" there is stopped.
    let st = lab.up(Topology::Routed).unwrap();
    assert_eq!(st.stopped.len(), 1, "{:?}", st.stopped);
    let s = &st.stopped[0];
    assert_eq!(
        (s.pid, s.netns.as_str(), s.ended_by.as_str()),
        (server.id(), lab.host_ns(2).as_str(), "SIGTERM")
    );
    assert!(s.command.ends_with("misura 60"), "{}", s.command);
    assert!(!server.wait().unwrap().success());
    // Up again changes nothing, and stops nothing.
    let mut again = start_in(&lab.router_ns(), &sleep, &["60"]);
    assert!(lab.up(Topology::Routed).unwrap().stopped.is_empty());
    // One that ignores SIGTERM gets SIGKILL when the lab goes down.
    let sh = Named::copy("sh");
    let mut stubborn = start_in(
        &lab.host_ns(1),
        &sh,
        &["-c", "trap '' TERM; while :; do sleep 0.2; done"],
    );
    let t0 = Instant::now();
    let done = lab.take_down().unwrap();
    let by: Vec<(u32, &str)> = done
        .stopped
        .iter()
        .map(|s| (s.pid, s.ended_by.as_str()))
        .collect();
    assert!(by.contains(&(stubborn.id(), "SIGKILL")), "{by:?}");
    assert!(by.contains(&(again.id(), "SIGTERM")), "{by:?}");
    assert!(
        t0.elapsed() < TERM_WAIT + Duration::from_secs(10),
        "{:?}",
        t0.elapsed()
    );
    stubborn.wait().unwrap();
    again.wait().unwrap();
    assert_eq!(done.removed.len(), 3, "{:?}", done.removed);
}
