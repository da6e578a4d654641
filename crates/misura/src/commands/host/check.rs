//! `misura host check` — what on this host affects timing precision — and
//! `misura host tune` — the safe changes, applied and reverted.
//!
//! Every item is read on its own: an unreadable file or a driver without
//! the feature becomes that item's state ("unreadable: permission denied",
//! "not supported by driver veth"), never a failure of the command.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use misura_report::host::{
    self as model, CheckItem, HostCheckReport, PlanEntry, SettingKind, TuneReport, TuneState,
    Verdict, VerdictCounts,
};
use misura_report::LoopTuning;
use misura_sys::ethtool;
use misura_sys::hostinfo::{self, Reading};
use misura_sys::SysError;

use crate::shared::exit;
use crate::shared::output::{Finished, Report};

pub const CHECK_LONG_ABOUT: &str = "\
What on this host affects timing precision: each item with its current state, a
verdict (ok / hurts precision / unknown / n/a), why it matters and the exact
command that changes it.

Host: CPU frequency governor and boost, idle states, SMT, isolated CPUs
(isolcpus, nohz_full, rcu_nocbs), the kernel's preemption model and real-time
extensions (PREEMPT_RT, Xenomai, EVL/Dovetail), the clocksource, the memlock
limit, timer slack, irqbalance. Per interface: link speed and duplex,
Energy-Efficient Ethernet, interrupt coalescing, GRO/LRO/GSO/TSO, IRQ affinity,
hardware timestamping capabilities and filters, the PTP clock. Time sync:
chronyd/ntpd/ptp4l/phc2sys, the kernel's synchronisation state, chronyc tracking.

Without --interface every interface of the namespace but lo is checked.
Nothing needs privilege; what cannot be read says so.

Examples:
    misura host check
    misura host check --interface enp1s0 --interface enp2s0 --json
    misura host check --netns misura-tester";

pub const TUNE_LONG_ABOUT: &str = "\
The safe changes that make timing more precise, with the exact commands and the
current → new values: CPU governor `performance`, idle states deeper than 10 µs
disabled, and on the measured interfaces EEE off, interrupt coalescing
rx-usecs 0 / rx-frames 1 / adaptive off, GRO/LRO/GSO/TSO off.

Without --apply only the plan is printed. --apply (root) applies it and writes
the old values to a state file (default under the user's data directory,
printed); --revert FILE restores exactly those values. What this machine
cannot change is reported as skipped, with the reason.

Examples:
    misura host tune --interface enp1s0 --interface enp2s0
    sudo misura host tune --interface enp1s0 --interface enp2s0 --apply
    sudo misura host tune --revert ~/.local/share/misura/host-tune-20250101T120000Z.json
    misura host tune --netns misura-tester --interface p1 --interface p2";

#[derive(clap::Args, Debug, Clone)]
pub struct CheckArgs {
    /// An interface to check (repeatable); default: every interface but lo.
    #[arg(long = "interface", short = 'i', value_name = "IF")]
    pub interfaces: Vec<String>,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
    #[command(flatten)]
    pub ns: crate::shared::netns::NetnsArgs,
}

#[derive(clap::Args, Debug, Clone)]
pub struct TuneArgs {
    /// A measured interface to tune (repeatable); without one only host-wide settings are planned.
    #[arg(long = "interface", short = 'i', value_name = "IF")]
    pub interfaces: Vec<String>,
    /// Apply the plan (without it, only print it). Needs root.
    #[arg(long, conflicts_with = "revert")]
    pub apply: bool,
    /// Where --apply writes the old values (default: DATA_DIR/misura/host-tune-TIME.json).
    #[arg(long, value_name = "FILE", requires = "apply")]
    pub state_file: Option<PathBuf>,
    /// Restore the values recorded in FILE by an earlier --apply. Needs root.
    #[arg(long, value_name = "FILE")]
    pub revert: Option<PathBuf>,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
    #[command(flatten)]
    pub ns: crate::shared::netns::NetnsArgs,
}

// ---- check ----------------------------------------------------------------

fn item(
    scope: &str,
    name: &str,
    state: impl Into<String>,
    verdict: Verdict,
    why: &str,
    command: Option<String>,
) -> CheckItem {
    CheckItem {
        scope: scope.to_string(),
        item: name.to_string(),
        state: state.into(),
        verdict,
        why: why.to_string(),
        command,
    }
}

/// The state of a reading that has no value.
fn missing(r: &Reading) -> String {
    match r {
        Reading::Value(v) => v.clone(),
        Reading::Absent => "absent".into(),
        Reading::Unreadable(why) => format!("unreadable: {why}"),
    }
}

/// The state of a failed ethtool read, in words.
fn sys_state(e: &SysError) -> String {
    match e {
        SysError::Unsupported { why, .. } => why.clone(),
        SysError::NeedCapability { .. } => "unreadable: permission denied".into(),
        other => format!("unreadable: {other}"),
    }
}

fn cmdline_params(cmdline: &str, keys: &[&str]) -> Vec<String> {
    cmdline
        .split_whitespace()
        .take_while(|w| *w != "--")
        .filter(|w| keys.iter().any(|k| w.split('=').next() == Some(k)))
        .map(str::to_string)
        .collect()
}

fn host_items(virtualized: bool, preempt: Option<&str>) -> Vec<CheckItem> {
    let mut v = Vec::new();
    let cpus = hostinfo::cpus();
    let cmdline = hostinfo::read("/proc/cmdline")
        .value()
        .unwrap_or("")
        .to_string();

    // Governor.
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
        v.push(item(
            "host",
            "cpu governor",
            state,
            Verdict::NotApplicable,
            why,
            None,
        ));
    } else {
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
        v.push(item(
            "host",
            "cpu governor",
            state,
            verdict,
            why,
            Some("cpupower frequency-set -g performance (or: echo performance | tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor)".into()),
        ));
    }

    // Boost / turbo.
    let why = "turbo frequency depends on temperature and the other cores' load: the same code runs at varying speed";
    let boost = hostinfo::read("/sys/devices/system/cpu/cpufreq/boost");
    let no_turbo = hostinfo::read("/sys/devices/system/cpu/intel_pstate/no_turbo");
    v.push(match (&boost, &no_turbo) {
        (Reading::Value(b), _) => item(
            "host",
            "cpu boost",
            if b == "1" { "on" } else { "off" },
            if b == "1" {
                Verdict::Hurts
            } else {
                Verdict::Ok
            },
            why,
            Some("echo 0 > /sys/devices/system/cpu/cpufreq/boost".into()),
        ),
        (_, Reading::Value(n)) => item(
            "host",
            "cpu boost",
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
            why,
            Some("echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo".into()),
        ),
        (Reading::Unreadable(_), _) => item(
            "host",
            "cpu boost",
            missing(&boost),
            Verdict::Unknown,
            why,
            None,
        ),
        _ => item(
            "host",
            "cpu boost",
            if virtualized {
                "no boost control: the hypervisor's"
            } else {
                "no boost control in sysfs"
            },
            Verdict::NotApplicable,
            why,
            None,
        ),
    });

    // Idle states.
    let why = "waking from a deep idle state takes its exit latency (tens to hundreds of µs) before a frame is handled";
    let driver = hostinfo::read("/sys/devices/system/cpu/cpuidle/current_driver");
    let governor = hostinfo::read("/sys/devices/system/cpu/cpuidle/current_governor");
    let states = cpus
        .first()
        .map(|c| hostinfo::idle_states(*c))
        .unwrap_or_default();
    let mut extra: Vec<String> = cmdline_params(
        &cmdline,
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
            extra.push(format!("{m}.max_cstate={x}"));
        }
    }
    extra.dedup();
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
    v.push(item("host", "idle states", state, verdict, why, command));

    // SMT.
    let smt = hostinfo::read("/sys/devices/system/cpu/smt/control");
    let why =
        "a sibling hyper-thread shares the core's pipeline and caches with the measuring loop";
    v.push(match smt.value() {
        Some("on") => item(
            "host",
            "SMT",
            "on",
            Verdict::Hurts,
            why,
            Some("echo off > /sys/devices/system/cpu/smt/control (or boot with nosmt)".into()),
        ),
        Some(s @ ("off" | "forceoff")) => item(
            "host",
            "SMT",
            s,
            Verdict::Ok,
            why,
            Some("echo on > /sys/devices/system/cpu/smt/control".into()),
        ),
        Some(s @ ("notsupported" | "notimplemented")) => item(
            "host",
            "SMT",
            format!("{s} (no sibling threads)"),
            Verdict::NotApplicable,
            why,
            None,
        ),
        Some(s) => item("host", "SMT", s, Verdict::Unknown, why, None),
        None => item("host", "SMT", missing(&smt), Verdict::Unknown, why, None),
    });

    // Isolated CPUs.
    let why = "on a CPU that is not isolated the scheduler, timers and RCU callbacks interrupt the measuring loop";
    let isolated = hostinfo::read("/sys/devices/system/cpu/isolated");
    let nohz = hostinfo::read("/sys/devices/system/cpu/nohz_full");
    let params = cmdline_params(
        &cmdline,
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
    v.push(item(
        "host",
        "isolated CPUs",
        state,
        verdict,
        why,
        Some(format!(
            "add `isolcpus={last} nohz_full={last} rcu_nocbs={last}` to GRUB_CMDLINE_LINUX in /etc/default/grub, update-grub, reboot; then measure with --cpu {last}"
        )),
    ));

    // Preemption model.
    let why = "without kernel preemption a long kernel section delays the loop's wake-up and the softirq that delivers frames";
    let realtime = hostinfo::read("/sys/kernel/realtime");
    let dbg = hostinfo::read("/sys/kernel/debug/sched/preempt");
    let model = preempt.unwrap_or("unknown");
    let cmd_preempt = cmdline_params(&cmdline, &["preempt"]);
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
    v.push(item(
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
    ));

    // Real-time kernel or co-kernel.
    let why = "a real-time kernel (PREEMPT_RT) or co-kernel (Xenomai/Cobalt, EVL/Dovetail) bounds scheduling latency";
    let xenomai = hostinfo::exists("/proc/xenomai");
    let evl = hostinfo::exists("/sys/kernel/evl");
    let mut found = Vec::new();
    if realtime.value() == Some("1") || model == "PREEMPT_RT" {
        found.push("PREEMPT_RT");
    }
    if xenomai {
        found.push("Xenomai (/proc/xenomai)");
    }
    if evl {
        found.push("EVL/Dovetail (/sys/kernel/evl)");
    }
    v.push(if found.is_empty() {
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
    });

    // Clocksource.
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
    v.push(item(
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
    ));

    // Memlock.
    let why = "misura locks its memory (mlockall) so page faults cannot stall the loop; the limit must allow it";
    let privileged = misura_sys::host::is_root()
        || misura_sys::host::has_capability(misura_sys::host::CAP_IPC_LOCK);
    v.push(match hostinfo::memlock_limit() {
        Ok((soft, hard)) => {
            let show = |x: Option<u64>| x.map_or("unlimited".to_string(), |b| format!("{} KiB", b / 1024));
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
        Err(e) => item("host", "memlock limit", format!("unreadable: {e}"), Verdict::Unknown, why, None),
    });

    // Timer slack.
    let why = "timed sleeps (pacing, clock timer) may wake this late; SCHED_FIFO threads (--rt-priority) get 0";
    v.push(match hostinfo::timer_slack_ns() {
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
    });

    // irqbalance.
    let why = "irqbalance moves the NICs' interrupts between CPUs while measuring";
    let running = hostinfo::running(&["irqbalance"]);
    v.push(if running.is_empty() {
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
    });
    v
}

fn iface_items(name: &str, netns: Option<&str>) -> Vec<CheckItem> {
    let ns = netns
        .map(|n| format!("ip netns exec {n} "))
        .unwrap_or_default();
    let mut v = Vec::new();
    let info = misura_sys::iface::interface_info(name).ok();
    let driver = info
        .as_ref()
        .and_then(|i| i.driver.clone())
        .unwrap_or_else(|| "unknown".into());

    // Link.
    let why = "the wire time C = bits / link rate enters every latency; a renegotiated or half-duplex link changes it";
    v.push(match ethtool::link_mode(name) {
        Ok(l) => item(
            name,
            "link",
            format!(
                "{}, duplex {}, autoneg {} (driver {driver}, {})",
                l.speed_mbps
                    .map_or("speed unknown".into(), |s| format!("{s} Mb/s")),
                l.duplex,
                if l.autoneg { "on" } else { "off" },
                info.as_ref()
                    .map_or("state unknown", |i| i.operstate.as_str())
            ),
            if l.speed_mbps.is_some() && l.duplex == "full" {
                Verdict::Ok
            } else {
                Verdict::Unknown
            },
            why,
            Some(format!(
                "{ns}ethtool -s {name} speed SPEED duplex full autoneg off"
            )),
        ),
        Err(e) => item(name, "link", sys_state(&e), Verdict::Unknown, why, None),
    });

    // EEE.
    let why = "Energy-Efficient Ethernet puts the link to sleep between frames; waking it adds microseconds";
    v.push(match ethtool::eee(name) {
        Ok(e) => item(
            name,
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
            Some(format!("{ns}ethtool --set-eee {name} eee off")),
        ),
        Err(e @ SysError::Unsupported { .. }) => item(
            name,
            "EEE",
            sys_state(&e),
            Verdict::NotApplicable,
            why,
            None,
        ),
        Err(e) => item(name, "EEE", sys_state(&e), Verdict::Unknown, why, None),
    });

    // Coalescing.
    let why =
        "interrupt moderation holds received frames for rx-usecs or rx-frames before interrupting";
    v.push(match ethtool::coalesce(name) {
        Ok(c) => {
            let g = |k: &str| c.get(k).unwrap_or(0);
            let onoff = |k: &str| if g(k) != 0 { "on" } else { "off" };
            let hurts = g("rx-usecs") > 0 || g("rx-frames") > 1 || g("adaptive-rx") != 0;
            item(
                name,
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
                Some(format!("{ns}ethtool -C {name} adaptive-rx off adaptive-tx off rx-usecs 0 rx-frames 1")),
            )
        }
        Err(e @ SysError::Unsupported { .. }) => item(name, "coalescing", sys_state(&e), Verdict::NotApplicable, why, None),
        Err(e) => item(name, "coalescing", sys_state(&e), Verdict::Unknown, why, None),
    });

    // Offloads.
    for (off, why) in [
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
    ] {
        v.push(match ethtool::offload(name, off) {
            Ok(on) => item(
                name,
                off,
                if on { "on" } else { "off" },
                if on { Verdict::Hurts } else { Verdict::Ok },
                why,
                Some(format!(
                    "{ns}ethtool -K {name} {off} {}",
                    if on { "off" } else { "on" }
                )),
            ),
            Err(e @ SysError::Unsupported { .. }) => {
                item(name, off, sys_state(&e), Verdict::NotApplicable, why, None)
            }
            Err(e) => item(name, off, sys_state(&e), Verdict::Unknown, why, None),
        });
    }

    // IRQ affinity.
    let why =
        "an interface IRQ that floats between CPUs, or lands on the measuring CPU, adds jitter";
    v.push(
        match hostinfo::interface_irqs(name, info.as_ref().map(|i| i.index)) {
            Ok(irqs) if irqs.is_empty() => item(
                name,
                "IRQ affinity",
                format!("no IRQs of its own (driver {driver})"),
                Verdict::NotApplicable,
                why,
                None,
            ),
            Ok(irqs) => {
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
                    name,
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
            Err(e) => item(
                name,
                "IRQ affinity",
                format!("unreadable: {e}"),
                Verdict::Unknown,
                why,
                None,
            ),
        },
    );

    // Timestamping and PTP clock.
    let why =
        "hardware timestamps are taken at the wire; software ones include the driver and the stack";
    match misura_sys::tsinfo::get_ts_info(name) {
        Ok(t) => {
            let caps = t.describe();
            v.push(item(
                name,
                "timestamping",
                format!(
                    "{}; tx types: {}; rx filters: {}",
                    if caps.is_empty() { "none".into() } else { caps.join(", ") },
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
            ));
            let why = "the NIC's PTP clock stamps frames; it must be disciplined (phc2sys) to compare with CLOCK_REALTIME";
            v.push(match t.phc_index {
                Some(i) => {
                    let dev = format!("/dev/ptp{i}");
                    item(
                        name,
                        "PTP clock",
                        format!(
                            "{dev}{}",
                            if hostinfo::exists(&dev) {
                                ""
                            } else {
                                " (device node missing)"
                            }
                        ),
                        if hostinfo::exists(&dev) {
                            Verdict::Ok
                        } else {
                            Verdict::Unknown
                        },
                        why,
                        Some(format!(
                            "phc2sys -s {dev} -c CLOCK_REALTIME -O 0 (or ptp4l -i {name})"
                        )),
                    )
                }
                None => item(name, "PTP clock", "none", Verdict::NotApplicable, why, None),
            });
        }
        Err(e) => {
            v.push(item(
                name,
                "timestamping",
                sys_state(&e),
                Verdict::Unknown,
                why,
                None,
            ));
            v.push(item(
                name,
                "PTP clock",
                "unknown (no ETHTOOL_GET_TS_INFO)",
                Verdict::Unknown,
                why,
                None,
            ));
        }
    }
    v
}

fn none_if_empty(v: Vec<String>) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// Runs `cmd` with a deadline; stdout when it exits 0 in time.
fn run_with_timeout(cmd: &Path, args: &[&str], limit: Duration) -> Result<String, String> {
    let mut child = Command::new(cmd)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", cmd.display()))?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{} did not answer within {} s",
                    cmd.display(),
                    limit.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(e.to_string()),
        }
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

fn timesync_items() -> Vec<CheckItem> {
    let mut v = Vec::new();
    let daemons = ["chronyd", "ntpd", "ptp4l", "phc2sys", "systemd-timesyncd"];
    let running = hostinfo::running(&daemons);
    let state = daemons
        .iter()
        .map(|d| {
            let inst = hostinfo::which(d).is_some()
                || (*d == "systemd-timesyncd"
                    && hostinfo::exists("/lib/systemd/systemd-timesyncd"));
            let run = running.iter().any(|r| r == d);
            format!(
                "{d} {}",
                match (inst, run) {
                    (_, true) => "running",
                    (true, false) => "installed, stopped",
                    (false, false) => "absent",
                }
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    v.push(item(
        "time sync",
        "daemons",
        state,
        if running.is_empty() { Verdict::NotApplicable } else { Verdict::Ok },
        "stamps from two hosts (rtt, reflect) compare only when a daemon disciplines both clocks; one clock needs none",
        Some(if running.is_empty() {
            "systemctl start chrony (or ptp4l + phc2sys for PTP)".into()
        } else {
            "systemctl stop chrony (a stepping or slewing clock moves CLOCK_REALTIME stamps)".into()
        }),
    ));
    let why = "the kernel's synchronisation state (adjtimex): whether a daemon disciplines CLOCK_REALTIME, and its error bound";
    v.push(match misura_sys::timesync::time_sync() {
        Ok(s) => item(
            "time sync",
            "kernel clock",
            if s.synchronized {
                format!(
                    "synchronised, max error {:.3} ms, estimated error {:.3} ms",
                    s.max_error_ns as f64 / 1e6,
                    s.est_error_ns as f64 / 1e6
                )
            } else {
                "not synchronised (STA_UNSYNC)".into()
            },
            if s.synchronized {
                Verdict::Ok
            } else {
                Verdict::Hurts
            },
            why,
            (!s.synchronized).then(|| {
                "systemctl start chrony (or chronyd -q to set the clock once)".to_string()
            }),
        ),
        Err(e) => item(
            "time sync",
            "kernel clock",
            format!("unreadable: {e}"),
            Verdict::Unknown,
            why,
            None,
        ),
    });
    let why = "chrony's own view: stratum, offset and frequency error of the system clock";
    let chronyc = hostinfo::which("chronyc");
    v.push(match (chronyc, running.iter().any(|r| r == "chronyd")) {
        (None, _) => item(
            "time sync",
            "chrony tracking",
            "chronyc not installed",
            Verdict::NotApplicable,
            why,
            None,
        ),
        (Some(_), false) => item(
            "time sync",
            "chrony tracking",
            "chronyd not running",
            Verdict::NotApplicable,
            why,
            None,
        ),
        (Some(c), true) => {
            match run_with_timeout(&c, &["-n", "-c", "tracking"], Duration::from_secs(3)) {
                Ok(out) => {
                    let f: Vec<&str> = out.trim().split(',').collect();
                    if f.len() >= 14 {
                        let synced = f[2] != "0" && f[13] != "Not synchronised";
                        item(
                            "time sync",
                            "chrony tracking",
                            format!(
                            "reference {} ({}), stratum {}, offset {} s, frequency {} ppm, leap {}",
                            f[1], f[0], f[2], f[4], f[7], f[13]
                        ),
                            if synced { Verdict::Ok } else { Verdict::Hurts },
                            why,
                            Some("chronyc sources -v (to see why)".into()),
                        )
                    } else {
                        item(
                            "time sync",
                            "chrony tracking",
                            format!("unexpected answer: {}", out.trim()),
                            Verdict::Unknown,
                            why,
                            None,
                        )
                    }
                }
                Err(e) => item(
                    "time sync",
                    "chrony tracking",
                    format!("unreadable: {e}"),
                    Verdict::Unknown,
                    why,
                    None,
                ),
            }
        }
    });
    v
}

/// The interfaces to look at: those named, after checking that they exist,
/// or every interface of the namespace but lo.
fn resolve_interfaces(named: &[String]) -> Result<Vec<String>> {
    if named.is_empty() {
        let mut all: Vec<String> = hostinfo::interface_names()
            .into_iter()
            .filter(|n| n != "lo")
            .collect();
        all.sort();
        return Ok(all);
    }
    let mut out: Vec<String> = Vec::new();
    for n in named {
        misura_sys::iface::interface_index(n)?;
        if !out.contains(n) {
            out.push(n.clone());
        }
    }
    Ok(out)
}

pub fn check(args: &CheckArgs) -> Result<Finished> {
    let started_at = crate::shared::meta::now_rfc3339();
    let interfaces = resolve_interfaces(&args.interfaces)?;
    let refs: Vec<&str> = interfaces.iter().map(String::as_str).collect();
    let host = crate::shared::host::fingerprint_with_interfaces(
        LoopTuning {
            netns: args.ns.netns.clone(),
            ..LoopTuning::default()
        },
        &refs,
    );
    let mut items = host_items(
        host.virtualized == Some(true),
        host.preempt_model.as_deref(),
    );
    for i in &interfaces {
        items.extend(iface_items(i, args.ns.netns.as_deref()));
    }
    items.extend(timesync_items());
    let report = HostCheckReport {
        meta: crate::shared::meta::meta(model::CHECK_FORMAT, started_at),
        netns: args.ns.netns.clone(),
        host,
        interfaces,
        counts: VerdictCounts::of(&items),
        items,
    };
    let target = args.ns.netns.clone().unwrap_or_else(|| "this host".into());
    Ok(Finished::ok(Report::new(
        report,
        "host-check",
        target,
        model::write_check_text,
    )))
}

// ---- tune -----------------------------------------------------------------

/// Idle states with a longer exit latency than this are disabled by the plan.
const IDLE_LATENCY_LIMIT_US: u64 = 10;

fn onoff(b: bool) -> String {
    if b { "on" } else { "off" }.into()
}

/// The current value of a setting, as the plan and the state file write it.
fn current(kind: SettingKind, iface: Option<&str>, key: &str) -> Result<String, String> {
    let i = iface.unwrap_or("");
    match kind {
        SettingKind::Sysfs => match hostinfo::read(key) {
            Reading::Value(v) => Ok(v),
            r => Err(missing(&r)),
        },
        SettingKind::Eee => ethtool::eee(i)
            .map(|e| onoff(e.enabled))
            .map_err(|e| sys_state(&e)),
        SettingKind::Coalesce => ethtool::coalesce(i)
            .map_err(|e| sys_state(&e))
            .and_then(|c| {
                c.get(key)
                    .ok_or_else(|| format!("no coalescing parameter {key}"))
            })
            .map(|v| {
                if key.starts_with("adaptive") {
                    onoff(v != 0)
                } else {
                    v.to_string()
                }
            }),
        SettingKind::Offload => ethtool::offload(i, key)
            .map(onoff)
            .map_err(|e| sys_state(&e)),
    }
}

fn set(kind: SettingKind, iface: Option<&str>, key: &str, value: &str) -> Result<(), SysError> {
    let i = iface.unwrap_or("");
    match kind {
        SettingKind::Sysfs => hostinfo::write(key, value),
        SettingKind::Eee => ethtool::set_eee(i, value == "on"),
        SettingKind::Coalesce => {
            let v = match value {
                "on" => 1,
                "off" => 0,
                n => n.parse().map_err(|_| SysError::Unsupported {
                    what: format!("setting {key} of `{i}` to `{n}`"),
                    why: "not a number".into(),
                })?,
            };
            ethtool::set_coalesce(i, key, v)
        }
        SettingKind::Offload => ethtool::set_offload(i, key, value == "on"),
    }
}

fn plan(interfaces: &[String], netns: Option<&str>, virtualized: bool) -> Vec<PlanEntry> {
    let mut v = Vec::new();
    let cpus = hostinfo::cpus();
    // Governor.
    let mut any = false;
    for c in &cpus {
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
            v.push(PlanEntry::Skipped {
                scope: "host".into(),
                item: format!("cpu{c} governor"),
                reason: format!(
                    "the cpufreq driver offers no `performance` governor ({})",
                    missing(&avail)
                ),
            });
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
        v.push(PlanEntry::Skipped {
            scope: "host".into(),
            item: "cpu governor".into(),
            reason: if virtualized {
                "no cpufreq: frequency is the hypervisor's".into()
            } else {
                "no cpufreq driver: frequency is the firmware's".into()
            },
        });
    }
    // Idle states.
    let mut states_seen = false;
    let mut deep_seen = false;
    for c in &cpus {
        for s in hostinfo::idle_states(*c) {
            states_seen = true;
            if s.latency_us <= IDLE_LATENCY_LIMIT_US {
                continue;
            }
            deep_seen = true;
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
        v.push(PlanEntry::Skipped {
            scope: "host".into(),
            item: "idle states".into(),
            reason: "no cpuidle states to disable".into(),
        });
    } else if !deep_seen {
        v.push(PlanEntry::Already {
            scope: "host".into(),
            item: "idle states".into(),
            value: format!("none deeper than {IDLE_LATENCY_LIMIT_US} µs"),
        });
    }
    for i in interfaces {
        let ii = Some(i.as_str());
        v.push(model::plan_entry(
            SettingKind::Eee,
            ii,
            "eee",
            "eee",
            current(SettingKind::Eee, ii, "eee"),
            "off",
            netns,
        ));
        match ethtool::coalesce(i) {
            Err(e) => v.push(PlanEntry::Skipped {
                scope: i.clone(),
                item: "coalescing".into(),
                reason: sys_state(&e),
            }),
            Ok(_) => {
                for (k, safe) in [
                    ("adaptive-rx", "off"),
                    ("adaptive-tx", "off"),
                    ("rx-usecs", "0"),
                    ("rx-frames", "1"),
                ] {
                    v.push(model::plan_entry(
                        SettingKind::Coalesce,
                        ii,
                        k,
                        &format!("coalescing {k}"),
                        current(SettingKind::Coalesce, ii, k),
                        safe,
                        netns,
                    ));
                }
            }
        }
        for off in ethtool::OFFLOADS {
            v.push(model::plan_entry(
                SettingKind::Offload,
                ii,
                off,
                off,
                current(SettingKind::Offload, ii, off),
                "off",
                netns,
            ));
        }
    }
    v
}

fn need_root(what: &str) -> Result<()> {
    if misura_sys::host::is_root() {
        return Ok(());
    }
    Err(exit::Failure::Privilege(format!(
        "{what} needs root: it writes /sys files and ethtool settings (CAP_NET_ADMIN and more); run it with sudo"
    ))
    .into())
}

fn tune_report(r: TuneReport, code: i32) -> Finished {
    let target = r.netns.clone().unwrap_or_else(|| "this host".into());
    Finished::with_code(
        Report::new(r, "host-tune", target, model::write_tune_text),
        code,
    )
}

fn write_state(path: &Path, state: &TuneState) -> Result<()> {
    let mut buf = Vec::new();
    misura_report::write_json(state, &mut buf)?;
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, &buf)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| {
            exit::Failure::Output(format!(
                "cannot write the tune state file {}: {e}",
                path.display()
            ))
            .into()
        })
}

fn default_state_file(started_at: &str) -> PathBuf {
    let base = dirs::data_dir().unwrap_or_else(|| PathBuf::from("."));
    let stamp: String = started_at
        .chars()
        .take(19)
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect();
    base.join("misura").join(format!("host-tune-{stamp}Z.json"))
}

pub fn tune(args: &TuneArgs) -> Result<Finished> {
    if let Some(f) = &args.revert {
        return revert(args, f);
    }
    if args.apply {
        need_root("misura host tune --apply")?;
    }
    let started_at = crate::shared::meta::now_rfc3339();
    let interfaces = resolve_interfaces(&args.interfaces)?;
    let interfaces = if args.interfaces.is_empty() {
        Vec::new()
    } else {
        interfaces
    };
    let facts = misura_sys::host::host_facts();
    let mut entries = plan(
        &interfaces,
        args.ns.netns.as_deref(),
        facts.virtualized == Some(true),
    );
    let mut report = TuneReport {
        meta: crate::shared::meta::meta(model::TUNE_FORMAT, started_at.clone()),
        action: "plan".into(),
        netns: args.ns.netns.clone(),
        interfaces: interfaces.clone(),
        entries: Vec::new(),
        state_file: None,
    };
    if !args.apply {
        report.entries = entries;
        if !args.out.json && args.interfaces.is_empty() {
            eprintln!(
                "(no interface settings planned: give --interface IF for each measured port)"
            );
        }
        return Ok(tune_report(report, exit::OK));
    }

    let path = args
        .state_file
        .clone()
        .unwrap_or_else(|| default_state_file(&started_at));
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| exit::Failure::Output(format!("cannot create {}: {e}", dir.display())))?;
    }
    let mut state = TuneState {
        meta: crate::shared::meta::meta(model::STATE_FORMAT, started_at),
        netns: args.ns.netns.clone(),
        changes: Vec::new(),
    };
    // Written before the first change, so an unwritable path changes nothing.
    write_state(&path, &state)?;
    for e in entries.iter_mut() {
        let PlanEntry::Change { change, outcome } = e else {
            continue;
        };
        let c = change.clone();
        let iface = c.interface.as_deref();
        let result = set(c.kind, iface, &c.key, &c.new)
            .map_err(|e| sys_state(&e))
            .and_then(|()| match current(c.kind, iface, &c.key) {
                Ok(now) if now == c.new => Ok(()),
                Ok(now) => Err(format!("the driver kept {now}")),
                Err(e) => Err(format!("cannot read it back: {e}")),
            });
        match result {
            Ok(()) => {
                *outcome = "applied".into();
                state.changes.push(c);
                write_state(&path, &state)?;
            }
            Err(reason) => {
                // What the driver refuses is reported, not fatal; a partial
                // change (value moved but not to the target) is still recorded.
                if current(c.kind, iface, &c.key).is_ok_and(|now| now != c.old) {
                    state.changes.push(c.clone());
                    write_state(&path, &state)?;
                }
                *e = PlanEntry::Skipped {
                    scope: c.interface.clone().unwrap_or_else(|| "host".into()),
                    item: c.key.clone(),
                    reason: format!("refused: {reason}"),
                };
            }
        }
    }
    report.action = "apply".into();
    report.entries = entries;
    report.state_file = Some(path.display().to_string());
    Ok(tune_report(report, exit::OK))
}

fn revert(args: &TuneArgs, file: &Path) -> Result<Finished> {
    need_root("misura host tune --revert")?;
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read the tune state file {}", file.display()))?;
    let state: TuneState = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a misura host tune state file", file.display()))?;
    model::check_state(&state).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let netns = args.ns.netns.clone().or_else(|| state.netns.clone());
    if let Some(ns) = &netns {
        misura_sys::netns::enter(ns)?;
    }
    let mut entries = Vec::new();
    let mut failed = 0;
    for c in state.changes.iter().rev() {
        let iface = c.interface.as_deref();
        let before = current(c.kind, iface, &c.key);
        let result = set(c.kind, iface, &c.key, &c.old)
            .map_err(|e| sys_state(&e))
            .and_then(|()| match current(c.kind, iface, &c.key) {
                Ok(now) if now == c.old => Ok(()),
                Ok(now) => Err(format!("the driver kept {now}")),
                Err(e) => Err(format!("cannot read it back: {e}")),
            });
        let mut shown = c.clone();
        if let Ok(b) = &before {
            // Show what it really was, also if someone changed it since.
            shown.new = b.clone();
        }
        match result {
            Ok(()) => entries.push(PlanEntry::Change {
                change: shown,
                outcome: "restored".into(),
            }),
            Err(reason) => {
                failed += 1;
                entries.push(PlanEntry::Skipped {
                    scope: c.interface.clone().unwrap_or_else(|| "host".into()),
                    item: c.key.clone(),
                    reason: format!(
                        "not restored to {}: {reason} (by hand: {})",
                        c.old, c.revert_command
                    ),
                });
            }
        }
    }
    let report = TuneReport {
        meta: crate::shared::meta::meta(model::TUNE_FORMAT, crate::shared::meta::now_rfc3339()),
        action: "revert".into(),
        netns,
        interfaces: {
            let mut v: Vec<String> = state
                .changes
                .iter()
                .filter_map(|c| c.interface.clone())
                .collect();
            v.dedup();
            v
        },
        entries,
        state_file: Some(file.display().to_string()),
    };
    if state.changes.is_empty() && !args.out.json {
        eprintln!("(the state file records no changes: nothing to restore)");
    }
    Ok(tune_report(
        report,
        if failed == 0 { exit::OK } else { exit::ERROR },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmdline_parameters() {
        let c = "BOOT_IMAGE=/vmlinuz isolcpus=1 quiet nohz_full=1 -- init isolcpus=9";
        assert_eq!(
            cmdline_params(c, &["isolcpus", "nohz_full"]),
            ["isolcpus=1", "nohz_full=1"]
        );
    }
}
