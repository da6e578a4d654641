//! The host fingerprint attached to every result, and the warnings that go
//! with it.

use misura_report::{HostFingerprint, LoopTuning};

pub fn fingerprint(tuning: LoopTuning) -> HostFingerprint {
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
        w.push("memory not locked: page faults can stall the loop; run as root or raise `ulimit -l`".into());
    }
    if let Some(cs) = &h.clocksource {
        if cs != "tsc" && cs != "kvm-clock" {
            w.push(format!("clocksource is `{cs}`: reading it is slow; `tsc` is best where it is stable"));
        }
    }
    w
}
