//! Best-effort facts about the host that affect timing.

/// `CAP_NET_ADMIN` bit.
pub const CAP_NET_ADMIN: u32 = 12;
/// `CAP_NET_RAW` bit.
pub const CAP_NET_RAW: u32 = 13;
/// `CAP_IPC_LOCK` bit.
pub const CAP_IPC_LOCK: u32 = 14;
/// `CAP_SYS_ADMIN` bit.
pub const CAP_SYS_ADMIN: u32 = 21;
/// `CAP_SYS_NICE` bit.
pub const CAP_SYS_NICE: u32 = 23;

/// Facts that affect timing; every field is best effort (`None` when unreadable).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn c_field(f: &[libc::c_char]) -> Option<String> {
    Some(crate::sys::c_buf_to_string(f)).filter(|s| !s.is_empty())
}

/// Gathers [`HostFacts`]; never fails.
pub fn host_facts() -> HostFacts {
    // SAFETY: utsname is plain old data; all-zero is a valid value.
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `uts` is a valid, writable utsname.
    let ok = unsafe { libc::uname(&mut uts) } == 0;
    let (hostname, kernel_release, kernel_version) = if ok {
        (
            c_field(&uts.nodename),
            c_field(&uts.release),
            c_field(&uts.version),
        )
    } else {
        (None, None, None)
    };

    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |key: &str| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().to_string())
        })
    };
    let cpu_model = field("model name")
        .or_else(|| field("Model"))
        .or_else(|| field("cpu model"));
    let flags = field("flags");
    let virtualized = flags
        .as_ref()
        .map(|f| f.split_whitespace().any(|x| x == "hypervisor"));
    let tsc_flags = flags
        .as_ref()
        .map(|f| {
            ["constant_tsc", "nonstop_tsc", "tsc_known_freq"]
                .iter()
                .filter(|want| f.split_whitespace().any(|x| x == **want))
                .map(|s| s.to_string())
                .collect()
        })
        .unwrap_or_default();

    HostFacts {
        preempt_model: preempt_model(kernel_version.as_deref()),
        hostname,
        kernel_release,
        kernel_version,
        clocksource: read_trim("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        cpu_model,
        online_cpus: crate::sched::online_cpus(),
        governor: read_trim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        virtualized,
        tsc_flags,
    }
}

fn preempt_model(version: Option<&str>) -> Option<String> {
    if read_trim("/sys/kernel/realtime").as_deref() == Some("1") {
        return Some("PREEMPT_RT".into());
    }
    // "none voluntary (full) lazy": the parenthesised word is in force.
    let dynamic_mode = read_trim("/sys/kernel/debug/sched/preempt").and_then(|s| {
        let start = s.find('(')?;
        let end = s[start..].find(')')? + start;
        Some(s[start + 1..end].to_string())
    });
    let v = version?;
    let words: Vec<&str> = v.split_whitespace().collect();
    if words.contains(&"PREEMPT_RT") {
        Some("PREEMPT_RT".into())
    } else if words.contains(&"PREEMPT_DYNAMIC") {
        Some(match dynamic_mode {
            Some(m) => format!("PREEMPT_DYNAMIC ({m})"),
            None => "PREEMPT_DYNAMIC".into(),
        })
    } else if let Some(m) = dynamic_mode {
        Some(format!("PREEMPT_DYNAMIC ({m})"))
    } else if words.contains(&"PREEMPT") {
        Some("PREEMPT".into())
    } else if words.contains(&"PREEMPT_LAZY") {
        Some("PREEMPT_LAZY".into())
    } else {
        Some("none or voluntary".into())
    }
}

/// One CPU's time counters from `/proc/stat`, in clock ticks since boot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuTimes {
    /// The CPU's number (`cpuN`).
    pub cpu: usize,
    /// user + nice + system + irq + softirq + steal.
    pub busy: u64,
    /// busy + idle + iowait.
    pub total: u64,
}

/// Every CPU's counters from `/proc/stat` (empty if it cannot be read).
pub fn cpu_times() -> Vec<CpuTimes> {
    std::fs::read_to_string("/proc/stat")
        .map(|t| parse_proc_stat(&t))
        .unwrap_or_default()
}

/// The `cpuN` lines of a `/proc/stat` text (the summary `cpu` line is
/// skipped; guest time is already inside user time).
pub fn parse_proc_stat(text: &str) -> Vec<CpuTimes> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let cpu = w.next()?.strip_prefix("cpu")?.parse::<usize>().ok()?;
            let v: Vec<u64> = w.take(8).map_while(|x| x.parse().ok()).collect();
            if v.len() < 5 {
                return None;
            }
            let at = |i: usize| v.get(i).copied().unwrap_or(0);
            let busy = at(0) + at(1) + at(2) + at(5) + at(6) + at(7);
            Some(CpuTimes {
                cpu,
                busy,
                total: busy + at(3) + at(4),
            })
        })
        .collect()
}

/// The effective user is root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The process has capability bit `cap_bit` in its effective set
/// (`CapEff` of /proc/self/status); false when unreadable.
pub fn has_capability(cap_bit: u32) -> bool {
    if cap_bit >= 64 {
        return false;
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .is_some_and(|mask| mask & (1u64 << cap_bit) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_lines_give_busy_and_total_per_cpu() {
        let t = "cpu  10 0 5 100 1 0 0 0 0 0\ncpu0 4 1 2 50 1 1 1 2 7 0\ncpu1 6 0 3 50 0 0 0 0 0 0\nintr 5\n";
        assert_eq!(
            parse_proc_stat(t),
            vec![
                CpuTimes {
                    cpu: 0,
                    busy: 11,
                    total: 62
                },
                CpuTimes {
                    cpu: 1,
                    busy: 9,
                    total: 59
                },
            ]
        );
        assert!(!cpu_times().is_empty());
    }

    #[test]
    fn facts_are_gathered() {
        let f = host_facts();
        assert!(f.kernel_release.is_some(), "{f:?}");
        assert!(f.kernel_version.is_some());
        assert!(f.preempt_model.is_some());
        assert!(f.online_cpus >= 1);
    }

    #[test]
    fn capabilities() {
        if is_root() {
            assert!(has_capability(CAP_NET_RAW));
            assert!(has_capability(CAP_NET_ADMIN));
        }
        assert!(!has_capability(64));
    }

    #[test]
    fn preempt_from_version_text() {
        let m = preempt_model(Some("#1 SMP PREEMPT_DYNAMIC Debian")).unwrap();
        assert!(m.starts_with("PREEMPT_DYNAMIC") || m == "PREEMPT_RT", "{m}");
        let m = preempt_model(Some("#1 SMP PREEMPT_RT Debian")).unwrap();
        assert_eq!(m, "PREEMPT_RT");
    }
}
