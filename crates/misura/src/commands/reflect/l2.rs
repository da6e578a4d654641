//! The raw-probe reflector's loop (frame format:
//! `misura_measure::reflector::l2`), with the kernel's or the NIC's stamps.

use super::clock::{reply_timestamp, rx_stamp};
use super::{Loop, BATCH, BUF_LEN};
use anyhow::{Context, Result};
use misura_measure::reflector::{Decision, Peer, RequestMeta};
use misura_measure::TimestampSource;
use misura_sys::clock::realtime_ns;
use misura_sys::packet::{PacketSocket, TimestampingGranted};
use misura_wire::{EthernetFrame, MacAddr};
use std::time::Duration;

/// The packet socket on `ifname`, with the NIC's stamps when `hardware`.
pub fn open(
    ifname: &str,
    ethertype: u16,
    hardware: bool,
) -> Result<(PacketSocket, MacAddr, TimestampingGranted)> {
    let info = misura_sys::iface::require_up(ifname)?;
    let sock = PacketSocket::open(ifname, ethertype)?;
    // Our own replies would come back to us (and be dropped as replies):
    // better not to see them at all. Older kernels flag them instead.
    let _ = sock.set_ignore_outgoing(true);
    let granted = sock
        .enable_timestamping(hardware)
        .with_context(|| format!("turning on kernel timestamps on `{ifname}`"))?;
    Ok((sock, MacAddr(info.mac), granted))
}

/// The loop: NIC stamps, when on, are used for both the RX stamp and the
/// follow-up (a packet socket gets the NIC's TX stamp alone).
pub fn run(lp: &mut Loop<'_>, sock: &PacketSocket, ethertype: u16, mac: MacAddr, hw_rx: bool) {
    let mut buf = vec![0u8; BUF_LEN];
    let mut out = vec![0u8; BUF_LEN];
    let mut txbuf = vec![0u8; BUF_LEN];
    while !lp.should_stop() {
        lp.clocks.refresh();
        let mut idle = true;
        for _ in 0..BATCH {
            let got = sock.recv(&mut buf);
            let after_recv = realtime_ns();
            let m = match got {
                Ok(Some(m)) => m,
                Ok(None) => break,
                Err(_) => {
                    lp.io.recv_errors += 1;
                    break;
                }
            };
            idle = false;
            if m.outgoing {
                lp.io.outgoing_skipped += 1;
                continue;
            }
            if hw_rx && m.hardware_ns.is_none() {
                lp.io.rx_hw_stamp_missing += 1;
            }
            let meta = RequestMeta {
                // Replaced by the frame's source MAC in handle_l2_frame.
                src: Peer::L2(MacAddr::default()),
                dst: None,
                ttl: None,
                rx: rx_stamp(m.software_ns, m.hardware_ns, after_recv),
                truncated: m.truncated(buf.len()),
            };
            let frame = &buf[..m.len.min(buf.len())];
            let now = reply_timestamp(&meta.rx, m.software_ns, realtime_ns());
            let clock = *lp.clocks.for_stamp(&meta.rx);
            if let Decision::Reply { len, .. } = lp
                .reflector
                .handle_l2_frame(frame, ethertype, mac, &meta, now, &clock, &mut out)
            {
                match sock.send(&out[..len]) {
                    Ok(true) => {}
                    Ok(false) => lp.io.send_busy += 1,
                    Err(_) => lp.io.send_errors += 1,
                }
                drain_l2_tx(lp, sock, &mut txbuf);
            }
        }
        drain_l2_tx(lp, sock, &mut txbuf);
        if idle && !lp.busy_poll {
            // The packet socket has no wait here; a short sleep keeps an idle
            // reflector off the CPU at the cost of up to ~0.1 ms before a
            // request is read. The RX stamp is the kernel's, so the measured
            // turnaround includes that wait: use --busy-poll for the lowest.
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

/// TX stamps of sent frames: the looped-back frame names its peer (the
/// destination MAC) and the reply's STAMP sequence number.
fn drain_l2_tx(lp: &mut Loop<'_>, sock: &PacketSocket, txbuf: &mut [u8]) {
    for _ in 0..BATCH {
        match sock.recv_tx_timestamp(txbuf) {
            Ok(Some(st)) => {
                let frame = &txbuf[..st.len];
                let stamp = match (st.hardware_ns, st.software_ns) {
                    (Some(hw), _) => Some((hw, TimestampSource::NicHardware)),
                    (None, Some(sw)) => Some((sw, TimestampSource::KernelSoftware)),
                    _ => None,
                };
                match (reply_of(frame), stamp) {
                    (Some((peer, seq)), Some((ns, src))) => {
                        lp.reflector.on_tx_stamp(peer, seq, ns, src);
                        lp.io.tx_stamps_matched += 1;
                    }
                    _ => lp.io.tx_stamps_unmatched += 1,
                }
            }
            Ok(None) => break,
            Err(_) => {
                lp.io.tx_stamp_errors += 1;
                break;
            }
        }
    }
}

/// (peer, reply sequence number) of a reply frame we sent.
fn reply_of(frame: &[u8]) -> Option<(Peer, u32)> {
    let f = EthernetFrame::new_checked(frame).ok()?;
    let at = misura_wire::probe::HEADER_LEN;
    let seq = f.payload().get(at..at + 4)?;
    Some((
        Peer::L2(f.dst()),
        u32::from_be_bytes([seq[0], seq[1], seq[2], seq[3]]),
    ))
}
