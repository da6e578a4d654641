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
//! Long: the lab's life cycle (preflight, build, verify the wiring, repair,
//! tear down) is one transaction of `ip` calls over private helpers it shares;
//! the routed and shaped topologies are their own modules.
#![forbid(unsafe_code)]

mod procs;
mod routed;
pub mod shape;
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

/// Everything that can go wrong while building, inspecting or removing the lab.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The process lacks CAP_NET_ADMIN / CAP_SYS_ADMIN.
    #[error("building the lab needs CAP_NET_ADMIN: run as root (sudo misura lab up)")]
    NotPermitted,
    /// `ip` could not be found or started.
    #[error("`ip` (iproute2) not found: apt-get install iproute2")]
    IpMissing,
    /// A namespace with one of the lab's names exists but the lab did not make it.
    #[error(
        "network namespace {netns} exists but was not created by the misura lab; \
         it was left alone. If it is yours to remove, remove it yourself \
         (ip netns del {netns}) and try again"
    )]
    NotOurs {
        /// The namespace's name.
        netns: String,
    },
    /// A command failed.
    #[error("command `{cmd}` failed ({}): {}", status_text(*.status), .stderr.trim())]
    Command {
        /// The command line.
        cmd: String,
        /// Exit status, `None` if killed by a signal or timed out.
        status: Option<i32>,
        /// What it printed on standard error.
        stderr: String,
    },
    /// The namespace prefix is unusable.
    #[error("bad lab prefix {prefix:?}: {reason}")]
    BadPrefix {
        /// The rejected prefix.
        prefix: String,
        /// Why.
        reason: String,
    },
    /// `tc` could not be found.
    #[error("`tc` (iproute2) not found: apt-get install iproute2")]
    TcMissing,
    /// A shape was asked of a lab that is not wired as the switch topology.
    #[error(
        "lab {prefix} is not wired as the {topology} topology, so it has no {topology} port \
         to shape: misura lab up --topology {topology} --shape RATE builds it and shapes it"
    )]
    NotShapeable {
        /// The lab's prefix.
        prefix: String,
        /// The topology whose bottleneck was asked for.
        topology: Topology,
    },
    /// A shape (or a qdisc of it) asked of a topology it does not apply to.
    #[error("{0}")]
    ShapeNotApplicable(String),
    /// The kernel lacks a queueing discipline the shape asks for.
    #[error(
        "this kernel has no {qdisc} queueing discipline (CONFIG_NET_SCH_{config} is not set), so \
         the router cannot run a managed queue; the shape was not applied. A small tbf queue \
         (e.g. --shape 20M,queue=16K: 6.5 ms at 20 Mbit/s) bounds the delay instead, without \
         flow isolation"
    )]
    QdiscMissing {
        /// The qdisc's name.
        qdisc: String,
        /// Its kernel configuration name.
        config: String,
    },
    /// Any other I/O error (marker files, starting processes).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

fn status_text(status: Option<i32>) -> String {
    match status {
        Some(code) => format!("exit status {code}"),
        None => "killed or timed out".to_string(),
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
// Markers
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Marker {
    netns: String,
    topology: Topology,
    prefix: String,
    /// Creation time, seconds since the Unix epoch.
    created_unix: u64,
    /// Creation time, RFC 3339 UTC.
    #[serde(default)]
    created: String,
    pid: u32,
    /// Inode of the namespace (nsfs) when it was created; identifies it even if
    /// someone deletes it and makes another with the same name.
    #[serde(default)]
    netns_inode: Option<u64>,
    /// The SUT's shape as last set (see [`shape`]); the qdisc is the truth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    shape: Option<Shape>,
}

fn marker_path(netns: &str) -> PathBuf {
    Path::new(MARKER_DIR).join(format!("{netns}.json"))
}

fn read_marker(netns: &str) -> Option<Marker> {
    let text = std::fs::read_to_string(marker_path(netns)).ok()?;
    serde_json::from_str(&text).ok()
}

fn write_marker(m: &Marker) -> Result<(), LabError> {
    std::fs::create_dir_all(MARKER_DIR)?;
    let path = marker_path(&m.netns);
    let tmp = Path::new(MARKER_DIR).join(format!(".{}.json.tmp{}", m.netns, std::process::id()));
    let text = serde_json::to_string_pretty(m).map_err(std::io::Error::other)?;
    std::fs::write(&tmp, text + "\n")?;
    std::fs::rename(&tmp, &path)?;
    Ok(())
}

fn remove_marker(netns: &str) {
    let _ = std::fs::remove_file(marker_path(netns));
}

fn netns_inode(netns: &str) -> Option<u64> {
    for dir in ["/run/netns", "/var/run/netns"] {
        if let Ok(md) = std::fs::metadata(Path::new(dir).join(netns)) {
            return Some(md.ino());
        }
    }
    None
}

/// RFC 3339 UTC rendering of a Unix time (civil-from-days, Howard Hinnant).
fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

// ---------------------------------------------------------------------------
// Running commands
// ---------------------------------------------------------------------------

fn find_program(name: &str, fallbacks: &[&str]) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    fallbacks.iter().map(PathBuf::from).find(|p| p.is_file())
}

fn ip_path() -> Option<&'static Path> {
    static IP: OnceLock<Option<PathBuf>> = OnceLock::new();
    IP.get_or_init(|| {
        find_program(
            "ip",
            &["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"],
        )
    })
    .as_deref()
}

fn sysctl_path() -> String {
    static SYSCTL: OnceLock<String> = OnceLock::new();
    SYSCTL
        .get_or_init(|| {
            find_program(
                "sysctl",
                &["/usr/sbin/sysctl", "/sbin/sysctl", "/usr/bin/sysctl"],
            )
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sysctl".to_string())
        })
        .clone()
}

#[cfg(test)]
thread_local! {
    /// Fault injection for tests: fail the n-th (0-based) mutating command of this thread.
    static FAIL_AT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    static MUTATIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
fn inject_failure_at(n: Option<usize>) {
    FAIL_AT.with(|f| f.set(n));
    MUTATIONS.with(|m| m.set(0));
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum Kind {
    Query,
    Change,
}

/// Runs `ip ARGS`, returns stdout. Bounded by [`CMD_TIMEOUT`].
fn ip(kind: Kind, args: &[&str]) -> Result<String, LabError> {
    let prog = ip_path().ok_or(LabError::IpMissing)?;
    let cmd_text = format!("ip {}", args.join(" "));
    #[cfg(test)]
    if kind == Kind::Change {
        let n = MUTATIONS.with(|m| {
            let n = m.get();
            m.set(n + 1);
            n
        });
        if FAIL_AT.with(|f| f.get()) == Some(n) {
            return Err(LabError::Command {
                cmd: cmd_text,
                status: Some(1),
                stderr: "injected failure (test)".to_string(),
            });
        }
    }
    let _ = kind;
    let mut child = match Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(LabError::IpMissing),
        Err(e) => return Err(LabError::Io(e)),
    };
    let mut out_pipe = child.stdout.take();
    let mut err_pipe = child.stderr.take();
    let out_thread = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = out_pipe.as_mut() {
            let _ = p.read_to_string(&mut s);
        }
        s
    });
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = err_pipe.as_mut() {
            let _ = p.read_to_string(&mut s);
        }
        s
    });
    let deadline = Instant::now() + CMD_TIMEOUT;
    let mut nap = Duration::from_micros(200);
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break Some(st);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    };
    let stdout = out_thread.join().unwrap_or_default();
    let mut stderr = err_thread.join().unwrap_or_default();
    match status {
        Some(st) if st.success() => Ok(stdout),
        other => {
            if stderr.contains("Operation not permitted") {
                return Err(LabError::NotPermitted);
            }
            if other.is_none() {
                stderr = format!("timed out after {} s; {stderr}", CMD_TIMEOUT.as_secs());
            }
            Err(LabError::Command {
                cmd: cmd_text,
                status: other.and_then(|s| s.code()),
                stderr,
            })
        }
    }
}

/// Whether this process has CAP_NET_ADMIN (12) and CAP_SYS_ADMIN (21), from
/// `/proc/self/status`.
fn has_net_admin() -> bool {
    let Ok(text) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    for line in text.lines() {
        if let Some(hex) = line.strip_prefix("CapEff:") {
            if let Ok(bits) = u64::from_str_radix(hex.trim(), 16) {
                return bits & (1 << 12) != 0 && bits & (1 << 21) != 0;
            }
        }
    }
    false
}

fn preflight() -> Result<(), LabError> {
    if ip_path().is_none() {
        return Err(LabError::IpMissing);
    }
    if !has_net_admin() {
        return Err(LabError::NotPermitted);
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Reading state
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, Default, Deserialize)]
struct LinkInfo {
    #[serde(default)]
    info_kind: Option<String>,
    #[serde(default)]
    info_data: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Deserialize)]
struct Link {
    ifindex: u32,
    ifname: String,
    /// Peer name when the veth peer is in the same namespace.
    #[serde(default)]
    link: Option<String>,
    #[serde(default)]
    link_index: Option<u32>,
    #[serde(default)]
    link_netnsid: Option<i64>,
    #[serde(default)]
    flags: Vec<String>,
    #[serde(default)]
    operstate: Option<String>,
    #[serde(default)]
    address: Option<String>,
    #[serde(default)]
    master: Option<String>,
    #[serde(default)]
    linkinfo: Option<LinkInfo>,
}

impl Link {
    fn admin_up(&self) -> bool {
        self.flags.iter().any(|f| f == "UP")
    }
    fn kind(&self) -> Option<&str> {
        self.linkinfo.as_ref()?.info_kind.as_deref()
    }
    fn mac_is(&self, mac: &str) -> bool {
        self.address
            .as_deref()
            .is_some_and(|a| a.eq_ignore_ascii_case(mac))
    }
}

type Links = HashMap<String, Link>;

fn links(ns: &str) -> Result<Links, LabError> {
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
fn addresses(ns: &str) -> HashMap<String, Vec<String>> {
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

fn netns_list() -> Result<Vec<String>, LabError> {
    let out = ip(Kind::Query, &["netns", "list"])?;
    Ok(out
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect())
}

#[derive(Clone, Debug)]
enum NsState {
    Absent,
    Ours(Marker),
    Foreign,
}

/// Ownership of `name`, cleaning up stale markers on the way.
fn ns_state(name: &str, existing: &[String]) -> NsState {
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

fn is_direct_wired(t: &Links) -> bool {
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
fn cross_peers(a: Option<&Link>, b: Option<&Link>) -> bool {
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

fn is_switch_wired(t: &Links, s: &Links) -> bool {
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

fn is_hosts_wired(h1: &Links, h2: &Links) -> bool {
    cross_peers(h1.get(HOST_IF), h2.get(HOST_IF))
}

// ---------------------------------------------------------------------------
// Undo log for `up`
// ---------------------------------------------------------------------------

enum Undo {
    Netns(String),
    Link { ns: String, ifname: String },
}

#[derive(Default)]
struct Txn {
    undo: Vec<Undo>,
    /// misura processes stopped in namespaces this call deletes or rewires.
    stopped: Vec<Stopped>,
}

impl Txn {
    /// Stops the misura processes in `namespaces` before they are deleted
    /// or rewired (module `procs`), remembering them for the status.
    fn stop_processes(&mut self, namespaces: &[&str]) {
        for ns in namespaces {
            self.stopped.extend(procs::stop_misura_in(ns));
        }
    }
}

impl Txn {
    fn rollback(self) {
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

    // --- building blocks -------------------------------------------------

    /// Fails with NotOurs if any of `names` exists without our marker.
    fn require_not_foreign(&self, names: &[&str]) -> Result<HashMap<String, NsState>, LabError> {
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
    fn ensure_ns(
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

    fn up_direct(&self, txn: &mut Txn) -> Result<(), LabError> {
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

    fn up_switch(&self, txn: &mut Txn) -> Result<(), LabError> {
        let (t, s) = (self.tester_ns(), self.sut_ns());
        let states = self.require_not_foreign(&[&t, &s])?;
        self.ensure_ns(&t, &states[&t], Topology::Switch, txn)?;
        self.ensure_ns(&s, &states[&s], Topology::Switch, txn)?;
        let (tl, sl) = (links(&t)?, links(&s)?);
        if !is_switch_wired(&tl, &sl) {
            txn.stop_processes(&[&t, &s]);
            delete_links(&t, &[PORT_TX, PORT_RX])?;
            delete_links(&s, &[SUT_P1, SUT_P2, BRIDGE])?;
            ip(
                Kind::Change,
                &[
                    "-n",
                    &s,
                    "link",
                    "add",
                    BRIDGE,
                    "type",
                    "bridge",
                    "stp_state",
                    "0",
                    "forward_delay",
                    "0",
                ],
            )?;
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
                ip(
                    Kind::Change,
                    &[
                        "-n",
                        &s,
                        "link",
                        "set",
                        BRIDGE,
                        "type",
                        "bridge",
                        "stp_state",
                        "0",
                        "forward_delay",
                        "0",
                    ],
                )?;
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

    fn up_hosts(&self, txn: &mut Txn) -> Result<(), LabError> {
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
        Ok(())
    }
}

/// Deletes those of `names` that exist in `ns` (re-reading after each, since
/// deleting one veth end removes its peer).
fn delete_links(ns: &str, names: &[&str]) -> Result<(), LabError> {
    for n in names {
        if links(ns)?.contains_key(*n) {
            ip(Kind::Change, &["-n", ns, "link", "del", n])?;
        }
    }
    Ok(())
}

fn ensure_up(ns: &str, l: &Links, ifname: &str) -> Result<(), LabError> {
    if !l.get(ifname).is_some_and(Link::admin_up) {
        ip(Kind::Change, &["-n", ns, "link", "set", ifname, "up"])?;
    }
    Ok(())
}

/// Quiet-port configuration: IPv6 off (optional), fixed MAC, admin up — in that
/// order, so no link-local address or router solicitation ever appears.
fn configure_port(
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

fn ensure_sysctl(ns: &str, key: &str, value: &str) -> Result<(), LabError> {
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
struct AddrIf {
    #[serde(default)]
    ifname: Option<String>,
    #[serde(default)]
    addr_info: Vec<AddrInfo>,
}

#[derive(Deserialize)]
struct AddrInfo {
    #[serde(default)]
    local: Option<String>,
    #[serde(default)]
    prefixlen: Option<u8>,
    #[serde(default)]
    scope: Option<String>,
}

/// Adds each (address, prefix length, is_ipv6) to `ifname` unless present.
fn ensure_addrs(ns: &str, ifname: &str, addrs: &[(&str, u8, bool)]) -> Result<(), LabError> {
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
            eprintln!("misura-lab: bringing lab {} down: {e}", self.lab.prefix);
        }
    }
}

#[cfg(test)]
mod tests;
