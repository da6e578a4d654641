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
/// Timestamps are [`Instant`]s on the run's single timescale: the user-clock
/// windows (`tx1`, `tx2`, `rx1`, `rx2`) and the kernel and NIC stamps alike
/// (serialized as their integer nanoseconds).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameRecord {
    pub seq: u64,
    pub size_index: u16,
    /// The paper's `P`: Ethernet payload, misura's header included.
    pub payload_bytes: u16,
    /// Destination address through FCS (at least 64).
    pub frame_bytes: u16,
    pub tx1: Instant,
    pub tx2: Instant,
    /// Valid only when `lost` is false.
    pub rx1: Instant,
    pub rx2: Instant,
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
    pub fn bul(&self) -> Option<Span> {
        (!self.lost).then(|| self.rx1.max(self.tx1) - self.tx2)
    }

    /// Worst-case user latency `RX2 − TX1` (an upper bound).
    pub fn wul(&self) -> Option<Span> {
        (!self.lost).then(|| self.rx2 - self.tx1)
    }

    /// Mean user latency `(Bul + Wul) / 2`, rounded toward −∞ (≤ 0.5 ns).
    pub fn mul(&self) -> Option<Span> {
        Some(Span::from_ns(
            (self.bul()? + self.wul()?).as_ns().div_euclid(2),
        ))
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
    pub fn tx_window(&self) -> Span {
        self.tx2 - self.tx1
    }

    /// Width of the RX window, `RX2 − RX1`.
    pub fn rx_window(&self) -> Option<Span> {
        (!self.lost).then(|| self.rx2 - self.rx1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_time::{at, span};

    fn frame() -> FrameRecord {
        FrameRecord {
            tx1: at(1_000),
            tx2: at(1_400),
            rx1: at(9_000),
            rx2: at(12_000),
            ..Default::default()
        }
    }

    #[test]
    fn window_arithmetic() {
        let f = frame();
        assert_eq!(f.bul(), Some(span(7_600)));
        assert_eq!(f.wul(), Some(span(11_000)));
        assert_eq!(f.mul(), Some(span(9_300)));
        assert_eq!(f.tx_window(), span(400));
        assert_eq!(f.rx_window(), Some(span(3_000)));
        assert!(f.bul() <= f.mul() && f.mul() <= f.wul());
    }

    #[test]
    fn odd_sum_rounds_down_and_negative_bul_is_kept() {
        // The last empty poll (RX1 = 50) came before TX1 = 100: RX1 counts as 100.
        let f = FrameRecord {
            tx1: at(100),
            tx2: at(201),
            rx1: at(50),
            rx2: at(400),
            ..Default::default()
        };
        assert_eq!(f.bul(), Some(span(-101)));
        assert_eq!(f.wul(), Some(span(300)));
        assert_eq!(f.mul(), Some(span(99))); // 199 / 2 = 99.5 → 99
        let f = FrameRecord {
            tx1: at(100),
            tx2: at(202),
            rx1: at(150),
            rx2: at(151),
            ..Default::default()
        };
        assert_eq!(f.bul(), Some(span(-52)));
        assert_eq!(f.mul(), Some(span(-1))); // (−52 + 51) / 2 = −0.5 → −1
    }

    #[test]
    fn stamps_and_loss() {
        let mut f = frame();
        assert_eq!(f.kernel_latency(), None);
        f.tx_kernel = Some(at(1_200));
        f.rx_kernel = Some(at(8_700));
        assert_eq!(f.kernel_latency(), Some(span(7_500)));
        f.lost = true;
        assert_eq!(f.mul(), None);
        assert_eq!(f.kernel_latency(), None);
    }
}
