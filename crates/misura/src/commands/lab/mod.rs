//! `misura lab up|down|status`.

pub mod args;
pub use args::LabCommand;

use anyhow::Result;
use misura_lab::{Lab, Topology};

pub fn run(cmd: &LabCommand) -> Result<()> {
    match cmd {
        LabCommand::Up(a) => {
            let topology = Topology::from(a.topology);
            let lab = Lab::new(&a.prefix.prefix)?;
            let status = lab.up(topology)?;
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
        if s.hosts { "up" } else { "not built" }
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
}
