//! The raw-probe reflector's loop (frame format:
//! `misura_measure::reflector::l2`), with the kernel's or the NIC's stamps,
//! on misura's EtherType, PTP's (probes after a PTPv2 Sync header, for a
//! NIC that stamps only PTP event messages) or both, one socket each.

use super::clock::{reply_timestamp, rx_stamp};
use super::turn::{Loop, BATCH, BUF_LEN};
use crate::error::{Result, RttError};
use misura_measure::reflector::{Decision, Peer, RequestMeta, Stamp};
use misura_measure::TimestampSource;
use misura_run::stamping::FrameFormat;
use misura_sys::clock::realtime;
use misura_sys::packet::{PacketSocket, TimestampingGranted};
use misura_wire::{ptp, EthernetFrame, MacAddr};
use std::time::Duration;

/// The EtherTypes a reflector in `format` listens on: misura's
/// (`--ethertype`), PTP's, or both for `auto` (each request is answered in
/// its own format).
pub fn ethertypes(format: FrameFormat, ethertype: u16) -> Vec<u16> {
    match format {
        FrameFormat::Misura => vec![ethertype],
        FrameFormat::Ptp => vec![ptp::ETHERTYPE_PTP],
        FrameFormat::Auto if ethertype == ptp::ETHERTYPE_PTP => vec![ethertype],
        FrameFormat::Auto => vec![ethertype, ptp::ETHERTYPE_PTP],
    }
}

/// One packet socket per EtherType on `ifname`, with the NIC's stamps when
/// `hardware`; what the kernel granted (the first socket's: all ask the same).
pub fn open(
    ifname: &str,
    ethertypes: &[u16],
    hardware: bool,
) -> Result<(Vec<PacketSocket>, MacAddr, TimestampingGranted)> {
    let info = misura_sys::iface::require_up(ifname)?;
    let mut socks = Vec::new();
    let mut granted = TimestampingGranted::NONE;
    for (i, &ethertype) in ethertypes.iter().enumerate() {
        let sock = PacketSocket::open(ifname, ethertype)?;
        // Our own replies would come back to us (and be dropped as replies):
        // better not to see them at all. Older kernels flag them instead.
        let _ = sock.set_ignore_outgoing(true);
        let g = sock
            .enable_timestamping(hardware)
            .map_err(RttError::setup(format!(
                "turning on kernel timestamps on `{ifname}`"
            )))?;
        if i == 0 {
            granted = g;
        }
        socks.push(sock);
    }
    Ok((socks, MacAddr(info.mac), granted))
}

/// Replies waiting for their TX stamp: the request's RX stamp, for the
/// turnaround (bounded: a reply whose stamp never comes is overwritten).
const PENDING: usize = 256;

#[derive(Copy, Clone)]
struct Pending {
    peer: Peer,
    reply_seq: u32,
    rx: Stamp,
}

/// The loop: NIC stamps, when on, are used for both the RX stamp and the
/// follow-up (a packet socket gets the NIC's TX stamp alone).
pub fn run(lp: &mut Loop<'_>, socks: &[PacketSocket], ethertype: u16, mac: MacAddr, hw_rx: bool) {
    let mut buf = vec![0u8; BUF_LEN];
    let mut out = vec![0u8; BUF_LEN];
    let mut txbuf = vec![0u8; BUF_LEN];
    let mut pending: Vec<Option<Pending>> = vec![None; PENDING];
    while !lp.should_stop() {
        lp.clocks.refresh();
        let mut idle = true;
        for sock in socks {
            idle &= serve(
                lp,
                sock,
                ethertype,
                mac,
                hw_rx,
                &mut pending,
                &mut buf,
                &mut out,
                &mut txbuf,
            );
            drain_l2_tx(lp, sock, &mut txbuf, &mut pending);
        }
        if idle && !lp.busy_poll {
            // The packet socket has no wait here; a short sleep keeps an idle
            // reflector off the CPU at the cost of up to ~0.1 ms before a
            // request is read. The RX stamp is the kernel's, so the measured
            // turnaround includes that wait: use --busy-poll for the lowest.
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

/// Up to a batch of requests on one socket; true when none was read.
#[allow(clippy::too_many_arguments)]
fn serve(
    lp: &mut Loop<'_>,
    sock: &PacketSocket,
    ethertype: u16,
    mac: MacAddr,
    hw_rx: bool,
    pending: &mut [Option<Pending>],
    buf: &mut [u8],
    out: &mut [u8],
    txbuf: &mut [u8],
) -> bool {
    let mut idle = true;
    for _ in 0..BATCH {
        let got = sock.recv(buf);
        let after_recv = realtime();
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
        if hw_rx && m.hardware.is_none() {
            lp.io.rx_hw_stamp_missing += 1;
        }
        let meta = RequestMeta {
            // Replaced by the frame's source MAC in handle_l2_frame.
            src: Peer::L2(MacAddr::default()),
            dst: None,
            ttl: None,
            rx: rx_stamp(m.software, m.hardware, after_recv),
            truncated: m.truncated(buf.len()),
        };
        let frame = &buf[..m.len.min(buf.len())];
        let now = reply_timestamp(&meta.rx, m.software, realtime());
        let clock = *lp.clocks.for_stamp(&meta.rx);
        if let Decision::Reply { len, reply_seq } = lp
            .reflector
            .handle_l2_frame(frame, ethertype, mac, &meta, now, &clock, out)
        {
            match sock.send(&out[..len]) {
                Ok(true) => {
                    if let Some(peer) = reply_of(&out[..len]).map(|r| r.0) {
                        pending[reply_seq as usize % PENDING] = Some(Pending {
                            peer,
                            reply_seq,
                            rx: meta.rx,
                        });
                    }
                }
                Ok(false) => lp.io.send_busy += 1,
                Err(_) => lp.io.send_errors += 1,
            }
            drain_l2_tx(lp, sock, txbuf, pending);
        }
    }
    idle
}

/// TX stamps of sent frames: the looped-back frame names its peer (the
/// destination MAC) and the reply's STAMP sequence number. A TX stamp on
/// the clock of its request's RX stamp makes a turnaround.
fn drain_l2_tx(
    lp: &mut Loop<'_>,
    sock: &PacketSocket,
    txbuf: &mut [u8],
    pending: &mut [Option<Pending>],
) {
    for _ in 0..BATCH {
        match sock.recv_tx_timestamp(txbuf) {
            Ok(Some(st)) => {
                let frame = &txbuf[..st.len.min(txbuf.len())];
                let stamp = match (st.hardware, st.software) {
                    (Some(hw), _) => Some((hw, TimestampSource::NicHardware)),
                    (None, Some(sw)) => Some((sw, TimestampSource::KernelSoftware)),
                    _ => None,
                };
                match (reply_of(frame), stamp) {
                    (Some((peer, seq)), Some((tx, src))) => {
                        // A send may report the kernel's and the NIC's TX
                        // stamps apart: only the one on the RX stamp's clock
                        // follows up (the reflector core refuses the other,
                        // as the UDP loop never offers it) and makes a
                        // turnaround.
                        if lp.reflector.on_tx_stamp(peer, seq, tx, src) {
                            lp.io.tx_stamps_matched += 1;
                        }
                        let slot = &mut pending[seq as usize % PENDING];
                        if let Some(p) = slot
                            .filter(|p| p.peer == peer && p.reply_seq == seq && p.rx.source == src)
                        {
                            *slot = None;
                            lp.turnaround(src, (tx - p.rx.at).as_ns());
                        }
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

/// (peer, reply sequence number) of a reply frame we sent, PTP-wrapped or not.
fn reply_of(frame: &[u8]) -> Option<(Peer, u32)> {
    let f = EthernetFrame::new_checked(frame).ok()?;
    let probe = ptp::probe_payload(f.ethertype(), f.payload()).ok()?;
    let at = misura_wire::probe::HEADER_LEN;
    let seq = probe.get(at..at + 4)?;
    Some((
        Peer::L2(f.dst()),
        u32::from_be_bytes([seq[0], seq[1], seq[2], seq[3]]),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_listens_on_both_formats() {
        assert_eq!(ethertypes(FrameFormat::Misura, 0x88b5), [0x88b5]);
        assert_eq!(ethertypes(FrameFormat::Ptp, 0x88b5), [0x88f7]);
        assert_eq!(ethertypes(FrameFormat::Auto, 0x88b5), [0x88b5, 0x88f7]);
        assert_eq!(ethertypes(FrameFormat::Auto, 0x88f7), [0x88f7]);
    }
}
