//! `misura host check`: what on this host affects timing precision, one
//! item per setting with its state, a verdict, why it matters and the
//! command that changes it. The items come in a fixed order (the table and
//! the JSON keep it): the CPUs, the kernel, each interface, time sync.

mod cpu;
mod interfaces;
mod item;
mod kernel;
mod timesync;

use misura_report::host::{self as model, CheckItem, HostCheckReport, VerdictCounts};
use misura_report::LoopTuning;
use misura_sys::{hostinfo, SysError};

/// The check the flags ask for.
#[derive(Debug, Clone, Default)]
pub struct CheckPlan {
    /// The interfaces named (each must exist); empty: every one but lo.
    pub interfaces: Vec<String>,
    /// The namespace the check runs in (already entered), for the report
    /// and the commands it suggests.
    pub netns: Option<String>,
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

/// Every item of the host and of the plan's interfaces, with the host's
/// fingerprint and its PTP clocks. Fails only on an interface named that
/// does not exist.
pub fn check(plan: &CheckPlan) -> Result<HostCheckReport, SysError> {
    let started_at = misura_cli::meta::now_rfc3339();
    let interfaces = crate::readings::resolve_interfaces(&plan.interfaces)?;
    let refs: Vec<&str> = interfaces.iter().map(String::as_str).collect();
    let host = misura_run::host::fingerprint_with_interfaces(
        LoopTuning {
            netns: plan.netns.clone(),
            ..LoopTuning::default()
        },
        &refs,
    );
    let mut items = host_items(
        host.virtualized == Some(true),
        host.preempt_model.as_deref(),
    );
    for i in &interfaces {
        items.extend(interfaces::items(i, plan.netns.as_deref()));
    }
    items.extend(timesync::items());
    // Each NIC clock: read cost, offset and drift against the system
    // clock, and the PTP daemons that may discipline it.
    let (phcs, ptp_daemons) = misura_run::ptp::survey(misura_run::ptp::Effort::QUICK);
    Ok(HostCheckReport {
        meta: misura_cli::meta::meta(model::CHECK_FORMAT, started_at),
        netns: plan.netns.clone(),
        host,
        interfaces,
        counts: VerdictCounts::of(&items),
        items,
        phcs,
        ptp_daemons,
    })
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
