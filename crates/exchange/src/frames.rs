//! The exchange's frames: misura probes whose `stream` says what the frame
//! is and whose `seq` is the cycle number, built, renumbered, recognised
//! and sent.

use crate::error::ExchangeError;

type Result<T, E = ExchangeError> = std::result::Result<T, E>;
use misura_measure::time::Instant;
use misura_sys::clock::realtime;
use misura_sys::packet::PacketSocket;
use misura_wire::probe::{ProbeHeader, ProbeRepr};
use misura_wire::{EthernetFrame, EthernetRepr, MacAddr, ProbeFlags};

/// The initiator's trigger.
pub const TRIGGER: u16 = 1;
/// The initiator's data frame.
pub const INITIATOR_DATA: u16 = 2;
/// The responder's data frame.
pub const RESPONDER_DATA: u16 = 3;
/// The Ethernet header's length.
pub const ETH: usize = misura_wire::ethernet::HEADER_LEN;

/// A probe frame of `frame_bytes` (destination address through FCS).
pub fn frame(
    dst: MacAddr,
    src: MacAddr,
    ethertype: u16,
    session: u32,
    stream: u16,
    frame_bytes: usize,
) -> Result<Vec<u8>> {
    let payload = frame_bytes - ETH - misura_wire::ethernet::FCS_LEN;
    let eth = EthernetRepr {
        dst,
        src,
        vlan: None,
        ethertype,
    };
    let probe = ProbeRepr {
        flags: ProbeFlags::empty(),
        payload_len: payload as u16,
        session_id: session,
        stream,
        size_index: 0,
        seq: 0,
        sender_timestamp: 0,
        aux_timestamp: 0,
    };
    let mut buf = vec![0u8; ETH + payload];
    let n = misura_wire::probe::emit_frame(&eth, &probe, &mut buf)?;
    buf.truncate(n);
    Ok(buf)
}

/// Renumber a frame built by [`frame`].
pub fn set_seq(buf: &mut [u8], seq: u64) {
    ProbeHeader::new_unchecked(&mut buf[ETH..]).set_seq(seq);
}

/// (stream, seq, session) of a frame from `peer`, if it is one of ours.
pub fn classify(buf: &[u8], peer: MacAddr, ethertype: u16) -> Option<(u16, u64, u32)> {
    let eth = EthernetFrame::new_checked(buf).ok()?;
    if eth.src() != peer || eth.ethertype() != ethertype {
        return None;
    }
    let p = ProbeRepr::parse(eth.payload()).ok()?;
    Some((p.stream, p.seq, p.session_id))
}

/// Send `buf`, retrying while the socket is full until `deadline`
/// (on CLOCK_REALTIME); false when it could not be sent.
pub fn send_all(sock: &PacketSocket, buf: &[u8], deadline: Instant) -> Result<bool> {
    loop {
        if sock.send(buf)? {
            return Ok(true);
        }
        if realtime() > deadline {
            return Ok(false);
        }
        std::hint::spin_loop();
    }
}
