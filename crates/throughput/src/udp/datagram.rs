//! misura's UDP test datagram (docs/control-protocol.md), big-endian,
//! padded to --msg-size (the schedule it is sent on is
//! `misura_measure::pacer`'s):
//!
//! ```text
//!  0               8               16              24
//! +---------------+---------------+---------------+-------- - -
//! |    test id    |      seq      | sender CLOCK_REALTIME ns | padding
//! +---------------+---------------+---------------+-------- - -
//! ```

/// Bytes of the header; the smallest datagram.
pub const HEADER: usize = 24;

/// Emit the datagram header into `buf` (which is at least 24 bytes).
pub fn emit_header(buf: &mut [u8], test_id: u64, seq: u64, sent_ns: i64) {
    buf[0..8].copy_from_slice(&test_id.to_be_bytes());
    buf[8..16].copy_from_slice(&seq.to_be_bytes());
    buf[16..24].copy_from_slice(&sent_ns.to_be_bytes());
}

/// Parse a datagram header: (test id, seq, sender ns); None if short.
pub fn parse_header(buf: &[u8]) -> Option<(u64, u64, i64)> {
    if buf.len() < HEADER {
        return None;
    }
    let u = |r: std::ops::Range<usize>| u64::from_be_bytes(buf[r].try_into().unwrap());
    Some((u(0..8), u(8..16), u(16..24) as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let mut b = [0xa5u8; 40];
        emit_header(&mut b, 0x0102030405060708, 9, -5);
        assert_eq!(&b[0..8], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(&b[8..16], &9u64.to_be_bytes());
        assert_eq!(b[24], 0xa5, "padding untouched");
        assert_eq!(parse_header(&b), Some((0x0102030405060708, 9, -5)));
        assert_eq!(parse_header(&b[..23]), None);
    }
}
