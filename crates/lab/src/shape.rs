//! A known throughput limit for the switch topology's SUT: a token bucket
//! filter (`tbf`) on the bridge port `s2`, the one that sends towards the
//! tester's receiving port p2, so frames p1 → br0 → p2 leave the SUT at no
//! more than the shaped rate. RFC 2544 throughput searches and Y.1564 tests
//! need an SUT whose limit is known in advance; this is it.
//!
//! Written `RATE[,queue=BYTES][,burst=BYTES]`, e.g. `20M,queue=32K`:
//!
//! * RATE in bit/s as misura writes rates everywhere (`500k`, `100M`, `1G`,
//!   optionally followed by `bit/s`, `b/s`, `bps` or `bit`), 8 kbit/s to
//!   100 Gbit/s. tbf counts whole bytes per second, so the rate applied (and
//!   recorded) is RATE rounded down to a multiple of 8 bit/s.
//! * burst (the bucket): by default the larger of [`MIN_BURST`] (one
//!   full-size Ethernet frame with room to spare; tbf drops a frame larger
//!   than its bucket) and [`DEFAULT_BURST_TIME_NS`] of traffic at RATE (1 ms,
//!   a tick at HZ=1000: tbf's watchdog is a high-resolution timer, but the
//!   softirq that dequeues can wake up that late, and a bucket smaller than
//!   what arrives between two wake-ups would shape below RATE). At most
//!   [`MAX_BURST_TIME_NS`] of traffic at RATE (the kernel keeps the bucket
//!   as a 32-bit time and wraps beyond about 270 s).
//! * queue (tbf's `limit`, the bytes that may wait for tokens): by default
//!   the larger of [`DEFAULT_QUEUE`] (64 KiB, 43 full-size frames: 5.2 ms of
//!   queueing at 100 Mbit/s, like a small switch's port buffer) and one
//!   burst. Frames beyond it are dropped, which is what a throughput search
//!   must see.
//!
//! The lab records the shape in the SUT namespace's marker (exact numbers
//! as asked) and reads it back together with `tc -j -s qdisc show dev s2`
//! (the truth about what is in place, and the counters): [`shape_of`]. All
//! `tc` calls of misura are here.
//!
//! Long: the shape's grammar, the bound of each part named in its error, and
//! the tc commands that apply and read it back belong together (its tests are
//! in shape_tests.rs).

use std::fmt;
use std::path::PathBuf;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::routed::{is_routed_wired, ROUTER_P1, ROUTER_P2};
use super::{
    find_program, ip, is_switch_wired, links, netns_list, ns_state, read_marker, write_marker,
    Kind, Lab, LabError, NsState, Topology, PORT_RX, SUT_P2,
};

/// The lowest rate the lab shapes to, bit/s.
pub const MIN_RATE_BPS: u64 = 8_000;
/// The highest rate the lab shapes to, bit/s.
pub const MAX_RATE_BPS: u64 = 100_000_000_000;
/// The smallest bucket and queue, bytes: one 1514-byte frame and some room.
pub const MIN_BURST: u64 = 1600;
/// The largest bucket and queue, bytes (256 MiB).
pub const MAX_BYTES: u64 = 256 * 1024 * 1024;
/// Default bucket: this much traffic at the rate (1 ms), at least [`MIN_BURST`].
pub const DEFAULT_BURST_TIME_NS: u64 = 1_000_000;
/// The bucket may hold at most this much traffic at the rate (10 s).
pub const MAX_BURST_TIME_NS: u64 = 10_000_000_000;
/// Default queue (tbf limit), bytes, unless one burst is larger.
pub const DEFAULT_QUEUE: u64 = 64 * 1024;
/// The queueing discipline used.
pub const QDISC: &str = "tbf";
/// The queue of `--police` (tbf's limit), bytes: two full-size frames. A
/// policer drops what exceeds its rate and bucket instead of queueing it;
/// this kernel has no `act_police`, so a tbf whose queue holds only a
/// couple of frames stands in for one.
pub const POLICE_QUEUE: u64 = 3000;
/// The smallest bucket of `--police`, bytes: MEF 10.3's least committed
/// burst size for a CIR above 0, eight 1522-byte frames. A tester that
/// fell behind catches up with at most eight frames back to back (the
/// frame engine's `CATCH_UP_FRAMES`), which a bucket this large passes.
pub const POLICE_MIN_BUCKET: u64 = 12_176;

/// A throughput limit: tbf's rate, bucket and queue.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shape {
    /// The shaped rate, bit/s (a multiple of 8).
    pub rate_bps: u64,
    /// Bucket size, bytes: how much may leave back to back at line rate.
    pub burst_bytes: u64,
    /// Queue (tbf limit), bytes: what may wait for tokens before frames drop.
    pub queue_bytes: u64,
    /// fq_codel inside the bucket (`qdisc=fq_codel`, routed topology): a
    /// managed queue, flows apart and a 5 ms target, instead of the tbf
    /// queue.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fq_codel: bool,
}

/// A `--shape` text that is malformed or out of bounds.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// Not of the form `RATE[,queue=BYTES][,burst=BYTES]`.
    #[error("shape `{text}`: {why}; write RATE[,queue=BYTES][,burst=BYTES], e.g. 20M,queue=64K, or none")]
    Malformed {
        /// What the user wrote.
        text: String,
        /// What is wrong with it.
        why: String,
    },
    /// A number outside its bounds.
    #[error("shape {what} {value} is {side} {bound}")]
    OutOfRange {
        /// Which number ("rate", "burst", "queue").
        what: &'static str,
        /// The value as understood, with its unit.
        value: String,
        /// "below the lowest," or "above the highest,".
        side: &'static str,
        /// The bound it crosses, with its unit.
        bound: String,
    },
}

impl ShapeError {
    /// True for a well-formed number outside its bounds (exit code 5 in the
    /// binary), false for text that is not a shape at all (usage, 2).
    pub fn is_out_of_range(&self) -> bool {
        matches!(self, ShapeError::OutOfRange { .. })
    }
}

fn malformed(text: &str, why: String) -> ShapeError {
    ShapeError::Malformed {
        text: text.to_string(),
        why,
    }
}

/// 20 000 000 → "20 Mbit/s": a rate in bit/s as people read it.
pub fn format_rate(bps: u64) -> String {
    let (v, unit) = match bps {
        b if b >= 1_000_000_000_000 => (b as f64 / 1e12, "Tbit/s"),
        b if b >= 1_000_000_000 => (b as f64 / 1e9, "Gbit/s"),
        b if b >= 1_000_000 => (b as f64 / 1e6, "Mbit/s"),
        b if b >= 1_000 => (b as f64 / 1e3, "kbit/s"),
        b => (b as f64, "bit/s"),
    };
    format!("{} {unit}", trim_number(v))
}

fn trim_number(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The leading decimal number of `t` and the rest.
fn split_number(t: &str) -> (&str, &str) {
    let at = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    t.split_at(at)
}

/// A rate in bit/s as misura writes them: `500k`, `100M`, `1G`, `2.5Gbit/s`.
/// Checks the form only (the error says what is wrong); [`Shape::new`]
/// checks the bounds.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let t = ["bit/s", "b/s", "bps", "bit"]
        .iter()
        .find_map(|s| t.strip_suffix(s))
        .unwrap_or(t);
    let (num, unit) = split_number(t);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{text}` is not a rate: write e.g. 500k, 20M or 1G (bit/s)"))?;
    let scale = match unit {
        "" => 1.0,
        "k" | "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        other => return Err(format!("unknown rate unit `{other}` (use k, M or G)")),
    };
    Ok(v * scale)
}

/// A size in bytes: `1600`, `64K`, `1M`, `64KiB` (powers of 1024); `what`
/// ("queue", "burst") names it in the error.
pub fn parse_bytes(what: &str, text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, unit) = split_number(t);
    let v: f64 = num.parse().map_err(|_| {
        format!("{what} `{text}` is not a size in bytes: write e.g. 1600, 64K or 1M")
    })?;
    let scale = match unit.trim_end_matches(['B', 'b']).trim_end_matches('i') {
        "" => 1.0,
        "k" | "K" => 1024.0,
        "m" | "M" => 1024.0 * 1024.0,
        "g" | "G" => 1024.0 * 1024.0 * 1024.0,
        other => return Err(format!("unknown {what} unit `{other}` (use K, M or G)")),
    };
    Ok(v * scale)
}

/// `rate` (bit/s) × `ns`, in bytes.
fn bytes_in(rate_bps: u64, ns: u64) -> u64 {
    (rate_bps as u128 * ns as u128 / 8 / 1_000_000_000) as u64
}

impl Shape {
    /// A shape at `rate_bps` with the default or given bucket and queue,
    /// every number checked against its bounds.
    pub fn new(rate_bps: f64, queue: Option<f64>, burst: Option<f64>) -> Result<Shape, ShapeError> {
        let out = |what, value: String, side, bound: String| ShapeError::OutOfRange {
            what,
            value,
            side,
            bound,
        };
        if rate_bps.is_nan() || rate_bps < MIN_RATE_BPS as f64 {
            return Err(out(
                "rate",
                format_rate(rate_bps.max(0.0) as u64),
                "below the lowest,",
                format_rate(MIN_RATE_BPS),
            ));
        }
        if rate_bps > MAX_RATE_BPS as f64 {
            return Err(out(
                "rate",
                format_rate(rate_bps as u64),
                "above the highest,",
                format_rate(MAX_RATE_BPS),
            ));
        }
        // tbf keeps bytes per second.
        let rate_bps = (rate_bps as u64) / 8 * 8;
        let max_burst = bytes_in(rate_bps, MAX_BURST_TIME_NS).min(MAX_BYTES);
        // Sizes beyond u64 saturate, and are then out of bounds.
        let burst_bytes = burst.map_or_else(
            || bytes_in(rate_bps, DEFAULT_BURST_TIME_NS).max(MIN_BURST),
            |b| b.round() as u64,
        );
        if burst_bytes < MIN_BURST {
            return Err(out(
                "burst",
                format!("{burst_bytes} bytes"),
                "below the lowest,",
                format!("{MIN_BURST} bytes (one full-size frame must fit the bucket)"),
            ));
        }
        if burst_bytes > max_burst {
            return Err(out(
                "burst",
                format!("{burst_bytes} bytes"),
                "above the highest,",
                format!(
                    "{max_burst} bytes ({} s of traffic at {}, at most {MAX_BYTES})",
                    MAX_BURST_TIME_NS / 1_000_000_000,
                    format_rate(rate_bps)
                ),
            ));
        }
        let queue_bytes = queue.map_or(DEFAULT_QUEUE.max(burst_bytes), |q| q.round() as u64);
        if queue_bytes < MIN_BURST {
            return Err(out(
                "queue",
                format!("{queue_bytes} bytes"),
                "below the lowest,",
                format!("{MIN_BURST} bytes (one full-size frame must fit the queue)"),
            ));
        }
        if queue_bytes > MAX_BYTES {
            return Err(out(
                "queue",
                format!("{queue_bytes} bytes"),
                "above the highest,",
                format!("{MAX_BYTES} bytes"),
            ));
        }
        Ok(Shape {
            rate_bps,
            burst_bytes,
            queue_bytes,
            fq_codel: false,
        })
    }

    /// A policer at `rate_bps` (`--police`): a bucket of 1 ms at the rate
    /// or [`POLICE_MIN_BUCKET`] if larger, and a queue of [`POLICE_QUEUE`]
    /// bytes, so what exceeds the rate is dropped, not delayed.
    pub fn police(rate_bps: f64) -> Result<Shape, ShapeError> {
        let bucket =
            bytes_in(rate_bps.max(0.0) as u64, DEFAULT_BURST_TIME_NS).max(POLICE_MIN_BUCKET);
        let max = bytes_in(rate_bps.max(0.0) as u64, MAX_BURST_TIME_NS);
        // At the lowest rates 10 s of traffic is less than the MEF bucket.
        Shape::new(
            rate_bps,
            Some(POLICE_QUEUE as f64),
            Some(bucket.min(max.max(MIN_BURST)) as f64),
        )
    }

    /// `RATE[,queue=BYTES][,burst=BYTES]` → a shape; `none` → `None` (remove).
    pub fn parse(text: &str) -> Result<Option<Shape>, ShapeError> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("none") {
            return Ok(None);
        }
        let mut parts = t.split(',');
        let rate = parts.next().unwrap_or("").trim();
        if rate.is_empty() {
            return Err(malformed(text, "no rate given".to_string()));
        }
        let rate_bps = parse_rate(rate).map_err(|why| malformed(text, why))?;
        let (mut queue, mut burst, mut fq_codel) = (None, None, false);
        for part in parts {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| malformed(text, format!("`{part}` is not key=value")))?;
            if key.trim() == "qdisc" {
                fq_codel = match value.trim() {
                    "fq_codel" => true,
                    "tbf" => false,
                    other => {
                        return Err(malformed(
                            text,
                            format!("unknown qdisc `{other}` (known: tbf, fq_codel)"),
                        ))
                    }
                };
                continue;
            }
            let (slot, name) = match key.trim() {
                "queue" => (&mut queue, "queue"),
                "burst" => (&mut burst, "burst"),
                other => {
                    return Err(malformed(
                        text,
                        format!("unknown key `{other}` (known: queue, burst, qdisc)"),
                    ))
                }
            };
            if slot.is_some() {
                return Err(malformed(text, format!("`{name}` given twice")));
            }
            *slot = Some(parse_bytes(name, value).map_err(|why| malformed(text, why))?);
        }
        Shape::new(rate_bps, queue, burst).map(|s| Some(Shape { fq_codel, ..s }))
    }

    /// The longest a frame can wait in the queue: queue × 8 / rate, ns.
    pub fn max_queueing_delay_ns(&self) -> u64 {
        (self.queue_bytes as u128 * 8 * 1_000_000_000 / self.rate_bps.max(1) as u128) as u64
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.fq_codel {
            return write!(
                f,
                "rate {}, burst {} B, fq_codel queue (flows apart, 5 ms target)",
                format_rate(self.rate_bps),
                self.burst_bytes
            );
        }
        write!(
            f,
            "rate {}, burst {} B, queue {} B (at most {} ms of queueing)",
            format_rate(self.rate_bps),
            self.burst_bytes,
            self.queue_bytes,
            trim_number(self.max_queueing_delay_ns() as f64 / 1e6)
        )
    }
}

/// The qdisc's counters as `tc -s` reports them.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QdiscCounters {
    /// Bytes sent on towards p2.
    pub sent_bytes: u64,
    /// Packets sent on towards p2.
    pub sent_packets: u64,
    /// Packets dropped (queue full or larger than the bucket).
    pub dropped: u64,
    /// Times a packet had to wait for tokens.
    pub overlimits: u64,
    /// Bytes waiting now.
    pub backlog_bytes: u64,
}

/// A shape in place: where, what, and its counters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ShapeStatus {
    /// Rate, burst and queue.
    #[serde(flatten)]
    pub shape: Shape,
    /// The queueing discipline ("tbf").
    pub qdisc: String,
    /// The SUT namespace.
    pub netns: String,
    /// The bridge port the qdisc sits on (its egress is shaped).
    pub interface: String,
    /// The tester port that interface is cabled to.
    pub towards: String,
    /// The longest a frame can wait in the queue, ns.
    pub max_queueing_delay_ns: u64,
    /// Counters since the qdisc was put in place.
    pub counters: QdiscCounters,
}

/// The shape of the lab with prefix `prefix`, `None` if it is not shaped
/// (or not built): what `misura rfc2544` reads to name the SUT's limit.
pub fn shape_of(prefix: &str) -> Result<Option<ShapeStatus>, LabError> {
    Lab::new(prefix)?.shape()
}

fn tc_path() -> Result<String, LabError> {
    static TC: OnceLock<Option<PathBuf>> = OnceLock::new();
    TC.get_or_init(|| find_program("tc", &["/usr/sbin/tc", "/sbin/tc", "/usr/bin/tc"]))
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned())
        .ok_or(LabError::TcMissing)
}

/// `tc ARGS` inside namespace `ns`.
fn tc(kind: Kind, ns: &str, args: &[&str]) -> Result<String, LabError> {
    let prog = tc_path()?;
    let mut all = vec!["netns", "exec", ns, prog.as_str()];
    all.extend_from_slice(args);
    ip(kind, &all)
}

#[derive(Deserialize)]
struct TcQdisc {
    kind: String,
    #[serde(default)]
    root: bool,
    #[serde(default)]
    options: TcTbfOptions,
    #[serde(default)]
    bytes: u64,
    #[serde(default)]
    packets: u64,
    #[serde(default)]
    drops: u64,
    #[serde(default)]
    overlimits: u64,
    #[serde(default)]
    backlog: u64,
}

#[derive(Default, Deserialize)]
struct TcTbfOptions {
    /// Bytes per second.
    #[serde(default)]
    rate: u64,
    /// Bytes (without -d).
    #[serde(default)]
    burst: Option<serde_json::Value>,
    /// Queueing latency the limit allows, µs.
    #[serde(default)]
    lat: u64,
}

/// The root qdisc on `dev` if it is a tbf.
fn read_tbf(ns: &str, dev: &str) -> Result<Option<TcQdisc>, LabError> {
    let out = tc(Kind::Query, ns, &["-j", "-s", "qdisc", "show", "dev", dev])?;
    let list: Vec<TcQdisc> = serde_json::from_str(out.trim()).map_err(|e| LabError::Command {
        cmd: format!("tc -j -s qdisc show dev {dev} (in {ns})"),
        status: Some(0),
        stderr: format!("unexpected output: {e}"),
    })?;
    Ok(list.into_iter().find(|q| q.root && q.kind == QDISC))
}

/// Where `topology`'s bottleneck is shaped: the namespace's role, the port
/// whose egress is shaped, and what it sends towards.
fn place(lab: &Lab, topology: Topology) -> Option<(String, &'static str, &'static str)> {
    match topology {
        Topology::Switch => Some((lab.sut_ns(), SUT_P2, PORT_RX)),
        Topology::Routed => Some((lab.router_ns(), ROUTER_P2, "h2 (and r1 towards h1)")),
        Topology::Direct | Topology::Hosts => None,
    }
}

/// The lab's rule for `--shape` on `topology`: only the switch (its SUT
/// bridge's port towards p2) and the routed topology (the router's ports)
/// have a bottleneck to shape, and `qdisc=fq_codel` (a managed queue) is the
/// router's only. `shape` `None` (remove) needs the topology to take one.
pub fn check_shape(topology: Topology, shape: Option<&Shape>) -> Result<(), LabError> {
    if place(&Lab::default_lab(), topology).is_none() {
        return Err(LabError::ShapeNotApplicable {
            topology,
            managed_queue: false,
        });
    }
    if shape.is_some_and(|s| s.fq_codel) && topology != Topology::Routed {
        return Err(LabError::ShapeNotApplicable {
            topology,
            managed_queue: true,
        });
    }
    Ok(())
}

impl Lab {
    /// The shape in place on `topology`'s bottleneck (the switch's port
    /// towards p2, the router's port towards h2), `None` when there is none
    /// or that topology is not built. The numbers are those recorded when it
    /// was set, if the tbf in place still has that rate; otherwise (someone
    /// changed it by hand) those the kernel reports.
    pub fn shape_on(&self, topology: Topology) -> Result<Option<ShapeStatus>, LabError> {
        let Some((s, dev, towards)) = place(self, topology) else {
            return Ok(None);
        };
        let existing = netns_list()?;
        if !matches!(ns_state(&s, &existing), NsState::Ours(_))
            || !links(&s).is_ok_and(|l| l.contains_key(dev))
        {
            return Ok(None);
        }
        let Some(q) = read_tbf(&s, dev)? else {
            return Ok(None);
        };
        let recorded = read_marker(&s).and_then(|m| m.shape);
        let shape = match recorded {
            Some(r) if r.rate_bps / 8 == q.options.rate => r,
            _ => {
                let rate_bps = q.options.rate * 8;
                let burst_bytes = q
                    .options
                    .burst
                    .as_ref()
                    .and_then(|b| b.as_u64())
                    .unwrap_or(0);
                let lat_bytes = (q.options.lat as u128 * q.options.rate as u128 / 1_000_000) as u64;
                Shape {
                    rate_bps,
                    burst_bytes,
                    queue_bytes: lat_bytes + burst_bytes,
                    fq_codel: false,
                }
            }
        };
        Ok(Some(ShapeStatus {
            shape,
            qdisc: if shape.fq_codel {
                format!("{QDISC} + fq_codel")
            } else {
                QDISC.to_string()
            },
            netns: s,
            interface: dev.to_string(),
            towards: towards.to_string(),
            max_queueing_delay_ns: shape.max_queueing_delay_ns(),
            counters: QdiscCounters {
                sent_bytes: q.bytes,
                sent_packets: q.packets,
                dropped: q.drops,
                overlimits: q.overlimits,
                backlog_bytes: q.backlog,
            },
        }))
    }

    /// Every shape in place: the switch's, then the router's.
    pub fn shapes(&self) -> Result<Vec<ShapeStatus>, LabError> {
        let mut v = Vec::new();
        for t in [Topology::Switch, Topology::Routed] {
            v.extend(self.shape_on(t)?);
        }
        Ok(v)
    }

    /// The shape the SUT bridge has (what rfc2544 and y1564 measure), else
    /// the router's: `None` when neither is shaped.
    pub fn shape(&self) -> Result<Option<ShapeStatus>, LabError> {
        Ok(self.shapes()?.into_iter().next())
    }

    /// Puts `shape` on `topology`'s bottleneck (replacing any shape there),
    /// or with `None` removes it, after [`check_shape`]. Needs that topology
    /// built; returns what is in place there afterwards.
    pub fn set_shape(
        &self,
        topology: Topology,
        shape: Option<&Shape>,
    ) -> Result<Option<ShapeStatus>, LabError> {
        check_shape(topology, shape)?;
        super::preflight()?;
        let (t, s) = (self.tester_ns(), self.sut_ns());
        let existing = netns_list()?;
        let ours = |n: &str| matches!(ns_state(n, &existing), NsState::Ours(_));
        let not_built = || LabError::NotShapeable {
            prefix: self.prefix().to_string(),
            topology,
        };
        if topology == Topology::Routed {
            let (h1, r, h2) = (self.host_ns(1), self.router_ns(), self.host_ns(2));
            if !(ours(&h1)
                && ours(&r)
                && ours(&h2)
                && is_routed_wired(&links(&h1)?, &links(&r)?, &links(&h2)?))
            {
                return Err(not_built());
            }
            return self.set_router_shape(&r, shape);
        }
        if !(ours(&t) && ours(&s) && is_switch_wired(&links(&t)?, &links(&s)?)) {
            return Err(not_built());
        }
        let mut marker = read_marker(&s).ok_or_else(|| LabError::NotOurs { netns: s.clone() })?;
        match shape {
            Some(sh) => {
                let rate = format!("{}bit", sh.rate_bps);
                let (burst, limit) = (sh.burst_bytes.to_string(), sh.queue_bytes.to_string());
                tc(
                    Kind::Change,
                    &s,
                    &[
                        "qdisc", "replace", "dev", SUT_P2, "root", QDISC, "rate", &rate, "burst",
                        &burst, "limit", &limit,
                    ],
                )?;
            }
            None => {
                if read_tbf(&s, SUT_P2)?.is_some() {
                    tc(Kind::Change, &s, &["qdisc", "del", "dev", SUT_P2, "root"])?;
                }
            }
        }
        marker.shape = shape.copied();
        write_marker(&marker)?;
        self.shape_on(Topology::Switch)
    }

    /// The routed topology's bottleneck: the same shape on both router
    /// ports' egress (tbf, with fq_codel inside it when asked).
    fn set_router_shape(
        &self,
        r: &str,
        shape: Option<&Shape>,
    ) -> Result<Option<ShapeStatus>, LabError> {
        let mut marker = read_marker(r).ok_or_else(|| LabError::NotOurs {
            netns: r.to_string(),
        })?;
        for dev in [ROUTER_P1, ROUTER_P2] {
            if read_tbf(r, dev)?.is_some() || shape.is_some() {
                // Replacing a tbf with a child in place is not always taken:
                // start from no qdisc.
                let _ = tc(Kind::Query, r, &["qdisc", "del", "dev", dev, "root"]);
            }
            let Some(sh) = shape else { continue };
            let rate = format!("{}bit", sh.rate_bps);
            let (burst, limit) = (sh.burst_bytes.to_string(), sh.queue_bytes.to_string());
            tc(
                Kind::Change,
                r,
                &[
                    "qdisc", "add", "dev", dev, "root", "handle", "1:", QDISC, "rate", &rate,
                    "burst", &burst, "limit", &limit,
                ],
            )?;
            if sh.fq_codel {
                let added = tc(
                    Kind::Change,
                    r,
                    &[
                        "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", "fq_codel",
                    ],
                );
                if let Err(e) = added {
                    // Leave no half shape behind.
                    for d in [ROUTER_P1, ROUTER_P2] {
                        let _ = tc(Kind::Query, r, &["qdisc", "del", "dev", d, "root"]);
                    }
                    marker.shape = None;
                    write_marker(&marker)?;
                    return Err(match e {
                        LabError::Command { ref stderr, .. } if stderr.contains("unknown") => {
                            LabError::QdiscMissing {
                                qdisc: "fq_codel".into(),
                                config: "FQ_CODEL".into(),
                            }
                        }
                        other => other,
                    });
                }
            }
        }
        marker.shape = shape.copied();
        write_marker(&marker)?;
        self.shape_on(Topology::Routed)
    }
}

#[cfg(test)]
#[path = "shape_tests.rs"]
mod tests;
