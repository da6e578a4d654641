//! The kernel and the process: preemption, real-time extensions, the
//! clocksource, the memlock limit, timer slack, irqbalance.

use super::item::{cmdline_params, item};
use crate::readings::missing;
use misura_report::host::{CheckItem, Verdict};
use misura_sys::hostinfo::{self, Reading};

/// The preemption model (`model`: the kernel's own words, e.g.
/// "PREEMPT_DYNAMIC (voluntary)").
pub(super) fn preemption(model: &str, cmdline: &str) -> CheckItem {
    let why = "without kernel preemption a long kernel section delays the loop's wake-up and the softirq that delivers frames";
    let dbg = hostinfo::read("/sys/kernel/debug/sched/preempt");
    let cmd_preempt = cmdline_params(cmdline, &["preempt"]);
    let state = format!(
        "{model}{}; /sys/kernel/debug/sched/preempt: {}",
        if cmd_preempt.is_empty() {
            String::new()
        } else {
            format!(" (cmdline {})", cmd_preempt.join(" "))
        },
        match &dbg {
            Reading::Value(v) => v.clone(),
            Reading::Absent =>
                "absent (mode unreadable: mount -t debugfs none /sys/kernel/debug)".into(),
            Reading::Unreadable(w) => format!("unreadable: {w}"),
        }
    );
    let verdict = if model == "PREEMPT_RT"
        || model.contains("(full)")
        || model == "PREEMPT"
        || model.contains("(lazy)")
        || (model.starts_with("PREEMPT_DYNAMIC") && cmd_preempt.iter().any(|p| p == "preempt=full"))
    {
        Verdict::Ok
    } else if model.starts_with("PREEMPT_DYNAMIC") && dbg.value().is_none() {
        Verdict::Unknown
    } else {
        Verdict::Hurts
    };
    item(
        "host",
        "preemption model",
        state,
        verdict,
        why,
        Some(if model.starts_with("PREEMPT_DYNAMIC") {
            "boot with preempt=full (GRUB_CMDLINE_LINUX), or echo full > /sys/kernel/debug/sched/preempt".into()
        } else {
            "install a PREEMPT_RT kernel (Debian: apt install linux-image-rt-amd64) and reboot into it".into()
        }),
    )
}

/// A real-time kernel or co-kernel.
pub(super) fn realtime(model: &str) -> CheckItem {
    let why = "a real-time kernel (PREEMPT_RT) or co-kernel (Xenomai/Cobalt, EVL/Dovetail) bounds scheduling latency";
    let realtime = hostinfo::read("/sys/kernel/realtime");
    let mut found = Vec::new();
    if realtime.value() == Some("1") || model == "PREEMPT_RT" {
        found.push("PREEMPT_RT");
    }
    if hostinfo::exists("/proc/xenomai") {
        found.push("Xenomai (/proc/xenomai)");
    }
    if hostinfo::exists("/sys/kernel/evl") {
        found.push("EVL/Dovetail (/sys/kernel/evl)");
    }
    if found.is_empty() {
        item(
            "host",
            "real-time kernel",
            "none (no PREEMPT_RT, no /proc/xenomai, no /sys/kernel/evl)",
            Verdict::NotApplicable,
            why,
            Some(
                "apt install linux-image-rt-amd64 and reboot (Xenomai/EVL need a patched kernel)"
                    .into(),
            ),
        )
    } else {
        item(
            "host",
            "real-time kernel",
            found.join(", "),
            Verdict::Ok,
            why,
            None,
        )
    }
}

pub(super) fn clocksource() -> CheckItem {
    let why =
        "every timestamp reads the clocksource: tsc costs tens of ns, hpet/acpi_pm microseconds";
    let cur = hostinfo::read("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    let avail =
        hostinfo::read("/sys/devices/system/clocksource/clocksource0/available_clocksource");
    let state = format!("{} (available: {})", missing(&cur), missing(&avail));
    let verdict = match cur.value() {
        Some("tsc") | Some("kvm-clock") | Some("arch_sys_counter") => Verdict::Ok,
        Some(_) => Verdict::Hurts,
        None => Verdict::Unknown,
    };
    let tsc_avail = avail
        .value()
        .is_some_and(|a| a.split_whitespace().any(|x| x == "tsc"));
    item(
        "host",
        "clocksource",
        state,
        verdict,
        why,
        Some(if tsc_avail {
            "echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource".into()
        } else {
            "echo NAME > /sys/devices/system/clocksource/clocksource0/current_clocksource".into()
        }),
    )
}

pub(super) fn memlock() -> CheckItem {
    let why = "misura locks its memory (mlockall) so page faults cannot stall the loop; the limit must allow it";
    let privileged = misura_sys::host::is_root()
        || misura_sys::host::has_capability(misura_sys::host::CAP_IPC_LOCK);
    match hostinfo::memlock_limit() {
        Ok((soft, hard)) => {
            let show =
                |x: Option<u64>| x.map_or("unlimited".to_string(), |b| format!("{} KiB", b / 1024));
            let enough = soft.is_none_or(|b| b >= 256 << 20);
            item(
                "host",
                "memlock limit",
                format!(
                    "soft {}, hard {}{}",
                    show(soft),
                    show(hard),
                    if privileged { " (CAP_IPC_LOCK: not limited)" } else { "" }
                ),
                if privileged || enough { Verdict::Ok } else { Verdict::Hurts },
                why,
                Some("ulimit -l unlimited (persistently: `USER - memlock unlimited` in /etc/security/limits.conf)".into()),
            )
        }
        Err(e) => item(
            "host",
            "memlock limit",
            format!("unreadable: {e}"),
            Verdict::Unknown,
            why,
            None,
        ),
    }
}

pub(super) fn timer_slack() -> CheckItem {
    let why = "timed sleeps (pacing, clock timer) may wake this late; SCHED_FIFO threads (--rt-priority) get 0";
    match hostinfo::timer_slack_ns() {
        Ok(ns) => item(
            "host",
            "timer slack",
            format!("{ns} ns (inherited by misura from its parent)"),
            if ns <= 1000 {
                Verdict::Ok
            } else {
                Verdict::Hurts
            },
            why,
            Some("run misura with --rt-priority N (slack 0 under SCHED_FIFO)".into()),
        ),
        Err(e) => item(
            "host",
            "timer slack",
            format!("unreadable: {e}"),
            Verdict::Unknown,
            why,
            None,
        ),
    }
}

pub(super) fn irqbalance() -> CheckItem {
    let why = "irqbalance moves the NICs' interrupts between CPUs while measuring";
    if hostinfo::running(&["irqbalance"]).is_empty() {
        item(
            "host",
            "irqbalance",
            if hostinfo::which("irqbalance").is_some() {
                "installed, not running"
            } else {
                "not running (not installed)"
            },
            Verdict::Ok,
            why,
            None,
        )
    } else {
        item(
            "host",
            "irqbalance",
            "running",
            Verdict::Hurts,
            why,
            Some("systemctl stop irqbalance".into()),
        )
    }
}
