//! What one server allows: tests at once, their duration, rate and streams,
//! and the timeouts that keep a silent peer from holding a slot.

use crate::error::Refusal;
use misura_cli::units::DurationArg;
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

/// The limits as the operator asked for them, before they are checked.
#[derive(Clone, Debug)]
pub struct Asked {
    pub max_tests: usize,
    pub max_duration: DurationArg,
    pub max_rate_bps: u64,
    pub max_streams: usize,
    pub handshake_timeout: DurationArg,
    pub idle_timeout: DurationArg,
    pub max_per_source: usize,
    pub max_connections: usize,
    pub auth_window: DurationArg,
    pub busy_poll: DurationArg,
}

/// A limit, as a [`LimitError`] names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    MaxTests,
    MaxDuration,
    MaxStreams,
    HandshakeTimeout,
    IdleTimeout,
    MaxPerSource,
    MaxConnections,
    AuthWindow,
}

/// A limit the server cannot run with.
#[derive(Debug, thiserror::Error)]
pub enum LimitError {
    /// A duration limit of zero or less.
    #[error("{limit:?} {value}: must be above zero")]
    NotAboveZero { limit: Limit, value: DurationArg },
    /// A count below the least that works (a test needs a control and a
    /// data connection).
    #[error("{limit:?} must be at least {min}")]
    TooFew { limit: Limit, min: usize },
    /// The busy-poll window out of its range.
    #[error(transparent)]
    BusyPoll(Refusal),
}

impl Limits {
    /// The limits `a` asks for, checked in the order they are listed.
    pub fn new(a: &Asked) -> Result<Limits, LimitError> {
        let above_zero = |limit, value: &DurationArg| {
            if value.ns <= 0 {
                return Err(LimitError::NotAboveZero {
                    limit,
                    value: value.clone(),
                });
            }
            Ok(value.std())
        };
        let l = Limits {
            max_tests: a.max_tests,
            max_duration: above_zero(Limit::MaxDuration, &a.max_duration)?,
            max_rate_bps: a.max_rate_bps,
            max_streams: a.max_streams,
            handshake_timeout: above_zero(Limit::HandshakeTimeout, &a.handshake_timeout)?,
            idle_timeout: above_zero(Limit::IdleTimeout, &a.idle_timeout)?,
            max_per_source: a.max_per_source,
            max_connections: a.max_connections,
            auth_window: above_zero(Limit::AuthWindow, &a.auth_window)?,
            busy_poll: crate::poll_window::window(&a.busy_poll).map_err(LimitError::BusyPoll)?,
        };
        for (limit, v, min) in [
            (Limit::MaxTests, l.max_tests, 1),
            (Limit::MaxStreams, l.max_streams, 1),
            (Limit::MaxPerSource, l.max_per_source, 1),
            (Limit::MaxConnections, l.max_connections, 2),
        ] {
            if v < min {
                return Err(LimitError::TooFew { limit, min });
            }
        }
        Ok(l)
    }
}

/// Largest message a TCP test may write at once, and largest rr request or
/// response (seed 001 goes up to 500 000 bytes).
pub const MAX_MSG_SIZE: u64 = 1 << 20;
/// Largest UDP payload (IPv4).
pub const MAX_DATAGRAM: u64 = 65_507;
/// Largest socket buffer a test may ask for.
pub const MAX_SOCKET_BUFFER: u64 = 256 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    fn asked() -> Asked {
        let d = |s: &str| s.parse::<DurationArg>().unwrap();
        Asked {
            max_tests: 8,
            max_duration: d("60s"),
            max_rate_bps: 10_000_000_000,
            max_streams: 16,
            handshake_timeout: d("5s"),
            idle_timeout: d("10s"),
            max_per_source: 4,
            max_connections: 256,
            auth_window: d("30s"),
            busy_poll: d("5us"),
        }
    }

    #[test]
    fn the_first_bad_limit_is_named() {
        let l = Limits::new(&asked()).unwrap();
        assert_eq!(l.max_duration, Duration::from_secs(60));
        assert_eq!(l.busy_poll, Duration::from_micros(5));
        let mut a = asked();
        a.idle_timeout = "0s".parse().unwrap();
        a.max_tests = 0;
        assert!(matches!(
            Limits::new(&a),
            Err(LimitError::NotAboveZero {
                limit: Limit::IdleTimeout,
                ..
            })
        ));
        let mut a = asked();
        a.max_connections = 1;
        assert!(matches!(
            Limits::new(&a),
            Err(LimitError::TooFew {
                limit: Limit::MaxConnections,
                min: 2
            })
        ));
        a.busy_poll = "2ms".parse().unwrap();
        assert!(matches!(Limits::new(&a), Err(LimitError::BusyPoll(_))));
    }
}
