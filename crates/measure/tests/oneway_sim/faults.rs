//! What the simulated cable, SUT and host do wrong.

/// What the cable, the SUT and the host do wrong.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    pub loss: f64,
    /// Frames the SUT drops whatever the dice say.
    pub drop_seqs: Vec<u64>,
    pub duplicate: f64,
    pub reorder: f64,
    pub reorder_delay_ns: i64,
    /// Frames held in the SUT for `late_delay_ns` more (by chance, or these).
    pub late: f64,
    pub late_seqs: Vec<u64>,
    pub late_delay_ns: i64,
    pub tx_stamp_missing: f64,
    /// A second TX stamp of the frame (a bridge port inside the host).
    pub tx_stamp_again: f64,
    /// The TX stamp comes after the frame has arrived.
    pub slow_tx_stamp: f64,
    /// `send()` answers EAGAIN.
    pub send_blocked: f64,
    /// Chance per sent frame of one frame of stray traffic.
    pub strays: f64,
    /// Raise the stop flag right after frame `k` is sent.
    pub stop_after: Option<u64>,
    /// Step the host clock by `delta` right after frame `k` is sent.
    pub clock_steps: Vec<(u64, i64)>,
    /// The host stalls for `len` right after frame `k` is sent.
    pub stalls: Vec<(u64, i64)>,
}

/// Stray traffic on the RX port.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stray {
    OtherSession,
    OtherEtherType,
    /// One of this host's own frames, seen on the way out.
    Outgoing,
    /// A warm-up frame arriving late.
    Warmup,
    /// A probe cut short.
    Truncated,
    /// Shorter than an Ethernet header.
    Runt,
    /// This EtherType, random bytes.
    Garbage,
    /// A probe of this session with a sequence number never sent.
    UnknownSeq,
}

pub const STRAYS: [Stray; 8] = [
    Stray::OtherSession,
    Stray::OtherEtherType,
    Stray::Outgoing,
    Stray::Warmup,
    Stray::Truncated,
    Stray::Runt,
    Stray::Garbage,
    Stray::UnknownSeq,
];
