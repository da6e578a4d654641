//! What a Session-Sender hands back: the request to send, what became of a
//! reply, what the warm-up found and what the session counted.

#[cfg(doc)]
use super::SessionSender;
use crate::stamp_client::ReplyMatch;

/// A request written by [`SessionSender::poll_transmit`]: send the first
/// `len` bytes of the buffer, then report with [`SessionSender::on_sent`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Transmit {
    pub seq: u32,
    pub size_index: u16,
    pub len: usize,
    /// A warm-up request (not measured).
    pub warm_up: bool,
}

/// What became of a received datagram.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ReplyOutcome {
    /// The reply to the warm-up request being waited for.
    WarmUp,
    /// Not expected in this phase (a stray warm-up reply, or between
    /// warm-up and measurement); not counted.
    Ignored,
    /// Too short for a reply in the session's mode.
    Malformed,
    /// Authenticated mode and the HMAC does not verify.
    AuthFailed,
    /// Matched against the probes in flight.
    Probe(ReplyMatch),
}

/// What the warm-up found.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct WarmUpSummary {
    /// Warm-up requests handed to the socket.
    pub sent: u64,
    pub replies: u64,
    /// Replies without a kernel RX stamp.
    pub unstamped: u64,
    /// The last word of a reply on Follow-Up Telemetry (`None`: no reply
    /// carried the TLV).
    pub follow_up_supported: Option<bool>,
    /// Some reply carried a filled-in follow-up.
    pub follow_up_filled: bool,
}

/// Everything the session counted. `received` and `lost` count released
/// probes; the others count datagrams and stamps as they came.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SenderCounters {
    /// Measured probes sent (warm-up excluded).
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    /// Further copies of a reply.
    pub duplicates: u64,
    /// Replies that came after the reply to a later probe.
    pub reordered: u64,
    /// Replies to probes already given up.
    pub late: u64,
    /// Replies to sequence numbers this session never sent.
    pub unknown: u64,
    pub malformed: u64,
    pub auth_failed: u64,
    /// Precise reflector transmit stamps received two-step.
    pub follow_ups: u64,
    /// Received probes released without a kernel TX stamp.
    pub tx_stamp_missing: u64,
    /// Received probes whose reply had no kernel RX stamp.
    pub rx_stamp_missing: u64,
    /// With the NIC's stamps on: received probes released without the
    /// NIC's TX stamp, and without its RX stamp (a driver that claims
    /// hardware stamps but delivers none shows here, per probe).
    pub hw_tx_stamp_missing: u64,
    pub hw_rx_stamp_missing: u64,
}
