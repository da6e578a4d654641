//! One interface: link, Energy-Efficient Ethernet, interrupt coalescing,
//! offloads, IRQ affinity, timestamping and the PTP clock.

use super::item::item;
use crate::readings::{missing, sys_state};
use misura_report::host::{CheckItem, Verdict};
use misura_sys::hostinfo::{self, Reading};
use misura_sys::iface::InterfaceInfo;
use misura_sys::{ethtool, SysError};

/// The interface being checked, with what every item of it needs.
struct Iface<'a> {
    name: &'a str,
    /// Prefix of the commands that change it: `ip netns exec NS ` or nothing.
    ns: String,
    info: Option<InterfaceInfo>,
    driver: String,
}

impl Iface<'_> {
    /// The item of a setting the driver could not report.
    fn unread(&self, name: &str, e: &SysError, why: &str) -> CheckItem {
        let verdict = match e {
            SysError::Unsupported { .. } => Verdict::NotApplicable,
            _ => Verdict::Unknown,
        };
        item(self.name, name, sys_state(e), verdict, why, None)
    }
}

/// The items of interface `name`, in table order.
pub(super) fn items(name: &str, netns: Option<&str>) -> Vec<CheckItem> {
    let info = misura_sys::iface::interface_info(name).ok();
    let driver = info
        .as_ref()
        .and_then(|i| i.driver.clone())
        .unwrap_or_else(|| "unknown".into());
    let i = Iface {
        name,
        ns: netns
            .map(|n| format!("ip netns exec {n} "))
            .unwrap_or_default(),
        info,
        driver,
    };
    let mut v = vec![link(&i), eee(&i), coalescing(&i)];
    v.extend(offloads(&i));
    v.push(irq_affinity(&i));
    v.extend(timestamping(&i));
    v
}

fn link(i: &Iface) -> CheckItem {
    let why = "the wire time C = bits / link rate enters every latency; a renegotiated or half-duplex link changes it";
    let (name, driver) = (i.name, &i.driver);
    match ethtool::link_mode(name) {
        Ok(l) => item(
            i.name,
            "link",
            format!(
                "{}, duplex {}, autoneg {} (driver {driver}, {})",
                l.speed_mbps
                    .map_or("speed unknown".into(), |s| format!("{s} Mb/s")),
                l.duplex,
                if l.autoneg { "on" } else { "off" },
                i.info
                    .as_ref()
                    .map_or("state unknown", |i| i.operstate.as_str())
            ),
            if l.speed_mbps.is_some() && l.duplex == "full" {
                Verdict::Ok
            } else {
                Verdict::Unknown
            },
            why,
            Some(format!(
                "{}ethtool -s {name} speed SPEED duplex full autoneg off",
                i.ns
            )),
        ),
        // Unknown even when unsupported: every link has a rate.
        Err(e) => item(i.name, "link", sys_state(&e), Verdict::Unknown, why, None),
    }
}

fn eee(i: &Iface) -> CheckItem {
    let why = "Energy-Efficient Ethernet puts the link to sleep between frames; waking it adds microseconds";
    match ethtool::eee(i.name) {
        Ok(e) => item(
            i.name,
            "EEE",
            format!(
                "{}{}",
                if e.enabled { "on" } else { "off" },
                if e.active {
                    " (active on the link)"
                } else {
                    ""
                }
            ),
            if e.enabled {
                Verdict::Hurts
            } else {
                Verdict::Ok
            },
            why,
            Some(format!("{}ethtool --set-eee {} eee off", i.ns, i.name)),
        ),
        Err(e) => i.unread("EEE", &e, why),
    }
}

fn coalescing(i: &Iface) -> CheckItem {
    let why =
        "interrupt moderation holds received frames for rx-usecs or rx-frames before interrupting";
    match ethtool::coalesce(i.name) {
        Ok(c) => {
            let g = |k: &str| c.get(k).unwrap_or(0);
            let onoff = |k: &str| if g(k) != 0 { "on" } else { "off" };
            let hurts = g("rx-usecs") > 0 || g("rx-frames") > 1 || g("adaptive-rx") != 0;
            item(
                i.name,
                "coalescing",
                format!(
                    "rx-usecs {}, rx-frames {}, adaptive-rx {}, tx-usecs {}, tx-frames {}, adaptive-tx {}",
                    g("rx-usecs"),
                    g("rx-frames"),
                    onoff("adaptive-rx"),
                    g("tx-usecs"),
                    g("tx-frames"),
                    onoff("adaptive-tx")
                ),
                if hurts { Verdict::Hurts } else { Verdict::Ok },
                why,
                Some(format!("{}ethtool -C {} adaptive-rx off adaptive-tx off rx-usecs 0 rx-frames 1", i.ns, i.name)),
            )
        }
        Err(e) => i.unread("coalescing", &e, why),
    }
}

fn offloads(i: &Iface) -> Vec<CheckItem> {
    [
        (
            "gro",
            "GRO merges received frames: one kernel RX timestamp stands for several",
        ),
        (
            "lro",
            "LRO merges received frames in the NIC: one RX timestamp stands for several",
        ),
        (
            "gso",
            "GSO splits large sends late in the stack: the segments share one TX timestamp",
        ),
        (
            "tso",
            "TSO splits large sends in the NIC: the segments share one TX timestamp",
        ),
    ]
    .into_iter()
    .map(|(off, why)| match ethtool::offload(i.name, off) {
        Ok(on) => item(
            i.name,
            off,
            if on { "on" } else { "off" },
            if on { Verdict::Hurts } else { Verdict::Ok },
            why,
            Some(format!(
                "{}ethtool -K {} {off} {}",
                i.ns,
                i.name,
                if on { "off" } else { "on" }
            )),
        ),
        Err(e) => i.unread(off, &e, why),
    })
    .collect()
}

fn irq_affinity(i: &Iface) -> CheckItem {
    let why =
        "an interface IRQ that floats between CPUs, or lands on the measuring CPU, adds jitter";
    let irqs = match hostinfo::interface_irqs(i.name, i.info.as_ref().map(|i| i.index)) {
        Ok(irqs) => irqs,
        Err(e) => {
            return item(
                i.name,
                "IRQ affinity",
                format!("unreadable: {e}"),
                Verdict::Unknown,
                why,
                None,
            )
        }
    };
    if irqs.is_empty() {
        return item(
            i.name,
            "IRQ affinity",
            format!("no IRQs of its own (driver {})", i.driver),
            Verdict::NotApplicable,
            why,
            None,
        );
    }
    let mut floating = false;
    let mut unknown = false;
    let list: Vec<String> = irqs
        .iter()
        .map(|l| {
            let r = hostinfo::read(format!("/proc/irq/{}/smp_affinity_list", l.irq));
            match &r {
                Reading::Value(a) => floating |= a.contains('-') || a.contains(','),
                _ => unknown = true,
            }
            format!("{} ({}) → CPUs {}", l.irq, l.name, missing(&r))
        })
        .collect();
    item(
        i.name,
        "IRQ affinity",
        list.join("; "),
        if unknown {
            Verdict::Unknown
        } else if floating {
            Verdict::Hurts
        } else {
            Verdict::Ok
        },
        why,
        Some(format!(
            "echo CPU > /proc/irq/{}/smp_affinity_list (a CPU other than the loop's)",
            irqs[0].irq
        )),
    )
}

/// Two items: the timestamping capabilities, then the PTP clock.
fn timestamping(i: &Iface) -> [CheckItem; 2] {
    let why =
        "hardware timestamps are taken at the wire; software ones include the driver and the stack";
    let t = match misura_sys::tsinfo::get_ts_info(i.name) {
        Ok(t) => t,
        Err(e) => {
            return [
                item(
                    i.name,
                    "timestamping",
                    sys_state(&e),
                    Verdict::Unknown,
                    why,
                    None,
                ),
                item(
                    i.name,
                    "PTP clock",
                    "unknown (no ETHTOOL_GET_TS_INFO)",
                    Verdict::Unknown,
                    why,
                    None,
                ),
            ]
        }
    };
    let (name, driver, ns) = (i.name, &i.driver, &i.ns);
    let caps = t.describe();
    let stamps = item(
        i.name,
        "timestamping",
        format!(
            "{}; tx types: {}; rx filters: {}",
            if caps.is_empty() {
                "none".into()
            } else {
                caps.join(", ")
            },
            none_if_empty(t.describe_tx_types()),
            none_if_empty(t.describe_rx_filters())
        ),
        if t.hw_tx() && t.hw_rx_all() {
            Verdict::Ok
        } else if t.hw_tx() || t.hw_rx() {
            Verdict::Unknown
        } else {
            Verdict::Hurts
        },
        why,
        Some(if t.hw_tx() || t.hw_rx() {
            format!("{ns}hwstamp_ctl -i {name} -t 1 -r 1 (misura oneway asks for it itself)")
        } else {
            format!("none: driver {driver} has no hardware timestamps (a NIC with a PTP clock does; ethtool -T {name})")
        }),
    );
    [stamps, ptp_clock(i, t.phc_index)]
}

fn ptp_clock(i: &Iface, phc_index: Option<i32>) -> CheckItem {
    let why = "the NIC's PTP clock stamps frames; it must be disciplined (phc2sys) to compare with CLOCK_REALTIME";
    let Some(index) = phc_index else {
        return item(
            i.name,
            "PTP clock",
            "none",
            Verdict::NotApplicable,
            why,
            None,
        );
    };
    let dev = format!("/dev/ptp{index}");
    let present = hostinfo::exists(&dev);
    item(
        i.name,
        "PTP clock",
        format!(
            "{dev}{}",
            if present {
                ""
            } else {
                " (device node missing)"
            }
        ),
        if present {
            Verdict::Ok
        } else {
            Verdict::Unknown
        },
        why,
        Some(format!(
            "phc2sys -s {dev} -c CLOCK_REALTIME -O 0 (or ptp4l -i {})",
            i.name
        )),
    )
}

fn none_if_empty(v: Vec<String>) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}
