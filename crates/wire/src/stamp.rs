//! STAMP test packets: RFC 8762 (Simple Two-way Active Measurement Protocol)
//! with the RFC 8972 extensions (SSID field and TLVs).
//!
//! STAMP travels over UDP (well-known port 862); this module only handles the
//! UDP payload. As elsewhere in this crate there are checked *views*
//! ([`StampSenderPacket`], [`StampReflectorPacket`]) with named field ranges,
//! plain *representations* ([`SenderRepr`], [`ReflectorRepr`], [`TlvRepr`])
//! with `parse`/`emit`/`buffer_len`, and nothing here touches a clock, a
//! socket or the allocator.
//!
//! The wire cannot tell unauthenticated from authenticated packets (nor
//! sender from reflector packets): both are configuration of the session, so
//! every entry point takes a [`Mode`].
//!
//! # Base packets (all fields big-endian)
//!
//! Session-Sender, unauthenticated (RFC 8762 §4.2.1, SSID from RFC 8972 §3),
//! 44 bytes:
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                        Sequence Number                        |  0
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                          Timestamp                            |  4
//! |                                                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |         Error Estimate        |             SSID              | 12
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                         MBZ (28 octets)                       | 16
//! ~                                                               ~
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ~                            TLVs                               ~ 44
//! ```
//!
//! Session-Reflector, unauthenticated (RFC 8762 §4.3.1 / RFC 8972 §3),
//! 44 bytes:
//!
//! ```text
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                        Sequence Number                        |  0
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                          Timestamp                            |  4
//! |                                                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |         Error Estimate        |             SSID              | 12
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                        Receive Timestamp                      | 16
//! |                                                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                 Session-Sender Sequence Number                | 24
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                  Session-Sender Timestamp                     | 28
//! |                                                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! | Session-Sender Error Estimate |              MBZ              | 36
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |Ses-Sender TTL |                     MBZ                       | 40
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ~                            TLVs                               ~ 44
//! ```
//!
//! Session-Sender, authenticated (RFC 8762 §4.2.2), 112 bytes:
//!
//! ```text
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                        Sequence Number                        |  0
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                        MBZ (12 octets)                        |  4
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                          Timestamp                            | 16
//! |                                                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |         Error Estimate        |             SSID              | 24
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                        MBZ (68 octets)                        | 28
//! ~                                                               ~
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                        HMAC (16 octets)                       | 96
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ~                            TLVs                               ~ 112
//! ```
//!
//! Session-Reflector, authenticated (RFC 8762 §4.3.2), 112 bytes:
//!
//! ```text
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                        Sequence Number                        |  0
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                        MBZ (12 octets)                        |  4
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                          Timestamp                            | 16
//! |                                                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |         Error Estimate        |             SSID              | 24
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                         MBZ (4 octets)                        | 28
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                        Receive Timestamp                      | 32
//! |                                                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                         MBZ (8 octets)                        | 40
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                 Session-Sender Sequence Number                | 48
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                        MBZ (12 octets)                        | 52
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                  Session-Sender Timestamp                     | 64
//! |                                                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! | Session-Sender Error Estimate |                               | 72
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+          MBZ (6 octets)       +
//! |                                                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |Ses-Sender TTL |                  MBZ (15 octets)              | 80
//! ~                                                               ~
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                        HMAC (16 octets)                       | 96
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ~                            TLVs                               ~ 112
//! ```
//!
//! MBZ fields are zeroed by `emit` and ignored by `parse` (RFC 8762: "MUST be
//! zeroed on transmission and ignored on receipt").
//!
//! Sources: RFC 8762 §4.2–4.4, RFC 8972 §3–§5, RFC 4656 §4.1.2 (Error
//! Estimate), RFC 8186 §2.3 (Z bit). The unauthenticated layouts and the
//! Error Estimate bit order were cross-checked against scapy 2.8.0
//! `scapy/contrib/stamp.py`; scapy has no authenticated packets and no TLV
//! type table, so the authenticated offsets and the TLV type numbers and
//! value layouts are from the RFC text (IANA "STAMP TLV Types" registry as
//! created by RFC 8972 §5.2).
//!
//! The parts: [`layout`] (modes, lengths, field offsets), [`timestamp`],
//! [`error_estimate`], the [`sender`] and [`reflector`] packets, [`tlv`]
//! (header, iterators) and [`tlv_repr`] (TLVs as values), and
//! [`reflection`] (a reply built in place); their items are re-exported
//! here, so `misura_wire::stamp::X` names each.

#[macro_use]
mod view;
pub mod error_estimate;
pub mod layout;
pub mod reflection;
pub mod reflector;
pub mod sender;
pub mod timestamp;
pub mod tlv;
pub mod tlv_repr;

pub use error_estimate::*;
pub use layout::*;
pub use reflection::*;
pub use reflector::*;
pub use sender::*;
pub use timestamp::*;
pub use tlv::*;
pub use tlv_repr::*;
