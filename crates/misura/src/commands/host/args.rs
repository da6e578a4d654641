//! Flags of `misura host check` and `misura host tune`, and their long
//! help.

use std::path::PathBuf;

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

#[derive(clap::Args, Debug, Clone)]
pub struct CheckArgs {
    /// An interface to check (repeatable); default: every interface but lo.
    #[arg(long = "interface", short = 'i', value_name = "IF")]
    pub interfaces: Vec<String>,
    #[command(flatten)]
    pub out: crate::shared::output::OutputArgs,
    #[command(flatten)]
    pub ns: crate::shared::common_flags::NetnsArgs,
}

pub const TUNE_LONG_ABOUT: &str = "\
The safe changes that make timing more precise, with the exact commands and the
current → new values: CPU governor `performance`, idle states deeper than 10 µs
disabled, guest halt polling back at the kernel's 200 µs on a KVM guest whose
haltpoll idle driver has it off, and on the measured interfaces EEE off,
interrupt coalescing rx-usecs 0 / rx-frames 1 / adaptive off, GRO/LRO/GSO/TSO
off, and the NIC's hardware timestamping on (TX on, RX filter all, as
hwstamp_ctl -t 1 -r 1) where the driver has a PTP clock.

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
    pub ns: crate::shared::common_flags::NetnsArgs,
}
