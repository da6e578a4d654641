//! Mode, the base packets' field layouts, and the byte readers the views share.

use crate::WireError;
use core::ops::Range;

/// Unauthenticated or authenticated STAMP mode (RFC 8762 §4). Chosen by
/// session configuration; the packets carry no indication of it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    Unauthenticated,
    Authenticated,
}

impl Mode {
    /// The mode of a packet with this HMAC field: authenticated with one.
    pub const fn of_hmac(hmac: &Option<[u8; 16]>) -> Mode {
        match hmac {
            Some(_) => Mode::Authenticated,
            None => Mode::Unauthenticated,
        }
    }

    /// Length of the base packet (sender and reflector alike): 44 or 112.
    /// TLVs, if any, start here.
    pub const fn base_len(self) -> usize {
        match self {
            Mode::Unauthenticated => UNAUTH_LEN,
            Mode::Authenticated => AUTH_LEN,
        }
    }
}

/// Base packet length in unauthenticated mode.
pub const UNAUTH_LEN: usize = 44;
/// Base packet length in authenticated mode.
pub const AUTH_LEN: usize = 112;
/// Well-known UDP port of a STAMP Session-Reflector (RFC 8762 §4).
pub const UDP_PORT: u16 = 862;
/// Location of the HMAC field in authenticated base packets (both kinds).
pub const HMAC_FIELD: Range<usize> = 96..112;
/// Length of a (truncated HMAC-SHA-256) HMAC.
pub const HMAC_LEN: usize = 16;

/// The bytes of an authenticated base packet covered by its HMAC field
/// (RFC 8762 §4.2.2/§4.3.2: HMAC-SHA-256 truncated to 128 bits over the
/// packet up to the HMAC field, i.e. its first six 16-octet blocks).
/// `None` in unauthenticated mode, which has no HMAC field.
pub fn hmac_covered(mode: Mode) -> Option<Range<usize>> {
    match mode {
        Mode::Unauthenticated => None,
        Mode::Authenticated => Some(0..HMAC_FIELD.start),
    }
}

pub(super) mod field {
    use core::ops::Range;

    pub struct Sender {
        pub seq: Range<usize>,
        pub timestamp: Range<usize>,
        pub error_estimate: Range<usize>,
        pub ssid: Range<usize>,
    }

    pub struct Reflector {
        pub seq: Range<usize>,
        pub timestamp: Range<usize>,
        pub error_estimate: Range<usize>,
        pub ssid: Range<usize>,
        pub receive_timestamp: Range<usize>,
        pub sender_seq: Range<usize>,
        pub sender_timestamp: Range<usize>,
        pub sender_error_estimate: Range<usize>,
        pub sender_ttl: usize,
    }

    pub const SENDER_UNAUTH: Sender = Sender {
        seq: 0..4,
        timestamp: 4..12,
        error_estimate: 12..14,
        ssid: 14..16,
        // MBZ 16..44
    };

    pub const SENDER_AUTH: Sender = Sender {
        seq: 0..4,
        // MBZ 4..16
        timestamp: 16..24,
        error_estimate: 24..26,
        ssid: 26..28,
        // MBZ 28..96, HMAC 96..112
    };

    pub const REFLECTOR_UNAUTH: Reflector = Reflector {
        seq: 0..4,
        timestamp: 4..12,
        error_estimate: 12..14,
        ssid: 14..16,
        receive_timestamp: 16..24,
        sender_seq: 24..28,
        sender_timestamp: 28..36,
        sender_error_estimate: 36..38,
        // MBZ 38..40
        sender_ttl: 40,
        // MBZ 41..44
    };

    pub const REFLECTOR_AUTH: Reflector = Reflector {
        seq: 0..4,
        // MBZ 4..16
        timestamp: 16..24,
        error_estimate: 24..26,
        ssid: 26..28,
        // MBZ 28..32
        receive_timestamp: 32..40,
        // MBZ 40..48
        sender_seq: 48..52,
        // MBZ 52..64
        sender_timestamp: 64..72,
        sender_error_estimate: 72..74,
        // MBZ 74..80
        sender_ttl: 80,
        // MBZ 81..96, HMAC 96..112
    };
}

pub(super) fn sender_layout(mode: Mode) -> &'static field::Sender {
    match mode {
        Mode::Unauthenticated => &field::SENDER_UNAUTH,
        Mode::Authenticated => &field::SENDER_AUTH,
    }
}

pub(super) fn reflector_layout(mode: Mode) -> &'static field::Reflector {
    match mode {
        Mode::Unauthenticated => &field::REFLECTOR_UNAUTH,
        Mode::Authenticated => &field::REFLECTOR_AUTH,
    }
}

pub(super) fn rd16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

pub(super) fn rd32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

pub(super) fn rd8x(b: &[u8], at: usize) -> [u8; 8] {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    a
}

pub(super) fn rd16x(b: &[u8], at: usize) -> [u8; 16] {
    let mut a = [0u8; 16];
    a.copy_from_slice(&b[at..at + 16]);
    a
}

pub(super) fn check_len(have: usize, need: usize) -> Result<(), WireError> {
    if have < need {
        return Err(WireError::Truncated { need, have });
    }
    Ok(())
}

pub(super) fn check_out(have: usize, need: usize) -> Result<(), WireError> {
    if have < need {
        return Err(WireError::BufferTooSmall { need, have });
    }
    Ok(())
}
