//! Reading the namespaces' state: links, addresses, whether a namespace is
//! ours, and whether each topology is wired as it should be.

use super::*;

#[derive(Clone, Debug, Default, Deserialize)]
pub(super) struct LinkInfo {
    #[serde(default)]
    pub(super) info_kind: Option<String>,
    #[serde(default)]
    pub(super) info_data: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Deserialize)]
pub(super) struct Link {
    pub(super) ifindex: u32,
    pub(super) ifname: String,
    /// Peer name when the veth peer is in the same namespace.
    #[serde(default)]
    pub(super) link: Option<String>,
    #[serde(default)]
    pub(super) link_index: Option<u32>,
    #[serde(default)]
    pub(super) link_netnsid: Option<i64>,
    #[serde(default)]
    pub(super) flags: Vec<String>,
    #[serde(default)]
    pub(super) operstate: Option<String>,
    #[serde(default)]
    pub(super) address: Option<String>,
    #[serde(default)]
    pub(super) master: Option<String>,
    #[serde(default)]
    pub(super) linkinfo: Option<LinkInfo>,
}

impl Link {
    pub(super) fn admin_up(&self) -> bool {
        self.flags.iter().any(|f| f == "UP")
    }
    pub(super) fn kind(&self) -> Option<&str> {
        self.linkinfo.as_ref()?.info_kind.as_deref()
    }
    pub(super) fn mac_is(&self, mac: &str) -> bool {
        self.address
            .as_deref()
            .is_some_and(|a| a.eq_ignore_ascii_case(mac))
    }
}

pub(super) type Links = HashMap<String, Link>;

pub(super) fn links(ns: &str) -> Result<Links, LabError> {
    let out = ip(Kind::Query, &["-n", ns, "-d", "-j", "link", "show"])?;
    let list: Vec<Link> = if out.trim().is_empty() {
        Vec::new()
    } else {
        serde_json::from_str(&out).map_err(|e| LabError::Command {
            cmd: format!("ip -n {ns} -d -j link show"),
            status: Some(0),
            stderr: format!("unexpected output: {e}"),
        })?
    };
    Ok(list.into_iter().map(|l| (l.ifname.clone(), l)).collect())
}

/// Each interface's global addresses in `ns` ("198.18.0.1/24"), empty when
/// they cannot be read.
pub(super) fn addresses(ns: &str) -> HashMap<String, Vec<String>> {
    let out = ip(Kind::Query, &["-n", ns, "-j", "addr", "show"]).unwrap_or_default();
    let list: Vec<AddrIf> = serde_json::from_str(out.trim()).unwrap_or_default();
    list.into_iter()
        .map(|i| {
            let a = i
                .addr_info
                .iter()
                .filter(|a| a.scope.as_deref() == Some("global"))
                .filter_map(|a| Some(format!("{}/{}", a.local.as_ref()?, a.prefixlen?)))
                .collect();
            (i.ifname.unwrap_or_default(), a)
        })
        .collect()
}

pub(super) fn netns_list() -> Result<Vec<String>, LabError> {
    let out = ip(Kind::Query, &["netns", "list"])?;
    Ok(out
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect())
}

#[derive(Clone, Debug)]
pub(super) enum NsState {
    Absent,
    Ours(Marker),
    Foreign,
}

/// Ownership of `name`, cleaning up stale markers on the way.
pub(super) fn ns_state(name: &str, existing: &[String]) -> NsState {
    let exists = existing.iter().any(|n| n == name);
    let marker = read_marker(name);
    if !exists {
        if marker.is_some() || marker_path(name).exists() {
            remove_marker(name);
        }
        return NsState::Absent;
    }
    match marker {
        Some(m) => {
            let current = netns_inode(name);
            match (m.netns_inode, current) {
                (Some(a), Some(b)) if a != b => {
                    // The namespace we made is gone; this one is someone else's.
                    remove_marker(name);
                    NsState::Foreign
                }
                _ => NsState::Ours(m),
            }
        }
        None => NsState::Foreign,
    }
}

pub(super) fn is_direct_wired(t: &Links) -> bool {
    match (t.get(PORT_TX), t.get(PORT_RX)) {
        (Some(a), Some(b)) => {
            a.link.as_deref() == Some(PORT_RX)
                && b.link.as_deref() == Some(PORT_TX)
                && a.kind() == Some("veth")
                && b.kind() == Some("veth")
        }
        _ => false,
    }
}

/// Whether `a` (in one namespace) and `b` (in another) are the two ends of one veth.
pub(super) fn cross_peers(a: Option<&Link>, b: Option<&Link>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            a.kind() == Some("veth")
                && b.kind() == Some("veth")
                && a.link_netnsid.is_some()
                && b.link_netnsid.is_some()
                && a.link_index == Some(b.ifindex)
                && b.link_index == Some(a.ifindex)
        }
        _ => false,
    }
}

pub(super) fn is_switch_wired(t: &Links, s: &Links) -> bool {
    let bridge_ok = s.get(BRIDGE).is_some_and(|b| b.kind() == Some("bridge"));
    let ports_ok = [SUT_P1, SUT_P2].iter().all(|p| {
        s.get(*p)
            .is_some_and(|l| l.master.as_deref() == Some(BRIDGE))
    });
    bridge_ok
        && ports_ok
        && cross_peers(t.get(PORT_TX), s.get(SUT_P1))
        && cross_peers(t.get(PORT_RX), s.get(SUT_P2))
}

pub(super) fn is_hosts_wired(h1: &Links, h2: &Links) -> bool {
    cross_peers(h1.get(HOST_IF), h2.get(HOST_IF))
}
