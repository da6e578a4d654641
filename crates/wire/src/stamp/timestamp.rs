//! STAMP timestamps: NTP and PTPv2 formats, to and from Unix nanoseconds.

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
