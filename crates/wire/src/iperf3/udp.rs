//! iperf3's UDP data: the connect handshake and the datagram header
//! (iperf_udp.c).
//!
//! The client's first datagram on a stream is 4 bytes, [`CONNECT_MSG`]; the
//! server learns the client's address from it and answers [`CONNECT_REPLY`]
//! (3.12 writes the constants in host order, so these are the bytes an
//! x86 host sends; 3.17+ writes these bytes on every host). Old servers
//! answer [`LEGACY_CONNECT_REPLY`].
//!
//! Every data datagram starts with the sender's clock and a sequence
//! number, big-endian: seconds (u32), microseconds (u32), then the
//! sequence number, u32 or, with `udp_counters_64bit`, u64. Sequence
//! numbers start at 1.

use super::codec::Iperf3Error;

/// The client's connect datagram ("9876").
pub const CONNECT_MSG: [u8; 4] = *b"9876";
/// The server's answer ("6789").
pub const CONNECT_REPLY: [u8; 4] = *b"6789";
/// The answer of servers before 3.1 (987654321 in x86 order).
pub const LEGACY_CONNECT_REPLY: [u8; 4] = 987_654_321u32.to_le_bytes();
/// Header with 32-bit sequence numbers.
pub const UDP_HEADER_LEN: usize = 12;
/// Header with 64-bit sequence numbers.
pub const UDP_HEADER_LEN_64: usize = 16;

/// Whether 4 bytes are a server's connect answer (either order, legacy too).
pub fn is_connect_reply(b: &[u8]) -> bool {
    let mut r = CONNECT_REPLY;
    let is = |x: &[u8; 4]| b == x;
    if is(&r) || is(&LEGACY_CONNECT_REPLY) {
        return true;
    }
    r.reverse();
    let mut l = LEGACY_CONNECT_REPLY;
    l.reverse();
    is(&r) || is(&l)
}

/// Whether a datagram is a client's connect message (either byte order).
pub fn is_connect_msg(b: &[u8]) -> bool {
    let mut m = CONNECT_MSG;
    if b == m {
        return true;
    }
    m.reverse();
    b == m || b == 123_456_789u32.to_le_bytes() || b == 123_456_789u32.to_be_bytes()
}

/// The header of a data datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpHeader {
    pub sec: u32,
    pub usec: u32,
    pub seq: u64,
}

impl UdpHeader {
    pub fn len(counters64: bool) -> usize {
        if counters64 {
            UDP_HEADER_LEN_64
        } else {
            UDP_HEADER_LEN
        }
    }

    pub fn parse(b: &[u8], counters64: bool) -> Result<UdpHeader, Iperf3Error> {
        let need = Self::len(counters64);
        if b.len() < need {
            return Err(Iperf3Error::Truncated {
                need,
                have: b.len(),
            });
        }
        let u32_at = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().unwrap());
        let seq = if counters64 {
            u64::from_be_bytes(b[8..16].try_into().unwrap())
        } else {
            u32_at(8) as u64
        };
        Ok(UdpHeader {
            sec: u32_at(0),
            usec: u32_at(4),
            seq,
        })
    }

    /// Write the header at the start of `b` (the caller's datagram, at
    /// least [`UdpHeader::len`] long); the 32-bit form keeps the low bits of
    /// the sequence number.
    pub fn emit(&self, b: &mut [u8], counters64: bool) -> Result<(), Iperf3Error> {
        let need = Self::len(counters64);
        if b.len() < need {
            return Err(Iperf3Error::Truncated {
                need,
                have: b.len(),
            });
        }
        b[0..4].copy_from_slice(&self.sec.to_be_bytes());
        b[4..8].copy_from_slice(&self.usec.to_be_bytes());
        if counters64 {
            b[8..16].copy_from_slice(&self.seq.to_be_bytes());
        } else {
            b[8..12].copy_from_slice(&(self.seq as u32).to_be_bytes());
        }
        Ok(())
    }
}
