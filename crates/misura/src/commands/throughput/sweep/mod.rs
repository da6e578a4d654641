//! `misura sweep`: run `tcp`, `udp` or `rr` once per value of one
//! parameter and tabulate the headline figures (seed 001's curves:
//! throughput against message size, socket buffer, streams, TCP_NODELAY).
//!
//! clap parses the sweep's command line once, as `misura sweep tcp|udp|rr`
//! with the test's own flags; a sweepable flag takes a list or a range.
//! The plans, the runs and the report are `misura_throughput::sweep`'s;
//! here are the flags, the progress lines, the output and the exit code.

mod flags;
mod given;

use crate::shared::client_flags::{self as client, ClientArgs};
use crate::shared::common_flags::NetnsArgs;
use crate::shared::exit::Failure;
use crate::shared::output::{CsvArgs, Finished, OutputArgs, Report};
use crate::shared::throughput_words;
use anyhow::Result;
use flags::{RrSweepArgs, SweepFlags, TcpSweepArgs, UdpSweepArgs};
use given::Given;
use misura_throughput::sweep::{self as method, Series, SweepRun, Sweepable};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "Run one test across a list or range of one parameter and tabulate the results (the curves of Alborghetti et al., INFN 1998).

  misura sweep tcp|udp|rr HOST --PARAM LIST [other flags of that test]

The swept flag is the one given a list (comma-separated: 10,100,1000) or a range (1..12, integers, \
inclusive, or mixed: 1..4,8,16); --nodelay takes on,off. Sweepable: --msg-size, --sndbuf, --rcvbuf, \
--streams, --nodelay (tcp); --msg-size, --rate (udp); --request, --response, --burst (rr); --clients \
(all); exactly one flag is swept. Every other flag goes to each run unchanged, and the values are \
checked before the first run. A run that fails (refused, lost) is kept as a row with its error and \
the sweep goes on. `misura sweep tcp --help` (udp, rr) lists a test's flags.

Output: the table (one row per value: throughput, transactions/s, retransmits, RTT, loss, jitter, \
latency, CPU of both ends and service demand); --json prints the curve data (format \"misura.sweep\": \
`points` is the array of {parameter, value, figures}); --export-csv writes one row per value.

Examples:
  misura sweep tcp 198.18.0.2 --msg-size 10,100,1000,10000,65536,100000,500000 --duration 5s
  misura sweep tcp 198.18.0.2 --streams 1..12 --duration 5s --export-csv streams.csv
  misura sweep tcp 198.18.0.2 --nodelay on,off --msg-size 100
  misura sweep udp 198.18.0.2 --rate 10M --msg-size 1000,2000,4000,9000 --df
  misura sweep rr 198.18.0.2 --proto udp --request 1,64,512,1024";

#[derive(clap::Args, Debug, Clone)]
pub struct SweepArgs {
    #[command(subcommand)]
    pub test: SweepTest,
}

/// The test a sweep runs, with its flags.
#[derive(clap::Subcommand, Debug, Clone)]
pub enum SweepTest {
    /// Sweep `misura tcp` over --msg-size, --sndbuf, --rcvbuf, --streams, --nodelay or --clients.
    #[command(long_about = TCP_ABOUT)]
    Tcp(Given<Sweep<TcpSweepArgs>>),
    /// Sweep `misura udp` over --msg-size, --rate or --clients.
    #[command(long_about = UDP_ABOUT)]
    Udp(Given<Sweep<UdpSweepArgs>>),
    /// Sweep `misura rr` over --request, --response, --burst or --clients.
    #[command(long_about = RR_ABOUT)]
    Rr(Given<Sweep<RrSweepArgs>>),
}

const TCP_ABOUT: &str = "Run `misura tcp` once per value of one flag and tabulate the results.

Give one of --msg-size, --sndbuf, --rcvbuf, --streams or --clients a list (10,100,1000) or a \
range (1..12), or --nodelay the values on,off; every other flag is the same in every run.

Examples:
  misura sweep tcp 198.18.0.2 --msg-size 10,100,1000,10000,65536,100000,500000 --duration 5s
  misura sweep tcp 198.18.0.2 --streams 1..12 --duration 5s --export-csv streams.csv
  misura sweep tcp 198.18.0.2 --nodelay on,off --msg-size 100";

const UDP_ABOUT: &str = "Run `misura udp` once per value of one flag and tabulate the results.

Give one of --msg-size, --rate or --clients a list (1000,2000,4000) or a range (1..4); every \
other flag is the same in every run.

Example:
  misura sweep udp 198.18.0.2 --rate 10M --msg-size 1000,2000,4000,9000 --df";

const RR_ABOUT: &str = "Run `misura rr` once per value of one flag and tabulate the results.

Give one of --request, --response, --burst or --clients a list (1,64,512) or a range (1..8); \
every other flag is the same in every run.

Example:
  misura sweep rr 198.18.0.2 --proto udp --request 1,64,512,1024";

/// The flags a sweep leaves out of its `base_args`: its own outputs.
const OUTPUT_FLAGS: [&str; 4] = ["json", "export-json", "quiet", "export-csv"];

impl SweepTest {
    fn client_args(&self) -> &ClientArgs {
        match self {
            SweepTest::Tcp(g) => &g.args.c,
            SweepTest::Udp(g) => &g.args.c,
            SweepTest::Rr(g) => &g.args.c,
        }
    }
}

/// A test's flags in a sweep: the target's, then the test's own.
#[derive(clap::Args, Debug, Clone)]
pub struct Sweep<K: clap::Args> {
    #[command(flatten)]
    pub c: ClientArgs,
    #[command(flatten)]
    pub k: K,
}

impl<K: SweepFlags> Sweep<K> {
    /// The plan of every run, each checked before the first run.
    pub fn series(&self) -> Result<Series<<K::Plain as Sweepable>::Plan>, Failure> {
        self.k
            .plain()
            .plans(|clients| client::plan(&self.c, clients))
            .map_err(|r| throughput_words::sentence(&r))
    }
}

/// `misura sweep`.
pub fn run(args: &SweepArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let r = match &args.test {
        SweepTest::Tcp(g) => sweep(g, stop)?,
        SweepTest::Udp(g) => sweep(g, stop)?,
        SweepTest::Rr(g) => sweep(g, stop)?,
    };
    // A sweep where some runs failed exits 0 (their rows say why); one where
    // no run produced figures failed as a whole (exit 1, as tcp alone would).
    let code = client::exit_code(r.points.iter().any(|p| p.figures.error.is_none()));
    let target = r.base_args.first().cloned().unwrap_or_default();
    Ok(Finished::with_code(
        Report::new(
            r,
            "sweep",
            target,
            misura_report::throughput::write_sweep_text,
        )
        .with_csv(misura_report::throughput::write_sweep_csv),
        code,
    ))
}

/// Every run of the sweep `given`, with a line on stderr before each.
fn sweep<K: SweepFlags>(
    given: &Given<Sweep<K>>,
    stop: &Arc<AtomicUsize>,
) -> Result<misura_report::throughput::SweepReport> {
    let c = &given.args.c;
    let series = given.args.series()?;
    let parameter = series.parameter;
    let mut leave_out = OUTPUT_FLAGS.to_vec();
    leave_out.push(parameter);
    let run = SweepRun {
        base_args: given.written_except(&leave_out),
        netns: c.ns.netns.clone(),
    };
    let quiet = c.out.quiet || c.out.json;
    let progress = |value: &str| {
        if !quiet {
            eprintln!("misura sweep: {} {parameter} = {value}", K::Plain::TEST);
        }
    };
    method::run::<K::Plain>(series, run, stop, progress, throughput_words::words)
        .map_err(throughput_words::error)
}

/// The sweep's own output flags and namespace (main opens the outputs and
/// enters the namespace before the first run).
pub fn output_flags(args: &SweepArgs) -> (OutputArgs, CsvArgs, NetnsArgs) {
    let c = args.test.client_args();
    (c.out.clone(), c.csv.clone(), c.ns.clone())
}

#[cfg(test)]
mod plans;
#[cfg(test)]
mod tests;
