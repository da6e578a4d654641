//! The host fingerprint attached to every result, and the warnings that go
//! with it.

use crate::warnings::Warn;
use misura_report::Warning;
use misura_report::{HostFingerprint, InterfaceFingerprint, LoopTuning};

/// The host fingerprint without interfaces.
pub fn fingerprint(tuning: LoopTuning) -> HostFingerprint {
    fingerprint_with_interfaces(tuning, &[])
}

/// The host fingerprint with the settings of the interfaces a measurement
/// uses (read in the calling thread's network namespace); an interface
/// named twice is listed once.
pub fn fingerprint_with_interfaces(tuning: LoopTuning, interfaces: &[&str]) -> HostFingerprint {
    HostFingerprint {
        facts: misura_sys::host::host_facts(),
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
        load: crate::cpuload::load_now(),
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
pub fn warnings(h: &HostFingerprint) -> Vec<Warn> {
    let mut w = Vec::new();
    if let Some(g) = &h.governor {
        if g != "performance" {
            w.push(Warn::GovernorNotPerformance {
                governor: g.clone(),
            });
        }
    }
    if h.virtualized == Some(true) {
        w.push(Warn::VirtualMachine);
    }
    if h.tuning.cpu.is_none() {
        w.push(Warn::LoopNotPinned);
    }
    if !h.tuning.memory_locked {
        w.push(Warn::MemoryNotLocked);
    }
    if let Some(cs) = &h.clocksource {
        if cs != "tsc" && cs != "kvm-clock" {
            w.push(Warn::SlowClocksource {
                clocksource: cs.clone(),
            });
        }
    }
    for i in &h.interfaces {
        let interface = i.name.clone();
        if i.adaptive_rx == Some(true) || i.rx_usecs.is_some_and(|u| u > 0) {
            w.push(Warn::InterruptCoalescing {
                interface: interface.clone(),
                rx_usecs: i.rx_usecs,
                adaptive: i.adaptive_rx == Some(true),
            });
        }
        if i.eee == Some(true) {
            w.push(Warn::EnergyEfficientEthernet {
                interface: interface.clone(),
            });
        }
        for (on, offload) in [(i.gro, "gro"), (i.lro, "lro")] {
            if on == Some(true) {
                w.push(Warn::ReceiveOffload {
                    interface: interface.clone(),
                    offload,
                });
            }
        }
    }
    w
}

/// The host's warnings as result entries; without the loop-tuning ones
/// (not pinned, memory not locked) when the command does not pin or lock.
pub fn warnings_for(h: &HostFingerprint, loop_matters: bool) -> Vec<Warning> {
    warnings(h)
        .into_iter()
        .filter(|w| loop_matters || !w.is_loop_tuning())
        .map(Warning::from)
        .collect()
}

/// Lock the process's memory so page faults cannot stall a measuring loop;
/// when the kernel refuses, say so (with its reason) and go on unlocked.
pub fn lock_memory(warnings: &mut Vec<Warning>) -> bool {
    match misura_sys::sched::lock_memory() {
        Ok(()) => true,
        Err(e) => {
            warnings.push(
                Warn::MemoryLockFailed {
                    error: e.to_string(),
                }
                .into(),
            );
            false
        }
    }
}
