//! misura's probe header: a versioned test-frame header carried directly as
//! the Ethernet payload (EtherType `ETHERTYPE_MISURA` by default).
//!
//! Layout (40 bytes, all fields big-endian):
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +---------------------------------------------------------------+
//! |                     magic "MSRA" (0x4D535241)                  |  0
//! +---------------+---------------+-------------------------------+
//! |  version = 1  |     flags     |        payload_len (P)        |  4
//! +---------------+---------------+-------------------------------+
//! |                          session id                           |  8
//! +---------------------------------------------------------------+
//! |              stream (u16)     |         size index (u16)      | 12
//! +---------------------------------------------------------------+
//! |                     sequence number (u64)                     | 16
//! |                                                               |
//! +---------------------------------------------------------------+
//! |              sender timestamp, ns (u64, 0 = none)             | 24
//! |                                                               |
//! +---------------------------------------------------------------+
//! |              auxiliary timestamp, ns (u64, 0 = none)          | 32
//! |                                                               |
//! +---------------------------------------------------------------+
//! |        padding (zero) up to payload_len bytes in total ...    | 40
//! ```
//!
//! `payload_len` is the paper's P: the whole Ethernet payload, this header
//! and the padding included. It is carried explicitly because a receiver
//! cannot tell real payload from the padding a NIC adds to reach the minimum
//! frame size, and the measured size must be known exactly.
//!
//! Sizes: P ranges over `HEADER_LEN..=MAX_PAYLOAD` (40..=9000). P below
//! `MIN_PAYLOAD` (46) gives a frame under the 64-byte minimum; `emit_frame`
//! then zero-pads it to 60 bytes (64 with FCS) itself, so what goes on the
//! wire does not depend on the driver, and `frame_bytes` accounts for it.

use core::fmt;
use core::ops::{BitOr, BitOrAssign};

use crate::ethernet::{self, EthernetFrame, EthernetRepr};
use crate::WireError;

/// Length of the fixed probe header.
pub const HEADER_LEN: usize = 40;
/// The only header version this crate speaks. Bumped on any layout change,
/// so old and new builds refuse each other's frames instead of misreading.
pub const VERSION: u8 = 1;
/// "MSRA" in ASCII; identifies misura frames among other experimental traffic.
pub const MAGIC: u32 = 0x4D53_5241;
/// Smallest Ethernet payload that needs no padding: 64 - 14 - 4.
pub const MIN_PAYLOAD: usize = 46;
/// Largest payload misura sends: a 9000-byte jumbo frame.
pub const MAX_PAYLOAD: usize = 9000;

mod field {
    use core::ops::Range;
    pub const MAGIC: Range<usize> = 0..4;
    pub const VERSION: usize = 4;
    pub const FLAGS: usize = 5;
    pub const PAYLOAD_LEN: Range<usize> = 6..8;
    pub const SESSION_ID: Range<usize> = 8..12;
    pub const STREAM: Range<usize> = 12..14;
    pub const SIZE_INDEX: Range<usize> = 14..16;
    pub const SEQ: Range<usize> = 16..24;
    pub const SENDER_TS: Range<usize> = 24..32;
    pub const AUX_TS: Range<usize> = 32..40;
}

/// Per-frame flag bits. Unknown bits are preserved by parse and emit so a
/// reflector passes through flags defined by a newer sender.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default)]
pub struct ProbeFlags(pub u8);

impl ProbeFlags {
    /// The sender timestamp field is valid.
    pub const SENDER_TIMESTAMP: ProbeFlags = ProbeFlags(0x01);
    /// The auxiliary timestamp field is valid.
    pub const AUX_TIMESTAMP: ProbeFlags = ProbeFlags(0x02);
    /// The frame is a reflected reply. A reflector must never reply to it,
    /// otherwise two reflectors would bounce one frame forever.
    pub const REPLY: ProbeFlags = ProbeFlags(0x04);
    /// The auxiliary timestamp is the precise (e.g. hardware) TX time of the
    /// previous frame of the stream, known only after that frame left.
    pub const FOLLOW_UP: ProbeFlags = ProbeFlags(0x08);

    const NAMES: [(ProbeFlags, &'static str); 4] = [
        (Self::SENDER_TIMESTAMP, "SENDER_TIMESTAMP"),
        (Self::AUX_TIMESTAMP, "AUX_TIMESTAMP"),
        (Self::REPLY, "REPLY"),
        (Self::FOLLOW_UP, "FOLLOW_UP"),
    ];

    pub const fn empty() -> ProbeFlags {
        ProbeFlags(0)
    }

    pub const fn bits(&self) -> u8 {
        self.0
    }

    /// True if every bit of `other` is set in `self`.
    pub const fn contains(&self, other: ProbeFlags) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn insert(&mut self, other: ProbeFlags) {
        self.0 |= other.0;
    }

    pub fn remove(&mut self, other: ProbeFlags) {
        self.0 &= !other.0;
    }

    pub fn set(&mut self, other: ProbeFlags, on: bool) {
        if on {
            self.insert(other)
        } else {
            self.remove(other)
        }
    }
}

impl BitOr for ProbeFlags {
    type Output = ProbeFlags;
    fn bitor(self, rhs: ProbeFlags) -> ProbeFlags {
        ProbeFlags(self.0 | rhs.0)
    }
}

impl BitOrAssign for ProbeFlags {
    fn bitor_assign(&mut self, rhs: ProbeFlags) {
        self.0 |= rhs.0;
    }
}

/// Prints the flag names ("ProbeFlags(SENDER_TIMESTAMP | REPLY)") so test
/// failures and debug logs are readable without decoding hex.
impl fmt::Debug for ProbeFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProbeFlags(")?;
        let mut rest = self.0;
        let mut first = true;
        for (flag, name) in Self::NAMES {
            if self.contains(flag) {
                if !first {
                    f.write_str(" | ")?;
                }
                f.write_str(name)?;
                first = false;
                rest &= !flag.0;
            }
        }
        if rest != 0 || first {
            if !first {
                f.write_str(" | ")?;
            }
            write!(f, "{rest:#04x}")?;
        }
        f.write_str(")")
    }
}

fn read_u16(b: &[u8], r: core::ops::Range<usize>) -> u16 {
    u16::from_be_bytes([b[r.start], b[r.start + 1]])
}

fn read_u32(b: &[u8], r: core::ops::Range<usize>) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[r]);
    u32::from_be_bytes(a)
}

fn read_u64(b: &[u8], r: core::ops::Range<usize>) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[r]);
    u64::from_be_bytes(a)
}

/// A read/write view of a probe header at the start of a buffer.
///
/// `new_checked` only checks the length, not magic or version: the view is
/// also used to build headers in zeroed buffers and to patch fields in a
/// pre-built frame, where checking contents would be wrong or wasted work.
/// `ProbeRepr::parse` does the semantic checks.
#[derive(Debug, Clone)]
pub struct ProbeHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> ProbeHeader<T> {
    /// Wraps a buffer without checking; accessors panic if it is shorter
    /// than `HEADER_LEN`.
    pub fn new_unchecked(buffer: T) -> Self {
        ProbeHeader { buffer }
    }

    /// Wraps a buffer of at least `HEADER_LEN` bytes; afterwards no accessor
    /// can panic.
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let h = Self::new_unchecked(buffer);
        h.check_len()?;
        Ok(h)
    }

    pub fn check_len(&self) -> Result<(), WireError> {
        let have = self.buffer.as_ref().len();
        if have < HEADER_LEN {
            return Err(WireError::Truncated {
                need: HEADER_LEN,
                have,
            });
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn magic(&self) -> u32 {
        read_u32(self.buffer.as_ref(), field::MAGIC)
    }

    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VERSION]
    }

    pub fn flags(&self) -> ProbeFlags {
        ProbeFlags(self.buffer.as_ref()[field::FLAGS])
    }

    pub fn payload_len(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::PAYLOAD_LEN)
    }

    pub fn session_id(&self) -> u32 {
        read_u32(self.buffer.as_ref(), field::SESSION_ID)
    }

    pub fn stream(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::STREAM)
    }

    pub fn size_index(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::SIZE_INDEX)
    }

    pub fn seq(&self) -> u64 {
        read_u64(self.buffer.as_ref(), field::SEQ)
    }

    pub fn sender_timestamp(&self) -> u64 {
        read_u64(self.buffer.as_ref(), field::SENDER_TS)
    }

    pub fn aux_timestamp(&self) -> u64 {
        read_u64(self.buffer.as_ref(), field::AUX_TS)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ProbeHeader<T> {
    pub fn set_magic(&mut self, v: u32) {
        self.buffer.as_mut()[field::MAGIC].copy_from_slice(&v.to_be_bytes());
    }

    pub fn set_version(&mut self, v: u8) {
        self.buffer.as_mut()[field::VERSION] = v;
    }

    pub fn set_flags(&mut self, v: ProbeFlags) {
        self.buffer.as_mut()[field::FLAGS] = v.0;
    }

    /// Writes the field only; the padding is the caller's business (use
    /// `ProbeRepr::emit` to produce a consistent payload).
    pub fn set_payload_len(&mut self, v: u16) {
        self.buffer.as_mut()[field::PAYLOAD_LEN].copy_from_slice(&v.to_be_bytes());
    }

    pub fn set_session_id(&mut self, v: u32) {
        self.buffer.as_mut()[field::SESSION_ID].copy_from_slice(&v.to_be_bytes());
    }

    pub fn set_stream(&mut self, v: u16) {
        self.buffer.as_mut()[field::STREAM].copy_from_slice(&v.to_be_bytes());
    }

    pub fn set_size_index(&mut self, v: u16) {
        self.buffer.as_mut()[field::SIZE_INDEX].copy_from_slice(&v.to_be_bytes());
    }

    pub fn set_seq(&mut self, v: u64) {
        self.buffer.as_mut()[field::SEQ].copy_from_slice(&v.to_be_bytes());
    }

    pub fn set_sender_timestamp(&mut self, v: u64) {
        self.buffer.as_mut()[field::SENDER_TS].copy_from_slice(&v.to_be_bytes());
    }

    pub fn set_aux_timestamp(&mut self, v: u64) {
        self.buffer.as_mut()[field::AUX_TS].copy_from_slice(&v.to_be_bytes());
    }
}

/// A probe header as a plain value.
///
/// The flags and the timestamp fields are not cross-checked (a set
/// `SENDER_TIMESTAMP` flag with a zero timestamp parses fine): deciding what
/// an inconsistent frame means is the measurement layer's job.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ProbeRepr {
    pub flags: ProbeFlags,
    /// P: header + padding, `HEADER_LEN..=MAX_PAYLOAD`.
    pub payload_len: u16,
    pub session_id: u32,
    pub stream: u16,
    pub size_index: u16,
    pub seq: u64,
    pub sender_timestamp: u64,
    pub aux_timestamp: u64,
}

fn check_payload_len(p: usize) -> Result<(), WireError> {
    if !(HEADER_LEN..=MAX_PAYLOAD).contains(&p) {
        return Err(WireError::BadLength {
            field: "payload_len",
            value: p,
        });
    }
    Ok(())
}

impl ProbeRepr {
    /// Parses and validates a probe payload (the Ethernet payload).
    ///
    /// `payload` may be longer than `payload_len`: NICs pad short frames and
    /// some capture paths keep the FCS, so trailing bytes are ignored (and
    /// padding is not required to be zero). Fewer bytes than `payload_len`
    /// means the frame was cut short: `Truncated`.
    pub fn parse(payload: &[u8]) -> Result<Self, WireError> {
        let h = ProbeHeader::new_checked(payload)?;
        if h.magic() != MAGIC {
            return Err(WireError::BadMagic);
        }
        if h.version() != VERSION {
            return Err(WireError::UnsupportedVersion(h.version()));
        }
        let p = usize::from(h.payload_len());
        check_payload_len(p)?;
        if payload.len() < p {
            return Err(WireError::Truncated {
                need: p,
                have: payload.len(),
            });
        }
        Ok(ProbeRepr {
            flags: h.flags(),
            payload_len: h.payload_len(),
            session_id: h.session_id(),
            stream: h.stream(),
            size_index: h.size_index(),
            seq: h.seq(),
            sender_timestamp: h.sender_timestamp(),
            aux_timestamp: h.aux_timestamp(),
        })
    }

    /// Bytes `emit` writes: `payload_len`.
    pub fn buffer_len(&self) -> usize {
        usize::from(self.payload_len)
    }

    /// Writes the header and zero padding up to `payload_len` at the start
    /// of `payload` and returns `payload_len`. Bytes beyond are untouched,
    /// and so is the whole buffer on error.
    pub fn emit(&self, payload: &mut [u8]) -> Result<usize, WireError> {
        let p = self.buffer_len();
        check_payload_len(p)?;
        if payload.len() < p {
            return Err(WireError::BufferTooSmall {
                need: p,
                have: payload.len(),
            });
        }
        let (head, padding) = payload[..p].split_at_mut(HEADER_LEN);
        let mut h = ProbeHeader::new_unchecked(head);
        h.set_magic(MAGIC);
        h.set_version(VERSION);
        h.set_flags(self.flags);
        h.set_payload_len(self.payload_len);
        h.set_session_id(self.session_id);
        h.set_stream(self.stream);
        h.set_size_index(self.size_index);
        h.set_seq(self.seq);
        h.set_sender_timestamp(self.sender_timestamp);
        h.set_aux_timestamp(self.aux_timestamp);
        // Zero padding keeps frames reproducible and avoids leaking stale
        // buffer contents onto the wire.
        padding.fill(0);
        Ok(p)
    }
}

/// Frame length without FCS below which the sender must pad (64 - 4).
const MIN_FRAME_NO_FCS: usize = ethernet::MIN_FRAME_LEN - ethernet::FCS_LEN;

/// Writes a complete frame (Ethernet header + probe payload) to the start of
/// `buf` and returns its length without FCS: the bytes to hand to a raw
/// socket. Frames shorter than 60 bytes are zero-padded to 60 here, so the
/// result is always `frame_bytes(P, vlan) - FCS_LEN`. `buf` is untouched on
/// error.
pub fn emit_frame(
    eth: &EthernetRepr,
    probe: &ProbeRepr,
    buf: &mut [u8],
) -> Result<usize, WireError> {
    check_payload_len(probe.buffer_len())?;
    let hl = eth.header_len();
    let body = hl + probe.buffer_len();
    let total = body.max(MIN_FRAME_NO_FCS);
    if buf.len() < total {
        return Err(WireError::BufferTooSmall {
            need: total,
            have: buf.len(),
        });
    }
    // The only error left is an unencodable Ethernet header, which is
    // checked before anything is written.
    eth.emit(buf)?;
    probe.emit(&mut buf[hl..body])?;
    buf[body..total].fill(0);
    Ok(total)
}

/// Checked parse of a received frame (without FCS, trailing bytes allowed):
/// Ethernet with an optional VLAN tag, then the probe header. Returns
/// `WrongEtherType` if the payload EtherType is not `ethertype`.
pub fn parse_frame(frame: &[u8], ethertype: u16) -> Result<(EthernetRepr, ProbeRepr), WireError> {
    let f = EthernetFrame::new_checked(frame)?;
    let eth = EthernetRepr::parse(&f)?;
    if eth.ethertype != ethertype {
        return Err(WireError::WrongEtherType {
            expected: ethertype,
            found: eth.ethertype,
        });
    }
    let probe = ProbeRepr::parse(f.payload())?;
    Ok((eth, probe))
}

/// Frame size as the paper counts it: destination address through FCS,
/// never below the 64-byte minimum: `max(64, 14 (+4 if vlan) + P + 4)`.
/// Add `PREAMBLE_SFD_LEN + INTER_FRAME_GAP` for the time on the wire.
pub fn frame_bytes(payload_len: usize, vlan: bool) -> usize {
    let tag = if vlan { ethernet::VLAN_TAG_LEN } else { 0 };
    (ethernet::HEADER_LEN + tag + payload_len + ethernet::FCS_LEN).max(ethernet::MIN_FRAME_LEN)
}
