//! Building a topology as one transaction: the undo log, the namespaces,
//! cables, bridge, addresses and sysctls, each made only where missing.

use super::*;

pub(super) enum Undo {
    Netns(String),
    Link { ns: String, ifname: String },
}

#[derive(Default)]
pub(super) struct Txn {
    pub(super) undo: Vec<Undo>,
    /// misura processes stopped in namespaces this call deletes or rewires.
    pub(super) stopped: Vec<Stopped>,
}

impl Txn {
    /// Stops the misura processes in `namespaces` before they are deleted
    /// or rewired (module `procs`), remembering them for the status.
    pub(super) fn stop_processes(&mut self, namespaces: &[&str]) {
        for ns in namespaces {
            self.stopped.extend(procs::stop_misura_in(ns));
        }
    }
}

impl Txn {
    pub(super) fn rollback(self) {
        for u in self.undo.into_iter().rev() {
            match u {
                Undo::Link { ns, ifname } => {
                    let _ = ip(Kind::Query, &["-n", &ns, "link", "del", &ifname]);
                }
                Undo::Netns(ns) => {
                    let _ = ip(Kind::Query, &["netns", "del", &ns]);
                    remove_marker(&ns);
                }
            }
        }
    }
}

impl Lab {
    /// Fails with NotOurs if any of `names` exists without our marker.
    pub(super) fn require_not_foreign(
        &self,
        names: &[&str],
    ) -> Result<HashMap<String, NsState>, LabError> {
        let existing = netns_list()?;
        let mut out = HashMap::new();
        for n in names {
            let st = ns_state(n, &existing);
            if matches!(st, NsState::Foreign) {
                return Err(LabError::NotOurs {
                    netns: n.to_string(),
                });
            }
            out.insert(n.to_string(), st);
        }
        Ok(out)
    }

    /// Creates namespace `name` (with marker and lo up) unless it is ours already.
    pub(super) fn ensure_ns(
        &self,
        name: &str,
        st: &NsState,
        topology: Topology,
        txn: &mut Txn,
    ) -> Result<(), LabError> {
        match st {
            NsState::Ours(m) => {
                if m.topology != topology && topology != Topology::Hosts {
                    let mut m = m.clone();
                    m.topology = topology;
                    write_marker(&m)?;
                }
                Ok(())
            }
            NsState::Foreign => Err(LabError::NotOurs {
                netns: name.to_string(),
            }),
            NsState::Absent => {
                ip(Kind::Change, &["netns", "add", name])?;
                txn.undo.push(Undo::Netns(name.to_string()));
                let created_unix = now_unix();
                write_marker(&Marker {
                    netns: name.to_string(),
                    topology,
                    prefix: self.prefix.clone(),
                    created_unix,
                    created: rfc3339(created_unix),
                    pid: std::process::id(),
                    netns_inode: netns_inode(name),
                    shape: None,
                })?;
                Ok(())
            }
        }
    }

    pub(super) fn up_direct(&self, txn: &mut Txn) -> Result<(), LabError> {
        let (t, s) = (self.tester_ns(), self.sut_ns());
        let states = self.require_not_foreign(&[&t, &s])?;
        self.ensure_ns(&t, &states[&t], Topology::Direct, txn)?;
        let tl = links(&t)?;
        if !is_direct_wired(&tl) {
            // Unplug whatever is there (deleting one end removes its peer too).
            txn.stop_processes(&[&t, &s]);
            delete_links(&t, &[PORT_TX, PORT_RX])?;
            ip(
                Kind::Change,
                &[
                    "-n",
                    &t,
                    "link",
                    "add",
                    PORT_TX,
                    "address",
                    mac::P1,
                    "type",
                    "veth",
                    "peer",
                    "name",
                    PORT_RX,
                    "address",
                    mac::P2,
                ],
            )?;
            txn.undo.push(Undo::Link {
                ns: t.clone(),
                ifname: PORT_TX.to_string(),
            });
        }
        if matches!(states[&s], NsState::Ours(_)) {
            txn.stop_processes(&[&s]);
            ip(Kind::Change, &["netns", "del", &s])?;
            remove_marker(&s);
        }
        let tl = links(&t)?;
        configure_port(&t, &tl, PORT_TX, mac::P1, true)?;
        configure_port(&t, &tl, PORT_RX, mac::P2, true)?;
        ensure_up(&t, &tl, "lo")?;
        Ok(())
    }

    pub(super) fn up_switch(&self, txn: &mut Txn) -> Result<(), LabError> {
        let (t, s) = (self.tester_ns(), self.sut_ns());
        let states = self.require_not_foreign(&[&t, &s])?;
        self.ensure_ns(&t, &states[&t], Topology::Switch, txn)?;
        self.ensure_ns(&s, &states[&s], Topology::Switch, txn)?;
        let (tl, sl) = (links(&t)?, links(&s)?);
        if !is_switch_wired(&tl, &sl) {
            txn.stop_processes(&[&t, &s]);
            delete_links(&t, &[PORT_TX, PORT_RX])?;
            delete_links(&s, &[SUT_P1, SUT_P2, BRIDGE])?;
            bridge(&s, "add")?;
            txn.undo.push(Undo::Link {
                ns: s.clone(),
                ifname: BRIDGE.to_string(),
            });
            for (p, pm, q, qm) in [
                (PORT_TX, mac::P1, SUT_P1, mac::S1),
                (PORT_RX, mac::P2, SUT_P2, mac::S2),
            ] {
                ip(
                    Kind::Change,
                    &[
                        "-n", &t, "link", "add", p, "address", pm, "type", "veth", "peer", "name",
                        q, "address", qm, "netns", &s,
                    ],
                )?;
                txn.undo.push(Undo::Link {
                    ns: t.clone(),
                    ifname: p.to_string(),
                });
                ip(
                    Kind::Change,
                    &["-n", &s, "link", "set", q, "master", BRIDGE],
                )?;
            }
        }
        let (tl, sl) = (links(&t)?, links(&s)?);
        // The bridge: no IPv6 (no RS/MLD), STP off, no forward delay.
        ensure_sysctl(&s, &format!("net.ipv6.conf.{BRIDGE}.disable_ipv6"), "1")?;
        if let Some(br) = sl.get(BRIDGE) {
            let data = br.linkinfo.as_ref().and_then(|i| i.info_data.as_ref());
            let num = |k: &str| data.and_then(|d| d.get(k)).and_then(|v| v.as_u64());
            if num("stp_state") != Some(0) || num("forward_delay") != Some(0) {
                bridge(&s, "set")?;
            }
        }
        configure_port(&s, &sl, SUT_P1, mac::S1, true)?;
        configure_port(&s, &sl, SUT_P2, mac::S2, true)?;
        ensure_up(&s, &sl, BRIDGE)?;
        ensure_up(&s, &sl, "lo")?;
        configure_port(&t, &tl, PORT_TX, mac::P1, true)?;
        configure_port(&t, &tl, PORT_RX, mac::P2, true)?;
        ensure_up(&t, &tl, "lo")?;
        Ok(())
    }

    pub(super) fn up_hosts(&self, txn: &mut Txn) -> Result<(), LabError> {
        let (h1, h2) = (self.host_ns(1), self.host_ns(2));
        let states = self.require_not_foreign(&[&h1, &h2])?;
        self.ensure_ns(&h1, &states[&h1], Topology::Hosts, txn)?;
        self.ensure_ns(&h2, &states[&h2], Topology::Hosts, txn)?;
        let (l1, l2) = (links(&h1)?, links(&h2)?);
        if !is_hosts_wired(&l1, &l2) {
            txn.stop_processes(&[&h1, &h2]);
            delete_links(&h1, &[HOST_IF])?;
            delete_links(&h2, &[HOST_IF])?;
            ip(
                Kind::Change,
                &[
                    "-n",
                    &h1,
                    "link",
                    "add",
                    HOST_IF,
                    "address",
                    mac::H1,
                    "type",
                    "veth",
                    "peer",
                    "name",
                    HOST_IF,
                    "address",
                    mac::H2,
                    "netns",
                    &h2,
                ],
            )?;
            txn.undo.push(Undo::Link {
                ns: h1.clone(),
                ifname: HOST_IF.to_string(),
            });
        }
        let (l1, l2) = (links(&h1)?, links(&h2)?);
        for (ns, l, m, v4, v6) in [
            (&h1, &l1, mac::H1, HOST1_V4, HOST1_V6),
            (&h2, &l2, mac::H2, HOST2_V4, HOST2_V6),
        ] {
            configure_port(ns, l, HOST_IF, m, false)?;
            ensure_addrs(ns, HOST_IF, &[(v4, 24, false), (v6, 64, true)])?;
            ensure_up(ns, l, "lo")?;
        }
        self.remove_router(txn)
    }

    /// Rewired from routed to hosts: the router's ports went with the hosts'
    /// old cables, so its namespace is empty; it goes too (issue 36: an
    /// empty `{prefix}r` stayed behind). One without our marker is left.
    fn remove_router(&self, txn: &mut Txn) -> Result<(), LabError> {
        let r = self.router_ns();
        if let NsState::Ours(_) = ns_state(&r, &netns_list()?) {
            txn.stop_processes(&[&r]);
            ip(Kind::Change, &["netns", "del", &r])?;
            remove_marker(&r);
        }
        Ok(())
    }
}

/// Deletes those of `names` that exist in `ns` (re-reading after each, since
/// deleting one veth end removes its peer).
pub(super) fn delete_links(ns: &str, names: &[&str]) -> Result<(), LabError> {
    for n in names {
        if links(ns)?.contains_key(*n) {
            ip(Kind::Change, &["-n", ns, "link", "del", n])?;
        }
    }
    Ok(())
}

pub(super) fn ensure_up(ns: &str, l: &Links, ifname: &str) -> Result<(), LabError> {
    if !l.get(ifname).is_some_and(Link::admin_up) {
        ip(Kind::Change, &["-n", ns, "link", "set", ifname, "up"])?;
    }
    Ok(())
}

/// Quiet-port configuration: IPv6 off (optional), fixed MAC, admin up — in that
/// order, so no link-local address or router solicitation ever appears.
pub(super) fn configure_port(
    ns: &str,
    l: &Links,
    ifname: &str,
    mac: &str,
    no_ipv6: bool,
) -> Result<(), LabError> {
    if no_ipv6 {
        ensure_sysctl(ns, &format!("net.ipv6.conf.{ifname}.disable_ipv6"), "1")?;
    }
    if !l.get(ifname).is_some_and(|x| x.mac_is(mac)) {
        ip(
            Kind::Change,
            &["-n", ns, "link", "set", "dev", ifname, "address", mac],
        )?;
    }
    ensure_up(ns, l, ifname)
}

pub(super) fn ensure_sysctl(ns: &str, key: &str, value: &str) -> Result<(), LabError> {
    let sysctl = sysctl_path();
    let current = ip(Kind::Query, &["netns", "exec", ns, &sysctl, "-n", key])?;
    if current.trim() != value {
        ip(
            Kind::Change,
            &[
                "netns",
                "exec",
                ns,
                &sysctl,
                "-q",
                "-w",
                &format!("{key}={value}"),
            ],
        )?;
    }
    Ok(())
}

#[derive(Deserialize)]
pub(super) struct AddrIf {
    #[serde(default)]
    pub(super) ifname: Option<String>,
    #[serde(default)]
    pub(super) addr_info: Vec<AddrInfo>,
}

#[derive(Deserialize)]
pub(super) struct AddrInfo {
    #[serde(default)]
    pub(super) local: Option<String>,
    #[serde(default)]
    pub(super) prefixlen: Option<u8>,
    #[serde(default)]
    pub(super) scope: Option<String>,
}

/// Adds each (address, prefix length, is_ipv6) to `ifname` unless present.
pub(super) fn ensure_addrs(
    ns: &str,
    ifname: &str,
    addrs: &[(&str, u8, bool)],
) -> Result<(), LabError> {
    let out = ip(
        Kind::Query,
        &["-n", ns, "-j", "addr", "show", "dev", ifname],
    )?;
    let have: Vec<AddrIf> = serde_json::from_str(out.trim()).unwrap_or_default();
    let present: Vec<(String, u8)> = have
        .iter()
        .flat_map(|i| i.addr_info.iter())
        .filter_map(|a| Some((a.local.clone()?, a.prefixlen?)))
        .collect();
    for (addr, len, v6) in addrs {
        if present.iter().any(|(a, l)| a == addr && l == len) {
            continue;
        }
        let cidr = format!("{addr}/{len}");
        let mut args = vec!["-n", ns, "addr", "add", cidr.as_str(), "dev", ifname];
        if *v6 {
            args.push("nodad");
        }
        ip(Kind::Change, &args)?;
    }
    Ok(())
}

/// `ip -n NS link VERB br0 type bridge stp_state 0 forward_delay 0`: the
/// SUT's bridge made (`add`) or set back (`set`) with STP off and no
/// forward delay.
fn bridge(ns: &str, verb: &str) -> Result<String, LabError> {
    let args = [
        "-n",
        ns,
        "link",
        verb,
        BRIDGE,
        "type",
        "bridge",
        "stp_state",
        "0",
        "forward_delay",
        "0",
    ];
    ip(Kind::Change, &args)
}
