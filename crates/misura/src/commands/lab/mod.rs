//! `misura lab up|down|status`.

pub mod args;
pub use args::LabCommand;

use anyhow::Result;
use misura_lab::{Lab, Topology};

use crate::shared::exit::Failure;

pub fn run(cmd: &LabCommand) -> Result<()> {
    match cmd {
        LabCommand::Up(a) => {
            let topology = Topology::from(a.topology);
            let shape = a.shape();
            if let Some(sh) = &shape {
                // The lab's rule, checked before anything is built.
                misura_lab::check_shape(topology, sh.as_ref())
                    .map_err(|e| Failure::Usage(crate::shared::words::said(&e)))?;
            }
            let lab = Lab::new(&a.prefix.prefix)?;
            let mut status = lab.up(topology)?;
            print_stopped(&status.stopped);
            if let Some(shape) = &shape {
                lab.set_shape(topology, shape.as_ref())?;
                status = lab.status()?;
            }
            if let Some(p) = &a.police {
                println!(
                    "policer at {}: tbf with a {}-byte queue (two full-size frames) and a {}-byte bucket: \
                     what exceeds the rate is dropped, not queued (this kernel has no act_police)",
                    misura_lab::shape::format_rate(p.0.rate_bps),
                    p.0.queue_bytes,
                    p.0.burst_bytes
                );
            }
            print_status(&status);
            println!("\nnext:");
            for s in lab.next_steps(topology) {
                println!("  {s}");
            }
        }
        LabCommand::Down(p) => {
            let lab = Lab::new(&p.prefix)?;
            let done = lab.take_down()?;
            print_stopped(&done.stopped);
            if done.removed.is_empty() {
                println!(
                    "nothing to remove: no lab namespaces with prefix {}",
                    p.prefix
                );
            } else {
                println!("removed: {}", done.removed.join(", "));
            }
        }
        LabCommand::Status(a) => {
            let lab = Lab::new(&a.prefix.prefix)?;
            let status = lab.status()?;
            if a.json {
                println!("{}", serde_json::to_string_pretty(&status)?);
            } else {
                print_status(&status);
            }
        }
    }
    Ok(())
}

fn print_status(s: &misura_lab::LabStatus) {
    // The prefix is a stem (`misura-`): shown as the namespaces' pattern,
    // never alone (issue 36: `lab misura-: tester topology direct`).
    let tester = s.tester.map_or_else(
        || "not built".to_string(),
        |t| format!("{t} topology ({}tester)", s.prefix),
    );
    let hosts = if s.routed {
        format!("routed ({0}h1 — {0}r — {0}h2)", s.prefix)
    } else if s.hosts {
        format!("cabled to each other ({0}h1 — {0}h2)", s.prefix)
    } else {
        "not built".to_string()
    };
    println!(
        "lab, namespaces {}*: tester {tester}; hosts {hosts}",
        s.prefix
    );
    for ns in &s.namespaces {
        println!(
            "  {}{}",
            ns.name,
            if ns.ours {
                ""
            } else {
                "  (NOT made by misura: left alone)"
            }
        );
        for i in &ns.interfaces {
            println!("    {i}");
        }
    }
    for sh in &s.shapes {
        println!(
            "  shape: {} on {}/{} (towards {}): {}",
            sh.qdisc, sh.netns, sh.interface, sh.towards, sh.shape
        );
        let c = &sh.counters;
        println!(
            "    sent {} packets ({} bytes), dropped {}, overlimits {}",
            c.sent_packets, c.sent_bytes, c.dropped, c.overlimits
        );
    }
}

/// Names the misura processes the lab stopped because their namespace went.
fn print_stopped(stopped: &[misura_lab::Stopped]) {
    for p in stopped {
        eprintln!(
            "stopped misura process {} in {} ({}; its namespace was removed or rewired): {}",
            p.pid, p.netns, p.ended_by, p.command
        );
    }
}
