//! misura's UDP test datagram (docs/control-protocol.md), big-endian,
//! padded to --msg-size, and the schedule it is sent on:
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

/// Nanoseconds from the start at which datagram `k` is due.
pub fn due_ns(k: u64, msg_size: u64, rate_bps: u64) -> u64 {
    (k as u128 * msg_size as u128 * 8 * 1_000_000_000 / rate_bps.max(1) as u128) as u64
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

    #[test]
    fn pacing_schedule() {
        // 1000-byte datagrams at 8 Mbit/s: one per millisecond.
        assert_eq!(due_ns(0, 1000, 8_000_000), 0);
        assert_eq!(due_ns(1, 1000, 8_000_000), 1_000_000);
        assert_eq!(due_ns(1000, 1000, 8_000_000), 1_000_000_000);
        // No drift over many datagrams at a rate that does not divide evenly.
        assert_eq!(due_ns(3_000_000, 1472, 1_000_000_000), 35_328_000_000);
    }
}
