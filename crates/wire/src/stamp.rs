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
//! Long: RFC 8762 with RFC 8972: sender and reflector packets in both modes and
//! the TLVs, each with its byte diagram, checked parse and emit (tested in
//! tests/).

use core::ops::Range;

use crate::WireError;

// ---------------------------------------------------------------------------
// Mode and layouts
// ---------------------------------------------------------------------------

/// Unauthenticated or authenticated STAMP mode (RFC 8762 §4). Chosen by
/// session configuration; the packets carry no indication of it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    Unauthenticated,
    Authenticated,
}

impl Mode {
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

mod field {
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

fn sender_layout(mode: Mode) -> &'static field::Sender {
    match mode {
        Mode::Unauthenticated => &field::SENDER_UNAUTH,
        Mode::Authenticated => &field::SENDER_AUTH,
    }
}

fn reflector_layout(mode: Mode) -> &'static field::Reflector {
    match mode {
        Mode::Unauthenticated => &field::REFLECTOR_UNAUTH,
        Mode::Authenticated => &field::REFLECTOR_AUTH,
    }
}

fn rd16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn rd32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn rd8x(b: &[u8], at: usize) -> [u8; 8] {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    a
}

fn rd16x(b: &[u8], at: usize) -> [u8; 16] {
    let mut a = [0u8; 16];
    a.copy_from_slice(&b[at..at + 16]);
    a
}

fn check_len(have: usize, need: usize) -> Result<(), WireError> {
    if have < need {
        return Err(WireError::Truncated { need, have });
    }
    Ok(())
}

fn check_out(have: usize, need: usize) -> Result<(), WireError> {
    if have < need {
        return Err(WireError::BufferTooSmall { need, have });
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Timestamps
// ---------------------------------------------------------------------------

/// Which 64-bit timestamp format a STAMP timestamp uses; signalled by the Z
/// bit of the Error Estimate that accompanies it (RFC 8186 §2.3, RFC 8762
/// §4.2.1).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum StampTimestampFormat {
    /// NTP 64-bit (RFC 5905): seconds since 1900-01-01 (u32) + binary
    /// fraction of a second (u32). Z = 0.
    Ntp,
    /// PTPv2 truncated (IEEE 1588): seconds (u32, low 32 bits of the 48-bit
    /// PTP seconds) + nanoseconds (u32). Z = 1.
    Ptp,
}

/// Seconds from the NTP epoch (1900-01-01) to the Unix epoch (1970-01-01).
pub const NTP_UNIX_OFFSET_SECS: i64 = 2_208_988_800;

const NS_PER_SEC: i128 = 1_000_000_000;

/// Encodes nanoseconds since the Unix epoch as an 8-byte STAMP timestamp.
///
/// * NTP: the fraction is `round(ns_in_second · 2³² / 10⁹)` (half away from
///   zero). Because one fraction unit (≈0.233 ns) is finer than 1 ns, this
///   rounding never carries into the seconds and [`from_wire`] recovers the
///   exact nanosecond: the round trip error is 0 (< 1 ns as promised).
///   Seconds are taken modulo 2³² (NTP eras); [`from_wire`] maps them back
///   into 1968-01-20T03:14:08Z..2104-02-26 (Unix seconds
///   −61 505 152 ..< 4 233 462 144), so the round trip is
///   exact within that window.
/// * PTP: exact. The seconds are taken modulo 2³²; the round trip is exact
///   for 1970..2106. No UTC/TAI conversion is done: the caller passes the
///   time on the PTP timescale if its clock is PTP-disciplined (TAI), as
///   misura's clocks are read raw.
pub fn to_wire(unix_ns: i64, fmt: StampTimestampFormat) -> [u8; 8] {
    let ns = i128::from(unix_ns);
    let (secs, sub) = match fmt {
        StampTimestampFormat::Ntp => {
            let total = ns + i128::from(NTP_UNIX_OFFSET_SECS) * NS_PER_SEC;
            let secs = total.div_euclid(NS_PER_SEC);
            let rem = total.rem_euclid(NS_PER_SEC);
            // round(rem * 2^32 / 1e9); rem < 1e9 so the result < 2^32.
            let frac = ((rem << 32) + NS_PER_SEC / 2) / NS_PER_SEC;
            (secs as u32, frac as u32)
        }
        StampTimestampFormat::Ptp => {
            let secs = ns.div_euclid(NS_PER_SEC);
            let rem = ns.rem_euclid(NS_PER_SEC);
            (secs as u32, rem as u32)
        }
    };
    let mut out = [0u8; 8];
    out[..4].copy_from_slice(&secs.to_be_bytes());
    out[4..].copy_from_slice(&sub.to_be_bytes());
    out
}

/// Decodes an 8-byte STAMP timestamp to nanoseconds since the Unix epoch.
///
/// * NTP: the fraction is rounded to the nearest nanosecond. Seconds with
///   the top bit set are read as NTP era 0 (1968..2036), the others as era 1
///   (2036..2104), the usual pivot for timestamps of live traffic.
/// * PTP: `secs · 10⁹ + ns`. A nanoseconds field ≥ 10⁹ (invalid) is not
///   rejected, just added.
pub fn from_wire(bytes: [u8; 8], fmt: StampTimestampFormat) -> i64 {
    let secs = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    let sub = u32::from_be_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    match fmt {
        StampTimestampFormat::Ntp => {
            let era_secs = if secs & 0x8000_0000 != 0 {
                i128::from(secs)
            } else {
                i128::from(secs) + (1i128 << 32)
            };
            let frac_ns = ((i128::from(sub) * NS_PER_SEC) + (1 << 31)) >> 32;
            let ns = (era_secs - i128::from(NTP_UNIX_OFFSET_SECS)) * NS_PER_SEC + frac_ns;
            ns as i64
        }
        StampTimestampFormat::Ptp => i64::from(secs) * 1_000_000_000 + i64::from(sub),
    }
}

// ---------------------------------------------------------------------------
// Error Estimate
// ---------------------------------------------------------------------------

/// The 16-bit Error Estimate (RFC 4656 §4.1.2, Z bit from RFC 8186 §2.3):
///
/// ```text
///  0                   1
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |S|Z|   Scale   |   Multiplier  |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// S: the clock is synchronized to UTC by an external source. Z: 0 = NTP,
/// 1 = PTPv2 timestamp format. Error = Multiplier · 2^(Scale−32) seconds.
/// Multiplier 0 is not allowed by RFC 4656; such values are kept as they
/// are but [`ErrorEstimate::is_valid`] is false.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ErrorEstimate(pub u16);

impl ErrorEstimate {
    pub const S: u16 = 0x8000;
    pub const Z: u16 = 0x4000;

    pub const fn new(
        synchronized: bool,
        fmt: StampTimestampFormat,
        scale: u8,
        multiplier: u8,
    ) -> Self {
        let mut v = ((scale as u16) & 0x3f) << 8 | multiplier as u16;
        if synchronized {
            v |= Self::S;
        }
        if let StampTimestampFormat::Ptp = fmt {
            v |= Self::Z;
        }
        ErrorEstimate(v)
    }

    /// The smallest representable estimate that is ≥ `uncertainty_ns`.
    /// Among equal values the smallest scale is chosen (so the result is
    /// canonical). 0 ns gives scale 0, multiplier 1. Every `u64` input is
    /// representable (the largest estimate is 255 · 2³¹ s).
    pub fn from_ns(uncertainty_ns: u64, synchronized: bool, fmt: StampTimestampFormat) -> Self {
        // Target in units of 2^-32 s, rounded up so the result is >= target.
        let t = (u128::from(uncertainty_ns) << 32).div_ceil(1_000_000_000);
        let t = t.max(1);
        for scale in 0u8..64 {
            let unit = 1u128 << scale;
            let m = t.div_ceil(unit);
            if m <= 255 {
                return Self::new(synchronized, fmt, scale, m as u8);
            }
        }
        Self::new(synchronized, fmt, 63, 255)
    }

    pub const fn synchronized(&self) -> bool {
        self.0 & Self::S != 0
    }

    /// The timestamp format the Z bit announces.
    pub const fn format(&self) -> StampTimestampFormat {
        if self.0 & Self::Z != 0 {
            StampTimestampFormat::Ptp
        } else {
            StampTimestampFormat::Ntp
        }
    }

    pub const fn scale(&self) -> u8 {
        ((self.0 >> 8) & 0x3f) as u8
    }

    pub const fn multiplier(&self) -> u8 {
        self.0 as u8
    }

    /// RFC 4656: the multiplier must not be zero.
    pub const fn is_valid(&self) -> bool {
        self.multiplier() != 0
    }

    /// The estimate in nanoseconds, rounded up (so `from_ns(x).to_ns() >= x`).
    pub fn to_ns(&self) -> u128 {
        let units = u128::from(self.multiplier()) << self.scale();
        (units * 1_000_000_000).div_ceil(1u128 << 32)
    }

    pub fn as_secs_f64(&self) -> f64 {
        f64::from(self.multiplier()) * 2f64.powi(i32::from(self.scale()) - 32)
    }
}

// ---------------------------------------------------------------------------
// Session-Sender packet
// ---------------------------------------------------------------------------

/// A read/write view of a Session-Sender test packet (see the module docs
/// for the layouts). `new_checked` only checks the length for `mode`.
#[derive(Debug, Clone)]
pub struct StampSenderPacket<T: AsRef<[u8]>> {
    buffer: T,
    mode: Mode,
}

impl<T: AsRef<[u8]>> StampSenderPacket<T> {
    /// Wraps without checking; accessors panic on a buffer shorter than
    /// `mode.base_len()`.
    pub fn new_unchecked(buffer: T, mode: Mode) -> Self {
        StampSenderPacket { buffer, mode }
    }

    /// Wraps a buffer of at least `mode.base_len()` bytes; afterwards no
    /// accessor can panic.
    pub fn new_checked(buffer: T, mode: Mode) -> Result<Self, WireError> {
        check_len(buffer.as_ref().len(), mode.base_len())?;
        Ok(Self::new_unchecked(buffer, mode))
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn l(&self) -> &'static field::Sender {
        sender_layout(self.mode)
    }

    pub fn seq(&self) -> u32 {
        rd32(self.buffer.as_ref(), self.l().seq.start)
    }

    pub fn timestamp(&self) -> [u8; 8] {
        rd8x(self.buffer.as_ref(), self.l().timestamp.start)
    }

    pub fn error_estimate(&self) -> ErrorEstimate {
        ErrorEstimate(rd16(self.buffer.as_ref(), self.l().error_estimate.start))
    }

    /// Session-Sender Identifier (RFC 8972 §3; MBZ in plain RFC 8762).
    pub fn ssid(&self) -> u16 {
        rd16(self.buffer.as_ref(), self.l().ssid.start)
    }

    /// The HMAC field; `None` in unauthenticated mode.
    pub fn hmac(&self) -> Option<[u8; 16]> {
        match self.mode {
            Mode::Authenticated => Some(rd16x(self.buffer.as_ref(), HMAC_FIELD.start)),
            Mode::Unauthenticated => None,
        }
    }

    /// The bytes after the base packet (the TLV area; may be empty).
    pub fn tlv_bytes(&self) -> &[u8] {
        &self.buffer.as_ref()[self.mode.base_len()..]
    }

    pub fn tlvs(&self) -> Tlvs<'_> {
        Tlvs::new(self.tlv_bytes())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> StampSenderPacket<T> {
    pub fn set_seq(&mut self, v: u32) {
        let r = self.l().seq.clone();
        self.buffer.as_mut()[r].copy_from_slice(&v.to_be_bytes());
    }

    pub fn set_timestamp(&mut self, v: [u8; 8]) {
        let r = self.l().timestamp.clone();
        self.buffer.as_mut()[r].copy_from_slice(&v);
    }

    pub fn set_error_estimate(&mut self, v: ErrorEstimate) {
        let r = self.l().error_estimate.clone();
        self.buffer.as_mut()[r].copy_from_slice(&v.0.to_be_bytes());
    }

    pub fn set_ssid(&mut self, v: u16) {
        let r = self.l().ssid.clone();
        self.buffer.as_mut()[r].copy_from_slice(&v.to_be_bytes());
    }

    /// Writes the HMAC field; does nothing in unauthenticated mode.
    pub fn set_hmac(&mut self, v: [u8; 16]) {
        if self.mode == Mode::Authenticated {
            self.buffer.as_mut()[HMAC_FIELD].copy_from_slice(&v);
        }
    }

    /// Zeroes every MBZ field of the base packet.
    pub fn clear_mbz(&mut self) {
        let b = self.buffer.as_mut();
        match self.mode {
            Mode::Unauthenticated => b[16..44].fill(0),
            Mode::Authenticated => {
                b[4..16].fill(0);
                b[28..96].fill(0);
            }
        }
    }

    pub fn tlv_bytes_mut(&mut self) -> &mut [u8] {
        let base = self.mode.base_len();
        &mut self.buffer.as_mut()[base..]
    }
}

/// A Session-Sender base packet as a plain value. TLVs are handled by
/// [`Tlvs`] / [`TlvRepr`] separately.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SenderRepr {
    pub seq: u32,
    /// Raw timestamp in the format given by `error_estimate.format()`; see
    /// [`to_wire`] / [`from_wire`].
    pub timestamp: [u8; 8],
    pub error_estimate: ErrorEstimate,
    pub ssid: u16,
    /// `None`: unauthenticated mode. `Some`: authenticated mode with this
    /// HMAC field (zeros while building; see [`hmac_covered`]).
    pub hmac: Option<[u8; 16]>,
}

impl SenderRepr {
    pub fn mode(&self) -> Mode {
        if self.hmac.is_some() {
            Mode::Authenticated
        } else {
            Mode::Unauthenticated
        }
    }

    /// Parses the base packet at the start of `bytes` (trailing TLVs are
    /// allowed and ignored; MBZ contents are ignored).
    pub fn parse(bytes: &[u8], mode: Mode) -> Result<Self, WireError> {
        let p = StampSenderPacket::new_checked(bytes, mode)?;
        Ok(SenderRepr {
            seq: p.seq(),
            timestamp: p.timestamp(),
            error_estimate: p.error_estimate(),
            ssid: p.ssid(),
            hmac: p.hmac(),
        })
    }

    /// Bytes `emit` writes: 44 or 112.
    pub fn buffer_len(&self) -> usize {
        self.mode().base_len()
    }

    /// Writes the base packet (MBZ zeroed) to the start of `buf` and returns
    /// its length. Bytes beyond are untouched, as is all of `buf` on error.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let n = self.buffer_len();
        check_out(buf.len(), n)?;
        let mut p = StampSenderPacket::new_unchecked(&mut buf[..n], self.mode());
        p.clear_mbz();
        p.set_seq(self.seq);
        p.set_timestamp(self.timestamp);
        p.set_error_estimate(self.error_estimate);
        p.set_ssid(self.ssid);
        if let Some(h) = self.hmac {
            p.set_hmac(h);
        }
        Ok(n)
    }
}

// ---------------------------------------------------------------------------
// Session-Reflector packet
// ---------------------------------------------------------------------------

/// A read/write view of a Session-Reflector test packet (see the module docs
/// for the layouts). `new_checked` only checks the length for `mode`.
#[derive(Debug, Clone)]
pub struct StampReflectorPacket<T: AsRef<[u8]>> {
    buffer: T,
    mode: Mode,
}

impl<T: AsRef<[u8]>> StampReflectorPacket<T> {
    pub fn new_unchecked(buffer: T, mode: Mode) -> Self {
        StampReflectorPacket { buffer, mode }
    }

    pub fn new_checked(buffer: T, mode: Mode) -> Result<Self, WireError> {
        check_len(buffer.as_ref().len(), mode.base_len())?;
        Ok(Self::new_unchecked(buffer, mode))
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn l(&self) -> &'static field::Reflector {
        reflector_layout(self.mode)
    }

    pub fn seq(&self) -> u32 {
        rd32(self.buffer.as_ref(), self.l().seq.start)
    }

    /// The reflector's transmit timestamp.
    pub fn timestamp(&self) -> [u8; 8] {
        rd8x(self.buffer.as_ref(), self.l().timestamp.start)
    }

    pub fn error_estimate(&self) -> ErrorEstimate {
        ErrorEstimate(rd16(self.buffer.as_ref(), self.l().error_estimate.start))
    }

    pub fn ssid(&self) -> u16 {
        rd16(self.buffer.as_ref(), self.l().ssid.start)
    }

    /// When the reflector received the sender's packet (same format as
    /// `timestamp`, i.e. the reflector's Error Estimate Z bit).
    pub fn receive_timestamp(&self) -> [u8; 8] {
        rd8x(self.buffer.as_ref(), self.l().receive_timestamp.start)
    }

    pub fn sender_seq(&self) -> u32 {
        rd32(self.buffer.as_ref(), self.l().sender_seq.start)
    }

    pub fn sender_timestamp(&self) -> [u8; 8] {
        rd8x(self.buffer.as_ref(), self.l().sender_timestamp.start)
    }

    pub fn sender_error_estimate(&self) -> ErrorEstimate {
        ErrorEstimate(rd16(
            self.buffer.as_ref(),
            self.l().sender_error_estimate.start,
        ))
    }

    /// TTL / Hop Limit of the sender's packet as received by the reflector.
    pub fn sender_ttl(&self) -> u8 {
        self.buffer.as_ref()[self.l().sender_ttl]
    }

    pub fn hmac(&self) -> Option<[u8; 16]> {
        match self.mode {
            Mode::Authenticated => Some(rd16x(self.buffer.as_ref(), HMAC_FIELD.start)),
            Mode::Unauthenticated => None,
        }
    }

    pub fn tlv_bytes(&self) -> &[u8] {
        &self.buffer.as_ref()[self.mode.base_len()..]
    }

    pub fn tlvs(&self) -> Tlvs<'_> {
        Tlvs::new(self.tlv_bytes())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> StampReflectorPacket<T> {
    fn put(&mut self, r: Range<usize>, v: &[u8]) {
        self.buffer.as_mut()[r].copy_from_slice(v);
    }

    pub fn set_seq(&mut self, v: u32) {
        self.put(self.l().seq.clone(), &v.to_be_bytes());
    }

    pub fn set_timestamp(&mut self, v: [u8; 8]) {
        self.put(self.l().timestamp.clone(), &v);
    }

    pub fn set_error_estimate(&mut self, v: ErrorEstimate) {
        self.put(self.l().error_estimate.clone(), &v.0.to_be_bytes());
    }

    pub fn set_ssid(&mut self, v: u16) {
        self.put(self.l().ssid.clone(), &v.to_be_bytes());
    }

    pub fn set_receive_timestamp(&mut self, v: [u8; 8]) {
        self.put(self.l().receive_timestamp.clone(), &v);
    }

    pub fn set_sender_seq(&mut self, v: u32) {
        self.put(self.l().sender_seq.clone(), &v.to_be_bytes());
    }

    pub fn set_sender_timestamp(&mut self, v: [u8; 8]) {
        self.put(self.l().sender_timestamp.clone(), &v);
    }

    pub fn set_sender_error_estimate(&mut self, v: ErrorEstimate) {
        self.put(self.l().sender_error_estimate.clone(), &v.0.to_be_bytes());
    }

    pub fn set_sender_ttl(&mut self, v: u8) {
        let at = self.l().sender_ttl;
        self.buffer.as_mut()[at] = v;
    }

    /// Writes the HMAC field; does nothing in unauthenticated mode.
    pub fn set_hmac(&mut self, v: [u8; 16]) {
        if self.mode == Mode::Authenticated {
            self.put(HMAC_FIELD, &v);
        }
    }

    /// Zeroes every MBZ field of the base packet.
    pub fn clear_mbz(&mut self) {
        let b = self.buffer.as_mut();
        match self.mode {
            Mode::Unauthenticated => {
                b[38..40].fill(0);
                b[41..44].fill(0);
            }
            Mode::Authenticated => {
                b[4..16].fill(0);
                b[28..32].fill(0);
                b[40..48].fill(0);
                b[52..64].fill(0);
                b[74..80].fill(0);
                b[81..96].fill(0);
            }
        }
    }

    pub fn tlv_bytes_mut(&mut self) -> &mut [u8] {
        let base = self.mode.base_len();
        &mut self.buffer.as_mut()[base..]
    }
}

/// A Session-Reflector base packet as a plain value.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ReflectorRepr {
    pub seq: u32,
    pub timestamp: [u8; 8],
    pub error_estimate: ErrorEstimate,
    pub ssid: u16,
    pub receive_timestamp: [u8; 8],
    pub sender_seq: u32,
    pub sender_timestamp: [u8; 8],
    pub sender_error_estimate: ErrorEstimate,
    pub sender_ttl: u8,
    /// `None`: unauthenticated mode; `Some`: authenticated, with this HMAC.
    pub hmac: Option<[u8; 16]>,
}

impl ReflectorRepr {
    pub fn mode(&self) -> Mode {
        if self.hmac.is_some() {
            Mode::Authenticated
        } else {
            Mode::Unauthenticated
        }
    }

    pub fn parse(bytes: &[u8], mode: Mode) -> Result<Self, WireError> {
        let p = StampReflectorPacket::new_checked(bytes, mode)?;
        Ok(ReflectorRepr {
            seq: p.seq(),
            timestamp: p.timestamp(),
            error_estimate: p.error_estimate(),
            ssid: p.ssid(),
            receive_timestamp: p.receive_timestamp(),
            sender_seq: p.sender_seq(),
            sender_timestamp: p.sender_timestamp(),
            sender_error_estimate: p.sender_error_estimate(),
            sender_ttl: p.sender_ttl(),
            hmac: p.hmac(),
        })
    }

    pub fn buffer_len(&self) -> usize {
        self.mode().base_len()
    }

    /// Writes the base packet (MBZ zeroed) to the start of `buf` and returns
    /// its length. Bytes beyond are untouched, as is all of `buf` on error.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let n = self.buffer_len();
        check_out(buf.len(), n)?;
        let mut p = StampReflectorPacket::new_unchecked(&mut buf[..n], self.mode());
        p.clear_mbz();
        p.set_seq(self.seq);
        p.set_timestamp(self.timestamp);
        p.set_error_estimate(self.error_estimate);
        p.set_ssid(self.ssid);
        p.set_receive_timestamp(self.receive_timestamp);
        p.set_sender_seq(self.sender_seq);
        p.set_sender_timestamp(self.sender_timestamp);
        p.set_sender_error_estimate(self.sender_error_estimate);
        p.set_sender_ttl(self.sender_ttl);
        if let Some(h) = self.hmac {
            p.set_hmac(h);
        }
        Ok(n)
    }
}

// ---------------------------------------------------------------------------
// TLVs
// ---------------------------------------------------------------------------

/// Length of a TLV header (flags, type, length).
pub const TLV_HEADER_LEN: usize = 4;

/// STAMP TLV Types (IANA registry created by RFC 8972 §5.2). scapy 2.8.0's
/// `contrib/stamp.py` leaves its type table empty, so these come from the
/// RFC text.
pub mod tlv_type {
    pub const EXTRA_PADDING: u8 = 1;
    pub const LOCATION: u8 = 2;
    pub const TIMESTAMP_INFORMATION: u8 = 3;
    pub const CLASS_OF_SERVICE: u8 = 4;
    pub const DIRECT_MEASUREMENT: u8 = 5;
    pub const ACCESS_REPORT: u8 = 6;
    pub const FOLLOW_UP_TELEMETRY: u8 = 7;
    pub const HMAC: u8 = 8;
}

/// Synchronization Source values of the Timestamp Information TLV (RFC 8972
/// §5.4).
pub mod sync_source {
    pub const NTP: u8 = 1;
    pub const PTP: u8 = 2;
    pub const SSU_BITS: u8 = 3;
    pub const GPS_GLONASS_LORAN_C: u8 = 4;
    pub const LOCAL_FREE_RUNNING: u8 = 5;
}

/// Timestamping Method values (Timestamp Information TLV, RFC 8972 §5.5)
/// and Timestamp Mode values (Follow-Up Telemetry TLV) — same code points.
pub mod timestamp_method {
    pub const HW_ASSIST: u8 = 1;
    pub const SW_LOCAL: u8 = 2;
    pub const CONTROL_PLANE: u8 = 3;
}

/// The STAMP TLV Flags octet (RFC 8972 §4):
///
/// ```text
///  0 1 2 3 4 5 6 7
/// +-+-+-+-+-+-+-+-+
/// |U|M|I|R|R|R|R|R|
/// +-+-+-+-+-+-+-+-+
/// ```
///
/// A Session-Sender sends U = 1, M = I = 0; the reflector clears U for the
/// TLVs it understood, sets M on malformed ones and I on all of them if the
/// HMAC TLV failed verification. Reserved bits are kept as they are.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct TlvFlags(pub u8);

impl TlvFlags {
    /// Unrecognized.
    pub const U: TlvFlags = TlvFlags(0x80);
    /// Malformed.
    pub const M: TlvFlags = TlvFlags(0x40);
    /// Integrity check failed.
    pub const I: TlvFlags = TlvFlags(0x20);
    /// What a Session-Sender sends (RFC 8972 §4): U set, M and I clear.
    pub const SENDER: TlvFlags = TlvFlags(0x80);

    pub const fn contains(&self, other: TlvFlags) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn set(&mut self, other: TlvFlags, on: bool) {
        if on {
            self.0 |= other.0
        } else {
            self.0 &= !other.0
        }
    }
}

/// One TLV as located in a buffer, value not interpreted.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RawTlv<'a> {
    /// Offset of the TLV header within the TLV area.
    pub offset: usize,
    pub flags: TlvFlags,
    pub typ: u8,
    pub value: &'a [u8],
}

impl RawTlv<'_> {
    /// Header plus value.
    pub fn total_len(&self) -> usize {
        TLV_HEADER_LEN + self.value.len()
    }
}

/// Walks TLV framing only. Yields `Err(Truncated)` once, then stops, when a
/// header or a value runs past the end of the area.
#[derive(Clone, Debug)]
pub struct RawTlvs<'a> {
    bytes: &'a [u8],
    pos: usize,
    done: bool,
}

impl<'a> RawTlvs<'a> {
    pub fn new(tlv_area: &'a [u8]) -> Self {
        RawTlvs {
            bytes: tlv_area,
            pos: 0,
            done: false,
        }
    }

    /// Offset of the next TLV to be read.
    pub fn offset(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for RawTlvs<'a> {
    type Item = Result<RawTlv<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos >= self.bytes.len() {
            return None;
        }
        let rest = &self.bytes[self.pos..];
        if rest.len() < TLV_HEADER_LEN {
            self.done = true;
            return Some(Err(WireError::Truncated {
                need: TLV_HEADER_LEN,
                have: rest.len(),
            }));
        }
        let len = usize::from(rd16(rest, 2));
        if rest.len() < TLV_HEADER_LEN + len {
            self.done = true;
            return Some(Err(WireError::Truncated {
                need: TLV_HEADER_LEN + len,
                have: rest.len(),
            }));
        }
        let tlv = RawTlv {
            offset: self.pos,
            flags: TlvFlags(rest[0]),
            typ: rest[1],
            value: &rest[TLV_HEADER_LEN..TLV_HEADER_LEN + len],
        };
        self.pos += TLV_HEADER_LEN + len;
        Some(Ok(tlv))
    }
}

/// Iterator over the TLV area (the bytes after the 44- or 112-byte base
/// packet), yielding typed TLVs.
///
/// * A TLV whose length runs past the end of the area (or a 1–3 byte tail
///   too short for a header) yields `Err(Truncated)` and ends iteration.
/// * A known type with a length invalid for it yields `Err(BadTlv)`;
///   iteration continues with the next TLV, since the framing is intact.
///
/// Never reads outside the slice, never panics, never allocates.
#[derive(Clone, Debug)]
pub struct Tlvs<'a> {
    raw: RawTlvs<'a>,
}

impl<'a> Tlvs<'a> {
    pub fn new(tlv_area: &'a [u8]) -> Self {
        Tlvs {
            raw: RawTlvs::new(tlv_area),
        }
    }

    /// Offset (within the TLV area) of the next TLV to be read.
    pub fn offset(&self) -> usize {
        self.raw.offset()
    }
}

impl<'a> Iterator for Tlvs<'a> {
    type Item = Result<TlvRepr<'a>, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(self.raw.next()?.and_then(TlvRepr::from_raw))
    }
}

/// Value of the Timestamp Information TLV apart from sub-TLVs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct TimestampInfo {
    /// Synchronization source of the reflector's receive timestamp.
    pub sync_src_in: u8,
    /// Timestamping method of the reflector's receive timestamp.
    pub timestamp_in: u8,
    /// Synchronization source of the reflector's transmit timestamp.
    pub sync_src_out: u8,
    /// Timestamping method of the reflector's transmit timestamp.
    pub timestamp_out: u8,
}

/// A STAMP TLV (RFC 8972 §4). Each starts with the common header:
///
/// ```text
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |STAMP TLV Flags|     Type      |           Length              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ~                 Value (Length octets)                         ~
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// The value diagrams are on each variant. Reserved fields are zeroed by
/// `emit` and ignored by `parse`. Variable parts borrow from the buffer, so
/// parsing does not allocate.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TlvRepr<'a> {
    /// Type 1 (§4.1): any number of padding octets.
    ///
    /// ```text
    /// ~                        Extra Padding                          ~
    /// ```
    ExtraPadding { flags: TlvFlags, padding: &'a [u8] },
    /// Type 2 (§4.2), length ≥ 4; sub-TLVs (same header format) carry the
    /// addresses and are kept raw.
    ///
    /// ```text
    /// |      Destination Port         |          Source Port          |
    /// ~                          Sub-TLVs                             ~
    /// ```
    Location {
        flags: TlvFlags,
        dst_port: u16,
        src_port: u16,
        sub_tlvs: &'a [u8],
    },
    /// Type 3 (§4.3), length ≥ 4:
    ///
    /// ```text
    /// | Sync Src In   | Timestamp In  | Sync Src Out  | Timestamp Out |
    /// ~                    Optional Sub-TLVs                          ~
    /// ```
    TimestampInformation {
        flags: TlvFlags,
        info: TimestampInfo,
        sub_tlvs: &'a [u8],
    },
    /// Type 4 (§4.4), length 4:
    ///
    /// ```text
    /// |   DSCP1   |   DSCP2   |ECN| RP|          Reserved             |
    /// ```
    ClassOfService {
        flags: TlvFlags,
        /// DSCP the sender asks the reflector to use in the reply (6 bits).
        dscp1: u8,
        /// DSCP of the received packet, filled by the reflector (6 bits).
        dscp2: u8,
        /// ECN of the received packet, filled by the reflector (2 bits).
        ecn: u8,
        /// Reverse Path (2 bits).
        rp: u8,
    },
    /// Type 5 (§4.5), length 12:
    ///
    /// ```text
    /// |             Session-Sender Tx counter (S_TxC)                 |
    /// |             Session-Reflector Rx counter (R_RxC)              |
    /// |             Session-Reflector Tx counter (R_TxC)              |
    /// ```
    DirectMeasurement {
        flags: TlvFlags,
        sender_tx: u32,
        reflector_rx: u32,
        reflector_tx: u32,
    },
    /// Type 6 (§4.6), length 4:
    ///
    /// ```text
    /// |   ID  | Resv  |  Return Code  |           Reserved            |
    /// ```
    AccessReport {
        flags: TlvFlags,
        /// Access ID (4 bits; 1 = 3GPP, 2 = non-3GPP).
        id: u8,
        return_code: u8,
    },
    /// Type 7 (§4.7), length 16:
    ///
    /// ```text
    /// |                       Sequence Number                         |
    /// |                    Follow-up Timestamp                        |
    /// |                                                               |
    /// | Timestamp M   |                 Reserved                      |
    /// ```
    FollowUpTelemetry {
        flags: TlvFlags,
        /// Sequence number of the reflector's previous reply.
        seq: u32,
        /// Its precise transmit timestamp.
        timestamp: [u8; 8],
        /// How it was taken ([`timestamp_method`]).
        mode: u8,
    },
    /// Type 8 (§4.8), length 16: HMAC-SHA-256 truncated to 128 bits over
    /// the base packet's Sequence Number and all preceding TLVs (see
    /// [`tlv_hmac_covered`]).
    ///
    /// ```text
    /// |                        HMAC (16 octets)                       |
    /// ```
    Hmac { flags: TlvFlags, hmac: [u8; 16] },
    /// Any other type, value kept raw.
    Unknown {
        flags: TlvFlags,
        typ: u8,
        value: &'a [u8],
    },
}

fn bad_tlv(typ: u8, len: usize) -> WireError {
    WireError::BadTlv { typ, len }
}

impl<'a> TlvRepr<'a> {
    /// Interprets a framed TLV. Known types with a length invalid for them
    /// give `BadTlv`.
    pub fn from_raw(raw: RawTlv<'a>) -> Result<Self, WireError> {
        let v = raw.value;
        let flags = raw.flags;
        let exact = |n: usize| {
            if v.len() == n {
                Ok(())
            } else {
                Err(bad_tlv(raw.typ, v.len()))
            }
        };
        Ok(match raw.typ {
            tlv_type::EXTRA_PADDING => TlvRepr::ExtraPadding { flags, padding: v },
            tlv_type::LOCATION => {
                if v.len() < 4 {
                    return Err(bad_tlv(raw.typ, v.len()));
                }
                TlvRepr::Location {
                    flags,
                    dst_port: rd16(v, 0),
                    src_port: rd16(v, 2),
                    sub_tlvs: &v[4..],
                }
            }
            tlv_type::TIMESTAMP_INFORMATION => {
                if v.len() < 4 {
                    return Err(bad_tlv(raw.typ, v.len()));
                }
                TlvRepr::TimestampInformation {
                    flags,
                    info: TimestampInfo {
                        sync_src_in: v[0],
                        timestamp_in: v[1],
                        sync_src_out: v[2],
                        timestamp_out: v[3],
                    },
                    sub_tlvs: &v[4..],
                }
            }
            tlv_type::CLASS_OF_SERVICE => {
                exact(4)?;
                TlvRepr::ClassOfService {
                    flags,
                    dscp1: v[0] >> 2,
                    dscp2: ((v[0] & 0x03) << 4) | (v[1] >> 4),
                    ecn: (v[1] >> 2) & 0x03,
                    rp: v[1] & 0x03,
                }
            }
            tlv_type::DIRECT_MEASUREMENT => {
                exact(12)?;
                TlvRepr::DirectMeasurement {
                    flags,
                    sender_tx: rd32(v, 0),
                    reflector_rx: rd32(v, 4),
                    reflector_tx: rd32(v, 8),
                }
            }
            tlv_type::ACCESS_REPORT => {
                exact(4)?;
                TlvRepr::AccessReport {
                    flags,
                    id: v[0] >> 4,
                    return_code: v[1],
                }
            }
            tlv_type::FOLLOW_UP_TELEMETRY => {
                exact(16)?;
                TlvRepr::FollowUpTelemetry {
                    flags,
                    seq: rd32(v, 0),
                    timestamp: rd8x(v, 4),
                    mode: v[12],
                }
            }
            tlv_type::HMAC => {
                exact(16)?;
                TlvRepr::Hmac {
                    flags,
                    hmac: rd16x(v, 0),
                }
            }
            typ => TlvRepr::Unknown {
                flags,
                typ,
                value: v,
            },
        })
    }

    /// Parses one TLV at the start of `bytes` (trailing bytes ignored).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, WireError> {
        match RawTlvs::new(bytes).next() {
            Some(r) => TlvRepr::from_raw(r?),
            None => Err(WireError::Truncated {
                need: TLV_HEADER_LEN,
                have: 0,
            }),
        }
    }

    pub fn flags(&self) -> TlvFlags {
        match *self {
            TlvRepr::ExtraPadding { flags, .. }
            | TlvRepr::Location { flags, .. }
            | TlvRepr::TimestampInformation { flags, .. }
            | TlvRepr::ClassOfService { flags, .. }
            | TlvRepr::DirectMeasurement { flags, .. }
            | TlvRepr::AccessReport { flags, .. }
            | TlvRepr::FollowUpTelemetry { flags, .. }
            | TlvRepr::Hmac { flags, .. }
            | TlvRepr::Unknown { flags, .. } => flags,
        }
    }

    pub fn typ(&self) -> u8 {
        match *self {
            TlvRepr::ExtraPadding { .. } => tlv_type::EXTRA_PADDING,
            TlvRepr::Location { .. } => tlv_type::LOCATION,
            TlvRepr::TimestampInformation { .. } => tlv_type::TIMESTAMP_INFORMATION,
            TlvRepr::ClassOfService { .. } => tlv_type::CLASS_OF_SERVICE,
            TlvRepr::DirectMeasurement { .. } => tlv_type::DIRECT_MEASUREMENT,
            TlvRepr::AccessReport { .. } => tlv_type::ACCESS_REPORT,
            TlvRepr::FollowUpTelemetry { .. } => tlv_type::FOLLOW_UP_TELEMETRY,
            TlvRepr::Hmac { .. } => tlv_type::HMAC,
            TlvRepr::Unknown { typ, .. } => typ,
        }
    }

    /// Length of the value (the Length field).
    pub fn value_len(&self) -> usize {
        match *self {
            TlvRepr::ExtraPadding { padding, .. } => padding.len(),
            TlvRepr::Location { sub_tlvs, .. } => 4 + sub_tlvs.len(),
            TlvRepr::TimestampInformation { sub_tlvs, .. } => 4 + sub_tlvs.len(),
            TlvRepr::ClassOfService { .. } | TlvRepr::AccessReport { .. } => 4,
            TlvRepr::DirectMeasurement { .. } => 12,
            TlvRepr::FollowUpTelemetry { .. } | TlvRepr::Hmac { .. } => 16,
            TlvRepr::Unknown { value, .. } => value.len(),
        }
    }

    /// Bytes `emit` writes: header + value.
    pub fn buffer_len(&self) -> usize {
        TLV_HEADER_LEN + self.value_len()
    }

    /// Writes the TLV at the start of `buf` and returns its length. Fails
    /// (writing nothing) if the value exceeds 65535 octets, a sub-field
    /// exceeds its bit width, or `buf` is too small.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let vlen = self.value_len();
        let len16 = u16::try_from(vlen).map_err(|_| WireError::BadLength {
            field: "STAMP TLV length",
            value: vlen,
        })?;
        match *self {
            TlvRepr::ClassOfService {
                dscp1,
                dscp2,
                ecn,
                rp,
                ..
            } => {
                check_bits("dscp1", dscp1, 6)?;
                check_bits("dscp2", dscp2, 6)?;
                check_bits("ecn", ecn, 2)?;
                check_bits("rp", rp, 2)?;
            }
            TlvRepr::AccessReport { id, .. } => check_bits("access id", id, 4)?,
            _ => {}
        }
        let n = TLV_HEADER_LEN + vlen;
        check_out(buf.len(), n)?;
        let buf = &mut buf[..n];
        buf[0] = self.flags().0;
        buf[1] = self.typ();
        buf[2..4].copy_from_slice(&len16.to_be_bytes());
        let v = &mut buf[TLV_HEADER_LEN..];
        match *self {
            TlvRepr::ExtraPadding { padding, .. } => v.copy_from_slice(padding),
            TlvRepr::Location {
                dst_port,
                src_port,
                sub_tlvs,
                ..
            } => {
                v[0..2].copy_from_slice(&dst_port.to_be_bytes());
                v[2..4].copy_from_slice(&src_port.to_be_bytes());
                v[4..].copy_from_slice(sub_tlvs);
            }
            TlvRepr::TimestampInformation { info, sub_tlvs, .. } => {
                v[0] = info.sync_src_in;
                v[1] = info.timestamp_in;
                v[2] = info.sync_src_out;
                v[3] = info.timestamp_out;
                v[4..].copy_from_slice(sub_tlvs);
            }
            TlvRepr::ClassOfService {
                dscp1,
                dscp2,
                ecn,
                rp,
                ..
            } => {
                v[0] = (dscp1 << 2) | (dscp2 >> 4);
                v[1] = ((dscp2 & 0x0f) << 4) | (ecn << 2) | rp;
                v[2..4].fill(0);
            }
            TlvRepr::DirectMeasurement {
                sender_tx,
                reflector_rx,
                reflector_tx,
                ..
            } => {
                v[0..4].copy_from_slice(&sender_tx.to_be_bytes());
                v[4..8].copy_from_slice(&reflector_rx.to_be_bytes());
                v[8..12].copy_from_slice(&reflector_tx.to_be_bytes());
            }
            TlvRepr::AccessReport {
                id, return_code, ..
            } => {
                v[0] = id << 4;
                v[1] = return_code;
                v[2..4].fill(0);
            }
            TlvRepr::FollowUpTelemetry {
                seq,
                timestamp,
                mode,
                ..
            } => {
                v[0..4].copy_from_slice(&seq.to_be_bytes());
                v[4..12].copy_from_slice(&timestamp);
                v[12] = mode;
                v[13..16].fill(0);
            }
            TlvRepr::Hmac { hmac, .. } => v.copy_from_slice(&hmac),
            TlvRepr::Unknown { value, .. } => v.copy_from_slice(value),
        }
        Ok(n)
    }
}

fn check_bits(field: &'static str, v: u8, bits: u32) -> Result<(), WireError> {
    if u32::from(v) >> bits != 0 {
        return Err(WireError::BadField {
            field,
            value: u32::from(v),
        });
    }
    Ok(())
}

/// Emits `tlvs` back to back at the start of `buf`; returns the bytes
/// written. On error `buf` may hold the TLVs emitted so far.
pub fn emit_tlvs(tlvs: &[TlvRepr<'_>], buf: &mut [u8]) -> Result<usize, WireError> {
    let need: usize = tlvs.iter().map(TlvRepr::buffer_len).sum();
    check_out(buf.len(), need)?;
    let mut at = 0;
    for t in tlvs {
        at += t.emit(&mut buf[at..])?;
    }
    Ok(at)
}

/// What the RFC 8972 §4.8 HMAC TLV of a packet covers, as byte ranges of
/// the whole packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlvHmacCoverage {
    /// The base packet's Sequence Number (always `0..4`).
    pub seq: Range<usize>,
    /// All TLVs preceding the HMAC TLV (may be empty).
    pub tlvs: Range<usize>,
    /// The HMAC TLV's 16-octet value.
    pub hmac: Range<usize>,
}

/// Finds the first well-formed HMAC TLV of `packet` (RFC 8972 requires it
/// to follow the TLVs it protects) and returns what its HMAC covers: the
/// concatenation of the Sequence Number field and the TLVs before it (their
/// headers included). `None` if there is none (or the TLV framing breaks
/// before it).
pub fn tlv_hmac_covered(packet: &[u8], mode: Mode) -> Option<TlvHmacCoverage> {
    let base = mode.base_len();
    let area = packet.get(base..)?;
    for raw in RawTlvs::new(area) {
        let raw = raw.ok()?;
        if raw.typ == tlv_type::HMAC && raw.value.len() == HMAC_LEN {
            let start = base + raw.offset;
            return Some(TlvHmacCoverage {
                seq: 0..4,
                tlvs: base..start,
                hmac: start + TLV_HEADER_LEN..start + TLV_HEADER_LEN + HMAC_LEN,
            });
        }
    }
    None
}

// ---------------------------------------------------------------------------
// Reflection
// ---------------------------------------------------------------------------

/// Length of the reply to a request of `request_len` bytes.
///
/// RFC 8762 keeps test packets symmetric: the sender's MBZ padding makes its
/// base packet as long as the reflector's (44/44 and 112/112 bytes), and
/// RFC 8972 §4 has the reflector return the TLVs it received in place, so a
/// reply is exactly as long as its request; in particular it is never
/// larger, which keeps the reflector from amplifying traffic.
pub const fn reflect_len(request_len: usize) -> usize {
    request_len
}

/// Everything a reflector knows about one request that goes into its reply.
/// Pure data; the caller reads the clocks, counters and IP header.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct ReflectParams {
    /// Reply Sequence Number: the request's in stateless mode, the
    /// reflector's own counter in stateful mode (RFC 8762 §4.3).
    pub seq: u32,
    /// Reflector transmit timestamp (format per `error_estimate`).
    pub timestamp: [u8; 8],
    pub error_estimate: ErrorEstimate,
    /// When the request was received (format per `error_estimate`).
    pub receive_timestamp: [u8; 8],
    /// TTL / Hop Limit of the received request.
    pub sender_ttl: u8,
    /// The request's HMAC TLV failed verification: set I on every TLV.
    pub tlv_integrity_failed: bool,
    /// Fills Timestamp Information TLVs (all four octets).
    pub timestamp_info: Option<TimestampInfo>,
    /// Fills Follow-Up Telemetry TLVs: (sequence number, timestamp, mode)
    /// of the previous reply.
    pub follow_up: Option<(u32, [u8; 8], u8)>,
    /// Fills Direct Measurement TLVs: (R_RxC, R_TxC).
    pub counters: Option<(u32, u32)>,
    /// TOS / Traffic Class octet of the received request; fills DSCP2 and
    /// ECN of Class of Service TLVs.
    pub received_tos: Option<u8>,
    /// Fills Location TLVs: (destination port, source port) of the request.
    /// Address sub-TLVs are returned as received.
    pub ports: Option<(u16, u16)>,
}

/// Builds the reflector's reply to `request` (a Session-Sender packet of
/// `mode`) in `out` and returns its length, `reflect_len(request.len())`.
///
/// * The base packet is a [`ReflectorRepr`] from `params` and the request's
///   seq, timestamp, error estimate and SSID. In authenticated mode its HMAC
///   field is zeroed, for the caller to fill over [`hmac_covered`].
/// * The request's TLV area is copied, then walked (RFC 8972 §4): U is
///   cleared on recognized TLVs and set on others; M is set on a known TLV
///   with a bad length, and on a TLV whose length overruns the packet, where
///   processing stops (the rest is returned as received); I is set on all of
///   them if `params.tlv_integrity_failed`. Recognized TLVs get the fields
///   `params` provides; HMAC TLV values are zeroed for the caller to fill
///   over [`tlv_hmac_covered`] of the reply.
///
/// `out` must hold at least `request.len()` bytes; only that many are
/// written.
pub fn build_reflection(
    request: &[u8],
    mode: Mode,
    params: &ReflectParams,
    out: &mut [u8],
) -> Result<usize, WireError> {
    let req = SenderRepr::parse(request, mode)?;
    let n = reflect_len(request.len());
    check_out(out.len(), n)?;
    let out = &mut out[..n];
    let base = mode.base_len();
    let reply = ReflectorRepr {
        seq: params.seq,
        timestamp: params.timestamp,
        error_estimate: params.error_estimate,
        ssid: req.ssid,
        receive_timestamp: params.receive_timestamp,
        sender_seq: req.seq,
        sender_timestamp: req.timestamp,
        sender_error_estimate: req.error_estimate,
        sender_ttl: params.sender_ttl,
        hmac: match mode {
            Mode::Authenticated => Some([0; 16]),
            Mode::Unauthenticated => None,
        },
    };
    reply.emit(out)?;
    out[base..].copy_from_slice(&request[base..]);
    reflect_tlvs(&mut out[base..], params);
    Ok(n)
}

fn reflect_tlvs(area: &mut [u8], params: &ReflectParams) {
    let mut pos = 0;
    while area.len() - pos >= TLV_HEADER_LEN {
        let t = &mut area[pos..];
        let typ = t[1];
        let len = usize::from(rd16(t, 2));
        let mut flags = TlvFlags(t[0]);
        flags.set(TlvFlags::I, params.tlv_integrity_failed);
        if t.len() < TLV_HEADER_LEN + len {
            // Length overruns the packet: flag it and stop.
            flags.set(TlvFlags::M, true);
            t[0] = flags.0;
            return;
        }
        let v = &mut t[TLV_HEADER_LEN..TLV_HEADER_LEN + len];
        let (recognized, well_formed) = fill_tlv(typ, v, params);
        flags.set(TlvFlags::U, !recognized);
        flags.set(TlvFlags::M, !well_formed);
        t[0] = flags.0;
        pos += TLV_HEADER_LEN + len;
    }
}

/// Fills one TLV value in place; returns (recognized, well formed).
fn fill_tlv(typ: u8, v: &mut [u8], p: &ReflectParams) -> (bool, bool) {
    let ok = match typ {
        tlv_type::EXTRA_PADDING => true,
        tlv_type::LOCATION => {
            if v.len() < 4 {
                false
            } else {
                if let Some((dst, src)) = p.ports {
                    v[0..2].copy_from_slice(&dst.to_be_bytes());
                    v[2..4].copy_from_slice(&src.to_be_bytes());
                }
                true
            }
        }
        tlv_type::TIMESTAMP_INFORMATION => {
            if v.len() < 4 {
                false
            } else {
                if let Some(i) = p.timestamp_info {
                    v[0] = i.sync_src_in;
                    v[1] = i.timestamp_in;
                    v[2] = i.sync_src_out;
                    v[3] = i.timestamp_out;
                }
                true
            }
        }
        tlv_type::CLASS_OF_SERVICE => {
            if v.len() != 4 {
                false
            } else {
                if let Some(tos) = p.received_tos {
                    let dscp2 = tos >> 2;
                    let ecn = tos & 0x03;
                    v[0] = (v[0] & 0xfc) | (dscp2 >> 4);
                    v[1] = ((dscp2 & 0x0f) << 4) | (ecn << 2) | (v[1] & 0x03);
                }
                true
            }
        }
        tlv_type::DIRECT_MEASUREMENT => {
            if v.len() != 12 {
                false
            } else {
                if let Some((rx, tx)) = p.counters {
                    v[4..8].copy_from_slice(&rx.to_be_bytes());
                    v[8..12].copy_from_slice(&tx.to_be_bytes());
                }
                true
            }
        }
        tlv_type::ACCESS_REPORT => v.len() == 4,
        tlv_type::FOLLOW_UP_TELEMETRY => {
            if v.len() != 16 {
                false
            } else {
                if let Some((seq, ts, mode)) = p.follow_up {
                    v[0..4].copy_from_slice(&seq.to_be_bytes());
                    v[4..12].copy_from_slice(&ts);
                    v[12] = mode;
                    v[13..16].fill(0);
                }
                true
            }
        }
        tlv_type::HMAC => {
            if v.len() != HMAC_LEN {
                false
            } else {
                v.fill(0);
                true
            }
        }
        _ => return (false, true),
    };
    (true, ok)
}
