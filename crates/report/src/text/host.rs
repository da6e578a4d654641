//! The text form of `misura host check` and `host tune`; the result types are
//! in `model::host`.

use crate::model::host::*;

/// Human form: a table, each row followed by why it matters and the command.
pub fn write_check_text(r: &HostCheckReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let h = &r.host;
    writeln!(
        out,
        "host check: {} · Linux {} · {} · {} CPU(s){}{}",
        h.hostname.as_deref().unwrap_or("?"),
        h.kernel_release.as_deref().unwrap_or("?"),
        h.preempt_model
            .as_deref()
            .unwrap_or("preemption model unknown"),
        h.online_cpus,
        if h.virtualized == Some(true) {
            " · virtual machine"
        } else {
            ""
        },
        r.netns
            .as_deref()
            .map(|n| format!(" · netns {n}"))
            .unwrap_or_default(),
    )?;
    let w_scope = r
        .items
        .iter()
        .map(|i| i.scope.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let w_item = r
        .items
        .iter()
        .map(|i| i.item.len())
        .max()
        .unwrap_or(4)
        .max(4);
    writeln!(
        out,
        "{:<15}  {:<w_scope$}  {:<w_item$}  state",
        "verdict", "scope", "item"
    )?;
    for i in &r.items {
        writeln!(
            out,
            "{:<15}  {:<w_scope$}  {:<w_item$}  {}",
            i.verdict.as_str(),
            i.scope,
            i.item,
            i.state
        )?;
        let pad = 15 + 2 + w_scope + 2;
        match &i.command {
            Some(c) => writeln!(out, "{:pad$}  why: {} · change: {}", "", i.why, c)?,
            None => writeln!(out, "{:pad$}  why: {}", "", i.why)?,
        }
    }
    let c = &r.counts;
    writeln!(
        out,
        "{} ok, {} hurt precision, {} unknown, {} n/a{}",
        c.ok,
        c.hurts_precision,
        c.unknown,
        c.not_applicable,
        if r.interfaces.is_empty() {
            " (no interfaces checked: give --interface IF)"
        } else {
            ""
        }
    )?;
    if r.phcs.is_empty() {
        writeln!(
            out,
            "NIC clocks: none (no /dev/ptp*: no NIC hardware timestamps)"
        )?;
    } else {
        writeln!(out, "NIC clocks:")?;
    }
    super::clock::write_phcs(&r.phcs, &r.ptp_daemons, out)
}

/// Human form of a tune report.
pub fn write_tune_text(r: &TuneReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let title = match r.action.as_str() {
        "plan" => "plan of safe changes (nothing changed; --apply applies it)",
        "apply" => "applied",
        _ => "reverted",
    };
    writeln!(
        out,
        "host tune: {title}{}",
        r.netns
            .as_deref()
            .map(|n| format!(" · netns {n}"))
            .unwrap_or_default()
    )?;
    for e in &r.entries {
        match e {
            PlanEntry::Change { change: c, outcome } => {
                let (from, to, cmd) = if r.action == "revert" {
                    (&c.new, &c.old, &c.revert_command)
                } else {
                    (&c.old, &c.new, &c.command)
                };
                writeln!(
                    out,
                    "  {:<9} {:<34} {} → {}   $ {}",
                    outcome,
                    c.label(),
                    from,
                    to,
                    cmd
                )?;
            }
            PlanEntry::Already { scope, item, value } => writeln!(
                out,
                "  {:<9} {:<34} already {}",
                "ok",
                format!("{scope} {item}"),
                value
            )?,
            PlanEntry::Skipped {
                scope,
                item,
                reason,
            } => writeln!(
                out,
                "  {:<9} {:<34} {}",
                "skipped",
                format!("{scope} {item}"),
                reason
            )?,
        }
    }
    if let Some(f) = &r.state_file {
        match r.action.as_str() {
            "apply" => writeln!(
                out,
                "old values written to {f}; undo with: misura host tune --revert {f}"
            )?,
            "revert" => writeln!(out, "restored from {f}")?,
            _ => {}
        }
    }
    Ok(())
}
