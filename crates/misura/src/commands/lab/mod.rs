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
            if a.shape.is_some() && !matches!(topology, Topology::Switch | Topology::Routed) {
                return Err(Failure::Usage(format!(
                    "--shape applies to --topology switch (the SUT bridge's port towards p2) \
                     and routed (the router's ports); the {topology} topology has nothing to shape"
                ))
                .into());
            }
            if let Some(Some(sh)) = a.shape.as_ref().map(|s| s.0.as_ref()) {
                if sh.fq_codel && topology != Topology::Routed {
                    return Err(Failure::Usage(
                        "qdisc=fq_codel applies to --topology routed (the router's queue)".into(),
                    )
                    .into());
                }
            }
            let lab = Lab::new(&a.prefix.prefix)?;
            let mut status = lab.up(topology)?;
            if let Some(shape) = &a.shape {
                status.shape = lab.set_shape(shape.0.as_ref())?;
            }
            print_status(&status);
            println!("\nnext:");
            for s in lab.next_steps(topology) {
                println!("  {s}");
            }
        }
        LabCommand::Down(p) => {
            let lab = Lab::new(&p.prefix)?;
            let removed = lab.down()?;
            if removed.is_empty() {
                println!(
                    "nothing to remove: no lab namespaces with prefix {}",
                    p.prefix
                );
            } else {
                println!("removed: {}", removed.join(", "));
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
    let tester = s
        .tester
        .map(|t| t.to_string())
        .unwrap_or_else(|| "not built".into());
    println!(
        "lab {}: tester topology {}, hosts {}",
        s.prefix,
        tester,
        if s.routed {
            "routed (h1 — router — h2)"
        } else if s.hosts {
            "up"
        } else {
            "not built"
        }
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
    if let Some(sh) = &s.shape {
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
