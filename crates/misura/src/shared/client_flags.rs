//! The flags every client of `misura serve` shares (`tcp`, `udp`, `rr`,
//! `setup`, `sweep`, and `load`'s flows): the target, the key file, output
//! and namespace; and how a client test's report reaches main. The clients themselves are
//! `misura_throughput::client`'s.
//!
//! Exit codes of the clients (crate::shared::exit): 0 the test ran to its end;
//! 1 the server is unreachable, refused the test (busy, authentication,
//! any REFUSE — its reason is printed), or was lost during the test (the
//! partial result is still written); 2 bad command line; 5 parameters the
//! server announced it would refuse (above its HELLO limits) or that make
//! no sense (e.g. a UDP datagram below 24 bytes); 6 an output file cannot
//! be written; 130/143 interrupted.

use crate::shared::exit::Failure;
use crate::shared::output::{CsvArgs, Finished, OutputArgs, Report};
use misura_cli::netns::NetnsArgs;
pub use misura_throughput::client::*;
use std::io::Write;
use std::path::PathBuf;

/// The target and output flags every client test shares (a sweep too).
#[derive(clap::Args, Debug, Clone)]
pub struct ClientArgs {
    /// The server (`misura serve`): HOST, HOST:PORT, [V6ADDR]:PORT (default port 5862).
    #[arg(value_name = "HOST[:PORT]")]
    pub host: String,
    /// Shared key of a server started with --key-file (hex on the first line, or raw bytes).
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<PathBuf>,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub csv: CsvArgs,
    #[command(flatten)]
    pub ns: NetnsArgs,
}

/// `--clients`, which every client test has (a sweep's is a list).
#[derive(clap::Args, Debug, Clone)]
pub struct ClientsArg {
    /// Run N clients at once from this machine (threads, each with its own
    /// control connection); the result lists each and the sum.
    #[arg(long, default_value = DEFAULT_CLIENTS, value_name = "N")]
    pub clients: u32,
}

/// The target flags checked into the part of a plan they give.
pub fn plan(a: &ClientArgs, clients: u32) -> Result<ClientPlan, Failure> {
    let p = ClientPlan {
        host: a.host.clone(),
        key_file: a.key_file.clone(),
        netns: a.ns.netns.clone(),
        clients,
        quiet: a.out.quiet || a.out.json,
    };
    p.check()?;
    Ok(p)
}

/// A client test's report as main delivers it: exit code 1 when a client
/// did not complete; kept in the store under `subcommand` and the host.
pub fn finished<T: serde::Serialize + 'static>(
    complete: bool,
    report: T,
    subcommand: &str,
    host: &str,
    text: fn(&T, &mut dyn Write) -> std::io::Result<()>,
    csv: fn(&T, &mut dyn Write) -> std::io::Result<()>,
) -> Finished {
    let code = exit_code(complete);
    Finished::with_code(
        Report::new(report, subcommand, host, text).with_csv(csv),
        code,
    )
}
