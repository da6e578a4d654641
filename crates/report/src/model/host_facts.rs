//! The host facts that affect timing, as a result records them: the
//! report's own copy of `sys`'s `HostFacts`, converted with `From`, so that
//! what `sys` reads can change without changing the JSON.

use serde::{Deserialize, Serialize};

/// Facts that affect timing; every field is best effort (`None` when unreadable).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostFacts {
    /// `uname -n`.
    pub hostname: Option<String>,
    /// `uname -r`.
    pub kernel_release: Option<String>,
    /// `uname -v` (build string; names PREEMPT / PREEMPT_DYNAMIC / PREEMPT_RT).
    pub kernel_version: Option<String>,
    /// `PREEMPT_RT`, `PREEMPT_DYNAMIC (full)` (mode from
    /// /sys/kernel/debug/sched/preempt when readable), `PREEMPT`, or
    /// `none or voluntary` when the build string names none.
    pub preempt_model: Option<String>,
    /// Current clocksource (`tsc`, `kvm-clock`, `hpet`, ...).
    pub clocksource: Option<String>,
    /// CPU model name from /proc/cpuinfo.
    pub cpu_model: Option<String>,
    /// Online CPUs.
    pub online_cpus: usize,
    /// cpu0's cpufreq governor.
    pub governor: Option<String>,
    /// Running under a hypervisor (`hypervisor` CPU flag).
    pub virtualized: Option<bool>,
    /// Which of `constant_tsc`, `nonstop_tsc`, `tsc_known_freq` the CPU has.
    pub tsc_flags: Vec<String>,
}
