//! The host fingerprint attached to every result, and the warnings that go
//! with it.

use misura_report::{HostFingerprint, InterfaceFingerprint, LoopTuning};

/// The host fingerprint without interfaces.
pub fn fingerprint(tuning: LoopTuning) -> HostFingerprint {
    fingerprint_with_interfaces(tuning, &[])
}

/// The host fingerprint with the settings of the interfaces a measurement
/// uses (read in the calling thread's network namespace); an interface
/// named twice is listed once.
pub fn fingerprint_with_interfaces(tuning: LoopTuning, interfaces: &[&str]) -> HostFingerprint {
    let h = misura_sys::host::host_facts();
    HostFingerprint {
        hostname: h.hostname,
        kernel_release: h.kernel_release,
        kernel_version: h.kernel_version,
        preempt_model: h.preempt_model,
        clocksource: h.clocksource,
        cpu_model: h.cpu_model,
        online_cpus: h.online_cpus,
        governor: h.governor,
        virtualized: h.virtualized,
        tsc_flags: h.tsc_flags,
        tuning,
        interfaces: {
            let mut seen: Vec<&str> = Vec::new();
            interfaces
                .iter()
                .filter(|i| {
                    let new = !seen.contains(i);
                    seen.push(i);
                    new
                })
                .map(|i| interface_fingerprint(i))
                .collect()
        },
    }
}

/// One interface's timing-relevant settings; what the driver does not
/// report stays `None`.
pub fn interface_fingerprint(name: &str) -> InterfaceFingerprint {
    use misura_sys::ethtool;
    let info = misura_sys::iface::interface_info(name).ok();
    let link = ethtool::link_mode(name).ok();
    let co = ethtool::coalesce(name).ok();
    let get = |k: &str| co.as_ref().and_then(|c| c.get(k));
    let ts = misura_sys::tsinfo::get_ts_info(name).ok();
    let off = |k: &str| ethtool::offload(name, k).ok();
    InterfaceFingerprint {
        name: name.to_string(),
        driver: info.as_ref().and_then(|i| i.driver.clone()),
        speed_mbps: info.as_ref().and_then(|i| i.speed_mbps),
        duplex: link.map(|l| l.duplex),
        rx_usecs: get("rx-usecs"),
        rx_frames: get("rx-frames"),
        adaptive_rx: get("adaptive-rx").map(|v| v != 0),
        tx_usecs: get("tx-usecs"),
        tx_frames: get("tx-frames"),
        adaptive_tx: get("adaptive-tx").map(|v| v != 0),
        eee: ethtool::eee(name).ok().map(|e| e.enabled),
        gro: off("gro"),
        lro: off("lro"),
        gso: off("gso"),
        tso: off("tso"),
        timestamping_caps: ts.as_ref().map(|t| t.describe()).unwrap_or_default(),
        rx_filters: ts
            .as_ref()
            .map(|t| t.describe_rx_filters())
            .unwrap_or_default(),
        phc_index: ts.and_then(|t| t.phc_index),
    }
}

/// Settings known to hurt timing precision, each with what to do about it.
pub fn warnings(h: &HostFingerprint) -> Vec<String> {
    let mut w = Vec::new();
    if let Some(g) = &h.governor {
        if g != "performance" {
            w.push(format!(
                "CPU frequency governor is `{g}`: frequency changes stretch latencies; set `performance` (cpupower frequency-set -g performance)"
            ));
        }
    }
    if h.virtualized == Some(true) {
        w.push("running in a virtual machine: the hypervisor adds interference no guest setting removes".into());
    }
    if h.tuning.cpu.is_none() {
        w.push("measuring loop not pinned: migrations between CPUs add jitter; use --cpu N".into());
    }
    if !h.tuning.memory_locked {
        w.push(
            "memory not locked: page faults can stall the loop; run as root or raise `ulimit -l`"
                .into(),
        );
    }
    if let Some(cs) = &h.clocksource {
        if cs != "tsc" && cs != "kvm-clock" {
            w.push(format!(
                "clocksource is `{cs}`: reading it is slow; `tsc` is best where it is stable"
            ));
        }
    }
    for i in &h.interfaces {
        let n = &i.name;
        if i.adaptive_rx == Some(true) || i.rx_usecs.is_some_and(|u| u > 0) {
            w.push(format!(
                "interrupt coalescing on `{n}` (rx-usecs {}, adaptive-rx {}) delays receive interrupts: `ethtool -C {n} adaptive-rx off rx-usecs 0 rx-frames 1` (or misura host tune --interface {n} --apply)",
                i.rx_usecs.map_or("?".into(), |u| u.to_string()),
                if i.adaptive_rx == Some(true) { "on" } else { "off" }
            ));
        }
        if i.eee == Some(true) {
            w.push(format!("Energy-Efficient Ethernet is on for `{n}`: waking the link adds microseconds: `ethtool --set-eee {n} eee off`"));
        }
        for (on, what) in [(i.gro, "gro"), (i.lro, "lro")] {
            if on == Some(true) {
                w.push(format!("{} is on for `{n}`: merged frames share one receive timestamp: `ethtool -K {n} {what} off`", what.to_uppercase()));
            }
        }
    }
    w
}
