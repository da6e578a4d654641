//! The plan: every safe change, with its current and new value, or why it
//! is skipped or already done. Host-wide first (governor, idle states,
//! guest halt polling),
//! then each interface (EEE, coalescing, offloads, hardware timestamping).

use super::settings::current;
use crate::readings::{missing, sys_state};
use misura_report::host::{self as model, PlanEntry, SettingKind};
use misura_sys::ethtool;
use misura_sys::hostinfo::{self, Reading};

/// Idle states with a longer exit latency than this are disabled by the plan.
const IDLE_LATENCY_LIMIT_US: u64 = 10;

/// Interrupt coalescing parameters and their safe values.
const COALESCING: [(&str, &str); 4] = [
    ("adaptive-rx", "off"),
    ("adaptive-tx", "off"),
    ("rx-usecs", "0"),
    ("rx-frames", "1"),
];

pub(super) fn plan(
    interfaces: &[String],
    netns: Option<&str>,
    virtualized: bool,
) -> Vec<PlanEntry> {
    let cpus = hostinfo::cpus();
    let mut v = governors(&cpus, netns, virtualized);
    v.extend(idle_states(&cpus, netns));
    v.extend(halt_polling(netns));
    for i in interfaces {
        v.extend(interface(i, netns));
    }
    v
}

fn skipped(scope: &str, item: &str, reason: String) -> PlanEntry {
    PlanEntry::Skipped {
        scope: scope.into(),
        item: item.into(),
        reason,
    }
}

/// The `performance` governor on every CPU with cpufreq.
fn governors(cpus: &[usize], netns: Option<&str>, virtualized: bool) -> Vec<PlanEntry> {
    let mut v = Vec::new();
    let mut any = false;
    for c in cpus {
        let path = format!("/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor");
        if hostinfo::read(&path) == Reading::Absent {
            continue;
        }
        any = true;
        let avail = hostinfo::read(format!(
            "/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_available_governors"
        ));
        if avail
            .value()
            .is_some_and(|a| !a.split_whitespace().any(|g| g == "performance"))
        {
            v.push(skipped(
                "host",
                &format!("cpu{c} governor"),
                format!(
                    "the cpufreq driver offers no `performance` governor ({})",
                    missing(&avail)
                ),
            ));
            continue;
        }
        v.push(model::plan_entry(
            SettingKind::Sysfs,
            None,
            &path,
            &format!("cpu{c} governor"),
            current(SettingKind::Sysfs, None, &path),
            "performance",
            netns,
        ));
    }
    if !any {
        v.push(skipped(
            "host",
            "cpu governor",
            if virtualized {
                "no cpufreq: frequency is the hypervisor's".into()
            } else {
                "no cpufreq driver: frequency is the firmware's".into()
            },
        ));
    }
    v
}

/// Every idle state deeper than [`IDLE_LATENCY_LIMIT_US`] disabled.
fn idle_states(cpus: &[usize], netns: Option<&str>) -> Vec<PlanEntry> {
    let mut v = Vec::new();
    let mut states_seen = false;
    for c in cpus {
        for s in hostinfo::idle_states(*c) {
            states_seen = true;
            if s.latency_us <= IDLE_LATENCY_LIMIT_US {
                continue;
            }
            let path = s.disable_path.display().to_string();
            v.push(model::plan_entry(
                SettingKind::Sysfs,
                None,
                &path,
                &format!("cpu{c} idle {} ({} µs)", s.name, s.latency_us),
                current(SettingKind::Sysfs, None, &path),
                "1",
                netns,
            ));
        }
    }
    if !states_seen {
        v.push(skipped(
            "host",
            "idle states",
            "no cpuidle states to disable".into(),
        ));
    } else if v.is_empty() {
        v.push(PlanEntry::Already {
            scope: "host".into(),
            item: "idle states".into(),
            value: format!("none deeper than {IDLE_LATENCY_LIMIT_US} µs"),
        });
    }
    v
}

/// On a KVM guest whose idle driver is haltpoll: guest halt polling at the
/// kernel's default, when it was turned down (0: every idle vCPU halts at
/// once, and each wake-up of it goes through the hypervisor).
fn halt_polling(netns: Option<&str>) -> Vec<PlanEntry> {
    if hostinfo::read(hostinfo::CPUIDLE_DRIVER).value() != Some("haltpoll") {
        return Vec::new();
    }
    let path = hostinfo::HALT_POLL_NS;
    let current = current(SettingKind::Sysfs, None, path);
    if let Ok(v) = &current {
        if v.parse::<u64>()
            .is_ok_and(|ns| ns >= hostinfo::HALT_POLL_NS_DEFAULT)
        {
            return vec![PlanEntry::Already {
                scope: "host".into(),
                item: "guest halt polling (ns)".into(),
                value: v.clone(),
            }];
        }
    }
    vec![model::plan_entry(
        SettingKind::Sysfs,
        None,
        path,
        "guest halt polling (ns)",
        current,
        &hostinfo::HALT_POLL_NS_DEFAULT.to_string(),
        netns,
    )]
}

/// EEE off, coalescing to its safe values, every offload off.
fn interface(i: &str, netns: Option<&str>) -> Vec<PlanEntry> {
    let ii = Some(i);
    let change = |kind, key: &str, item: &str, new: &str| {
        model::plan_entry(kind, ii, key, item, current(kind, ii, key), new, netns)
    };
    let mut v = vec![change(SettingKind::Eee, "eee", "eee", "off")];
    match ethtool::coalesce(i) {
        Err(e) => v.push(skipped(i, "coalescing", sys_state(&e))),
        Ok(_) => {
            v.extend(COALESCING.iter().map(|(k, safe)| {
                change(SettingKind::Coalesce, k, &format!("coalescing {k}"), safe)
            }))
        }
    }
    v.extend(
        ethtool::OFFLOADS
            .iter()
            .map(|off| change(SettingKind::Offload, off, off, "off")),
    );
    v.push(timestamping(i, netns));
    v
}

/// The NIC stamps what misura sends (TX on) and receives: every packet
/// (RX filter all) where its driver can, else PTP event messages (what
/// PTP-wrapped probes need on a NIC such as the 82576); a port without
/// hardware stamps is skipped.
fn timestamping(i: &str, netns: Option<&str>) -> PlanEntry {
    use misura_sys::tsinfo::{HwTstampConfig, HWTSTAMP_FILTER_PTP_V2_EVENT, HWTSTAMP_TX_ON};
    let item = "hardware timestamping";
    let new = match misura_sys::tsinfo::get_ts_info(i) {
        Err(e) => return skipped(i, item, sys_state(&e)),
        Ok(c) if c.hw_tx() && c.hw_rx_all() => HwTstampConfig::ALL,
        Ok(c) if c.hw_tx() && c.hw_rx_ptp_l2() => HwTstampConfig {
            tx_type: HWTSTAMP_TX_ON,
            rx_filter: HWTSTAMP_FILTER_PTP_V2_EVENT,
        },
        Ok(c) => {
            return skipped(
                i,
                item,
                format!(
                    "the driver has no hardware TX stamps with RX filter all or ptpv2-event ({}; RX filters: {})",
                    c.describe().join(", "),
                    c.describe_rx_filters().join(", ")
                ),
            )
        }
    };
    let kind = SettingKind::Timestamping;
    let now = current(kind, Some(i), "hwtstamp");
    model::plan_entry(kind, Some(i), "hwtstamp", item, now, &new.describe(), netns)
}
