//! How `misura rtt` puts STAMP packets on the wire: in UDP datagrams, or
//! inside misura's raw Ethernet probes (Ethernet + 40-byte probe header +
//! the STAMP packet, the reply flagged REPLY).

use anyhow::{Context, Result};
use misura_sys::packet::PacketSocket;
use misura_sys::udp::UdpTsSocket;
use misura_wire::probe::{ProbeHeader, ProbeRepr, HEADER_LEN as PROBE_LEN};
use misura_wire::{EthernetFrame, EthernetRepr, MacAddr, ProbeFlags};
use std::net::SocketAddr;
use std::time::Duration;

/// A received reply: where its STAMP packet sits in the buffer, and its stamps.
pub struct Received {
    pub start: usize,
    pub len: usize,
    pub rx2: i64,
    pub rx_kernel: Option<i64>,
    pub rx_hw: Option<i64>,
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
    err_buf: Vec<u8>,
}

pub enum Transport {
    Udp(Udp),
    L2(L2),
}

const ETH: usize = misura_wire::ethernet::HEADER_LEN;
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

    pub fn l2(interface: &str, peer: MacAddr, ethertype: u16, session: u32) -> Result<Transport> {
        let info = misura_sys::iface::interface_info(interface)?;
        let sock = PacketSocket::open(interface, ethertype)?;
        Ok(Transport::L2(L2 {
            sock,
            interface: interface.to_string(),
            peer,
            mac: MacAddr(info.mac),
            ethertype,
            session,
            err_buf: vec![0; 16 * 1024],
        }))
    }

    /// Bytes in front of the STAMP packet in a frame buffer.
    pub fn stamp_offset(&self) -> usize {
        match self {
            Transport::Udp(_) => 0,
            Transport::L2(_) => ETH + PROBE_LEN,
        }
    }

    /// Wrap a STAMP request into the buffer that goes on the wire.
    pub fn frame(&self, stamp: &[u8]) -> Result<Vec<u8>> {
        match self {
            Transport::Udp(_) => Ok(stamp.to_vec()),
            Transport::L2(l) => {
                let p = PROBE_LEN + stamp.len();
                let eth = EthernetRepr {
                    dst: l.peer,
                    src: l.mac,
                    vlan: None,
                    ethertype: l.ethertype,
                };
                let probe = ProbeRepr {
                    flags: ProbeFlags::SENDER_TIMESTAMP,
                    payload_len: p as u16,
                    session_id: l.session,
                    stream: 0,
                    size_index: 0,
                    seq: 0,
                    sender_timestamp: 0,
                    aux_timestamp: 0,
                };
                let mut buf = vec![0u8; (ETH + p).max(misura_wire::ethernet::MIN_FRAME_LEN)];
                let n = misura_wire::probe::emit_frame(&eth, &probe, &mut buf)
                    .context("building a raw probe")?;
                buf.truncate(n);
                buf[ETH + PROBE_LEN..ETH + PROBE_LEN + stamp.len()].copy_from_slice(stamp);
                Ok(buf)
            }
        }
    }

    /// Put the probe's own sequence number in the frame (raw probes only).
    pub fn set_seq(&self, frame: &mut [u8], seq: u32) {
        if let Transport::L2(_) = self {
            ProbeHeader::new_unchecked(&mut frame[ETH..]).set_seq(seq as u64);
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

    /// Hand every pending TX stamp to `f(seq, software, hardware)`.
    pub fn poll_tx(&mut self, mut f: impl FnMut(u32, Option<i64>, Option<i64>)) -> Result<()> {
        match self {
            Transport::Udp(u) => {
                while let Some(st) = u.sock.recv_tx_timestamp()? {
                    f(
                        u.id_to_seq[st.id as usize % ID_RING],
                        st.software_ns,
                        st.hardware_ns,
                    );
                }
            }
            Transport::L2(l) => {
                while let Some(st) = l.sock.recv_tx_timestamp(&mut l.err_buf)? {
                    let n = st.len.min(l.err_buf.len());
                    if let Ok(eth) = EthernetFrame::new_checked(&l.err_buf[..n]) {
                        if let Ok(p) = ProbeRepr::parse(eth.payload()) {
                            if p.session_id == l.session && !p.flags.contains(ProbeFlags::REPLY) {
                                f(p.seq as u32, st.software_ns, st.hardware_ns);
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// One non-blocking receive of a reply from the reflector; other traffic
    /// is skipped (returns `Ok(Some)` only for candidate replies, `Ok(None)`
    /// when nothing is queued). The bool says whether anything was read.
    pub fn recv(&mut self, buf: &mut [u8]) -> Result<(bool, Option<Received>)> {
        match self {
            Transport::Udp(u) => {
                let Some(m) = u.sock.recv_from(buf)? else {
                    return Ok((false, None));
                };
                let rx2 = misura_sys::clock::realtime_ns();
                if m.src != u.target {
                    return Ok((true, None));
                }
                Ok((
                    true,
                    Some(Received {
                        start: 0,
                        len: m.len.min(buf.len()),
                        rx2,
                        rx_kernel: m.software_ns,
                        rx_hw: m.hardware_ns,
                    }),
                ))
            }
            Transport::L2(l) => {
                let Some(m) = l.sock.recv(buf)? else {
                    return Ok((false, None));
                };
                let rx2 = misura_sys::clock::realtime_ns();
                let n = m.len.min(buf.len());
                let Ok(eth) = EthernetFrame::new_checked(&buf[..n]) else {
                    return Ok((true, None));
                };
                if eth.src() != l.peer || eth.ethertype() != l.ethertype {
                    return Ok((true, None));
                }
                let hl = eth.header_len();
                let Ok(p) = ProbeRepr::parse(eth.payload()) else {
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
                        rx_kernel: m.software_ns,
                        rx_hw: m.hardware_ns,
                    }),
                ))
            }
        }
    }

    pub fn wait(&self, d: Duration) -> Result<()> {
        match self {
            Transport::Udp(u) => {
                u.sock.wait_readable(d)?;
            }
            // Raw probes busy-poll, as the one-way loop does: a sleep here
            // would land inside the user-level RTT.
            Transport::L2(_) => {}
        }
        Ok(())
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
            Transport::L2(_) => PROBE_LEN,
        }
    }
}
