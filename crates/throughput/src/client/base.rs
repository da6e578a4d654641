//! The clients' common ground: the plan their target flags
//! resolve into, the server as announced, directions, CPU and timing helpers.

use crate::error::Refusal;
use crate::error::Result;
use misura_measure::auth::StampKey;
use misura_report::throughput::Endpoint;
use misura_report::{HostFingerprint, LoopTuning};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub const DEFAULT_PORT: u16 = 5862;
/// How long connecting to the server may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// After the planned end, how long a test may take to wind down (drain,
/// RESULT) before it is ended with what was measured, marked partial.
pub const END_GRACE: Duration = Duration::from_secs(5);
/// `--clients` when not given (a sweep's default list too).
pub const DEFAULT_CLIENTS: &str = "1";

/// Clients one invocation runs at once.
pub const MAX_CLIENTS: u32 = 256;

/// Where a client test goes and how many clients run it: the part of every
/// client test's plan that its target flags give, checked.
#[derive(Clone, Debug)]
pub struct ClientPlan {
    pub host: String,
    pub key_file: Option<PathBuf>,
    pub netns: Option<String>,
    pub clients: u32,
    /// No progress or interval lines (--quiet, --json, or a run of a sweep).
    pub quiet: bool,
}

impl ClientPlan {
    pub fn check(&self) -> Result<(), Refusal> {
        if self.clients == 0 || self.clients > MAX_CLIENTS {
            return Err(Refusal::Clients {
                given: self.clients,
                max: MAX_CLIENTS,
            });
        }
        Ok(())
    }

    /// The plan resolved against the system: the key read, the server's
    /// name looked up.
    pub fn resolve(&self) -> Result<Server> {
        Ok(Server {
            key: misura_cli::keys::read_key(&self.key_file)?,
            addr: misura_cli::target::resolve(&self.host, DEFAULT_PORT)?,
        })
    }

    /// The host's fingerprint, with the namespace the test ran in.
    pub fn fingerprint(&self) -> HostFingerprint {
        misura_run::host::fingerprint(LoopTuning {
            netns: self.netns.clone(),
            ..Default::default()
        })
    }

    /// The endpoint of the result.
    pub fn endpoint(&self, s: &Server) -> Endpoint {
        Endpoint {
            server: self.host.clone(),
            address: s.addr.to_string(),
            netns: self.netns.clone(),
            authenticated: s.key.is_some(),
            clients: self.clients,
            found_by_probing: None,
        }
    }
}

/// The server of a test, resolved: its control address and the key that
/// signs requests to it.
pub struct Server {
    pub addr: SocketAddr,
    pub key: Option<StampKey>,
}

/// Which way a test's data flows, from the client's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// The client sends, the server receives.
    Forward,
    /// The server sends, the client receives.
    Reverse,
    /// Both at once.
    Bidir,
}

impl Direction {
    pub fn of(reverse: bool, bidir: bool) -> Direction {
        match (bidir, reverse) {
            (true, _) => Direction::Bidir,
            (false, true) => Direction::Reverse,
            (false, false) => Direction::Forward,
        }
    }

    /// The name on the wire and in the result.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Forward => "forward",
            Direction::Reverse => "reverse",
            Direction::Bidir => "bidir",
        }
    }
}

/// CPU time of the calling thread.
pub fn thread_cpu() -> (u64, u64) {
    misura_sys::rusage::thread_cpu()
}

/// CPU used by the calling thread since `start` (from [`thread_cpu`]).
pub fn thread_cpu_since(start: (u64, u64)) -> (u64, u64) {
    let (u, s) = thread_cpu();
    (u.saturating_sub(start.0), s.saturating_sub(start.1))
}

pub fn interrupted(stop: &AtomicUsize) -> bool {
    stop.load(Ordering::Relaxed) != 0
}

pub fn signal_reason(stop: &AtomicUsize) -> misura_report::StopReason {
    misura_cli::exit::signal_reason(stop.load(Ordering::Relaxed))
}

/// Bytes over nanoseconds in bit/s; 0 over no time.
pub fn bits_per_s(bytes: u64, ns: u64) -> f64 {
    if ns > 0 {
        bytes as f64 * 8e9 / ns as f64
    } else {
        0.0
    }
}

/// A deadline clock for a test: planned duration from `start`.
pub struct Deadline {
    pub start: Instant,
    pub end: Instant,
}

impl Deadline {
    pub fn new(duration_ns: u64) -> Deadline {
        let start = Instant::now();
        Deadline {
            start,
            end: start + Duration::from_nanos(duration_ns),
        }
    }
}
