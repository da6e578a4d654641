//! How a Session-Sender is configured.

use misura_wire::stamp::Mode;
use misura_wire::WireError;

use super::RequestLayout;
use crate::auth::StampKey;
use crate::schedule::Pattern;
use crate::time::{Period, Span};

/// How a session is configured.
#[derive(Clone, Debug)]
pub struct SenderConfig {
    /// With a key, authenticated mode (RFC 8762 §4.2.2): requests carry an
    /// HMAC and replies without a valid one are refused.
    pub key: Option<StampKey>,
    /// Session-Sender Identifier (RFC 8972 §3).
    pub ssid: u16,
    /// One layout per request size, all in the key's mode.
    pub layouts: Vec<RequestLayout>,
    pub pattern: Pattern,
    pub period: Period,
    /// Seed of the Poisson schedule.
    pub seed: u64,
    /// Stop sending after this many probes.
    pub count: Option<u64>,
    /// Stop sending this long after the first probe was due.
    pub duration: Option<Span>,
    /// A probe is given up (lost, or released without its missing stamps)
    /// this long after it was sent, or after its reply.
    pub timeout: Span,
    pub warmup_probes: u32,
    pub warmup_wait: Span,
    /// The socket reports kernel (or NIC) TX stamps: wait for them.
    pub expect_tx_stamp: bool,
}

impl SenderConfig {
    pub fn mode(&self) -> Mode {
        if self.key.is_some() {
            Mode::Authenticated
        } else {
            Mode::Unauthenticated
        }
    }
}

/// Why a configuration cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("no request size given")]
    NoRequestSizes,
    #[error("the {size}-byte request layout is not in the session's mode (authenticated: a key)")]
    ModeMismatch { size: usize },
    #[error("building the {size}-byte request: {source}")]
    Template { size: usize, source: WireError },
}
