//! The flags of `misura load`'s flows and transactions: for each direction
//! the command line a user would give `misura tcp` or `misura udp` (one
//! client, quiet), and for `--rr` the one of `misura rr --proto udp`,
//! parsed by those commands' own clap groups into the library's plain
//! knobs. A refusal keeps clap's words; `misura_load` reports it in its
//! turn, after the plan's bounds.

use crate::shared::client_flags::{
    RrKnobsArgs, RrShapeArgs, TcpKnobsArgs, TcpShapeArgs, UdpKnobsArgs, UdpShapeArgs,
};
use clap::Parser;
use misura_load::{FlowFlags, LoadPlan, ParsedFlow, RrFlags};
use misura_throughput::client::ClientPlan;

/// The target flags a flow or a transactions' test is given (the flags of
/// `misura serve`'s clients it uses): one client, quiet.
#[derive(clap::Args)]
struct Target {
    #[arg(value_name = "HOST[:PORT]")]
    host: String,
    #[arg(long, value_name = "FILE")]
    key_file: Option<std::path::PathBuf>,
    #[arg(short, long)]
    quiet: bool,
}

impl Target {
    /// The one client's plan.
    fn client(&self) -> ClientPlan {
        ClientPlan {
            host: self.host.clone(),
            key_file: self.key_file.clone(),
            netns: None,
            clients: 1,
            quiet: self.quiet,
        }
    }
}

/// `misura tcp`'s flags but --clients (one client).
#[derive(Parser)]
struct TcpCli {
    #[command(flatten)]
    c: Target,
    #[command(flatten)]
    knobs: TcpKnobsArgs,
    #[command(flatten)]
    shape: TcpShapeArgs,
}

/// `misura udp`'s flags but --clients (one client).
#[derive(Parser)]
struct UdpCli {
    #[command(flatten)]
    c: Target,
    #[command(flatten)]
    knobs: UdpKnobsArgs,
    #[command(flatten)]
    shape: UdpShapeArgs,
}

/// `misura rr`'s flags but --clients (one client).
#[derive(Parser)]
struct RrCli {
    #[command(flatten)]
    c: Target,
    #[command(flatten)]
    knobs: RrKnobsArgs,
    #[command(flatten)]
    shape: RrShapeArgs,
}

/// Each direction's flags (up, then down) parsed: UDP at its rate, or
/// TCP with its streams, or none.
pub fn flows(a: &LoadPlan) -> Vec<ParsedFlow> {
    let secs = format!("{}ms", a.duration.ns / 1_000_000);
    let mut flows = Vec::new();
    for (direction, udp_rate, streams) in [("up", &a.udp_up, a.up), ("down", &a.udp_down, a.down)] {
        let mut argv: Vec<String> = Vec::new();
        let udp = match udp_rate {
            Some(rate) => {
                argv.extend(["udp", &a.host, "--rate", rate].map(String::from));
                true
            }
            None if streams > 0 => {
                argv.extend(["tcp", &a.host, "--streams"].map(String::from));
                argv.extend([streams.to_string(), "--interval".into(), "1s".into()]);
                false
            }
            None => continue,
        };
        argv.extend(["--duration".to_string(), secs.clone(), "-q".into()]);
        if direction == "down" {
            argv.push("--reverse".into());
        }
        if let Some(k) = &a.key_file {
            argv.extend(["--key-file".to_string(), k.display().to_string()]);
        }
        let parsed = if udp {
            UdpCli::try_parse_from(&argv).map(|c| FlowFlags::Udp {
                client: c.c.client(),
                knobs: (&c.knobs).into(),
                shape: (&c.shape).into(),
            })
        } else {
            TcpCli::try_parse_from(&argv).map(|c| FlowFlags::Tcp {
                client: c.c.client(),
                knobs: (&c.knobs).into(),
                shape: (&c.shape).into(),
            })
        };
        flows.push(ParsedFlow {
            direction,
            parsed: parsed.map_err(|e| e.to_string()),
        });
    }
    flows
}

/// `--rr`'s transactions' flags parsed (their duration is each phase's;
/// the idle phase's here).
pub fn transactions(a: &LoadPlan) -> Result<RrFlags, String> {
    let mut argv: Vec<String> = ["rr", &a.host, "--proto", "udp", "-q"]
        .map(String::from)
        .into();
    argv.extend([
        "--duration".into(),
        format!("{}ms", (a.idle.ns / 1_000_000).max(1)),
        "--timeout".into(),
        a.timeout.to_string(),
    ]);
    if let Some(k) = &a.key_file {
        argv.extend(["--key-file".to_string(), k.display().to_string()]);
    }
    RrCli::try_parse_from(&argv)
        .map(|c| RrFlags {
            client: c.c.client(),
            knobs: (&c.knobs).into(),
            shape: (&c.shape).into(),
        })
        .map_err(|e| e.to_string())
}
