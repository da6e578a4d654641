//! misura: precise network latency measurement with an ordinary Linux PC.
//! The only crate that prints or exits.

mod cli;
mod commands;
mod shared;

use anyhow::Result;
use clap::Parser;
use cli::{Cli, Command};
use commands::clock::ClockCommand;
use commands::host::HostCommand;
use shared::netns::enter_netns;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn main() {
    let cli = Cli::parse();
    shared::store::configure(cli.store.clone(), cli.no_store);
    let stop = Arc::new(AtomicUsize::new(0));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A signal only sets the flag: the loop stops sending, drains what is
        // in flight and the partial result is written.
        if let Err(e) = signal_hook::flag::register_usize(sig, stop.clone(), sig as usize) {
            eprintln!("misura: cannot install the signal handler: {e}");
            std::process::exit(shared::exit::ERROR);
        }
    }
    let code = match run(&cli, &stop) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("misura: error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            shared::exit::code_for(&e)
        }
    };
    std::process::exit(code);
}

fn interrupted_code(stop: &AtomicUsize) -> Option<i32> {
    match stop.load(Ordering::Relaxed) {
        0 => None,
        s if s == signal_hook::consts::SIGTERM as usize => Some(shared::exit::INTERRUPTED_TERM),
        _ => Some(shared::exit::INTERRUPTED_INT),
    }
}

fn run(cli: &Cli, stop: &Arc<AtomicUsize>) -> Result<i32> {
    match &cli.command {
        Command::Lab(cmd) => {
            commands::lab::run(cmd)?;
            Ok(shared::exit::OK)
        }
        Command::Oneway(a) => {
            enter_netns(&a.m.netns)?;
            let cal = a
                .calibration
                .as_ref()
                .map(|p| {
                    commands::oneway::read_profile(p).map(|profile| commands::oneway::Calibration {
                        path: p.clone(),
                        profile,
                        accept_mismatch: a.accept_profile_mismatch,
                    })
                })
                .transpose()?;
            let mut outputs = commands::oneway::Outputs::open(&a.m)?;
            let report = commands::oneway::measure(
                &a.m,
                commands::oneway::Mode::Oneway,
                cal.as_ref(),
                &mut outputs,
                stop,
            )?;
            commands::oneway::emit(&report, a.m.json, &mut outputs)?;
            Ok(interrupted_code(stop).unwrap_or(shared::exit::OK))
        }
        Command::Calibrate(a) => {
            enter_netns(&a.m.netns)?;
            commands::oneway::calibrate::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(shared::exit::OK))
        }
        Command::Reflect(a) => {
            enter_netns(&a.netns)?;
            commands::reflect::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(shared::exit::OK))
        }
        Command::Rtt(a) => {
            enter_netns(&a.netns)?;
            let code = commands::rtt::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::Exchange(a) => {
            enter_netns(&a.netns)?;
            commands::exchange::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(shared::exit::OK))
        }
        Command::Serve(a) => {
            let code = commands::throughput::serve::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::Tcp(a) => {
            let code = commands::throughput::tcp::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::Udp(a) => {
            let code = commands::throughput::udp::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::Rr(a) => {
            let code = commands::throughput::rr::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::Setup(a) => {
            let code = commands::throughput::setup::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::Sweep(a) => {
            let code = commands::throughput::sweep::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::Report(a) => {
            let code = commands::report::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::Agent(a) => {
            let code = commands::agent::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::History(a) => commands::store::history(a),
        Command::Show(a) => commands::store::show(a),
        Command::Compare(a) => commands::store::compare(a),
        Command::Clock(c) => {
            match c {
                ClockCommand::Sources(a) => commands::clock::sources::run(a, stop)?,
                ClockCommand::Interference(a) => commands::clock::interference::run(a, stop)?,
                ClockCommand::Tsc(a) => commands::clock::tsc::run(a, stop)?,
                ClockCommand::Timer(a) => commands::clock::timer::run(a, stop)?,
            }
            Ok(interrupted_code(stop).unwrap_or(shared::exit::OK))
        }
        Command::Host(h) => match h {
            HostCommand::Check(a) => commands::host::check::check(a),
            HostCommand::Tune(a) => commands::host::check::tune(a),
        },
        Command::Demo(d) => {
            commands::demo::run(d, stop)?;
            Ok(interrupted_code(stop).unwrap_or(shared::exit::OK))
        }
    }
}
