//! Real tests: they build namespaces, so they need root (they skip, loudly,
//! without it). Each test has its own short prefix and a `LabGuard`, so nothing
//! is left behind even when an assertion fails.

use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

fn unique_prefix() -> String {
    format!(
        "misura-t{}-{}-",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::SeqCst)
    )
}

/// The real-namespace tests are `#[ignore]`d (listed as skipped, with the
/// reason); run with `--include-ignored` they fail here, naming what is
/// missing, instead of passing without having run.
pub(crate) fn require_lab() {
    assert!(
        ip_path().is_some(),
        "needs `ip` (iproute2): apt-get install iproute2"
    );
    assert!(
        has_net_admin(),
        "needs CAP_NET_ADMIN/CAP_SYS_ADMIN: run the tests as root with --include-ignored"
    );
}

pub(crate) fn guard() -> LabGuard {
    LabGuard::new(Lab::new(&unique_prefix()).expect("valid prefix"))
}

fn ns_exists(ns: &str) -> bool {
    netns_list().expect("ip netns list").iter().any(|n| n == ns)
}

fn sysctl_value(ns: &str, key: &str) -> String {
    ip(
        Kind::Query,
        &["netns", "exec", ns, &sysctl_path(), "-n", key],
    )
    .expect("sysctl")
    .trim()
    .to_string()
}

/// Removes a namespace the test made by hand, even on panic.
struct ForeignNs(String);
impl ForeignNs {
    fn create(name: &str) -> Self {
        ip(Kind::Query, &["netns", "add", name]).expect("ip netns add");
        ForeignNs(name.to_string())
    }
}
impl Drop for ForeignNs {
    fn drop(&mut self) {
        let _ = ip(Kind::Query, &["netns", "del", &self.0]);
    }
}

fn assert_port(l: &Links, name: &str, mac: &str) {
    let p = l
        .get(name)
        .unwrap_or_else(|| panic!("{name} missing: {l:?}"));
    assert!(p.mac_is(mac), "{name} has MAC {:?}, want {mac}", p.address);
    assert!(p.admin_up(), "{name} not up: {:?}", p.flags);
    assert_eq!(p.kind(), Some("veth"), "{name} is not a veth");
}

fn assert_quiet(ns: &str, ifname: &str) {
    assert_eq!(
        sysctl_value(ns, &format!("net.ipv6.conf.{ifname}.disable_ipv6")),
        "1",
        "IPv6 not disabled on {ns}/{ifname}"
    );
    let addrs = ip(
        Kind::Query,
        &["-n", ns, "-6", "addr", "show", "dev", ifname],
    )
    .expect("addr show");
    assert!(
        !addrs.contains("inet6"),
        "{ns}/{ifname} has IPv6 addresses: {addrs}"
    );
}

// --- no privileges needed ---------------------------------------------------

#[test]
fn bad_prefixes_are_rejected() {
    for bad in [
        "",
        "misura",
        "other-",
        "Misura-",
        "misura-UPPER-",
        "misura-a_b-",
        "misura-a/b-",
        "misura-a b-",
        "misura-a.b-",
        "misura-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    ] {
        match Lab::new(bad) {
            Err(LabError::BadPrefix { prefix, .. }) => assert_eq!(prefix, bad),
            other => panic!("{bad:?} accepted: {other:?}"),
        }
    }
    for good in ["misura-", "misura-t1-", "misura-a-0-z-"] {
        assert_eq!(Lab::new(good).expect(good).prefix(), good);
    }
    let l = Lab::new("misura-x-").unwrap();
    assert_eq!(l.tester_ns(), "misura-x-tester");
    assert_eq!(l.sut_ns(), "misura-x-sut");
    assert_eq!(l.host_ns(1), "misura-x-h1");
    assert_eq!(l.host_ns(2), "misura-x-h2");
    assert_eq!(Lab::default_lab().tester_ns(), "misura-tester");
}

#[test]
fn topology_names() {
    for t in [Topology::Direct, Topology::Switch, Topology::Hosts] {
        assert_eq!(t.to_string().parse::<Topology>().unwrap(), t);
        assert_eq!(serde_json::to_string(&t).unwrap(), format!("\"{t}\""));
        assert_eq!(
            serde_json::from_str::<Topology>(&format!("\"{t}\"")).unwrap(),
            t
        );
    }
    assert_eq!("Switch".parse::<Topology>().unwrap(), Topology::Switch);
    assert!("bridge".parse::<Topology>().is_err());
}

#[test]
fn next_steps_name_the_namespaces() {
    let lab = Lab::default_lab();
    let d = lab.next_steps(Topology::Direct);
    assert!(d.contains(
        &"misura calibrate --netns misura-tester --tx p1 --rx p2 --profile cal.json".to_string()
    ));
    assert_eq!(d.last().unwrap(), "misura lab down");
    let s = lab.next_steps(Topology::Switch);
    assert_eq!(
        s[0],
        "misura oneway --netns misura-tester --tx p1 --rx p2 --calibration cal.json"
    );
    let other = Lab::new("misura-x-").unwrap();
    assert_eq!(
        other.next_steps(Topology::Hosts).last().unwrap(),
        "misura lab down --prefix misura-x-"
    );
    assert_eq!(s.last().unwrap(), "misura lab down");
    let h = lab.next_steps(Topology::Hosts);
    assert_eq!(h[0], "ip netns exec misura-h1 ping -c 3 198.18.0.2");
    assert_eq!(h.last().unwrap(), "misura lab down");
}

#[test]
fn error_messages() {
    assert_eq!(
        LabError::NotPermitted.to_string(),
        "building the lab needs CAP_NET_ADMIN: run as root (sudo misura lab up)"
    );
    assert_eq!(
        LabError::IpMissing.to_string(),
        "`ip` (iproute2) not found: apt-get install iproute2"
    );
    let m = LabError::NotOurs {
        netns: "misura-tester".into(),
    }
    .to_string();
    assert!(
        m.contains("misura-tester") && m.contains("ip netns del misura-tester"),
        "{m}"
    );
    let c = LabError::Command {
        cmd: "ip link add x".into(),
        status: Some(2),
        stderr: "boom\n".into(),
    }
    .to_string();
    assert!(
        c.contains("ip link add x") && c.contains("boom") && c.contains('2'),
        "{c}"
    );
}

#[test]
fn rfc3339_rendering() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
}

// --- real namespaces ----------------------------------------------------------

#[test]
#[ignore = "needs root: network namespaces (CAP_NET_ADMIN)"]
fn direct_switch_direct_down() {
    require_lab();
    let g = guard();
    let lab = g.lab();
    let (t, s) = (lab.tester_ns(), lab.sut_ns());

    // Direct.
    let st = lab.up(Topology::Direct).expect("up direct");
    assert_eq!(st.tester, Some(Topology::Direct));
    assert!(!st.hosts);
    assert!(ns_exists(&t) && !ns_exists(&s));
    let tl = links(&t).unwrap();
    assert_port(&tl, PORT_TX, mac::P1);
    assert_port(&tl, PORT_RX, mac::P2);
    assert_eq!(
        tl[PORT_TX].link.as_deref(),
        Some(PORT_RX),
        "p1's peer is p2"
    );
    assert_eq!(
        tl[PORT_RX].link.as_deref(),
        Some(PORT_TX),
        "p2's peer is p1"
    );
    assert!(tl["lo"].admin_up());
    assert_quiet(&t, PORT_TX);
    assert_quiet(&t, PORT_RX);
    let marker = read_marker(&t).expect("marker written");
    assert_eq!(marker.topology, Topology::Direct);
    assert_eq!(marker.prefix, lab.prefix());
    assert_eq!(marker.pid, std::process::id());
    assert_eq!(marker.netns_inode, netns_inode(&t));
    let ns_status = st
        .namespaces
        .iter()
        .find(|n| n.name == t)
        .expect("tester listed");
    assert!(ns_status.ours);
    assert!(
        ns_status
            .interfaces
            .iter()
            .any(|i| i == "p1 02:6d:73:00:00:01 UP"),
        "{:?}",
        ns_status.interfaces
    );
    assert!(!tl.keys().any(|k| k.starts_with('s')));

    // Direct again: a no-op (same interfaces, same marker).
    let marker_text = std::fs::read_to_string(marker_path(&t)).unwrap();
    let st = lab.up(Topology::Direct).expect("up direct again");
    assert_eq!(st.tester, Some(Topology::Direct));
    let tl2 = links(&t).unwrap();
    assert_eq!(tl2[PORT_TX].ifindex, tl[PORT_TX].ifindex);
    assert_eq!(tl2[PORT_RX].ifindex, tl[PORT_RX].ifindex);
    assert_eq!(
        std::fs::read_to_string(marker_path(&t)).unwrap(),
        marker_text
    );

    // Switch.
    let st = lab.up(Topology::Switch).expect("up switch");
    assert_eq!(st.tester, Some(Topology::Switch));
    assert!(ns_exists(&s));
    let tl = links(&t).unwrap();
    let sl = links(&s).unwrap();
    assert_port(&tl, PORT_TX, mac::P1);
    assert_port(&tl, PORT_RX, mac::P2);
    assert_port(&sl, SUT_P1, mac::S1);
    assert_port(&sl, SUT_P2, mac::S2);
    assert_eq!(sl[BRIDGE].kind(), Some("bridge"));
    assert!(sl[BRIDGE].admin_up());
    assert!(sl["lo"].admin_up());
    let data = sl[BRIDGE]
        .linkinfo
        .as_ref()
        .and_then(|i| i.info_data.clone())
        .expect("bridge info");
    assert_eq!(data["stp_state"].as_u64(), Some(0));
    assert_eq!(data["forward_delay"].as_u64(), Some(0));
    let ports: Vec<serde_json::Value> = serde_json::from_str(
        &ip(
            Kind::Query,
            &["-n", &s, "-j", "link", "show", "master", BRIDGE],
        )
        .unwrap(),
    )
    .unwrap();
    let mut names: Vec<&str> = ports.iter().filter_map(|p| p["ifname"].as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, [SUT_P1, SUT_P2]);
    assert!(cross_peers(tl.get(PORT_TX), sl.get(SUT_P1)), "p1 <-> s1");
    assert!(cross_peers(tl.get(PORT_RX), sl.get(SUT_P2)), "p2 <-> s2");
    for i in [SUT_P1, SUT_P2, BRIDGE] {
        assert_quiet(&s, i);
    }
    assert_quiet(&t, PORT_TX);
    assert_eq!(read_marker(&t).unwrap().topology, Topology::Switch);
    assert_eq!(
        read_marker(&t).unwrap().created_unix,
        marker.created_unix,
        "tester kept"
    );
    assert!(read_marker(&s).is_some());

    // Switch again: no-op.
    lab.up(Topology::Switch).expect("up switch again");
    let sl2 = links(&s).unwrap();
    assert_eq!(sl2[BRIDGE].ifindex, sl[BRIDGE].ifindex);
    assert_eq!(sl2[SUT_P1].ifindex, sl[SUT_P1].ifindex);

    // Back to Direct: the SUT goes away.
    let st = lab.up(Topology::Direct).expect("back to direct");
    assert_eq!(st.tester, Some(Topology::Direct));
    assert!(!ns_exists(&s));
    assert!(!marker_path(&s).exists());
    let tl = links(&t).unwrap();
    assert_port(&tl, PORT_TX, mac::P1);
    assert_eq!(tl[PORT_TX].link.as_deref(), Some(PORT_RX));

    // Down.
    let removed = lab.down().expect("down");
    assert_eq!(removed, vec![t.clone()]);
    assert!(!ns_exists(&t));
    assert!(!marker_path(&t).exists());
    let st = lab.status().unwrap();
    assert!(st.namespaces.is_empty() && st.tester.is_none() && !st.hosts);
    assert_eq!(lab.down().expect("down again"), Vec::<String>::new());
}

#[test]
#[ignore = "needs root: network namespaces (CAP_NET_ADMIN)"]
fn hosts_reach_each_other_and_coexist() {
    require_lab();
    let g = guard();
    let lab = g.lab();
    let (h1, h2) = (lab.host_ns(1), lab.host_ns(2));
    let st = lab.up(Topology::Hosts).expect("up hosts");
    assert!(st.hosts);
    assert_eq!(st.tester, None);
    let l1 = links(&h1).unwrap();
    let l2 = links(&h2).unwrap();
    assert_port(&l1, HOST_IF, mac::H1);
    assert_port(&l2, HOST_IF, mac::H2);
    assert!(l1["lo"].admin_up() && l2["lo"].admin_up());
    for (ns, v4, v6) in [(&h1, HOST1_V4, HOST1_V6), (&h2, HOST2_V4, HOST2_V6)] {
        let a = ip(Kind::Query, &["-n", ns, "addr", "show", "dev", HOST_IF]).unwrap();
        assert!(a.contains(&format!("inet {v4}/24")), "{a}");
        assert!(a.contains(&format!("inet6 {v6}/64")), "{a}");
        let line = a
            .lines()
            .find(|l| l.contains(&format!("inet6 {v6}/64")))
            .unwrap();
        assert!(!line.contains("tentative"), "nodad: {a}");
    }
    // Idempotent.
    lab.up(Topology::Hosts).expect("up hosts again");
    assert_eq!(links(&h1).unwrap()[HOST_IF].ifindex, l1[HOST_IF].ifindex);

    match find_program("ping", &["/usr/bin/ping", "/bin/ping"]) {
        Some(ping) => {
            let ping = ping.to_string_lossy().into_owned();
            for dst in [HOST2_V4, HOST2_V6] {
                ip(Kind::Query, &["netns", "exec", &h1, &ping, "-c", "1", "-W", "2", dst])
                    .unwrap_or_else(|e| panic!("ping {dst} from h1: {e}"));
            }
            let neigh = ip(Kind::Query, &["-n", &h1, "neigh", "show", "dev", HOST_IF]).unwrap();
            assert!(neigh.contains(mac::H2), "h1 learned h2's MAC: {neigh}");
        }
        None => eprintln!("NOTE: ping not installed (apt-get install iputils-ping); reachability not tested, addresses were"),
    }

    // Direct coexists with Hosts.
    let st = lab.up(Topology::Direct).expect("direct alongside hosts");
    assert!(st.hosts);
    assert_eq!(st.tester, Some(Topology::Direct));
    assert_eq!(st.namespaces.len(), 3);
    let mut removed = lab.down().expect("down");
    removed.sort();
    let mut want = vec![h1.clone(), h2.clone(), lab.tester_ns()];
    want.sort();
    assert_eq!(removed, want);
    for n in &want {
        assert!(!ns_exists(n), "{n} left behind");
        assert!(!marker_path(n).exists(), "marker for {n} left behind");
    }
}

#[test]
#[ignore = "needs root: network namespaces (CAP_NET_ADMIN)"]
fn foreign_namespace_is_left_alone() {
    require_lab();
    let g = guard();
    let lab = g.lab();
    let t = lab.tester_ns();
    let foreign = ForeignNs::create(&t);

    match lab.up(Topology::Direct) {
        Err(LabError::NotOurs { netns }) => assert_eq!(netns, t),
        other => panic!("expected NotOurs, got {other:?}"),
    }
    match lab.up(Topology::Switch) {
        Err(LabError::NotOurs { netns }) => assert_eq!(netns, t),
        other => panic!("expected NotOurs, got {other:?}"),
    }
    assert!(!ns_exists(&lab.sut_ns()), "nothing half-built");
    // Hosts live in other namespaces and still work.
    lab.up(Topology::Hosts)
        .expect("hosts beside a foreign tester");
    let st = lab.status().unwrap();
    assert_eq!(st.tester, None);
    assert!(st.namespaces.iter().any(|n| n.name == t && !n.ours));

    match lab.down() {
        Err(LabError::NotOurs { netns }) => assert_eq!(netns, t),
        other => panic!("expected NotOurs, got {other:?}"),
    }
    assert!(ns_exists(&t), "foreign namespace must survive down");
    assert!(!marker_path(&t).exists());
    assert!(
        !ns_exists(&lab.host_ns(1)) && !ns_exists(&lab.host_ns(2)),
        "ours still removed"
    );

    drop(foreign);
    assert!(!ns_exists(&t));
    assert_eq!(
        lab.down().expect("down after cleanup"),
        Vec::<String>::new()
    );
}

#[test]
#[ignore = "needs root: network namespaces (CAP_NET_ADMIN)"]
fn replaced_namespace_and_stale_markers() {
    require_lab();
    let g = guard();
    let lab = g.lab();
    let h1 = lab.host_ns(1);

    // A stale marker (namespace gone) disappears silently.
    let stale = Marker {
        netns: h1.clone(),
        topology: Topology::Hosts,
        prefix: lab.prefix().to_string(),
        created_unix: 1,
        created: rfc3339(1),
        pid: 1,
        netns_inode: Some(1),
        shape: None,
    };
    write_marker(&stale).unwrap();
    let st = lab.status().unwrap();
    assert!(st.namespaces.is_empty());
    assert!(!marker_path(&h1).exists());

    // A marker that names a different namespace (someone deleted ours and made
    // their own with the same name) does not make it ours.
    let foreign = ForeignNs::create(&h1);
    write_marker(&stale).unwrap();
    match lab.up(Topology::Hosts) {
        Err(LabError::NotOurs { netns }) => assert_eq!(netns, h1),
        other => panic!("expected NotOurs, got {other:?}"),
    }
    assert!(ns_exists(&h1));
    assert!(!ns_exists(&lab.host_ns(2)), "nothing half-built");
    drop(foreign);
}

#[test]
#[ignore = "needs root: network namespaces (CAP_NET_ADMIN)"]
fn failure_half_way_undoes_everything() {
    require_lab();
    let g = guard();
    let lab = g.lab();
    let all = lab.all_ns();
    let mut succeeded_at = None;
    for n in 0..60 {
        inject_failure_at(Some(n));
        let r = lab.up(Topology::Switch);
        inject_failure_at(None);
        match r {
            Ok(_) => {
                succeeded_at = Some(n);
                break;
            }
            Err(LabError::Command { cmd, stderr, .. }) => {
                assert!(cmd.starts_with("ip "), "{cmd}");
                assert!(stderr.contains("injected"), "{stderr}");
                for ns in &all {
                    assert!(!ns_exists(ns), "step {n} ({cmd}): {ns} left behind");
                    assert!(
                        !marker_path(ns).exists(),
                        "step {n}: marker of {ns} left behind"
                    );
                }
            }
            Err(e) => panic!("step {n}: unexpected error {e}"),
        }
    }
    let n = succeeded_at.expect("up(Switch) eventually succeeds");
    assert!(n > 5, "only {n} changing commands?");
    lab.down().unwrap();

    // Rewiring Direct -> Switch fails: the tester (made by an earlier call) stays.
    lab.up(Topology::Direct).unwrap();
    inject_failure_at(Some(3));
    let r = lab.up(Topology::Switch);
    inject_failure_at(None);
    assert!(matches!(r, Err(LabError::Command { .. })), "{r:?}");
    assert!(ns_exists(&lab.tester_ns()));
    assert!(read_marker(&lab.tester_ns()).is_some());
    assert!(!ns_exists(&lab.sut_ns()));
    // ... and a retry repairs it.
    assert_eq!(
        lab.up(Topology::Switch).unwrap().tester,
        Some(Topology::Switch)
    );
    assert_eq!(
        lab.up(Topology::Direct).unwrap().tester,
        Some(Topology::Direct)
    );
}

#[test]
#[ignore = "needs root: network namespaces (CAP_NET_ADMIN)"]
fn guard_cleans_up_on_panic() {
    require_lab();
    let prefix = unique_prefix();
    let lab = Lab::new(&prefix).unwrap();
    let t = lab.tester_ns();
    let r = std::panic::catch_unwind(move || {
        let g = LabGuard::new(lab);
        g.lab().up(Topology::Direct).unwrap();
        panic!("deliberate");
    });
    assert!(r.is_err());
    assert!(!ns_exists(&t));
    assert!(!marker_path(&t).exists());
}
