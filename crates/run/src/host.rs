//! The host fingerprint attached to every result, and the warnings that go
//! with it.

use misura_cli::warnings::Warn;
use misura_report::Warning;
use misura_report::{HostFacts, HostFingerprint, InterfaceFingerprint, LoopTuning};

/// The host fingerprint without interfaces.
pub fn fingerprint(tuning: LoopTuning) -> HostFingerprint {
    fingerprint_with_interfaces(tuning, &[])
}

/// The host fingerprint with the settings of the interfaces a measurement
/// uses (read in the calling thread's network namespace); an interface
/// named twice is listed once.
pub fn fingerprint_with_interfaces(tuning: LoopTuning, interfaces: &[&str]) -> HostFingerprint {
    HostFingerprint {
        facts: host_facts(),
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

/// The host facts `sys` reads, as the result records them.
pub fn host_facts() -> HostFacts {
    facts_of(misura_sys::host::host_facts())
}

/// `sys`'s facts as `report`'s own type (which `report` cannot convert: it
/// does not depend on `sys`), so that what `sys` reads can change without
/// changing the JSON.
fn facts_of(facts: misura_sys::host::HostFacts) -> HostFacts {
    let misura_sys::host::HostFacts {
        hostname,
        kernel_release,
        kernel_version,
        preempt_model,
        clocksource,
        cpu_model,
        online_cpus,
        governor,
        virtualized,
        tsc_flags,
    } = facts;
    HostFacts {
        hostname,
        kernel_release,
        kernel_version,
        preempt_model,
        clocksource,
        cpu_model,
        online_cpus,
        governor,
        virtualized,
        tsc_flags,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The result's facts serialise as `sys`'s own did: the same JSON, so
    /// that owning the type changed no result (and a change in `sys` that
    /// would have is caught here).
    #[test]
    fn facts_serialise_as_sys_facts() {
        let read = misura_sys::host::HostFacts {
            hostname: Some("tester".into()),
            kernel_release: Some("6.1.0-27-amd64".into()),
            kernel_version: Some("#1 SMP PREEMPT_DYNAMIC Debian 6.1.115-1".into()),
            preempt_model: Some("PREEMPT_DYNAMIC (full)".into()),
            clocksource: Some("tsc".into()),
            cpu_model: None,
            online_cpus: 2,
            governor: Some("performance".into()),
            virtualized: Some(true),
            tsc_flags: vec!["constant_tsc".into(), "nonstop_tsc".into()],
        };
        let want = serde_json::to_string(&read).unwrap();
        assert_eq!(serde_json::to_string(&facts_of(read)).unwrap(), want);
        let host = misura_sys::host::host_facts();
        let want = serde_json::to_string(&host).unwrap();
        assert_eq!(serde_json::to_string(&facts_of(host)).unwrap(), want);
    }
}
