//! A frame size of an RFC 2544 run: Ethernet frames with FCS, one size or
//! a mix cycled frame by frame (IMIX), with its line rate.

use misura_measure::wire_time::LinkModel;

/// Ethernet header (14) and FCS (4): frame size − payload P.
pub const FRAME_OVERHEAD: usize = 18;

/// Largest frame accepted: a 9000-byte jumbo payload.
pub const MAX_FRAME: usize = 9018;

/// One size of the run.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeSpec {
    pub label: String,
    /// Frame sizes (FCS included) cycled frame by frame.
    pub frames: Vec<usize>,
}

impl SizeSpec {
    /// misura's payload P of each frame.
    pub fn payloads(&self) -> Vec<usize> {
        self.frames.iter().map(|f| f - FRAME_OVERHEAD).collect()
    }

    /// The link's highest frame rate for this mix: one over the mean slot
    /// (frame, preamble and inter-frame gap).
    pub fn line_rate_fps(&self, link: &LinkModel) -> f64 {
        let ps: f64 = self
            .payloads()
            .iter()
            .map(|&p| link.slot_time_ps(p) as f64)
            .sum::<f64>()
            / self.frames.len() as f64;
        1e12 / ps
    }

    /// Bits per second of frames (FCS included) at `fps`.
    pub fn frame_bps(&self, fps: f64) -> f64 {
        let mean = self.frames.iter().sum::<usize>() as f64 / self.frames.len() as f64;
        fps * mean * 8.0
    }
}
