//! Ethernet II frames with at most one IEEE 802.1Q VLAN tag.
//!
//! ```text
//! untagged: | dst (6) | src (6) | ethertype (2) | payload ...
//! tagged:   | dst (6) | src (6) | 0x8100 (2) | TCI (2) | ethertype (2) | payload ...
//! TCI:      | PCP (3 bits) | DEI (1 bit) | VID (12 bits) |
//! ```
//!
//! The FCS is not part of what a raw socket sends or receives, so neither
//! the view nor the representation deals with it; `FCS_LEN` exists for
//! on-the-wire size accounting only. Only the 0x8100 TPID is recognised as
//! a tag: an 802.1ad S-tag (0x88A8) simply shows up as the EtherType.

use core::fmt;
use core::str::FromStr;

use crate::{WireError, ETHERTYPE_VLAN};

/// Length of the untagged Ethernet II header (dst + src + EtherType).
pub const HEADER_LEN: usize = 14;
/// Length of one 802.1Q tag (TPID + TCI).
pub const VLAN_TAG_LEN: usize = 4;
/// Length of the frame check sequence, appended by the NIC.
pub const FCS_LEN: usize = 4;
/// Minimum frame length from destination address through FCS inclusive.
/// Shorter frames are padded by the sender (see `probe::emit_frame`).
pub const MIN_FRAME_LEN: usize = 64;
/// Preamble (7) plus start-of-frame delimiter (1): wire time before a frame.
pub const PREAMBLE_SFD_LEN: usize = 8;
/// Minimum inter-frame gap in byte times: wire time after a frame.
pub const INTER_FRAME_GAP: usize = 12;

/// Field offsets. Kept in one place so the view and the repr agree.
mod field {
    use core::ops::Range;
    pub const DST: Range<usize> = 0..6;
    pub const SRC: Range<usize> = 6..12;
    /// EtherType of an untagged frame, or the TPID of a tagged one.
    pub const OUTER_TYPE: Range<usize> = 12..14;
    pub const TCI: Range<usize> = 14..16;
    /// EtherType of a tagged frame.
    pub const INNER_TYPE: Range<usize> = 16..18;
}

/// A 48-bit IEEE MAC address.
///
/// Serialises as its lowercase colon string ("02:6d:73:00:00:01") rather than
/// as an array, because that is how people write it in configuration files
/// and how it should read in JSON reports.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    /// ff:ff:ff:ff:ff:ff.
    pub const BROADCAST: MacAddr = MacAddr([0xff; 6]);

    /// The I/G ("group") bit: true for multicast and for broadcast, which is
    /// the all-ones group address.
    pub fn is_multicast(&self) -> bool {
        self.0[0] & 0x01 != 0
    }

    pub fn is_broadcast(&self) -> bool {
        *self == Self::BROADCAST
    }

    /// Neither multicast nor broadcast.
    pub fn is_unicast(&self) -> bool {
        !self.is_multicast()
    }

    /// The U/L bit: set for locally administered addresses, such as the
    /// ones misura makes up for test endpoints.
    pub fn is_local(&self) -> bool {
        self.0[0] & 0x02 != 0
    }

    /// Reads an address from the first six bytes of `b`; callers guarantee
    /// the length (the view checked it in `new_checked`).
    fn from_slice(b: &[u8]) -> MacAddr {
        let mut a = [0u8; 6];
        a.copy_from_slice(&b[..6]);
        MacAddr(a)
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = &self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            a[0], a[1], a[2], a[3], a[4], a[5]
        )
    }
}

/// Why a string is not a MAC address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid MAC address {input:?}: {reason} (expected six two-digit hex groups like 02:6d:73:00:00:01)")]
pub struct ParseMacError {
    pub input: String,
    pub reason: &'static str,
}

impl FromStr for MacAddr {
    type Err = ParseMacError;

    /// Accepts `xx:xx:xx:xx:xx:xx` or `xx-xx-xx-xx-xx-xx` (either case),
    /// with exactly two hex digits per group and one separator used
    /// throughout. Being strict avoids silently accepting typos such as a
    /// missing digit, which would address a different host.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason| ParseMacError {
            input: s.to_owned(),
            reason,
        };
        let b = s.as_bytes();
        if b.len() != 17 {
            return Err(err("wrong length"));
        }
        let sep = b[2];
        if sep != b':' && sep != b'-' {
            return Err(err("separator must be ':' or '-'"));
        }
        let mut out = [0u8; 6];
        for (i, o) in out.iter_mut().enumerate() {
            let at = i * 3;
            if i > 0 && b[at - 1] != sep {
                return Err(err("inconsistent or missing separator"));
            }
            let hi = hex_digit(b[at]).ok_or_else(|| err("non-hex digit"))?;
            let lo = hex_digit(b[at + 1]).ok_or_else(|| err("non-hex digit"))?;
            *o = (hi << 4) | lo;
        }
        Ok(MacAddr(out))
    }
}

fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

impl serde::Serialize for MacAddr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for MacAddr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = MacAddr;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a MAC address string such as \"02:6d:73:00:00:01\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<MacAddr, E> {
                v.parse().map_err(E::custom)
            }
        }
        d.deserialize_str(Visitor)
    }
}

/// The contents of an 802.1Q tag control information field.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct VlanTag {
    /// Priority code point, 0..=7.
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    /// VLAN identifier, 0..=4095 (0 means priority-tagged only).
    pub vid: u16,
}

impl VlanTag {
    /// Decodes a TCI; every 16-bit value is a valid tag.
    pub fn from_tci(tci: u16) -> VlanTag {
        VlanTag {
            pcp: (tci >> 13) as u8,
            dei: tci & 0x1000 != 0,
            vid: tci & 0x0fff,
        }
    }

    /// Encodes the TCI, refusing values that do not fit their bit fields
    /// instead of silently truncating them into another VLAN.
    pub fn to_tci(&self) -> Result<u16, WireError> {
        if self.pcp > 7 {
            return Err(WireError::BadField {
                field: "vlan.pcp",
                value: self.pcp.into(),
            });
        }
        if self.vid > 0x0fff {
            return Err(WireError::BadField {
                field: "vlan.vid",
                value: self.vid.into(),
            });
        }
        Ok((u16::from(self.pcp) << 13) | (u16::from(self.dei) << 12) | self.vid)
    }
}

fn read_u16(b: &[u8], r: core::ops::Range<usize>) -> u16 {
    u16::from_be_bytes([b[r.start], b[r.start + 1]])
}

/// A read/write view of an Ethernet II frame (without FCS).
#[derive(Debug, Clone)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// Wraps a buffer without checking it; accessors may panic if it is
    /// shorter than the header. Use for buffers the caller sized itself.
    pub fn new_unchecked(buffer: T) -> Self {
        EthernetFrame { buffer }
    }

    /// Wraps a buffer after checking it holds the full header, including the
    /// VLAN tag if the frame says it has one. Afterwards no accessor panics.
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let f = Self::new_unchecked(buffer);
        f.check_len()?;
        Ok(f)
    }

    /// Checks the buffer is long enough for the header it announces.
    pub fn check_len(&self) -> Result<(), WireError> {
        let have = self.buffer.as_ref().len();
        if have < HEADER_LEN {
            return Err(WireError::Truncated {
                need: HEADER_LEN,
                have,
            });
        }
        let need = if read_u16(self.buffer.as_ref(), field::OUTER_TYPE) == ETHERTYPE_VLAN {
            HEADER_LEN + VLAN_TAG_LEN
        } else {
            HEADER_LEN
        };
        if have < need {
            return Err(WireError::Truncated { need, have });
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Whether an 802.1Q tag follows the source address. A buffer too short
    /// to hold the tag counts as untagged; `new_checked` rejects such frames,
    /// so this only matters after `set_ethertype(ETHERTYPE_VLAN)` on an
    /// untagged frame, where it keeps the accessors from slicing past the end.
    fn tagged(&self) -> bool {
        let b = self.buffer.as_ref();
        b.len() >= HEADER_LEN + VLAN_TAG_LEN && read_u16(b, field::OUTER_TYPE) == ETHERTYPE_VLAN
    }

    pub fn dst(&self) -> MacAddr {
        MacAddr::from_slice(&self.buffer.as_ref()[field::DST])
    }

    pub fn src(&self) -> MacAddr {
        MacAddr::from_slice(&self.buffer.as_ref()[field::SRC])
    }

    /// The EtherType of the payload: after the VLAN tag when there is one.
    pub fn ethertype(&self) -> u16 {
        if self.tagged() {
            read_u16(self.buffer.as_ref(), field::INNER_TYPE)
        } else {
            read_u16(self.buffer.as_ref(), field::OUTER_TYPE)
        }
    }

    pub fn vlan(&self) -> Option<VlanTag> {
        self.tagged()
            .then(|| VlanTag::from_tci(read_u16(self.buffer.as_ref(), field::TCI)))
    }

    /// 14, or 18 with a VLAN tag.
    pub fn header_len(&self) -> usize {
        if self.tagged() {
            HEADER_LEN + VLAN_TAG_LEN
        } else {
            HEADER_LEN
        }
    }

    /// Everything after the header. May include padding added to reach the
    /// minimum frame size, so upper layers must carry their own length.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    pub fn set_dst(&mut self, mac: MacAddr) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&mac.0);
    }

    pub fn set_src(&mut self, mac: MacAddr) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&mac.0);
    }

    /// Sets the payload EtherType (the inner one on a tagged frame).
    /// Writing `ETHERTYPE_VLAN` into an untagged frame turns the following
    /// bytes into a tag; use `EthernetRepr::emit` to change the layout.
    pub fn set_ethertype(&mut self, ethertype: u16) {
        let r = if self.tagged() {
            field::INNER_TYPE
        } else {
            field::OUTER_TYPE
        };
        self.buffer.as_mut()[r].copy_from_slice(&ethertype.to_be_bytes());
    }

    /// Rewrites the tag of an already tagged frame (e.g. to change priority).
    /// Adding or removing a tag shifts the payload, so that is refused here.
    pub fn set_vlan(&mut self, tag: VlanTag) -> Result<(), WireError> {
        let tci = tag.to_tci()?;
        if !self.tagged() {
            return Err(WireError::BadField {
                field: "vlan (frame is untagged)",
                value: tci.into(),
            });
        }
        self.buffer.as_mut()[field::TCI].copy_from_slice(&tci.to_be_bytes());
        Ok(())
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        let hl = self.header_len();
        &mut self.buffer.as_mut()[hl..]
    }
}

/// The header of an Ethernet II frame as a plain value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct EthernetRepr {
    pub dst: MacAddr,
    pub src: MacAddr,
    pub vlan: Option<VlanTag>,
    /// The payload EtherType (inner, if tagged).
    pub ethertype: u16,
}

impl EthernetRepr {
    /// Every well-formed header has a representation: Ethernet has no
    /// invalid field values once the length is right. A second 0x8100 after
    /// the tag (stacked tags) is reported as `ethertype == ETHERTYPE_VLAN`
    /// with `vlan: Some(..)`, which `emit` reproduces byte for byte.
    pub fn parse<T: AsRef<[u8]>>(f: &EthernetFrame<T>) -> Result<Self, WireError> {
        // Re-check: the view may have been made with new_unchecked.
        f.check_len()?;
        Ok(EthernetRepr {
            dst: f.dst(),
            src: f.src(),
            vlan: f.vlan(),
            ethertype: f.ethertype(),
        })
    }

    /// 14, or 18 with a VLAN tag.
    pub fn header_len(&self) -> usize {
        if self.vlan.is_some() {
            HEADER_LEN + VLAN_TAG_LEN
        } else {
            HEADER_LEN
        }
    }

    /// Same as `header_len`; named like the other reprs' sizing method.
    pub fn buffer_len(&self) -> usize {
        self.header_len()
    }

    /// Writes the header to the start of `buf` and returns its length. The
    /// buffer is not touched on error.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        // Validate everything before writing so a failed emit leaves the
        // buffer as it was.
        let tci = self.vlan.map(|tag| tag.to_tci()).transpose()?;
        if tci.is_none() && self.ethertype == ETHERTYPE_VLAN {
            // Untagged with EtherType 0x8100 would be read back as a tag
            // made of payload bytes: refuse rather than emit garbage.
            return Err(WireError::BadField {
                field: "ethertype (0x8100 without a VLAN tag)",
                value: self.ethertype.into(),
            });
        }
        let hl = self.header_len();
        if buf.len() < hl {
            return Err(WireError::BufferTooSmall {
                need: hl,
                have: buf.len(),
            });
        }
        buf[field::DST].copy_from_slice(&self.dst.0);
        buf[field::SRC].copy_from_slice(&self.src.0);
        match tci {
            Some(tci) => {
                buf[field::OUTER_TYPE].copy_from_slice(&ETHERTYPE_VLAN.to_be_bytes());
                buf[field::TCI].copy_from_slice(&tci.to_be_bytes());
                buf[field::INNER_TYPE].copy_from_slice(&self.ethertype.to_be_bytes());
            }
            None => buf[field::OUTER_TYPE].copy_from_slice(&self.ethertype.to_be_bytes()),
        }
        Ok(hl)
    }
}
