//! `misura host check`: what on this host affects timing precision, one
//! item per setting with its state, a verdict, why it matters and the
//! command that changes it. The items come in a fixed order (the table and
//! the JSON keep it): the CPUs, the kernel, each interface, time sync.

mod cpu;
mod interfaces;
mod item;
mod kernel;
mod timesync;

use anyhow::Result;
use misura_report::host::{self as model, CheckItem, HostCheckReport, VerdictCounts};
use misura_report::LoopTuning;
use misura_sys::hostinfo;

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

/// The host-wide items: the CPUs, then the kernel.
fn host_items(virtualized: bool, preempt: Option<&str>) -> Vec<CheckItem> {
    let cpus = hostinfo::cpus();
    let cmdline = hostinfo::read("/proc/cmdline")
        .value()
        .unwrap_or("")
        .to_string();
    let model = preempt.unwrap_or("unknown");
    vec![
        cpu::governor(&cpus, virtualized),
        cpu::boost(virtualized),
        cpu::idle_states(&cpus, &cmdline, virtualized),
        cpu::smt(),
        cpu::isolated(&cpus, &cmdline),
        kernel::preemption(model, &cmdline),
        kernel::realtime(model),
        kernel::clocksource(),
        kernel::memlock(),
        kernel::timer_slack(),
        kernel::irqbalance(),
    ]
}

pub fn check(args: &CheckArgs) -> Result<Finished> {
    let started_at = crate::shared::meta::now_rfc3339();
    let interfaces = super::readings::resolve_interfaces(&args.interfaces)?;
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
        items.extend(interfaces::items(i, args.ns.netns.as_deref()));
    }
    items.extend(timesync::items());
    // Each NIC clock: read cost, offset and drift against the system
    // clock, and the PTP daemons that may discipline it.
    let (phcs, ptp_daemons) = crate::shared::ptp::survey(crate::shared::ptp::Effort::QUICK);
    let report = HostCheckReport {
        meta: crate::shared::meta::meta(model::CHECK_FORMAT, started_at),
        netns: args.ns.netns.clone(),
        host,
        interfaces,
        counts: VerdictCounts::of(&items),
        items,
        phcs,
        ptp_daemons,
    };
    let target = args.ns.netns.clone().unwrap_or_else(|| "this host".into());
    Ok(Finished::ok(Report::new(
        report,
        "host-check",
        target,
        model::write_check_text,
    )))
}

#[cfg(test)]
mod tests {
    use super::item::cmdline_params;

    #[test]
    fn cmdline_parameters() {
        let c = "BOOT_IMAGE=/vmlinuz isolcpus=1 quiet nohz_full=1 -- init isolcpus=9";
        assert_eq!(
            cmdline_params(c, &["isolcpus", "nohz_full"]),
            ["isolcpus=1", "nohz_full=1"]
        );
    }
}
