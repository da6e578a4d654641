//! The built-in virtual test bench of misura.
//!
//! Everything lives in Linux network namespaces whose names start with the lab's
//! prefix (default `misura-`); interfaces are created directly inside those
//! namespaces (`ip -n NS link add ... netns ...`), so nothing ever appears in the
//! root namespace.
//!
//! * [`Topology::Direct`]: namespace `{prefix}tester` with ports `p1` and `p2`
//!   joined by one veth pair, the "short cable" used for calibration.
//! * [`Topology::Switch`]: `{prefix}tester` with `p1`, `p2`; namespace
//!   `{prefix}sut` with a Linux bridge `br0` (STP off, forward delay 0) whose
//!   ports `s1`, `s2` are cabled to `p1`, `p2`.
//! * [`Topology::Hosts`]: namespaces `{prefix}h1` and `{prefix}h2`, one veth
//!   `m0`–`m0` between them, with addresses from the benchmarking ranges
//!   (198.18.0.0/15, 2001:2::/48).
//! * [`Topology::Routed`]: `{prefix}h1` — router `{prefix}r` — `{prefix}h2`
//!   on two subnets, where `--shape` makes a bottleneck in the middle of the
//!   path (module `routed`).
//!
//! The lab never touches what it did not make: each namespace it creates gets a
//! marker file `/run/misura/lab/<netns>.json` recording, among other things, the
//! namespace's inode, and only namespaces with a matching marker are changed or
//! removed.
//!
//! All work is done by running `ip` (iproute2) and `ip netns exec NS sysctl`
//! (and `tc`, for a switch shaped to a known throughput limit: [`shape`]).
//!
//! The parts: `cmd` runs the tools, `marker` keeps the markers, `state`
//! reads the namespaces, `build` makes a topology as one transaction; the
//! routed and shaped topologies are their own modules.
#![forbid(unsafe_code)]

mod build;
mod cmd;
mod error;
mod marker;
mod procs;
mod routed;
pub mod shape;
mod state;
pub use error::LabError;
pub use procs::Stopped;
pub use routed::{ROUTED_HOST2_V4, ROUTED_HOST2_V6, ROUTER_P1, ROUTER_P2};
pub use shape::{check_shape, shape_of, QdiscCounters, Shape, ShapeError, ShapeStatus};

use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::str::FromStr;
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use build::*;
use cmd::*;
use marker::*;
use state::*;

/// The tester port that transmits test frames.
pub const PORT_TX: &str = "p1";
/// The tester port that receives test frames.
pub const PORT_RX: &str = "p2";
/// IPv4 address of host 1 in the Hosts topology (RFC 2544 benchmarking range).
pub const HOST1_V4: &str = "198.18.0.1";
/// IPv4 address of host 2 in the Hosts topology.
pub const HOST2_V4: &str = "198.18.0.2";
/// IPv6 address of host 1 in the Hosts topology (RFC 5180 benchmarking range).
pub const HOST1_V6: &str = "2001:2::1";
/// IPv6 address of host 2 in the Hosts topology.
pub const HOST2_V6: &str = "2001:2::2";

/// The default namespace prefix.
pub const DEFAULT_PREFIX: &str = "misura-";
/// Where ownership markers are written.
pub const MARKER_DIR: &str = "/run/misura/lab";
/// Longest accepted prefix.
pub const MAX_PREFIX_LEN: usize = 40;

/// Fixed, locally administered MAC addresses (stable across rebuilds so that a
/// calibration profile stays valid).
pub mod mac {
    /// Tester port p1.
    pub const P1: &str = "02:6d:73:00:00:01";
    /// Tester port p2.
    pub const P2: &str = "02:6d:73:00:00:02";
    /// SUT bridge port s1 (cabled to p1).
    pub const S1: &str = "02:6d:73:00:01:01";
    /// SUT bridge port s2 (cabled to p2).
    pub const S2: &str = "02:6d:73:00:01:02";
    /// Host 1's m0.
    pub const H1: &str = "02:6d:73:00:02:01";
    /// Host 2's m0.
    pub const H2: &str = "02:6d:73:00:02:02";
}

const HOST_IF: &str = "m0";
const BRIDGE: &str = "br0";
const SUT_P1: &str = "s1";
const SUT_P2: &str = "s2";
const CMD_TIMEOUT: Duration = Duration::from_secs(30);

/// The shapes the lab can take.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Topology {
    /// p1 and p2 joined by one veth pair (calibration).
    Direct,
    /// p1 and p2 cabled to a Linux bridge in the SUT namespace.
    Switch,
    /// Two hosts with addresses, one cable between them.
    Hosts,
    /// Two hosts on two subnets with a router between them.
    Routed,
}

impl Topology {
    /// The lowercase name ("direct", "switch", "hosts").
    pub fn as_str(self) -> &'static str {
        match self {
            Topology::Direct => "direct",
            Topology::Switch => "switch",
            Topology::Hosts => "hosts",
            Topology::Routed => "routed",
        }
    }
}

impl fmt::Display for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A topology name that is none of "direct", "switch", "hosts".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown topology {0:?}: expected direct, switch or hosts")]
pub struct ParseTopologyError(pub String);

impl FromStr for Topology {
    type Err = ParseTopologyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "direct" => Ok(Topology::Direct),
            "switch" => Ok(Topology::Switch),
            "hosts" => Ok(Topology::Hosts),
            "routed" => Ok(Topology::Routed),
            _ => Err(ParseTopologyError(s.to_string())),
        }
    }
}

/// What `status` reports.
#[derive(Clone, Debug, Serialize)]
pub struct LabStatus {
    /// The lab's namespace prefix.
    pub prefix: String,
    /// Direct or Switch if the tester namespace exists and is ours.
    pub tester: Option<Topology>,
    /// Whether both host namespaces exist and are ours, cabled to each other.
    pub hosts: bool,
    /// Whether the routed topology (h1 — router — h2) is built.
    pub routed: bool,
    /// Every namespace with one of the lab's names that exists.
    pub namespaces: Vec<NamespaceStatus>,
    /// The first of `shapes` (the switch's if it has one), as before
    /// `shapes` existed.
    pub shape: Option<ShapeStatus>,
    /// Every throughput limit in place: on the SUT's port towards p2
    /// (switch), on the router's ports (routed).
    pub shapes: Vec<ShapeStatus>,
    /// misura processes this call stopped because they ran in a namespace
    /// it deleted or rewired (`lab up` over another topology).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stopped: Vec<procs::Stopped>,
}

/// One existing namespace with one of the lab's names.
#[derive(Clone, Debug, Serialize)]
pub struct NamespaceStatus {
    /// Namespace name.
    pub name: String,
    /// Whether the lab created it (marker present and matching).
    pub ours: bool,
    /// "p1 02:6d:73:00:00:01 UP" style lines (name, MAC, operational state).
    pub interfaces: Vec<String>,
}

/// How the lab tester namespace `netns` (`{prefix}tester`) is wired now,
/// `None` when it is not one the lab made: calibration needs the direct
/// cable, not the switch.
pub fn tester_topology(netns: &str) -> Option<Topology> {
    let prefix = netns.strip_suffix("tester")?;
    Lab::new(prefix).ok()?.status().ok()?.tester
}

/// What [`Lab::take_down`] did.
#[derive(Clone, Debug, Serialize)]
pub struct Teardown {
    /// The namespaces removed.
    pub removed: Vec<String>,
    /// The misura processes stopped first, because they ran in one of them.
    pub stopped: Vec<Stopped>,
}

/// A lab: a set of namespaces sharing one prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lab {
    prefix: String,
}

// ---------------------------------------------------------------------------
// The lab
// ---------------------------------------------------------------------------

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Lab {
    /// A lab with the given namespace prefix: must start with "misura-", be at
    /// most 40 characters and use only `a-z`, `0-9` and `-`.
    pub fn new(prefix: &str) -> Result<Lab, LabError> {
        let bad = |reason: &str| LabError::BadPrefix {
            prefix: prefix.to_string(),
            reason: reason.to_string(),
        };
        if !prefix.starts_with(DEFAULT_PREFIX) {
            return Err(bad("must start with \"misura-\""));
        }
        if prefix.len() > MAX_PREFIX_LEN {
            return Err(bad(&format!("longer than {MAX_PREFIX_LEN} characters")));
        }
        if !prefix
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(bad("only a-z, 0-9 and '-' are allowed"));
        }
        Ok(Lab {
            prefix: prefix.to_string(),
        })
    }

    /// The lab with prefix "misura-".
    pub fn default_lab() -> Lab {
        Lab {
            prefix: DEFAULT_PREFIX.to_string(),
        }
    }

    /// The prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// `{prefix}tester`.
    pub fn tester_ns(&self) -> String {
        format!("{}tester", self.prefix)
    }

    /// `{prefix}sut`.
    pub fn sut_ns(&self) -> String {
        format!("{}sut", self.prefix)
    }

    /// `{prefix}h1`, `{prefix}h2`.
    pub fn host_ns(&self, i: u8) -> String {
        format!("{}h{i}", self.prefix)
    }

    fn all_ns(&self) -> [String; 5] {
        [
            self.tester_ns(),
            self.sut_ns(),
            self.host_ns(1),
            self.host_ns(2),
            self.router_ns(),
        ]
    }

    /// Builds (or rewires to) `topology`. Idempotent; on failure, undoes what
    /// this call created and returns the error naming the failing command.
    pub fn up(&self, topology: Topology) -> Result<LabStatus, LabError> {
        preflight()?;
        let mut txn = Txn::default();
        let result = match topology {
            Topology::Direct => self.up_direct(&mut txn),
            Topology::Switch => self.up_switch(&mut txn),
            Topology::Hosts => self.up_hosts(&mut txn),
            Topology::Routed => self.up_routed(&mut txn),
        };
        let stopped = std::mem::take(&mut txn.stopped);
        if let Err(e) = result {
            txn.rollback();
            return Err(e);
        }
        let mut status = self.status()?;
        status.stopped = stopped;
        Ok(status)
    }

    /// Removes this prefix's namespaces that the lab created (and their
    /// markers); returns their names. Namespaces with a lab name but no marker
    /// are left alone and reported as [`LabError::NotOurs`] (after ours are gone).
    pub fn down(&self) -> Result<Vec<String>, LabError> {
        self.take_down().map(|t| t.removed)
    }

    /// [`Lab::down`], first stopping the misura processes running in the
    /// namespaces it removes (module `procs`); says what it removed and
    /// stopped.
    pub fn take_down(&self) -> Result<Teardown, LabError> {
        let existing = netns_list()?;
        let states: Vec<(String, NsState)> = self
            .all_ns()
            .into_iter()
            .map(|n| {
                let st = ns_state(&n, &existing);
                (n, st)
            })
            .collect();
        let (mut removed, mut stopped) = (Vec::new(), Vec::new());
        let mut foreign = None;
        for (name, st) in &states {
            match st {
                NsState::Absent => {}
                NsState::Foreign => {
                    foreign.get_or_insert_with(|| name.clone());
                }
                NsState::Ours(_) => {
                    preflight()?;
                    stopped.extend(procs::stop_misura_in(name));
                    ip(Kind::Change, &["netns", "del", name])?;
                    remove_marker(name);
                    removed.push(name.clone());
                }
            }
        }
        match foreign {
            Some(netns) => Err(LabError::NotOurs { netns }),
            None => Ok(Teardown { removed, stopped }),
        }
    }

    /// What exists now. Needs no privileges except to list interfaces (without
    /// them, `interfaces` stays empty).
    pub fn status(&self) -> Result<LabStatus, LabError> {
        let existing = netns_list()?;
        let mut namespaces = Vec::new();
        let mut states = HashMap::new();
        let mut link_cache: HashMap<String, Links> = HashMap::new();
        for name in self.all_ns() {
            let st = ns_state(&name, &existing);
            if matches!(st, NsState::Absent) {
                states.insert(name, st);
                continue;
            }
            let interfaces = match links(&name) {
                Ok(l) => {
                    let mut v: Vec<&Link> = l.values().collect();
                    v.sort_by_key(|l| l.ifindex);
                    let addrs = addresses(&name);
                    let lines = v
                        .iter()
                        .map(|l| {
                            let mut line = format!(
                                "{} {} {}",
                                l.ifname,
                                l.address.as_deref().unwrap_or("-"),
                                l.operstate.as_deref().unwrap_or("UNKNOWN")
                            );
                            for a in addrs.get(&l.ifname).into_iter().flatten() {
                                line.push(' ');
                                line.push_str(a);
                            }
                            line
                        })
                        .collect();
                    link_cache.insert(name.clone(), l);
                    lines
                }
                Err(LabError::NotPermitted) => Vec::new(),
                Err(e) => return Err(e),
            };
            namespaces.push(NamespaceStatus {
                name: name.clone(),
                ours: matches!(st, NsState::Ours(_)),
                interfaces,
            });
            states.insert(name, st);
        }
        let ours = |n: &str| matches!(states.get(n), Some(NsState::Ours(_)));
        let (t, s) = (self.tester_ns(), self.sut_ns());
        let tester = if ours(&t) {
            let tl = link_cache.get(&t);
            let sl = link_cache.get(&s);
            if tl.is_some_and(is_direct_wired) {
                Some(Topology::Direct)
            } else if ours(&s) && tl.zip(sl).is_some_and(|(a, b)| is_switch_wired(a, b)) {
                Some(Topology::Switch)
            } else {
                // Wiring not (yet) recognisable, e.g. without privileges: trust the marker.
                match states.get(&t) {
                    Some(NsState::Ours(m)) if m.topology != Topology::Hosts => Some(m.topology),
                    _ => Some(Topology::Direct),
                }
            }
        } else {
            None
        };
        let (h1, r, h2) = (self.host_ns(1), self.router_ns(), self.host_ns(2));
        let routed = ours(&h1)
            && ours(&r)
            && ours(&h2)
            && match (link_cache.get(&h1), link_cache.get(&r), link_cache.get(&h2)) {
                (Some(a), Some(b), Some(c)) => routed::is_routed_wired(a, b, c),
                // Without privileges to list links: trust the router's marker.
                _ => {
                    matches!(states.get(&r), Some(NsState::Ours(m)) if m.topology == Topology::Routed)
                }
            };
        // Reading the qdiscs needs privileges: without them, no shape shown.
        let mut shapes = Vec::new();
        if tester == Some(Topology::Switch) {
            shapes.extend(self.shape_on(Topology::Switch).ok().flatten());
        }
        if routed {
            shapes.extend(self.shape_on(Topology::Routed).ok().flatten());
        }
        Ok(LabStatus {
            prefix: self.prefix.clone(),
            tester,
            hosts: ours(&h1) && ours(&h2) && !routed,
            routed,
            namespaces,
            shape: shapes.first().cloned(),
            shapes,
            stopped: Vec::new(),
        })
    }

    /// The exact commands to try next for `topology`; "misura lab down" last.
    pub fn next_steps(&self, topology: Topology) -> Vec<String> {
        let t = self.tester_ns();
        let pf = if self.prefix == DEFAULT_PREFIX {
            String::new()
        } else {
            format!(" --prefix {}", self.prefix)
        };
        let mut v = match topology {
            Topology::Direct => vec![
                format!("misura oneway --netns {t} --tx {PORT_TX} --rx {PORT_RX} --count 2000"),
                format!("misura calibrate --netns {t} --tx {PORT_TX} --rx {PORT_RX} --profile cal.json"),
                format!("misura lab up --topology switch{pf}"),
            ],
            Topology::Switch => vec![
                format!("misura oneway --netns {t} --tx {PORT_TX} --rx {PORT_RX} --calibration cal.json"),
                format!("misura lab up --topology direct{pf}   # back to the cable, to calibrate"),
            ],
            Topology::Hosts => {
                let h1 = self.host_ns(1);
                vec![
                    format!("ip netns exec {h1} ping -c 3 {HOST2_V4}"),
                    format!("ip netns exec {h1} ping -c 3 {HOST2_V6}"),
                ]
            }
            Topology::Routed => {
                let (h1, h2) = (self.host_ns(1), self.host_ns(2));
                vec![
                    format!("ip netns exec {h1} ping -c 3 {ROUTED_HOST2_V4}"),
                    format!("misura serve --netns {h2} &   # and misura reflect --netns {h2} &"),
                    format!("misura rtt {ROUTED_HOST2_V4} --netns {h1}"),
                    format!("misura lab up --topology routed --shape 20M,queue=500K{pf}   # a bloated queue; ,qdisc=fq_codel for a managed one"),
                ]
            }
        };
        v.push(format!("misura lab down{pf}"));
        v
    }
}

/// Brings the lab down when dropped (also when a test panics). Errors are
/// printed to stderr, never raised.
#[derive(Debug)]
pub struct LabGuard {
    lab: Lab,
}

impl LabGuard {
    /// Guards `lab`.
    pub fn new(lab: Lab) -> Self {
        LabGuard { lab }
    }

    /// The guarded lab.
    pub fn lab(&self) -> &Lab {
        &self.lab
    }
}

impl Drop for LabGuard {
    fn drop(&mut self) {
        if let Err(e) = self.lab.down() {
            log::warn!("misura-lab: bringing lab {} down: {e}", self.lab.prefix);
        }
    }
}

#[cfg(test)]
mod tests;
