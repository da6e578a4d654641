//! SNTP version 4 packets (RFC 4330, the on-wire format of NTPv4, RFC 5905
//! §7.3): just enough to ask an NTP server for the time and read its answer.
//! Seed 003 estimates the TSC frequency from the server's Receive Timestamp.
//!
//! NTP travels over UDP (port 123); this module handles the UDP payload
//! only. As elsewhere in this crate there is a checked *view*
//! ([`SntpPacket`]) with named field ranges and a plain *representation*
//! ([`SntpRepr`]) with `parse`/`emit`/`buffer_len`; nothing here touches a
//! clock or a socket.
//!
//! # Header (48 bytes, all fields big-endian)
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |LI | VN  |Mode |    Stratum    |     Poll      |   Precision   |  0
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                          Root Delay                           |  4
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                       Root Dispersion                         |  8
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                     Reference Identifier                      | 12
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                   Reference Timestamp (64)                    | 16
//! |                                                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                   Originate Timestamp (64)                    | 24
//! |                                                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                    Receive Timestamp (64)                     | 32
//! |                                                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                    Transmit Timestamp (64)                    | 40
//! |                                                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ~        extension fields, key identifier, MAC (optional)       ~ 48
//! ```
//!
//! LI: leap indicator (3 = clock unsynchronised). VN: version (1–4). Mode:
//! 3 client, 4 server. Stratum 0 in a server reply is a Kiss-o'-Death whose
//! four-letter code is in the Reference Identifier (RFC 5905 §7.4). Poll and
//! Precision are signed log2 seconds. Root Delay and Root Dispersion are
//! unsigned 16.16 fixed-point seconds ("NTP short format"). Timestamps are
//! 32.32 fixed-point seconds since 1900 ("NTP timestamp format").
//!
//! Anything after the 48-byte header (RFC 7822 extension fields, a MAC) is
//! ignored by `parse` and never written by `emit`.
//!
//! Sources: RFC 4330 §4–§5, RFC 5905 §6–§7 and Fig. 8. The reply in the
//! tests is a real answer of chrony 4.3 in misura's lab.
//!
//! Long: the packet with its byte diagram and the NTP timestamp conversions,
//! then its parse and emit tests.

use core::ops::Range;

use crate::stamp::{from_wire, to_wire, StampTimestampFormat};
use crate::WireError;

/// Length of the fixed NTP header.
pub const HEADER_LEN: usize = 48;
/// NTP's well-known UDP port.
pub const UDP_PORT: u16 = 123;
/// The version misura sends.
pub const VERSION: u8 = 4;

mod field {
    use core::ops::Range;
    pub const LI_VN_MODE: usize = 0;
    pub const STRATUM: usize = 1;
    pub const POLL: usize = 2;
    pub const PRECISION: usize = 3;
    pub const ROOT_DELAY: Range<usize> = 4..8;
    pub const ROOT_DISPERSION: Range<usize> = 8..12;
    pub const REFERENCE_ID: Range<usize> = 12..16;
    pub const REFERENCE_TS: Range<usize> = 16..24;
    pub const ORIGINATE_TS: Range<usize> = 24..32;
    pub const RECEIVE_TS: Range<usize> = 32..40;
    pub const TRANSMIT_TS: Range<usize> = 40..48;
}

/// Leap indicator (RFC 5905 Fig. 9).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Leap {
    NoWarning,
    /// The last minute of the day has 61 seconds.
    InsertSecond,
    /// The last minute of the day has 59 seconds.
    DeleteSecond,
    /// The server's clock is not synchronised ("alarm condition").
    Unsynchronized,
}

impl Leap {
    fn from_bits(b: u8) -> Leap {
        match b & 3 {
            0 => Leap::NoWarning,
            1 => Leap::InsertSecond,
            2 => Leap::DeleteSecond,
            _ => Leap::Unsynchronized,
        }
    }
    fn bits(self) -> u8 {
        match self {
            Leap::NoWarning => 0,
            Leap::InsertSecond => 1,
            Leap::DeleteSecond => 2,
            Leap::Unsynchronized => 3,
        }
    }
}

/// Association mode (RFC 5905 Fig. 10). Every 3-bit value has a name, so
/// nothing is lost between parse and emit.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    Reserved,
    SymmetricActive,
    SymmetricPassive,
    Client,
    Server,
    Broadcast,
    Control,
    Private,
}

impl Mode {
    fn from_bits(b: u8) -> Mode {
        [
            Mode::Reserved,
            Mode::SymmetricActive,
            Mode::SymmetricPassive,
            Mode::Client,
            Mode::Server,
            Mode::Broadcast,
            Mode::Control,
            Mode::Private,
        ][usize::from(b & 7)]
    }
    fn bits(self) -> u8 {
        self as u8
    }
}

/// A 64-bit NTP timestamp: seconds since 1900-01-01 (modulo 2³², the era)
/// and a binary fraction of a second. Kept raw so parse/emit are exact.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NtpTimestamp {
    pub seconds: u32,
    pub fraction: u32,
}

impl NtpTimestamp {
    /// The all-zero timestamp, which NTP uses for "not set".
    pub const ZERO: NtpTimestamp = NtpTimestamp {
        seconds: 0,
        fraction: 0,
    };

    pub fn from_bytes(b: [u8; 8]) -> NtpTimestamp {
        NtpTimestamp {
            seconds: u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
            fraction: u32::from_be_bytes([b[4], b[5], b[6], b[7]]),
        }
    }

    pub fn to_bytes(self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&self.seconds.to_be_bytes());
        b[4..].copy_from_slice(&self.fraction.to_be_bytes());
        b
    }

    /// From nanoseconds since the Unix epoch (fraction rounded to nearest;
    /// exact back to the nanosecond through [`NtpTimestamp::to_unix_ns`]).
    pub fn from_unix_ns(ns: i64) -> NtpTimestamp {
        NtpTimestamp::from_bytes(to_wire(ns, StampTimestampFormat::Ntp))
    }

    /// To nanoseconds since the Unix epoch, reading the seconds in the era
    /// around today (1968..2104), as for live traffic.
    pub fn to_unix_ns(self) -> i64 {
        from_wire(self.to_bytes(), StampTimestampFormat::Ntp)
    }

    pub fn is_zero(self) -> bool {
        self == NtpTimestamp::ZERO
    }
}

/// An unsigned 16.16 fixed-point number of seconds (Root Delay, Root
/// Dispersion) in nanoseconds.
pub fn short_to_ns(v: u32) -> u64 {
    (u64::from(v) * 1_000_000_000) >> 16
}

/// A signed log2-seconds field (Precision, Poll) in nanoseconds:
/// `2^v` s, e.g. −20 → 954 ns. Saturates for absurd values.
pub fn log2_to_ns(v: i8) -> f64 {
    2f64.powi(i32::from(v)) * 1e9
}

fn check_len(have: usize) -> Result<(), WireError> {
    if have < HEADER_LEN {
        Err(WireError::Truncated {
            need: HEADER_LEN,
            have,
        })
    } else {
        Ok(())
    }
}

fn rd32(b: &[u8], r: Range<usize>) -> u32 {
    let s = &b[r];
    u32::from_be_bytes([s[0], s[1], s[2], s[3]])
}

fn rd64(b: &[u8], r: Range<usize>) -> NtpTimestamp {
    let s = &b[r];
    NtpTimestamp::from_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]])
}

/// A checked view of an NTP packet. After [`SntpPacket::new_checked`] no
/// accessor can panic.
#[derive(Debug, Clone)]
pub struct SntpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> SntpPacket<T> {
    /// Wraps a buffer without checking it; accessors panic if it is shorter
    /// than [`HEADER_LEN`].
    pub fn new_unchecked(buffer: T) -> Self {
        SntpPacket { buffer }
    }

    /// Wraps a buffer of at least [`HEADER_LEN`] bytes.
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        check_len(buffer.as_ref().len())?;
        Ok(SntpPacket { buffer })
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    pub fn leap(&self) -> Leap {
        Leap::from_bits(self.b()[field::LI_VN_MODE] >> 6)
    }
    pub fn version(&self) -> u8 {
        (self.b()[field::LI_VN_MODE] >> 3) & 7
    }
    pub fn mode(&self) -> Mode {
        Mode::from_bits(self.b()[field::LI_VN_MODE])
    }
    pub fn stratum(&self) -> u8 {
        self.b()[field::STRATUM]
    }
    pub fn poll(&self) -> i8 {
        self.b()[field::POLL] as i8
    }
    pub fn precision(&self) -> i8 {
        self.b()[field::PRECISION] as i8
    }
    pub fn root_delay(&self) -> u32 {
        rd32(self.b(), field::ROOT_DELAY)
    }
    pub fn root_dispersion(&self) -> u32 {
        rd32(self.b(), field::ROOT_DISPERSION)
    }
    pub fn reference_id(&self) -> [u8; 4] {
        let s = &self.b()[field::REFERENCE_ID];
        [s[0], s[1], s[2], s[3]]
    }
    pub fn reference_timestamp(&self) -> NtpTimestamp {
        rd64(self.b(), field::REFERENCE_TS)
    }
    pub fn originate_timestamp(&self) -> NtpTimestamp {
        rd64(self.b(), field::ORIGINATE_TS)
    }
    pub fn receive_timestamp(&self) -> NtpTimestamp {
        rd64(self.b(), field::RECEIVE_TS)
    }
    pub fn transmit_timestamp(&self) -> NtpTimestamp {
        rd64(self.b(), field::TRANSMIT_TS)
    }
    /// Bytes after the header (extension fields, MAC), uninterpreted.
    pub fn trailer(&self) -> &[u8] {
        &self.b()[HEADER_LEN..]
    }
}

/// A parsed NTP header.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SntpRepr {
    pub leap: Leap,
    /// 1–4; `parse` refuses 0 and 5–7 (no such NTP version).
    pub version: u8,
    pub mode: Mode,
    pub stratum: u8,
    pub poll: i8,
    pub precision: i8,
    /// 16.16 seconds; see [`short_to_ns`].
    pub root_delay: u32,
    pub root_dispersion: u32,
    /// For stratum 1 a four-letter source ("GPS", "LOCL"), for stratum 0
    /// the Kiss-o'-Death code, else the upstream server's address or hash.
    pub reference_id: [u8; 4],
    pub reference_timestamp: NtpTimestamp,
    /// In a reply: the client's Transmit Timestamp, copied back.
    pub originate_timestamp: NtpTimestamp,
    /// In a reply: when the request arrived at the server (its clock).
    pub receive_timestamp: NtpTimestamp,
    /// When the packet left its sender (the sender's clock). A client may
    /// put any value here; the server echoes it as the Originate Timestamp.
    pub transmit_timestamp: NtpTimestamp,
}

impl SntpRepr {
    /// An SNTPv4 client request (RFC 4330 §5): VN 4, mode 3, every field
    /// zero except the Transmit Timestamp, which the server echoes back and
    /// the client uses to match the reply to the request.
    pub fn client_request(transmit: NtpTimestamp) -> SntpRepr {
        SntpRepr {
            leap: Leap::NoWarning,
            version: VERSION,
            mode: Mode::Client,
            stratum: 0,
            poll: 0,
            precision: 0,
            root_delay: 0,
            root_dispersion: 0,
            reference_id: [0; 4],
            reference_timestamp: NtpTimestamp::ZERO,
            originate_timestamp: NtpTimestamp::ZERO,
            receive_timestamp: NtpTimestamp::ZERO,
            transmit_timestamp: transmit,
        }
    }

    /// Parses the 48-byte header; trailing bytes are ignored.
    pub fn parse(bytes: &[u8]) -> Result<SntpRepr, WireError> {
        let p = SntpPacket::new_checked(bytes)?;
        let version = p.version();
        if !(1..=4).contains(&version) {
            return Err(WireError::BadField {
                field: "version",
                value: u32::from(version),
            });
        }
        Ok(SntpRepr {
            leap: p.leap(),
            version,
            mode: p.mode(),
            stratum: p.stratum(),
            poll: p.poll(),
            precision: p.precision(),
            root_delay: p.root_delay(),
            root_dispersion: p.root_dispersion(),
            reference_id: p.reference_id(),
            reference_timestamp: p.reference_timestamp(),
            originate_timestamp: p.originate_timestamp(),
            receive_timestamp: p.receive_timestamp(),
            transmit_timestamp: p.transmit_timestamp(),
        })
    }

    pub fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header into `buf`; returns the number of bytes written.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        if buf.len() < HEADER_LEN {
            return Err(WireError::BufferTooSmall {
                need: HEADER_LEN,
                have: buf.len(),
            });
        }
        if !(1..=7).contains(&self.version) {
            return Err(WireError::BadField {
                field: "version",
                value: u32::from(self.version),
            });
        }
        buf[field::LI_VN_MODE] =
            (self.leap.bits() << 6) | ((self.version & 7) << 3) | self.mode.bits();
        buf[field::STRATUM] = self.stratum;
        buf[field::POLL] = self.poll as u8;
        buf[field::PRECISION] = self.precision as u8;
        buf[field::ROOT_DELAY].copy_from_slice(&self.root_delay.to_be_bytes());
        buf[field::ROOT_DISPERSION].copy_from_slice(&self.root_dispersion.to_be_bytes());
        buf[field::REFERENCE_ID].copy_from_slice(&self.reference_id);
        buf[field::REFERENCE_TS].copy_from_slice(&self.reference_timestamp.to_bytes());
        buf[field::ORIGINATE_TS].copy_from_slice(&self.originate_timestamp.to_bytes());
        buf[field::RECEIVE_TS].copy_from_slice(&self.receive_timestamp.to_bytes());
        buf[field::TRANSMIT_TS].copy_from_slice(&self.transmit_timestamp.to_bytes());
        Ok(HEADER_LEN)
    }

    /// The Kiss-o'-Death code (RFC 5905 §7.4) of a stratum-0 packet, as
    /// ASCII ("RATE", "DENY", "RSTR", …); None for other strata.
    pub fn kiss_code(&self) -> Option<String> {
        (self.stratum == 0).then(|| {
            self.reference_id
                .iter()
                .map(|&c| if c.is_ascii_graphic() { c as char } else { '?' })
                .collect::<String>()
                .trim_end_matches('?')
                .to_string()
        })
    }

    /// The Reference Identifier as people write it: the ASCII code of a
    /// stratum 0–1 server ("RATE", "GPS", "LOCL") when it is one, else the
    /// four bytes dotted like an IPv4 address (an upstream server's address
    /// or IPv6 hash; chrony's local reference is 127.127.1.1).
    pub fn reference_id_text(&self) -> String {
        let r = self.reference_id;
        let text = r.iter().all(|&c| c.is_ascii_alphanumeric() || c == 0) && r[0] != 0;
        if self.stratum <= 1 && text {
            r.iter()
                .take_while(|&&c| c != 0)
                .map(|&c| c as char)
                .collect()
        } else {
            format!("{}.{}.{}.{}", r[0], r[1], r[2], r[3])
        }
    }

    /// Checks that this packet is a usable answer of a server to the request
    /// whose Transmit Timestamp was `sent`: server mode, our timestamp
    /// echoed, not a Kiss-o'-Death, synchronised, with the timestamps set.
    pub fn check_server_reply(&self, sent: NtpTimestamp) -> Result<(), ReplyError> {
        if self.mode != Mode::Server {
            return Err(ReplyError::NotServerMode(self.mode));
        }
        if self.originate_timestamp != sent {
            return Err(ReplyError::NotOurRequest);
        }
        if let Some(code) = self.kiss_code() {
            return Err(ReplyError::KissOfDeath(code));
        }
        if self.leap == Leap::Unsynchronized {
            return Err(ReplyError::Unsynchronized {
                stratum: self.stratum,
            });
        }
        if self.stratum > 15 {
            return Err(ReplyError::Unsynchronized {
                stratum: self.stratum,
            });
        }
        if self.receive_timestamp.is_zero() || self.transmit_timestamp.is_zero() {
            return Err(ReplyError::MissingTimestamps);
        }
        Ok(())
    }
}

/// Why a well-formed NTP packet is not a usable server reply.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    #[error("not a server reply (mode {0:?})")]
    NotServerMode(Mode),
    #[error("the Originate Timestamp does not echo our request (a stale or foreign reply)")]
    NotOurRequest,
    /// Stratum 0: the server refuses service; RFC 5905 §7.4 codes such as
    /// RATE (slow down), DENY / RSTR (access denied).
    #[error("Kiss-o'-Death `{0}`: the server refuses to serve (RATE: ask less often; DENY/RSTR: access denied)")]
    KissOfDeath(String),
    /// Leap indicator 3 or stratum 16: the server's clock is not
    /// synchronised, so its timestamps are worth nothing.
    #[error("the server's clock is not synchronised (leap indicator 3 or stratum {stratum})")]
    Unsynchronized { stratum: u8 },
    #[error("the reply has no Receive or Transmit Timestamp")]
    MissingTimestamps,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A client request as misura sends it (and as `sntp`/chrony clients
    /// do): 0x23 = LI 0, VN 4, mode 3; only the Transmit Timestamp is set.
    const REQUEST: [u8; 48] = [
        0x23, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // header, delay, dispersion, refid
        0, 0, 0, 0, 0, 0, 0, 0, // reference
        0, 0, 0, 0, 0, 0, 0, 0, // originate
        0, 0, 0, 0, 0, 0, 0, 0, // receive
        0xe9, 0x58, 0x2a, 0x6d, 0x12, 0x34, 0x56, 0x78, // transmit
    ];

    /// A real reply of chrony 4.3 (`local stratum 1`, `-x`) in misura's lab
    /// to [`REQUEST`]: 0x24 = LI 0, VN 4, mode 4; stratum 1, poll 0,
    /// precision 0xe6 = −26 (15 ns); root delay and dispersion 0; reference
    /// ID 127.127.1.1 (chrony's local reference); our transmit echoed as
    /// the originate timestamp.
    const REPLY: [u8; 48] = [
        0x24, 0x01, 0x00, 0xe6, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x7f, 0x7f, 0x01,
        0x01, //
        0xee, 0xac, 0xbe, 0x7f, 0xff, 0xf4, 0x49, 0xe0, // reference
        0xe9, 0x58, 0x2a, 0x6d, 0x12, 0x34, 0x56, 0x78, // originate
        0xee, 0xac, 0xbe, 0x8d, 0x6d, 0x8f, 0x70, 0xff, // receive
        0xee, 0xac, 0xbe, 0x8d, 0x6d, 0x92, 0xea, 0x4a, // transmit
    ];

    fn sent() -> NtpTimestamp {
        NtpTimestamp {
            seconds: 0xe958_2a6d,
            fraction: 0x1234_5678,
        }
    }

    #[test]
    fn emit_client_request() {
        let mut buf = [0xa5u8; 60];
        let n = SntpRepr::client_request(sent()).emit(&mut buf).unwrap();
        assert_eq!(n, 48);
        assert_eq!(&buf[..48], &REQUEST[..]);
        assert!(
            buf[48..].iter().all(|&b| b == 0xa5),
            "emit wrote past the header"
        );
    }

    #[test]
    fn parse_server_reply() {
        let r = SntpRepr::parse(&REPLY).unwrap();
        assert_eq!(r.leap, Leap::NoWarning);
        assert_eq!(r.version, 4);
        assert_eq!(r.mode, Mode::Server);
        assert_eq!(r.stratum, 1);
        assert_eq!(r.precision, -26);
        assert_eq!(
            (short_to_ns(r.root_delay), short_to_ns(r.root_dispersion)),
            (0, 0)
        );
        assert_eq!(r.reference_id_text(), "127.127.1.1");
        assert_eq!(r.originate_timestamp, sent());
        // 0xeeacbe8d s after 1900 = Unix 1 795 309 581; fraction 0x6d8f70ff.
        assert_eq!(r.receive_timestamp.to_unix_ns(), 1_795_309_581_427_969_992);
        // The server took 53 µs between receive and transmit.
        assert_eq!(
            r.transmit_timestamp.to_unix_ns() - r.receive_timestamp.to_unix_ns(),
            53_006
        );
        assert_eq!(r.check_server_reply(sent()), Ok(()));
        let mut buf = [0xa5u8; 48];
        r.emit(&mut buf).unwrap();
        assert_eq!(buf, REPLY);
        let v = SntpPacket::new_checked(&REPLY[..]).unwrap();
        assert_eq!(v.receive_timestamp(), r.receive_timestamp);
        assert!(v.trailer().is_empty());
    }

    #[test]
    fn bad_replies_are_named() {
        let r = SntpRepr::parse(&REPLY).unwrap();
        let kod = SntpRepr {
            stratum: 0,
            reference_id: *b"RATE",
            ..r
        };
        assert_eq!(kod.reference_id_text(), "RATE");
        assert_eq!(
            SntpRepr {
                stratum: 1,
                reference_id: *b"GPS\0",
                ..r
            }
            .reference_id_text(),
            "GPS"
        );
        assert_eq!(
            kod.check_server_reply(sent()),
            Err(ReplyError::KissOfDeath("RATE".into()))
        );
        let unsync = SntpRepr {
            leap: Leap::Unsynchronized,
            ..r
        };
        assert!(matches!(
            unsync.check_server_reply(sent()),
            Err(ReplyError::Unsynchronized { .. })
        ));
        let s16 = SntpRepr { stratum: 16, ..r };
        assert!(matches!(
            s16.check_server_reply(sent()),
            Err(ReplyError::Unsynchronized { stratum: 16 })
        ));
        assert_eq!(
            r.check_server_reply(NtpTimestamp::ZERO),
            Err(ReplyError::NotOurRequest)
        );
        let client = SntpRepr {
            mode: Mode::Client,
            ..r
        };
        assert_eq!(
            client.check_server_reply(sent()),
            Err(ReplyError::NotServerMode(Mode::Client))
        );
        let norx = SntpRepr {
            receive_timestamp: NtpTimestamp::ZERO,
            ..r
        };
        assert_eq!(
            norx.check_server_reply(sent()),
            Err(ReplyError::MissingTimestamps)
        );
    }

    #[test]
    fn bad_bytes_are_refused() {
        assert_eq!(
            SntpRepr::parse(&REPLY[..47]),
            Err(WireError::Truncated { need: 48, have: 47 })
        );
        let mut v0 = REPLY;
        v0[0] = 0x04; // VN 0
        assert_eq!(
            SntpRepr::parse(&v0),
            Err(WireError::BadField {
                field: "version",
                value: 0
            })
        );
        // Trailing bytes (a MAC) are ignored.
        let mut long = REPLY.to_vec();
        long.extend_from_slice(&[1, 2, 3, 4]);
        assert_eq!(SntpRepr::parse(&long), SntpRepr::parse(&REPLY));
        let mut small = [0u8; 47];
        assert!(SntpRepr::client_request(sent()).emit(&mut small).is_err());
    }

    #[test]
    fn timestamps_convert() {
        // 2024-01-01T00:00:00Z = Unix 1 704 067 200 = NTP 3 913 056 000.
        let t = NtpTimestamp::from_unix_ns(1_704_067_200_500_000_000);
        assert_eq!(t.seconds, 3_913_056_000);
        assert_eq!(t.fraction, 0x8000_0000);
        assert_eq!(t.to_unix_ns(), 1_704_067_200_500_000_000);
        assert!((log2_to_ns(-20) - 953.674).abs() < 0.001);
    }

    fn arb_repr() -> impl Strategy<Value = SntpRepr> {
        (
            any::<[u8; 4]>(),
            1u8..=4,
            any::<[u8; 4]>(),
            any::<[u8; 8]>(),
            any::<[u64; 4]>(),
        )
            .prop_map(|(a, version, refid, rd, ts)| {
                let t = |v: u64| NtpTimestamp {
                    seconds: (v >> 32) as u32,
                    fraction: v as u32,
                };
                SntpRepr {
                    leap: Leap::from_bits(a[0]),
                    version,
                    mode: Mode::from_bits(a[1]),
                    stratum: a[2],
                    poll: a[3] as i8,
                    precision: rd[0] as i8,
                    root_delay: u32::from_be_bytes([rd[1], rd[2], rd[3], rd[4]]),
                    root_dispersion: u32::from_be_bytes([rd[4], rd[5], rd[6], rd[7]]),
                    reference_id: refid,
                    reference_timestamp: t(ts[0]),
                    originate_timestamp: t(ts[1]),
                    receive_timestamp: t(ts[2]),
                    transmit_timestamp: t(ts[3]),
                }
            })
    }

    proptest! {
        #[test]
        fn emit_then_parse_is_identity(r in arb_repr()) {
            let mut buf = [0xa5u8; 48];
            prop_assert_eq!(r.emit(&mut buf), Ok(48));
            prop_assert_eq!(SntpRepr::parse(&buf), Ok(r));
        }

        #[test]
        fn parse_then_emit_gives_the_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(r) = SntpRepr::parse(&bytes) {
                let mut buf = [0u8; 48];
                r.emit(&mut buf).unwrap();
                prop_assert_eq!(&buf[..], &bytes[..48]);
            }
        }
    }
}
