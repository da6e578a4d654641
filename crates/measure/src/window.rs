//! One frame's timestamps and the latencies derived from them.
//!
//! ```text
//!   TX1  send()  TX2                      RX1  recv()=EAGAIN … recv()=frame  RX2
//!    |----------|                          |------------------------------------|
//!         TX window                                    RX window
//! ```
//! `TX1` is read just before `send()`, `TX2` just after. `RX2` is read just
//! after the `recv()` that returned the frame and `RX1` just before the last
//! unsuccessful `recv()` that preceded it. The frame left inside the TX window
//! and arrived inside the RX window, so
//! `Bul = RX1 − TX2 < UL < Wul = RX2 − TX1` and `Mul = (Bul + Wul) / 2` is the
//! estimate whose interference terms cancel on average (seed 000, eqs. 4–5).
//! misura takes `RX1` no earlier than `TX1` (causality on one clock), which
//! only ever tightens the bound.
//!
//! On a veth cable the receive side is completed inside `send()` itself, so the
//! frame is already queued when the loop next polls and `RX1` predates `TX1`:
//! `Bul` is then negative. The bounds stay true; they are just wide, which is
//! why kernel and hardware stamps are recorded beside the windows.

use crate::time::{Instant, Span};
use serde::{Deserialize, Serialize};

/// Everything known about one frame when it leaves the in-flight ring.
/// Timestamps are integer nanoseconds on the run's single timescale; the
/// kernel and NIC stamps are [`Instant`]s (serialized as those integers).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameRecord {
    pub seq: u64,
    pub size_index: u16,
    /// The paper's `P`: Ethernet payload, misura's header included.
    pub payload_bytes: u16,
    /// Destination address through FCS (at least 64).
    pub frame_bytes: u16,
    pub tx1: i64,
    pub tx2: i64,
    /// Valid only when `lost` is false.
    pub rx1: i64,
    pub rx2: i64,
    pub tx_kernel: Option<Instant>,
    pub rx_kernel: Option<Instant>,
    pub tx_hw: Option<Instant>,
    pub rx_hw: Option<Instant>,
    /// Not received within the timeout.
    pub lost: bool,
    /// Arrived after a frame with a higher sequence number.
    pub reordered: bool,
}

impl FrameRecord {
    /// Best-case user latency `RX1 − TX2` (a lower bound), with `RX1` taken
    /// no earlier than `TX1`: on one clock a frame cannot arrive before it was
    /// sent. Without this, a stall between the last empty poll and `send()`
    /// (preemption, a hypervisor pause) makes `Bul`, and with it `Mul`,
    /// arbitrarily negative although nothing about the frame changed.
    pub fn bul(&self) -> Option<i64> {
        (!self.lost).then(|| self.rx1.max(self.tx1) - self.tx2)
    }

    /// Worst-case user latency `RX2 − TX1` (an upper bound).
    pub fn wul(&self) -> Option<i64> {
        (!self.lost).then(|| self.rx2 - self.tx1)
    }

    /// Mean user latency `(Bul + Wul) / 2`, rounded toward −∞ (≤ 0.5 ns).
    pub fn mul(&self) -> Option<i64> {
        Some((self.bul()? + self.wul()?).div_euclid(2))
    }

    /// Kernel latency: kernel software RX stamp − kernel software TX stamp.
    pub fn kernel_latency(&self) -> Option<Span> {
        if self.lost {
            return None;
        }
        Some(self.rx_kernel? - self.tx_kernel?)
    }

    /// NIC hardware latency, when both ports stamped in hardware. Only
    /// meaningful when both ports share one PHC (the caller checks).
    pub fn hw_latency(&self) -> Option<Span> {
        if self.lost {
            return None;
        }
        Some(self.rx_hw? - self.tx_hw?)
    }

    /// Width of the TX window, `TX2 − TX1`.
    pub fn tx_window(&self) -> i64 {
        self.tx2 - self.tx1
    }

    /// Width of the RX window, `RX2 − RX1`.
    pub fn rx_window(&self) -> Option<i64> {
        (!self.lost).then(|| self.rx2 - self.rx1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame() -> FrameRecord {
        FrameRecord {
            tx1: 1_000,
            tx2: 1_400,
            rx1: 9_000,
            rx2: 12_000,
            ..Default::default()
        }
    }

    #[test]
    fn window_arithmetic() {
        let f = frame();
        assert_eq!(f.bul(), Some(7_600));
        assert_eq!(f.wul(), Some(11_000));
        assert_eq!(f.mul(), Some(9_300));
        assert_eq!(f.tx_window(), 400);
        assert_eq!(f.rx_window(), Some(3_000));
        assert!(f.bul() <= f.mul() && f.mul() <= f.wul());
    }

    #[test]
    fn odd_sum_rounds_down_and_negative_bul_is_kept() {
        // The last empty poll (RX1 = 50) came before TX1 = 100: RX1 counts as 100.
        let f = FrameRecord {
            tx1: 100,
            tx2: 201,
            rx1: 50,
            rx2: 400,
            ..Default::default()
        };
        assert_eq!(f.bul(), Some(-101));
        assert_eq!(f.wul(), Some(300));
        assert_eq!(f.mul(), Some(99)); // 199 / 2 = 99.5 → 99
        let f = FrameRecord {
            tx1: 100,
            tx2: 202,
            rx1: 150,
            rx2: 151,
            ..Default::default()
        };
        assert_eq!(f.bul(), Some(-52));
        assert_eq!(f.mul(), Some(-1)); // (−52 + 51) / 2 = −0.5 → −1
    }

    #[test]
    fn stamps_and_loss() {
        let mut f = frame();
        assert_eq!(f.kernel_latency(), None);
        f.tx_kernel = Some(Instant::from_ns(1_200));
        f.rx_kernel = Some(Instant::from_ns(8_700));
        assert_eq!(f.kernel_latency(), Some(Span::from_ns(7_500)));
        f.lost = true;
        assert_eq!(f.mul(), None);
        assert_eq!(f.kernel_latency(), None);
    }
}
