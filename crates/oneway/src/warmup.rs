//! The warm-up: frames sent one at a time after timestamping is enabled and
//! before measuring, until the kernel's stamps come steadily; then what the
//! run may expect of them.

use super::engine::{Frames, Ports, BUF_LEN};
use super::ports::Stamping;
use crate::error::{OnewayError, Result};
use misura_cli::warnings::Warn;
use misura_measure::oneway_session::{classify, Classified, OnewayPlan, WARMUP_STREAM};
use misura_report::Warning;
use misura_sys::clock::realtime_ns;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The outcome of the warm-up.
#[derive(Clone, Debug, Default)]
pub struct Warmup {
    pub sent: u64,
    pub received: u64,
    pub rx_unstamped: u64,
    pub tx_unstamped: u64,
    /// The last frames of the warm-up all had kernel RX / TX stamps.
    pub rx_stamps_settled: bool,
    pub tx_stamps_settled: bool,
    /// Warm-up frames whose TX stamps included the NIC's (hardware).
    pub tx_hw_seen: u64,
}

/// Send warm-up frames one at a time until kernel stamps appear steadily
/// (the first frames after a socket enables timestamping can arrive
/// unstamped), at most `max_frames`, waiting up to 50 ms for each.
pub fn warm_up(
    ports: &Ports,
    frames: &mut Frames,
    plan: &OnewayPlan,
    want: u64,
    stop: &AtomicUsize,
    want_hw_tx: bool,
) -> Result<Warmup> {
    let mut w = Warmup::default();
    let mut buf = vec![0u8; BUF_LEN];
    let settle = 8u64;
    let (mut rx_run, mut tx_run) = (0u64, 0u64);
    let max_frames = want.max(settle) * 4;
    let mut seq = 0u64;
    while seq < max_frames && stop.load(Ordering::Relaxed) == 0 {
        if seq >= want && rx_run >= settle && (tx_run >= settle || !plan.expect_tx_stamp) {
            break;
        }
        let frame = frames.patch(0, WARMUP_STREAM, seq);
        while !ports
            .tx
            .send(frame)
            .map_err(OnewayError::step("sending a warm-up frame"))?
        {
            std::hint::spin_loop();
        }
        w.sent += 1;
        let deadline = realtime_ns() + 50_000_000;
        let (mut got_rx, mut got_tx) = (false, !plan.expect_tx_stamp);
        let (mut rx_stamped, mut tx_stamped) = (false, false);
        // The NIC's TX stamp comes in a message of its own, after the
        // kernel's (OPT_TX_SWHW); waited for within the same 50 ms.
        let mut got_hw = !want_hw_tx;
        while (!got_rx || !got_tx || !got_hw) && realtime_ns() < deadline {
            if !got_tx || !got_hw {
                if let Some(st) = ports
                    .tx
                    .recv_tx_timestamp(&mut buf)
                    .map_err(OnewayError::step("reading the TX timestamp"))?
                {
                    got_tx = true;
                    tx_stamped |= st.software.is_some() || st.hardware.is_some();
                    if st.hardware.is_some() {
                        got_hw = true;
                        w.tx_hw_seen += 1;
                    }
                }
            }
            if !got_rx {
                if let Some(meta) = ports
                    .rx
                    .recv(&mut buf)
                    .map_err(OnewayError::step("receiving a warm-up frame"))?
                {
                    let n = meta.len.min(buf.len());
                    if let Classified::Probe {
                        stream: WARMUP_STREAM,
                        seq: s,
                    } = classify(&buf[..n], plan.ethertype, plan.session_id)
                    {
                        if s == seq {
                            got_rx = true;
                            rx_stamped = meta.software.is_some();
                        }
                    }
                }
            }
            std::thread::yield_now();
        }
        if got_rx {
            w.received += 1;
            if rx_stamped {
                rx_run += 1;
            } else {
                // The kernel turns RX stamping on through deferred work; give
                // it a moment rather than burning the warm-up budget.
                w.rx_unstamped += 1;
                rx_run = 0;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        if plan.expect_tx_stamp {
            if tx_stamped {
                tx_run += 1;
            } else {
                w.tx_unstamped += 1;
                tx_run = 0;
            }
        }
        seq += 1;
    }
    w.rx_stamps_settled = rx_run >= settle;
    w.tx_stamps_settled = tx_run >= settle;
    // Anything still queued belongs to the warm-up.
    while ports.rx.recv(&mut buf)?.is_some() {}
    while ports.tx.recv_tx_timestamp(&mut buf)?.is_some() {}
    Ok(w)
}

/// What the measurement may expect of the kernel's stamps after the
/// warm-up: TX stamps that never came are not waited for.
pub fn settle(
    warm: &Warmup,
    plan: &mut OnewayPlan,
    stamping: &Stamping,
    warnings: &mut Vec<Warning>,
) {
    // Software and NIC TX stamps come in two messages a frame when the NIC
    // stamped any warm-up frame; a driver that grants TX stamps and sends
    // none is not waited for (its frames show as lacking hardware stamps).
    if plan.expect_tx_stamp && stamping.tx.hardware_tx && stamping.tx.software_tx {
        plan.tx_stamp_messages = if warm.tx_hw_seen > 0 { 2 } else { 1 };
    }
    if plan.expect_tx_stamp && warm.tx_unstamped == warm.sent && warm.sent > 0 {
        plan.expect_tx_stamp = false;
        warnings.push(Warn::NoTxStampInWarmup.into());
    }
    if !warm.rx_stamps_settled && stamping.rx.software_rx {
        warnings.push(
            Warn::RxStampsUnsettled {
                warmup: warm.sent,
                unstamped: warm.rx_unstamped,
            }
            .into(),
        );
    }
}
