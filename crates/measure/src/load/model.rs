//! A fluid model of a store-and-forward device, to test the load methods
//! against a SUT whose answers are known.
//!
//! The device forwards at most `throughput_fps`; what arrives faster waits
//! in a buffer of `buffer_frames` and what does not fit is dropped. An
//! optional policer drops everything above its rate before the device
//! (no burst allowance), and an optional loss knee drops a fixed share of
//! the frames once the offered rate exceeds it (a device whose CPU starts
//! shedding load). Frames are counted whole, rounding against the SUT.
//!
//! What the methods should find, by construction:
//! * a trial of `d` seconds loses nothing up to `throughput + buffer / d`;
//! * a burst at `line` loses nothing up to `buffer / (1 − throughput/line)`
//!   frames, so RFC 9004's corrected buffer time is `buffer / line`
//!   ([`ModelSut::buffer_time_ns`]).

use super::{check_range, LoadError, MAX_RATE_FPS};
use crate::time::Span;

/// A share of frames dropped once the offered rate is above `above_fps`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossKnee {
    pub above_fps: f64,
    pub loss_ratio: f64,
}

/// The model device (module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelSut {
    pub throughput_fps: f64,
    pub buffer_frames: f64,
    pub base_latency: Span,
    pub knee: Option<LossKnee>,
    pub policer_fps: Option<f64>,
}

impl ModelSut {
    pub fn new(
        throughput_fps: f64,
        buffer_frames: f64,
        base_latency: Span,
    ) -> Result<ModelSut, LoadError> {
        check_range(
            "model throughput (frames/s)",
            throughput_fps,
            1e-3,
            MAX_RATE_FPS,
        )?;
        check_range("model buffer (frames)", buffer_frames, 0.0, 1e9)?;
        check_range("model latency (ns)", base_latency.as_ns() as f64, 0.0, 1e10)?;
        Ok(ModelSut {
            throughput_fps,
            buffer_frames,
            base_latency,
            knee: None,
            policer_fps: None,
        })
    }

    pub fn with_knee(self, knee: LossKnee) -> ModelSut {
        ModelSut {
            knee: Some(knee),
            ..self
        }
    }

    pub fn with_policer(self, policer_fps: f64) -> ModelSut {
        ModelSut {
            policer_fps: Some(policer_fps),
            ..self
        }
    }

    /// A trial at `rate_fps` for `duration`: `(sent, received)`.
    pub fn trial(&self, rate_fps: f64, duration: Span) -> (u64, u64) {
        let d = duration.max(Span::ZERO).as_secs_f64();
        let sent = (rate_fps * d).floor() as u64;
        let admitted = match self.policer_fps {
            Some(p) => sent.min((p * d).floor() as u64),
            None => sent,
        };
        let mut received =
            admitted.min((self.throughput_fps * d + self.buffer_frames).floor() as u64);
        if let Some(k) = self.knee.filter(|k| rate_fps > k.above_fps) {
            received -= (received as f64 * k.loss_ratio).ceil() as u64;
        }
        (sent, received)
    }

    /// A burst of `frames` at `rate_fps`: the frames received.
    pub fn burst(&self, frames: u64, rate_fps: f64) -> u64 {
        if rate_fps <= self.throughput_fps {
            return frames;
        }
        let forwarded = (frames as f64 * self.throughput_fps / rate_fps).floor() as u64;
        let held = frames - forwarded;
        let lost = held.saturating_sub(self.buffer_frames.floor() as u64);
        frames - lost
    }

    /// Mean and max frame delay at `rate_fps`: the base latency, plus a
    /// full buffer's wait once the device is overloaded.
    pub fn delay_ns(&self, rate_fps: f64) -> (i64, i64) {
        let base = self.base_latency.as_ns();
        if rate_fps <= self.throughput_fps {
            (base, base)
        } else {
            let queue = (self.buffer_frames / self.throughput_fps * 1e9) as i64;
            (base + queue, base + queue)
        }
    }

    /// The buffer as time at `line_fps`: what RFC 9004's corrected buffer
    /// time should recover.
    pub fn buffer_time_ns(&self, line_fps: f64) -> f64 {
        self.buffer_frames / line_fps * 1e9
    }
}
