//! misura: precise network latency measurement with an ordinary Linux PC.
//! The only crate that prints or exits.

// `eprintln!`, `eprint!` and `println!` that never panic on a closed
// stderr/stdout (`misura … | head`), shadowing std's crate-wide.
#[macro_use]
mod print;

mod cli;
mod commands;
mod shared;

use crate::shared::common_flags::NetnsArgs;
use anyhow::Result;
use clap::Parser;
use cli::{Cli, Command};
use commands::clock::ClockCommand;
use commands::host::HostCommand;
use shared::netns::enter_netns;
use shared::output::{CsvArgs, Finished, OutputArgs, Outputs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn main() {
    // Libraries report through `log`; this writes them to stderr.
    shared::logger::install();
    let cli = Cli::try_parse().unwrap_or_else(|e| {
        // A value clap parsed but found out of range (`--load 150%`) keeps
        // its documented exit code (5), not clap's 2 for a malformed one.
        let cause = std::error::Error::source(&e).and_then(|c| c.downcast_ref());
        let params = matches!(cause, Some(shared::exit::Failure::Params(_)));
        let _ = e.print();
        std::process::exit(if params {
            shared::exit::PARAMS
        } else {
            e.exit_code()
        })
    });
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
        // `misura history | head`: the reader went away, nothing is wrong.
        Err(e) if is_broken_pipe(&e) => shared::exit::OK,
        Err(e) => {
            // Each error of the chain in its sentence (the flags named).
            let mut chain = shared::words::chain(&e).into_iter();
            if let Some(top) = chain.next() {
                eprintln!("misura: error: {top}");
            }
            for cause in chain {
                eprintln!("  caused by: {cause}");
            }
            shared::exit::code_for(&e)
        }
    };
    std::process::exit(code);
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    // A throughput error carries the host's io error transparently.
    e.chain().any(|c| {
        misura_throughput::error::io_cause(c)
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn interrupted_code(stop: &AtomicUsize) -> Option<i32> {
    match stop.load(Ordering::Relaxed) {
        0 => None,
        s if s == signal_hook::consts::SIGTERM as usize => Some(shared::exit::INTERRUPTED_TERM),
        _ => Some(shared::exit::INTERRUPTED_INT),
    }
}

/// A measuring command's output flags, CSV flag and namespace.
type CommandFlags = (OutputArgs, Option<CsvArgs>, Option<NetnsArgs>);

/// The output flags, CSV flag and namespace of a measuring command; `None`
/// for the commands that only read or manage (lab, history, report, agent).
fn flags(c: &Command) -> Result<Option<CommandFlags>> {
    use commands::throughput as t;
    let (out, csv, ns) = match c {
        Command::Oneway(a) => (a.m.out.clone(), Some(a.m.csv.clone()), Some(a.m.ns.clone())),
        Command::Calibrate(a) => (a.m.out.clone(), Some(a.m.csv.clone()), Some(a.m.ns.clone())),
        Command::Demo(a) => (a.out.clone(), None, None),
        Command::Reflect(a) => (a.out.clone(), None, Some(a.ns.clone())),
        Command::Rtt(a) => (a.out.clone(), Some(a.csv.clone()), Some(a.ns.clone())),
        Command::Load(a) => (a.out.clone(), None, Some(a.ns.clone())),
        Command::Exchange(a) => (a.out.clone(), None, Some(a.ns.clone())),
        Command::Rfc2544(a) => (a.out.clone(), None, Some(a.ns.clone())),
        Command::Y1564(a) => (a.out.clone(), None, Some(a.ns.clone())),
        Command::Serve(a) => (t::serve::output_args(a), None, Some(a.ns.clone())),
        Command::Tcp(t::tcp::TcpArgs { c, .. })
        | Command::Udp(t::udp::UdpArgs { c, .. })
        | Command::Rr(t::rr::RrArgs { c, .. })
        | Command::Setup(t::setup::SetupArgs { c, .. }) => {
            (c.out.clone(), Some(c.csv.clone()), Some(c.ns.clone()))
        }
        Command::Sweep(a) => {
            let (out, csv, ns) = t::sweep::output_flags(a);
            (out, Some(csv), Some(ns))
        }
        Command::Clock(ClockCommand::Sources(a)) => (a.out.clone(), None, None),
        Command::Clock(ClockCommand::Interference(a)) => (a.out.clone(), None, None),
        Command::Clock(ClockCommand::Timer(a)) => (a.out.clone(), None, None),
        Command::Clock(ClockCommand::Tsc(a)) => (a.out.clone(), None, Some(a.ns.clone())),
        Command::Host(HostCommand::Check(a)) => (a.out.clone(), None, Some(a.ns.clone())),
        Command::Host(HostCommand::Tune(a)) => (a.out.clone(), None, Some(a.ns.clone())),
        _ => return Ok(None),
    };
    Ok(Some((out, csv, ns)))
}

/// Run a measuring command to its report.
fn measure(c: &Command, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    use commands::throughput as t;
    match c {
        Command::Oneway(a) => commands::oneway::run(a, stop),
        Command::Calibrate(a) => commands::oneway::calibrate_run(a, stop),
        Command::Demo(a) => commands::demo::run(a, stop),
        Command::Reflect(a) => commands::reflect::run(a, stop),
        Command::Rtt(a) => commands::rtt::run(a, stop),
        Command::Load(a) => commands::load::run(a, stop),
        Command::Exchange(a) => commands::exchange::run(a, stop),
        Command::Rfc2544(a) => commands::rfc2544::run(a, stop),
        Command::Y1564(a) => commands::y1564::run(a, stop),
        Command::Serve(a) => t::serve::run(a, stop),
        Command::Tcp(a) => t::tcp::run(a, stop),
        Command::Udp(a) => t::udp::run(a, stop),
        Command::Rr(a) => t::rr::run(a, stop),
        Command::Setup(a) => t::setup::run(a, stop),
        Command::Sweep(a) => t::sweep::run(a, stop),
        Command::Clock(c) => commands::clock::run(c, stop),
        Command::Host(HostCommand::Check(a)) => commands::host::check(a),
        Command::Host(HostCommand::Tune(a)) => commands::host::tune(a),
        _ => unreachable!("flags() lists every measuring command"),
    }
}

fn run(cli: &Cli, stop: &Arc<AtomicUsize>) -> Result<i32> {
    // The window every result's host load covers starts here.
    shared::cpuload::mark_start();
    if let Some((out, csv, ns)) = flags(&cli.command)? {
        // Every output file is opened (so checked writable) before anything
        // is measured; then the namespace is entered and the command runs.
        let outputs = Outputs::open(&out, csv.as_ref())?;
        let entered = match &ns {
            Some(ns) => enter_netns(&ns.netns).map_err(anyhow::Error::from),
            None => Ok(()),
        };
        let finished = match entered.and_then(|_| measure(&cli.command, stop)) {
            Ok(f) => f,
            Err(e) => {
                outputs.abandon();
                return Err(e);
            }
        };
        outputs.deliver(&*finished.report)?;
        return Ok(interrupted_code(stop).unwrap_or(finished.code));
    }
    let code = match &cli.command {
        Command::Lab(cmd) => {
            commands::lab::run(cmd)?;
            shared::exit::OK
        }
        Command::Report(a) => commands::report::run(a, stop)?,
        Command::Agent(a) => commands::agent::run(a, stop)?,
        Command::Archive(a) => commands::archive::run(a)?,
        Command::History(a) => commands::store::history(a)?,
        Command::Show(a) => commands::store::show(a)?,
        Command::Compare(a) => commands::store::compare(a)?,
        // Both describe the whole command line, which they get from here
        // (cli.rs names their flags, so they cannot reach back into it).
        Command::Completions(a) => {
            commands::completions::run(a, <Cli as clap::CommandFactory>::command())?
        }
        Command::Man(a) => commands::man::run(a, <Cli as clap::CommandFactory>::command())?,
        _ => unreachable!("every measuring command has output flags"),
    };
    Ok(interrupted_code(stop).unwrap_or(code))
}
