//! The CPUs: frequency governor, boost, idle states, SMT, isolation.

use super::item::{cmdline_params, item};
use crate::readings::missing;
use misura_report::host::{CheckItem, Verdict};
use misura_sys::hostinfo::{self, Reading};

pub(super) fn governor(cpus: &[usize], virtualized: bool) -> CheckItem {
    let why = "a governor other than performance changes the frequency under the loop and stretches latencies";
    let govs: Vec<(usize, Reading)> = cpus
        .iter()
        .map(|c| {
            (
                *c,
                hostinfo::read(format!(
                    "/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor"
                )),
            )
        })
        .collect();
    if govs.iter().all(|(_, r)| *r == Reading::Absent) {
        let state = if virtualized {
            "no cpufreq: frequency is the hypervisor's"
        } else {
            "no cpufreq driver: frequency is the firmware's (check the BIOS power profile)"
        };
        return item(
            "host",
            "cpu governor",
            state,
            Verdict::NotApplicable,
            why,
            None,
        );
    }
    let mut distinct: Vec<String> = govs.iter().map(|(_, r)| missing(r)).collect();
    distinct.dedup();
    let state = if distinct.len() == 1 {
        format!("{} on all {} CPUs", distinct[0], govs.len())
    } else {
        govs.iter()
            .map(|(c, r)| format!("cpu{c} {}", missing(r)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let verdict = if govs.iter().all(|(_, r)| r.value() == Some("performance")) {
        Verdict::Ok
    } else if govs
        .iter()
        .any(|(_, r)| matches!(r, Reading::Unreadable(_)))
    {
        Verdict::Unknown
    } else {
        Verdict::Hurts
    };
    item(
        "host",
        "cpu governor",
        state,
        verdict,
        why,
        Some("cpupower frequency-set -g performance (or: echo performance | tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor)".into()),
    )
}

/// Boost (cpufreq) or turbo (intel_pstate).
pub(super) fn boost(virtualized: bool) -> CheckItem {
    let why = "turbo frequency depends on temperature and the other cores' load: the same code runs at varying speed";
    let it = |state: &str, verdict, command: Option<&str>| {
        item(
            "host",
            "cpu boost",
            state,
            verdict,
            why,
            command.map(str::to_string),
        )
    };
    let boost = hostinfo::read("/sys/devices/system/cpu/cpufreq/boost");
    let no_turbo = hostinfo::read("/sys/devices/system/cpu/intel_pstate/no_turbo");
    match (&boost, &no_turbo) {
        (Reading::Value(b), _) => it(
            if b == "1" { "on" } else { "off" },
            if b == "1" {
                Verdict::Hurts
            } else {
                Verdict::Ok
            },
            Some("echo 0 > /sys/devices/system/cpu/cpufreq/boost"),
        ),
        (_, Reading::Value(n)) => it(
            if n == "0" {
                "on (intel_pstate turbo)"
            } else {
                "off (intel_pstate no_turbo)"
            },
            if n == "0" {
                Verdict::Hurts
            } else {
                Verdict::Ok
            },
            Some("echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo"),
        ),
        (Reading::Unreadable(_), _) => it(&missing(&boost), Verdict::Unknown, None),
        _ => it(
            if virtualized {
                "no boost control: the hypervisor's"
            } else {
                "no boost control in sysfs"
            },
            Verdict::NotApplicable,
            None,
        ),
    }
}

/// Limits on idle states given at boot or as module parameters.
fn idle_limits(cmdline: &str) -> Vec<String> {
    let mut limits: Vec<String> = cmdline_params(
        cmdline,
        &[
            "intel_idle.max_cstate",
            "processor.max_cstate",
            "idle",
            "cpuidle.off",
        ],
    );
    for (m, p) in [
        ("intel_idle", "/sys/module/intel_idle/parameters/max_cstate"),
        ("processor", "/sys/module/processor/parameters/max_cstate"),
    ] {
        if let Reading::Value(x) = hostinfo::read(p) {
            limits.push(format!("{m}.max_cstate={x}"));
        }
    }
    limits.dedup();
    limits
}

pub(super) fn idle_states(cpus: &[usize], cmdline: &str, virtualized: bool) -> CheckItem {
    let why = "waking from a deep idle state takes its exit latency (tens to hundreds of µs) before a frame is handled";
    let driver = hostinfo::read(hostinfo::CPUIDLE_DRIVER);
    let governor = hostinfo::read("/sys/devices/system/cpu/cpuidle/current_governor");
    let states = cpus
        .first()
        .map(|c| hostinfo::idle_states(*c))
        .unwrap_or_default();
    let extra = idle_limits(cmdline);
    let deep: Vec<&hostinfo::IdleState> = states
        .iter()
        .filter(|s| !s.disabled && s.latency_us > 10)
        .collect();
    let state = if states.is_empty() {
        format!(
            "no cpuidle states (driver {}){}",
            missing(&driver),
            if virtualized {
                ": idle is the hypervisor's"
            } else {
                ""
            }
        )
    } else {
        format!(
            "driver {}, governor {}; cpu{} states: {}{}",
            missing(&driver),
            missing(&governor),
            cpus.first().copied().unwrap_or(0),
            states
                .iter()
                .map(|s| format!(
                    "{} {} µs{}",
                    s.name,
                    s.latency_us,
                    if s.disabled { " (disabled)" } else { "" }
                ))
                .collect::<Vec<_>>()
                .join(", "),
            if extra.is_empty() {
                String::new()
            } else {
                format!("; {}", extra.join(" "))
            }
        )
    };
    if let Some(item) = halt_polling(&driver, &state) {
        return item;
    }
    let verdict = if states.is_empty() {
        Verdict::NotApplicable
    } else if deep.is_empty() {
        Verdict::Ok
    } else {
        Verdict::Hurts
    };
    let command = (!states.is_empty()).then(|| match deep.first() {
        Some(s) => format!(
            "echo 1 | tee /sys/devices/system/cpu/cpu*/cpuidle/state{}/disable (each state over 10 µs; or boot with intel_idle.max_cstate=1 processor.max_cstate=1; or misura host tune --apply)",
            s.index
        ),
        None => "echo 1 | tee /sys/devices/system/cpu/cpu*/cpuidle/stateN/disable".into(),
    });
    item("host", "idle states", state, verdict, why, command)
}

/// Under the haltpoll driver (a KVM guest) the idle states are nominal: what
/// a wake-up costs is set by how long an idle vCPU polls before it halts.
/// `None` unless the driver is haltpoll and polling is turned off.
fn halt_polling(driver: &Reading, states: &str) -> Option<CheckItem> {
    if driver.value() != Some("haltpoll") {
        return None;
    }
    let ns = hostinfo::read(hostinfo::HALT_POLL_NS);
    if ns.value().and_then(|v| v.parse::<u64>().ok()) != Some(0) {
        return None;
    }
    Some(item(
        "host",
        "idle states",
        format!("{states}; guest halt polling off (guest_halt_poll_ns 0)"),
        Verdict::Hurts,
        "an idle vCPU halts at once and each wake-up of it goes through the hypervisor: on the lab, round trips across two vCPUs every 100 µs took 30.5 µs p50 with polling off and 9.9 µs with 200 µs (gaps longer than the poll halt either way)",
        Some(format!(
            "echo {} > {} (the kernel's default: an idle vCPU polls up to 200 µs before it halts, host CPU time) or misura host tune --apply",
            hostinfo::HALT_POLL_NS_DEFAULT,
            hostinfo::HALT_POLL_NS
        )),
    ))
}

pub(super) fn smt() -> CheckItem {
    let smt = hostinfo::read("/sys/devices/system/cpu/smt/control");
    let why =
        "a sibling hyper-thread shares the core's pipeline and caches with the measuring loop";
    let it = |state: String, verdict, command: Option<&str>| {
        item(
            "host",
            "SMT",
            state,
            verdict,
            why,
            command.map(str::to_string),
        )
    };
    match smt.value() {
        Some("on") => it(
            "on".into(),
            Verdict::Hurts,
            Some("echo off > /sys/devices/system/cpu/smt/control (or boot with nosmt)"),
        ),
        Some(s @ ("off" | "forceoff")) => it(
            s.into(),
            Verdict::Ok,
            Some("echo on > /sys/devices/system/cpu/smt/control"),
        ),
        Some(s @ ("notsupported" | "notimplemented")) => it(
            format!("{s} (no sibling threads)"),
            Verdict::NotApplicable,
            None,
        ),
        Some(s) => it(s.into(), Verdict::Unknown, None),
        None => it(missing(&smt), Verdict::Unknown, None),
    }
}

/// Isolated CPUs (isolcpus, nohz_full, rcu_nocbs).
pub(super) fn isolated(cpus: &[usize], cmdline: &str) -> CheckItem {
    let why = "on a CPU that is not isolated the scheduler, timers and RCU callbacks interrupt the measuring loop";
    let isolated = hostinfo::read("/sys/devices/system/cpu/isolated");
    let nohz = hostinfo::read("/sys/devices/system/cpu/nohz_full");
    let params = cmdline_params(
        cmdline,
        &["isolcpus", "nohz_full", "rcu_nocbs", "irqaffinity"],
    );
    let iso = isolated.value().unwrap_or("");
    let state = format!(
        "isolated: {}; nohz_full: {}; cmdline: {}",
        match &isolated {
            Reading::Value(s) if s.is_empty() => "none".into(),
            r => missing(r),
        },
        match &nohz {
            Reading::Value(s) if s.is_empty() || s == "(null)" => "none".into(),
            Reading::Absent => "not built in".into(),
            r => missing(r),
        },
        if params.is_empty() {
            "—".into()
        } else {
            params.join(" ")
        }
    );
    let verdict = if !iso.is_empty() {
        Verdict::Ok
    } else if matches!(isolated, Reading::Unreadable(_)) {
        Verdict::Unknown
    } else {
        Verdict::Hurts
    };
    let last = cpus.last().copied().unwrap_or(1);
    item(
        "host",
        "isolated CPUs",
        state,
        verdict,
        why,
        Some(format!(
            "add `isolcpus={last} nohz_full={last} rcu_nocbs={last}` to GRUB_CMDLINE_LINUX in /etc/default/grub, update-grub, reboot; then measure with --cpu {last}"
        )),
    )
}
