//! misura: precise network latency measurement with an ordinary Linux PC.
//! The only crate that prints or exits.

mod agent;
mod agent_config;
mod agent_http;
mod agent_metrics;
mod agent_run;
mod analysis;
mod calibrate;
mod cli;
mod client;
mod clock_interference;
mod clock_sources;
mod clock_timer;
mod clock_tsc;
mod demo;
mod engine;
mod exchange;
mod exit;
mod host;
mod hostcheck;
mod labcmd;
mod oneway;
mod progress;
mod proto;
mod reflect;
mod report_cmd;
mod rr;
mod rtt;
mod serve;
mod serve_conn;
mod serve_tests;
mod setup;
mod store_hook;
mod sweep;
mod tcp;
mod transport;
mod udp;
mod units;

use anyhow::Result;
use clap::Parser;
use cli::{Cli, ClockCommand, Command, HostCommand};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn main() {
    let cli = Cli::parse();
    store_hook::configure(cli.store.clone(), cli.no_store);
    let stop = Arc::new(AtomicUsize::new(0));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A signal only sets the flag: the loop stops sending, drains what is
        // in flight and the partial result is written.
        if let Err(e) = signal_hook::flag::register_usize(sig, stop.clone(), sig as usize) {
            eprintln!("misura: cannot install the signal handler: {e}");
            std::process::exit(exit::ERROR);
        }
    }
    let code = match run(&cli, &stop) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("misura: error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            exit::code_for(&e)
        }
    };
    std::process::exit(code);
}

fn interrupted_code(stop: &AtomicUsize) -> Option<i32> {
    match stop.load(Ordering::Relaxed) {
        0 => None,
        s if s == signal_hook::consts::SIGTERM as usize => Some(exit::INTERRUPTED_TERM),
        _ => Some(exit::INTERRUPTED_INT),
    }
}

fn enter_netns(netns: &Option<String>) -> Result<()> {
    if let Some(ns) = netns {
        misura_sys::netns::enter(ns)?;
    }
    Ok(())
}

fn run(cli: &Cli, stop: &Arc<AtomicUsize>) -> Result<i32> {
    match &cli.command {
        Command::Lab(cmd) => {
            labcmd::run(cmd)?;
            Ok(exit::OK)
        }
        Command::Oneway(a) => {
            enter_netns(&a.m.netns)?;
            let cal = a
                .calibration
                .as_ref()
                .map(|p| {
                    oneway::read_profile(p).map(|profile| oneway::Calibration {
                        path: p.clone(),
                        profile,
                        accept_mismatch: a.accept_profile_mismatch,
                    })
                })
                .transpose()?;
            let mut outputs = oneway::Outputs::open(&a.m)?;
            let report =
                oneway::measure(&a.m, oneway::Mode::Oneway, cal.as_ref(), &mut outputs, stop)?;
            oneway::emit(&report, a.m.json, &mut outputs)?;
            Ok(interrupted_code(stop).unwrap_or(exit::OK))
        }
        Command::Calibrate(a) => {
            enter_netns(&a.m.netns)?;
            calibrate::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(exit::OK))
        }
        Command::Reflect(a) => {
            enter_netns(&a.netns)?;
            reflect::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(exit::OK))
        }
        Command::Rtt(a) => {
            enter_netns(&a.netns)?;
            let code = rtt::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::Exchange(a) => {
            enter_netns(&a.netns)?;
            exchange::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(exit::OK))
        }
        Command::Serve(a) => {
            let code = serve::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::Tcp(a) => {
            let code = tcp::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::Udp(a) => {
            let code = udp::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::Rr(a) => {
            let code = rr::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::Setup(a) => {
            let code = setup::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::Sweep(a) => {
            let code = sweep::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::Report(a) => {
            let code = report_cmd::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::Agent(a) => {
            let code = agent::run(a, stop)?;
            Ok(interrupted_code(stop).unwrap_or(code))
        }
        Command::History(a) => store_hook::history(a),
        Command::Show(a) => store_hook::show(a),
        Command::Compare(a) => store_hook::compare(a),
        Command::Clock(c) => {
            match c {
                ClockCommand::Sources(a) => clock_sources::run(a, stop)?,
                ClockCommand::Interference(a) => clock_interference::run(a, stop)?,
                ClockCommand::Tsc(a) => clock_tsc::run(a, stop)?,
                ClockCommand::Timer(a) => clock_timer::run(a, stop)?,
            }
            Ok(interrupted_code(stop).unwrap_or(exit::OK))
        }
        Command::Host(h) => match h {
            HostCommand::Check(a) => hostcheck::check(a),
            HostCommand::Tune(a) => hostcheck::tune(a),
        },
        Command::Demo(d) => {
            demo::run(d, stop)?;
            Ok(interrupted_code(stop).unwrap_or(exit::OK))
        }
    }
}
