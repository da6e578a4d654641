//! `misura serve`: the server of the throughput, UDP, request/response and
//! connect/request/response tests (docs/control-protocol.md), for many
//! clients at once.
//!
//! One thread per connection, and the number of connections is capped:
//! a connection that has not yet said what it is (pending) holds a thread
//! only until the handshake timeout, and when the cap is reached the oldest
//! pending connection is closed to make room (a flood of idle connections
//! pushes out its own members, not the next legitimate client, who speaks
//! within one round trip). The accept loop never blocks on a peer.
//!
//! The flags and their glue; the server is `misura_throughput::serve`'s.

use crate::shared::common_flags::NetnsArgs;
use crate::shared::exit::Failure;
use crate::shared::output::{Finished, OutputArgs, Report};
use crate::shared::units::{DurationArg, LinkRate, ListenAddr};
use anyhow::Result;
use misura_measure::auth::StampKey;
use misura_throughput::serve::limits::{Asked, Limit, LimitError, Limits};
pub use misura_throughput::serve::*;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "Serve misura's throughput, UDP, request/response and connect/request/response \
tests (misura tcp, udp, rr, setup) to many clients at once, on one TCP port (default 5862) plus one \
UDP port per UDP test.

Every limit is on by default and a refusal tells the client why: concurrent tests (--max-tests), \
duration (--max-duration), rate (--max-rate), streams (--max-streams), tests per source address \
(--max-per-source), connections (--max-connections), handshake and idle timeouts. With --key-file the \
requests must carry an HMAC-SHA-256 over the server's nonce and a timestamp within --auth-window.

On each test end one line is printed (client, kind, direction, streams, duration, receiver throughput \
or transactions/s, loss); on SIGINT/SIGTERM the per-client table and the aggregate (Alborghetti et al., INFN 1998, Tables \
4-5) are printed and, with --export-json FILE, written as JSON (format \"misura.serve\").

Examples:
  misura serve
  misura serve --listen :5999 --max-tests 2 --max-duration 30s --export-json serve.json
  misura serve --netns misura-h2 --key-file test.key";

#[derive(clap::Args, Debug, Clone)]
pub struct ServeArgs {
    /// Address and TCP port of the control and data connections,
    /// ADDR[:PORT] or :PORT (default: all addresses, IPv6 and IPv4, port
    /// 5862), e.g. 198.18.1.2:5862 or [::1]:5999.
    #[arg(long, value_name = "ADDR[:PORT]")]
    pub listen: Option<ListenAddr>,
    /// The TCP port, as --listen ADDR:PORT gives it (the older form, kept).
    #[arg(long, hide = true)]
    pub port: Option<u16>,
    /// Most tests running at once.
    #[arg(long, default_value_t = 8)]
    pub max_tests: usize,
    /// Longest test a client may ask for.
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    pub max_duration: DurationArg,
    /// Highest rate a test may ask for (and the pace of the server's own sending).
    #[arg(long, default_value = "10G", value_name = "RATE")]
    pub max_rate: LinkRate,
    /// Most data streams per test.
    #[arg(long, default_value_t = 16)]
    pub max_streams: usize,
    /// Time a new connection has to send its first whole message.
    #[arg(long, default_value = "5s", value_name = "DURATION")]
    pub handshake_timeout: DurationArg,
    /// A test whose peer sends nothing for this long ends, marked partial.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub idle_timeout: DurationArg,
    /// Most tests running at once from one source address.
    #[arg(long, default_value_t = 4)]
    pub max_per_source: usize,
    /// Most TCP connections held at once (control, data and not yet identified).
    #[arg(long, default_value_t = 256)]
    pub max_connections: usize,
    /// Shared key: requests must be signed with it (hex on the first line, or raw bytes).
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<PathBuf>,
    /// How far a signed request's timestamp may be from the server's clock.
    #[arg(long, default_value = "30s", value_name = "DURATION")]
    pub auth_window: DurationArg,
    /// Before the reader of a forward TCP test sleeps, it keeps polling the
    /// test's sockets for up to this long (at most 1ms; 0 sleeps at once).
    /// Data that comes within it is read without a wake-up. Each wake-up of
    /// an idle server CPU costs the sender's CPU an interrupt, through the
    /// hypervisor on a VM, and there that capped one stream at 0.9x iperf3's
    /// throughput. The window costs server CPU only while a test runs; the
    /// test's server CPU figure shows how much. Reverse, bidirectional and
    /// UDP tests do not use it.
    #[arg(long, value_name = "DURATION", default_value = "5us")]
    pub busy_poll: DurationArg,
    /// Also answer `iperf3 -c` clients on iperf3's own protocol, on this TCP
    /// port (default 5201), one test at a time as iperf3 does, within the
    /// limits above; their tests are in the report like misura's.
    #[arg(long, value_name = "PORT", num_args = 0..=1, default_missing_value = "5201")]
    pub iperf3: Option<u16>,
    /// The same as --export-json (the report of every test, per client, aggregate).
    #[arg(long, value_name = "FILE", hide = true)]
    pub report_json: Option<PathBuf>,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub ns: NetnsArgs,
}

impl ServeArgs {
    /// The address `--listen` names, `None` for all of them.
    pub fn ip(&self) -> Option<IpAddr> {
        self.listen.and_then(|l| l.ip)
    }

    /// The port: `--listen`'s, else `--port`'s, else 5862.
    pub fn port(&self) -> u16 {
        self.listen
            .and_then(|l| l.port)
            .or(self.port)
            .unwrap_or(5862)
    }
}

/// The flags checked into the server's limits (its plan).
fn resolve(args: &ServeArgs) -> Result<Limits, Failure> {
    Limits::new(&Asked {
        max_tests: args.max_tests,
        max_duration: args.max_duration.clone(),
        max_rate_bps: args.max_rate.bps,
        max_streams: args.max_streams,
        handshake_timeout: args.handshake_timeout.clone(),
        idle_timeout: args.idle_timeout.clone(),
        max_per_source: args.max_per_source,
        max_connections: args.max_connections,
        auth_window: args.auth_window.clone(),
        busy_poll: args.busy_poll.clone(),
    })
    .map_err(|e| match e {
        // A bad limit is a bad command line (exit 2), as before the flags
        // were typed.
        LimitError::NotAboveZero { limit, value } => {
            Failure::Usage(format!("--{} {value}: must be above zero", flag(limit)))
        }
        LimitError::TooFew {
            limit: Limit::MaxConnections,
            ..
        } => Failure::Usage(
            "--max-connections must be at least 2 (a control and a data connection)".into(),
        ),
        LimitError::TooFew { limit, .. } => {
            Failure::Usage(format!("--{} must be at least 1", flag(limit)))
        }
        LimitError::BusyPoll(r) => crate::shared::throughput_words::sentence(&r),
    })
}

/// The flag that sets a limit.
fn flag(l: Limit) -> &'static str {
    match l {
        Limit::MaxTests => "max-tests",
        Limit::MaxDuration => "max-duration",
        Limit::MaxStreams => "max-streams",
        Limit::HandshakeTimeout => "handshake-timeout",
        Limit::IdleTimeout => "idle-timeout",
        Limit::MaxPerSource => "max-per-source",
        Limit::MaxConnections => "max-connections",
        Limit::AuthWindow => "auth-window",
    }
}

/// The output flags, with the older `--report-json FILE` as `--export-json`.
pub fn output_args(args: &ServeArgs) -> OutputArgs {
    let mut out = args.out.clone();
    if out.export_json.is_none() {
        out.export_json = args.report_json.clone();
    }
    out
}

/// `misura serve`: serves until stopped, then its report.
pub fn run(args: &ServeArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let limits = resolve(args)?;
    let key = read_key(&args.key_file)?;
    let at = Listen {
        ip: args.ip(),
        port: args.port(),
        netns: args.ns.netns.clone(),
        quiet: args.out.quiet,
        iperf3: args.iperf3,
    };
    let report = serve(&at, limits, key, stop)?;
    // Stopping is a server's normal end: its report is kept like any run's.
    let target = format!("{}:{}", report.config.listen, report.config.port);
    Ok(Finished::ok(Report::new(
        report,
        "serve",
        target,
        misura_report::serve::write_text,
    )))
}

/// `--key-file`: the key requests must be signed with.
fn read_key(path: &Option<PathBuf>) -> Result<Option<StampKey>, Failure> {
    let Some(p) = path else { return Ok(None) };
    let why =
        |e: &dyn std::fmt::Display| Failure::Usage(format!("--key-file {}: {e}", p.display()));
    let raw = crate::shared::files::read_bounded(p, crate::shared::files::KEY_FILE_MAX)
        .map_err(|e| why(&e))?;
    Ok(Some(
        StampKey::from_file_contents(&raw).map_err(|e| why(&e))?,
    ))
}
