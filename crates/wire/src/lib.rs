//! Wire formats for misura: Ethernet II (with an optional 802.1Q tag) and
//! misura's own probe header, which travels as the Ethernet payload.
//!
//! The design follows the smoltcp pattern:
//!
//! * a *view* (`EthernetFrame<T>`, `ProbeHeader<T>`) wraps any byte buffer.
//!   `new_checked` validates the length once, after which every accessor is
//!   infallible and cannot panic. Views are what the hot transmit loop uses:
//!   it patches the sequence number and timestamp in a pre-built frame
//!   instead of re-serialising the whole thing.
//! * a *representation* (`EthernetRepr`, `ProbeRepr`) is a plain value with
//!   `parse` (fully validating) and `emit` (writes into a caller-supplied
//!   buffer, never allocates).
//!
//! ```
//! use misura_wire::{emit_frame, parse_frame, EthernetFrame, EthernetRepr, MacAddr};
//! use misura_wire::{ProbeFlags, ProbeHeader, ProbeRepr, ETHERTYPE_MISURA};
//!
//! let eth = EthernetRepr {
//!     dst: "02:6d:73:00:00:02".parse().unwrap(),
//!     src: "02:6d:73:00:00:01".parse().unwrap(),
//!     vlan: None,
//!     ethertype: ETHERTYPE_MISURA,
//! };
//! let probe = ProbeRepr {
//!     flags: ProbeFlags::SENDER_TIMESTAMP,
//!     payload_len: 46,
//!     session_id: 7, stream: 0, size_index: 0,
//!     seq: 0, sender_timestamp: 0, aux_timestamp: 0,
//! };
//! // Build the frame once...
//! let mut buf = [0u8; 1514];
//! let len = emit_frame(&eth, &probe, &mut buf).unwrap();
//! // ...then, per packet, patch only what changes.
//! let hl = eth.header_len();
//! let mut hdr = ProbeHeader::new_checked(&mut buf[hl..len]).unwrap();
//! hdr.set_seq(42);
//! hdr.set_sender_timestamp(1_700_000_000_000_000_000);
//!
//! let (_, rx) = parse_frame(&buf[..len], ETHERTYPE_MISURA).unwrap();
//! assert_eq!(rx.seq, 42);
//! # let _ = (EthernetFrame::new_checked(&buf[..len]).unwrap(), MacAddr::BROADCAST);
//! ```
//!
//! Nothing here touches sockets, clocks or the allocator, so the crate can be
//! fuzzed and property-tested in isolation.
#![forbid(unsafe_code)]

pub mod control;
pub mod ethernet;
pub mod hwtstamp;
pub mod iperf3;
pub mod irtt;
pub mod irtt_error;
pub mod irtt_params;
pub mod probe;
pub mod ptp;
pub mod sntp;
pub mod stamp;
pub mod test_control;

pub use ethernet::{EthernetFrame, EthernetRepr, MacAddr, ParseMacError, VlanTag};
pub use probe::{emit_frame, frame_bytes, parse_frame, ProbeFlags, ProbeHeader, ProbeRepr};

/// IEEE 802 "Local Experimental EtherType 1". Reserved for exactly this kind
/// of private protocol, so it cannot collide with real traffic; misura's
/// default.
pub const ETHERTYPE_MISURA: u16 = 0x88B5;
/// EtherType used by the original 2004 measurement paper (a DEC private
/// type). Kept so results can be reproduced against its setup.
pub const ETHERTYPE_SEED: u16 = 0x6006;
/// Tag protocol identifier of an IEEE 802.1Q VLAN tag.
pub const ETHERTYPE_VLAN: u16 = 0x8100;

/// Everything that can go wrong when parsing or emitting a wire format.
///
/// Variants carry the numbers involved so that a log line or test failure
/// says what was wrong without a debugger.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Input ended before a structure was complete.
    #[error("truncated input: need {need} bytes, have {have}")]
    Truncated { need: usize, have: usize },
    /// The output buffer handed to an `emit` function is too small.
    #[error("output buffer too small: need {need} bytes, have {have}")]
    BufferTooSmall { need: usize, have: usize },
    /// The probe header does not start with "MSRA": not a misura frame.
    #[error("bad magic: not a misura probe header")]
    BadMagic,
    /// A misura probe header of a version this build does not understand.
    #[error("unsupported probe header version {0} (supported: {v})", v = probe::VERSION)]
    UnsupportedVersion(u8),
    /// A length field is out of its allowed range.
    #[error("bad length in field `{field}`: {value}")]
    BadLength { field: &'static str, value: usize },
    /// A frame carries another EtherType than the one expected.
    #[error("wrong EtherType: expected {expected:#06x}, found {found:#06x}")]
    WrongEtherType { expected: u16, found: u16 },
    /// A non-length field holds a value that cannot be encoded.
    #[error("invalid value in field `{field}`: {value:#x}")]
    BadField { field: &'static str, value: u32 },
    /// A STAMP TLV of a known type whose length is invalid for that type
    /// (RFC 8972 calls it malformed).
    #[error("malformed STAMP TLV of type {typ}: value length {len}")]
    BadTlv { typ: u8, len: usize },
}
