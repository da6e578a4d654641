//! What one server allows: tests at once, their duration, rate and streams,
//! and the timeouts that keep a silent peer from holding a slot.

use std::time::Duration;

/// The resolved limits.
#[derive(Clone, Debug)]
pub struct Limits {
    pub max_tests: usize,
    pub max_duration: Duration,
    pub max_rate_bps: u64,
    pub max_streams: usize,
    pub handshake_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_per_source: usize,
    pub max_connections: usize,
    pub auth_window: Duration,
    /// `--busy-poll`: how long a forward TCP test's reader keeps polling its
    /// sockets before it sleeps (zero: it sleeps at once).
    pub busy_poll: Duration,
}

/// Largest message a TCP test may write at once, and largest rr request or
/// response (seed 001 goes up to 500 000 bytes).
pub const MAX_MSG_SIZE: u64 = 1 << 20;
/// Largest UDP payload (IPv4).
pub const MAX_DATAGRAM: u64 = 65_507;
/// Largest socket buffer a test may ask for.
pub const MAX_SOCKET_BUFFER: u64 = 256 << 20;
