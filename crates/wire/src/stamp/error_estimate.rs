//! The Error Estimate (RFC 4656 §4.1.2, Z bit from RFC 8186 §2.3).

use super::timestamp::StampTimestampFormat;

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
