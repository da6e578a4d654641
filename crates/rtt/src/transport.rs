//! How `misura rtt` puts STAMP packets on the wire: in UDP datagrams, or
//! inside misura's raw Ethernet probes (Ethernet + 40-byte probe header +
//! the STAMP packet, the reply flagged REPLY), which may travel after a
//! PTPv2 Sync header (`--frame-format ptp`, `misura_wire::ptp`) for a NIC
//! that stamps only PTP event messages.

use crate::error::{Result, RttError};
use misura_measure::time::Instant;
use misura_sys::packet::PacketSocket;
use misura_sys::udp::{Ready, UdpTsSocket};
use misura_wire::probe::{self, ProbeHeader, ProbeRepr, HEADER_LEN as PROBE_LEN};
use misura_wire::{ptp, EthernetFrame, EthernetRepr, MacAddr, ProbeFlags};
use std::net::SocketAddr;
use std::time::Duration;

/// A received reply: where its STAMP packet sits in the buffer, and its stamps.
pub struct Received {
    pub start: usize,
    pub len: usize,
    pub rx2: Instant,
    pub rx_kernel: Option<Instant>,
    pub rx_hw: Option<Instant>,
}

pub struct Udp {
    pub sock: UdpTsSocket,
    pub target: SocketAddr,
    id_to_seq: Vec<u32>,
    next_id: u32,
}

pub struct L2 {
    pub sock: PacketSocket,
    pub interface: String,
    pub peer: MacAddr,
    pub mac: MacAddr,
    pub ethertype: u16,
    pub session: u32,
    /// The probes travel PTP-wrapped (EtherType 0x88F7, a Sync header
    /// before the probe header).
    pub ptp: bool,
    err_buf: Vec<u8>,
}

pub enum Transport {
    Udp(Udp),
    L2(L2),
}

const ETH: usize = misura_wire::ethernet::HEADER_LEN;
/// Frames shorter than this (without FCS) are padded.
const MIN_FRAME_NO_FCS: usize =
    misura_wire::ethernet::MIN_FRAME_LEN - misura_wire::ethernet::FCS_LEN;
const ID_RING: usize = 4096;

impl Transport {
    pub fn udp(sock: UdpTsSocket, target: SocketAddr) -> Transport {
        Transport::Udp(Udp {
            sock,
            target,
            id_to_seq: vec![0; ID_RING],
            next_id: 0,
        })
    }

    /// Raw probes on `interface` to `peer`; `ptp`: PTP-wrapped (the
    /// EtherType is then PTP's, not `ethertype`).
    pub fn l2(
        interface: &str,
        peer: MacAddr,
        ethertype: u16,
        session: u32,
        ptp: bool,
    ) -> Result<Transport> {
        let info = misura_sys::iface::interface_info(interface)?;
        let ethertype = if ptp { ptp::ETHERTYPE_PTP } else { ethertype };
        let sock = PacketSocket::open(interface, ethertype)?;
        Ok(Transport::L2(L2 {
            sock,
            interface: interface.to_string(),
            peer,
            mac: MacAddr(info.mac),
            ethertype,
            session,
            ptp,
            err_buf: vec![0; 16 * 1024],
        }))
    }

    /// Bytes in front of the STAMP packet in a frame buffer.
    pub fn stamp_offset(&self) -> usize {
        match self {
            Transport::Udp(_) => 0,
            Transport::L2(l) => ETH + l.sync_len() + PROBE_LEN,
        }
    }

    /// Writes the bytes in front of a STAMP request of `stamp_len` bytes
    /// already at `frame[self.stamp_offset()..]` (for raw probes: Ethernet
    /// and probe header carrying `seq`, and zero padding of a short frame),
    /// and returns how many bytes of `frame` to send.
    pub fn wrap(&self, frame: &mut [u8], stamp_len: usize, seq: u32) -> Result<usize> {
        match self {
            Transport::Udp(_) => Ok(stamp_len),
            Transport::L2(l) => {
                let eth = EthernetRepr {
                    dst: l.peer,
                    src: l.mac,
                    vlan: None,
                    ethertype: l.ethertype,
                };
                write_l2_header(frame, &eth, l.ptp, l.session, stamp_len, seq)
            }
        }
    }

    /// One send. False when the socket's queue is full.
    pub fn send(&mut self, frame: &[u8], seq: u32) -> Result<bool> {
        match self {
            Transport::Udp(u) => {
                let ok = u.sock.send_to(frame, u.target)?;
                if ok {
                    u.id_to_seq[u.next_id as usize % ID_RING] = seq;
                    u.next_id = u.next_id.wrapping_add(1);
                }
                Ok(ok)
            }
            Transport::L2(l) => Ok(l.sock.send(frame)?),
        }
    }

    /// Hand up to `max` pending TX stamps to `f(seq, software, hardware)`;
    /// stops early when the error queue is empty. Returns how many were
    /// read.
    pub fn poll_tx(
        &mut self,
        max: usize,
        mut f: impl FnMut(u32, Option<Instant>, Option<Instant>),
    ) -> Result<usize> {
        let mut n = 0;
        match self {
            Transport::Udp(u) => {
                while n < max {
                    let Some(st) = u.sock.recv_tx_timestamp()? else {
                        break;
                    };
                    n += 1;
                    f(
                        u.id_to_seq[st.id as usize % ID_RING],
                        st.software,
                        st.hardware,
                    );
                }
            }
            Transport::L2(l) => {
                while n < max {
                    let Some(st) = l.sock.recv_tx_timestamp(&mut l.err_buf)? else {
                        break;
                    };
                    n += 1;
                    let len = st.len.min(l.err_buf.len());
                    if let Ok(eth) = EthernetFrame::new_checked(&l.err_buf[..len]) {
                        let inner = ptp::probe_payload(eth.ethertype(), eth.payload());
                        if let Ok(p) = inner.and_then(ProbeRepr::parse) {
                            if p.session_id == l.session && !p.flags.contains(ProbeFlags::REPLY) {
                                f(p.seq as u32, st.software, st.hardware);
                            }
                        }
                    }
                }
            }
        }
        Ok(n)
    }

    /// One non-blocking receive of a reply from the reflector; other traffic
    /// is skipped (returns `Ok(Some)` only for candidate replies, `Ok(None)`
    /// when nothing is queued). The bool says whether anything was read.
    pub fn recv(&mut self, buf: &mut [u8]) -> Result<(bool, Option<Received>)> {
        self.recv_inner(buf, false)
    }

    /// [`Transport::recv`] that blocks until a datagram comes, a signal
    /// interrupts it (the wake-up timer) or the socket's receive timeout
    /// runs out; UDP only, on a socket put in blocking mode by
    /// [`Transport::block_in_receive`] (raw probes never block).
    pub fn recv_wait(&mut self, buf: &mut [u8]) -> Result<(bool, Option<Received>)> {
        self.recv_inner(buf, true)
    }

    /// Switches a UDP socket to blocking receives bounded by `backstop`
    /// (`SO_RCVTIMEO`: should a wake-up signal come before the receive
    /// blocks, the wait still ends). False for raw probes, which busy-poll.
    pub fn block_in_receive(&mut self, backstop: Duration) -> Result<bool> {
        match self {
            Transport::Udp(u) => {
                u.sock.set_nonblocking(false)?;
                u.sock.set_recv_timeout(backstop)?;
                Ok(true)
            }
            Transport::L2(_) => Ok(false),
        }
    }

    fn recv_inner(&mut self, buf: &mut [u8], wait: bool) -> Result<(bool, Option<Received>)> {
        match self {
            Transport::Udp(u) => {
                let got = if wait {
                    u.sock.recv_from(buf)?
                } else {
                    u.sock.recv_from_nowait(buf)?
                };
                let Some(m) = got else {
                    return Ok((false, None));
                };
                let rx2 = misura_sys::clock::realtime();
                if m.src != u.target {
                    return Ok((true, None));
                }
                Ok((
                    true,
                    Some(Received {
                        start: 0,
                        len: m.len.min(buf.len()),
                        rx2,
                        rx_kernel: m.software,
                        rx_hw: m.hardware,
                    }),
                ))
            }
            Transport::L2(l) => {
                let Some(m) = l.sock.recv(buf)? else {
                    return Ok((false, None));
                };
                let rx2 = misura_sys::clock::realtime();
                let n = m.len.min(buf.len());
                let Ok(eth) = EthernetFrame::new_checked(&buf[..n]) else {
                    return Ok((true, None));
                };
                if eth.src() != l.peer || eth.ethertype() != l.ethertype {
                    return Ok((true, None));
                }
                let Ok(inner) = ptp::probe_payload(eth.ethertype(), eth.payload()) else {
                    return Ok((true, None));
                };
                // The probe header's offset: after Ethernet and any Sync.
                let hl = n - inner.len();
                let Ok(p) = ProbeRepr::parse(inner) else {
                    return Ok((true, None));
                };
                if !p.flags.contains(ProbeFlags::REPLY) || p.session_id != l.session {
                    return Ok((true, None));
                }
                let len = (p.payload_len as usize).saturating_sub(PROBE_LEN);
                Ok((
                    true,
                    Some(Received {
                        start: hl + PROBE_LEN,
                        len,
                        rx2,
                        rx_kernel: m.software,
                        rx_hw: m.hardware,
                    }),
                ))
            }
        }
    }

    /// Sleeps until a reply or a TX stamp is ready or `d` ran out; says
    /// which was found ready.
    pub fn wait(&self, d: Duration) -> Result<Ready> {
        match self {
            Transport::Udp(u) => Ok(u.sock.wait(d)?),
            // Raw probes busy-poll, as the one-way loop does: a sleep here
            // would land inside the user-level RTT. Both queues are looked at.
            Transport::L2(_) => Ok(Ready {
                data: true,
                error_queue: true,
            }),
        }
    }

    /// `--busy-poll`: what was set up for spinning on this transport.
    pub fn busy_poll(&self) -> misura_report::BusyPoll {
        match self {
            Transport::Udp(u) => misura_run::busy_poll::ask(&u.sock),
            Transport::L2(_) => misura_run::busy_poll::raw(),
        }
    }

    pub fn take_icmp_errors(&self) -> u64 {
        match self {
            Transport::Udp(u) => u.sock.take_icmp_errors(),
            Transport::L2(_) => 0,
        }
    }

    pub fn local(&self) -> String {
        match self {
            Transport::Udp(u) => u.sock.local_addr().to_string(),
            Transport::L2(l) => format!("{} ({})", l.interface, l.mac),
        }
    }

    pub fn target(&self) -> String {
        match self {
            Transport::Udp(u) => u.target.to_string(),
            Transport::L2(l) => l.peer.to_string(),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Transport::Udp(_) => "stamp-udp",
            Transport::L2(_) => "l2-probe",
        }
    }

    /// Ethernet + IP + UDP bytes around a STAMP packet of this transport
    /// (for the ideal RTT: `LinkModel` adds the 18-byte Ethernet header/FCS).
    pub fn payload_overhead(&self) -> usize {
        match self {
            Transport::Udp(u) => {
                if u.target.is_ipv4() {
                    28
                } else {
                    48
                }
            }
            Transport::L2(l) => l.sync_len() + PROBE_LEN,
        }
    }
}

impl L2 {
    /// Bytes of the PTP Sync header before the probe header (0 unwrapped).
    fn sync_len(&self) -> usize {
        if self.ptp {
            ptp::SYNC_LEN
        } else {
            0
        }
    }
}

/// The Ethernet and probe headers of a raw request (and between them the
/// PTP Sync header when `ptp`), written around a STAMP packet already in
/// place (so the packet is not copied), and the zero padding up to the
/// 60-byte minimum frame.
fn write_l2_header(
    frame: &mut [u8],
    eth: &EthernetRepr,
    ptp: bool,
    session: u32,
    stamp_len: usize,
    seq: u32,
) -> Result<usize> {
    let payload_len = PROBE_LEN + stamp_len;
    let ph = if ptp { ETH + ptp::SYNC_LEN } else { ETH };
    let body = ph + payload_len;
    let n = body.max(MIN_FRAME_NO_FCS);
    if payload_len > probe::MAX_PAYLOAD {
        let e = misura_wire::WireError::BadLength {
            field: "payload_len",
            value: payload_len,
        };
        return Err(RttError::build("building a raw probe")(e));
    }
    if frame.len() < n {
        return Err(RttError::ShortFrame { needs: n });
    }
    eth.emit(&mut frame[..ETH])
        .map_err(RttError::build("building a raw probe"))?;
    if ptp {
        ptp::emit_sync(
            &mut frame[ETH..ph],
            u64::from(seq),
            ptp::clock_identity(eth.src.0),
        )
        .map_err(RttError::build("building a PTP-wrapped probe"))?;
    }
    let mut h = ProbeHeader::new_unchecked(&mut frame[ph..ph + PROBE_LEN]);
    h.set_magic(probe::MAGIC);
    h.set_version(probe::VERSION);
    h.set_flags(ProbeFlags::SENDER_TIMESTAMP);
    h.set_payload_len(payload_len as u16);
    h.set_session_id(session);
    h.set_stream(0);
    h.set_size_index(0);
    h.set_seq(u64::from(seq));
    h.set_sender_timestamp(0);
    h.set_aux_timestamp(0);
    frame[body..n].fill(0);
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use misura_wire::probe::emit_frame;

    /// The headers written in place are those of a frame emitted whole.
    #[test]
    fn raw_request_frames_match_emitted_ones() {
        let eth = EthernetRepr {
            dst: MacAddr([2, 0, 0, 0, 0, 2]),
            src: MacAddr([2, 0, 0, 0, 0, 1]),
            vlan: None,
            ethertype: 0x88b5,
        };
        for stamp_len in [0usize, 1, 6, 44, 72, 1400] {
            let stamp: Vec<u8> = (0..stamp_len).map(|i| (i * 7 + 3) as u8).collect();
            let probe = ProbeRepr {
                flags: ProbeFlags::SENDER_TIMESTAMP,
                payload_len: (PROBE_LEN + stamp_len) as u16,
                session_id: 0xdead_beef,
                stream: 0,
                size_index: 0,
                seq: 0x1234_5678,
                sender_timestamp: 0,
                aux_timestamp: 0,
            };
            let mut want = vec![0u8; 2048];
            let n = emit_frame(&eth, &probe, &mut want).unwrap();
            want.truncate(n);
            want[ETH + PROBE_LEN..ETH + PROBE_LEN + stamp_len].copy_from_slice(&stamp);

            let mut got = vec![0xa5u8; 2048];
            got[ETH + PROBE_LEN..ETH + PROBE_LEN + stamp_len].copy_from_slice(&stamp);
            let m = write_l2_header(&mut got, &eth, false, 0xdead_beef, stamp_len, 0x1234_5678)
                .unwrap();
            assert_eq!(&got[..m], &want[..], "STAMP packet of {stamp_len} bytes");
        }
        let mut small = vec![0u8; 59];
        assert!(write_l2_header(&mut small, &eth, false, 1, 0, 1).is_err());
        let mut jumbo = vec![0u8; 10_000];
        assert!(write_l2_header(&mut jumbo, &eth, false, 1, 8960, 1).is_ok());
        assert!(write_l2_header(&mut jumbo, &eth, false, 1, 8961, 1).is_err());
    }

    /// A PTP-wrapped request is wire::ptp's frame: Sync header, then the
    /// probe, with the STAMP packet after it.
    #[test]
    fn ptp_wrapped_requests_match_emitted_ones() {
        let eth = EthernetRepr {
            dst: MacAddr([2, 0, 0, 0, 0, 2]),
            src: MacAddr([2, 0, 0, 0, 0, 1]),
            vlan: None,
            ethertype: ptp::ETHERTYPE_PTP,
        };
        for stamp_len in [0usize, 44, 1400] {
            let probe = ProbeRepr {
                flags: ProbeFlags::SENDER_TIMESTAMP,
                payload_len: (PROBE_LEN + stamp_len) as u16,
                session_id: 7,
                stream: 0,
                size_index: 0,
                seq: 0x1_0005,
                sender_timestamp: 0,
                aux_timestamp: 0,
            };
            let mut want = vec![0u8; 2048];
            let n = ptp::emit_ptp_frame(&eth, &probe, &mut want).unwrap();
            let at = ETH + ptp::SYNC_LEN + PROBE_LEN;
            want[at..at + stamp_len].fill(0x5a);
            let mut got = vec![0xa5u8; 2048];
            got[at..at + stamp_len].fill(0x5a);
            let m = write_l2_header(&mut got, &eth, true, 7, stamp_len, 0x1_0005).unwrap();
            assert_eq!(&got[..m], &want[..n], "STAMP packet of {stamp_len} bytes");
            let f = EthernetFrame::new_checked(&got[..m]).unwrap();
            let inner = ptp::strip_misura_sync(f.payload()).unwrap();
            assert_eq!(ProbeRepr::parse(inner).unwrap().seq, 0x1_0005);
        }
    }
}
