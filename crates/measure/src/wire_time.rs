//! The wire time `C` of a frame: how long its bits occupy the link.
//!
//! Seed 000 gives, for an Ethernet payload of `P` bytes on a link of rate `R`,
//! `C = (8 + max(64, 18 + P)) · 8 / R`: 8 bytes of preamble and start delimiter,
//! 14 bytes of header and 4 of FCS around the payload, and the 64-byte minimum
//! frame. At 100 Mb/s that is `max(5.76 µs, 2.08 µs + 0.08 µs·P)`. An 802.1Q
//! tag adds 4 bytes; frames sent back to back are also separated by the 12-byte
//! inter-frame gap, which counts for the link's capacity but not for `C`.

use crate::time::Span;
use misura_wire::ethernet::{INTER_FRAME_GAP, PREAMBLE_SFD_LEN};
use serde::{Deserialize, Serialize};

/// A link of a given rate, with or without an 802.1Q tag on every frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkModel {
    /// Line rate in bit/s (10 Mb/s … 400 Gb/s).
    pub rate_bps: u64,
    /// Whether every frame carries a 4-byte 802.1Q tag.
    pub vlan: bool,
}

impl LinkModel {
    pub fn new(rate_bps: u64, vlan: bool) -> LinkModel {
        assert!(rate_bps > 0, "link rate must be positive");
        LinkModel { rate_bps, vlan }
    }

    /// Frame length from destination address through FCS, at least 64 bytes.
    pub fn frame_bytes(&self, payload: usize) -> usize {
        misura_wire::probe::frame_bytes(payload, self.vlan)
    }

    /// Bytes on the wire for one frame: preamble + SFD + frame.
    pub fn wire_bytes(&self, payload: usize) -> usize {
        PREAMBLE_SFD_LEN + self.frame_bytes(payload)
    }

    /// Bytes of link capacity one frame uses when frames go back to back
    /// (wire bytes plus the inter-frame gap).
    pub fn slot_bytes(&self, payload: usize) -> usize {
        self.wire_bytes(payload) + INTER_FRAME_GAP
    }

    /// `C` in picoseconds (integer: exact to 1 ps up to 400 Gb/s for any frame).
    pub fn wire_time_ps(&self, payload: usize) -> u64 {
        bytes_to_ps(self.wire_bytes(payload), self.rate_bps)
    }

    /// `C` in nanoseconds.
    pub fn wire_time_ns(&self, payload: usize) -> f64 {
        self.wire_time_ps(payload) as f64 / 1000.0
    }

    /// Time one byte takes on the link: `8 / R`. A store-and-forward SUT adds
    /// exactly this per byte of frame length.
    pub fn byte_time_ns(&self) -> f64 {
        8e9 / self.rate_bps as f64
    }

    /// Time a frame occupies the link including the inter-frame gap, in ps.
    pub fn slot_time_ps(&self, payload: usize) -> u64 {
        bytes_to_ps(self.slot_bytes(payload), self.rate_bps)
    }

    /// The highest frame rate the link carries for this payload (frames/s).
    pub fn max_frame_rate(&self, payload: usize) -> f64 {
        self.rate_bps as f64 / (self.slot_bytes(payload) * 8) as f64
    }

    /// The sending period (ns) that offers load `gamma` (share of link capacity,
    /// 0 < Γ ≤ 1) with frames whose mean slot is that of the given payloads.
    pub fn period_for_load(&self, payloads: &[usize], gamma: f64) -> Option<i64> {
        if payloads.is_empty() || !(gamma > 0.0 && gamma <= 1.0) {
            return None;
        }
        let mean_slot_ps: f64 = payloads
            .iter()
            .map(|&p| self.slot_time_ps(p) as f64)
            .sum::<f64>()
            / payloads.len() as f64;
        // Rounded up: the period never offers more than Γ, so 100 % of a
        // link stays feasible (rounding to nearest could ask 100.3 %).
        Some((mean_slot_ps / gamma / 1000.0).ceil().max(1.0) as i64)
    }

    /// The offered load Γ of a given period for these payloads.
    pub fn load_of_period(&self, payloads: &[usize], period: Span, frames_per_period: u32) -> f64 {
        let period_ns = period.as_ns();
        if payloads.is_empty() || period_ns <= 0 {
            return 0.0;
        }
        let mean_slot_ps: f64 = payloads
            .iter()
            .map(|&p| self.slot_time_ps(p) as f64)
            .sum::<f64>()
            / payloads.len() as f64;
        mean_slot_ps * frames_per_period as f64 / (period_ns as f64 * 1000.0)
    }
}

fn bytes_to_ps(bytes: usize, rate_bps: u64) -> u64 {
    ((bytes as u128 * 8 * 1_000_000_000_000u128) / rate_bps as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_formula_at_100_mbps() {
        let link = LinkModel::new(100_000_000, false);
        // Minimum frame: (8 + 64) bytes · 80 ns = 5.76 µs, for any P ≤ 46.
        assert_eq!(link.wire_time_ps(0), 5_760_000);
        assert_eq!(link.wire_time_ps(46), 5_760_000);
        // Above the minimum: 2.08 µs + 0.08 µs · P.
        for p in [47usize, 64, 128, 256, 512, 1024, 1500] {
            let expect_ps = 2_080_000 + 80_000 * p as u64;
            assert_eq!(link.wire_time_ps(p), expect_ps, "P = {p}");
        }
        assert!((link.byte_time_ns() - 80.0).abs() < 1e-9);
    }

    #[test]
    fn vlan_tag_adds_four_bytes() {
        let plain = LinkModel::new(1_000_000_000, false);
        let tagged = LinkModel::new(1_000_000_000, true);
        assert_eq!(tagged.frame_bytes(1500), plain.frame_bytes(1500) + 4);
        assert_eq!(tagged.wire_time_ps(1500) - plain.wire_time_ps(1500), 32_000);
        // The tag counts toward the 64-byte minimum, so a minimum payload
        // of 42 bytes already fills it.
        assert_eq!(tagged.frame_bytes(42), 64);
    }

    #[test]
    fn back_to_back_rate_includes_the_gap() {
        // 64-byte frames at 10 Gb/s: the classic 14.88 Mframes/s.
        let link = LinkModel::new(10_000_000_000, false);
        let fps = link.max_frame_rate(46);
        assert!((fps - 14_880_952.38).abs() < 1.0, "{fps}");
        // Γ = 1 at the slot time, Γ = 0.1 at ten times it.
        // 67.2 ns rounds up: 68 ns offers 98.8 %, never more than the link.
        assert_eq!(link.period_for_load(&[46], 1.0), Some(68));
        assert!(link.load_of_period(&[46], Span::from_ns(68), 1) <= 1.0);
        let p = link.period_for_load(&[46], 0.1).unwrap();
        assert!((link.load_of_period(&[46], Span::from_ns(p), 1) - 0.1).abs() < 0.01);
        assert_eq!(link.period_for_load(&[46], 1.5), None);
    }
}
