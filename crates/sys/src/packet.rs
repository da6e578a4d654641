//! A non-blocking `AF_PACKET`/`SOCK_RAW` socket bound to one interface and
//! one ethertype, with kernel timestamps.
//!
//! RX stamps come from the `SCM_TIMESTAMPING` control message of each
//! received frame; TX stamps come from the socket's error queue
//! (`MSG_ERRQUEUE`), one message per sent frame, carrying a copy of the
//! frame (no `SOF_TIMESTAMPING_OPT_TSONLY`) so the caller can match the
//! stamp to its probe by the sequence number inside it.
//!
//! Control messages are decoded by [`crate::cmsg`] (shared with
//! [`crate::udp`]): anything not recognised is skipped, and a missing
//! timestamp is reported as `None` rather than an error.

use crate::fd::{cvt, is_again, IntOption};
use misura_time::Instant;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::cmsg::{
    recv_errqueue, recv_msg, SockAddrBuf, SOF_RAW_HARDWARE, SOF_RX_HARDWARE, SOF_RX_SOFTWARE,
    SOF_SOFTWARE, SOF_TX_HARDWARE, SOF_TX_SOFTWARE, SOL_PACKET, SO_EE_ORIGIN_TIMESTAMPING,
    SO_TIMESTAMPING_OLD,
};
use crate::error::is_perm;
use crate::SysError;

/// `sll_pkttype` of a frame this host sent.
const PACKET_OUTGOING: u8 = 4;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

/// A non-blocking raw packet socket bound to one interface and ethertype.
#[derive(Debug)]
pub struct PacketSocket {
    fd: OwnedFd,
    ifindex: u32,
    ifname: String,
    ethertype: u16,
}

/// Which timestamps the socket asked for successfully.  Hardware is
/// granted only if the device reports it can (`ETHTOOL_GET_TS_INFO`); the
/// device must also have been switched on with
/// [`crate::tsinfo::enable_hw_timestamping`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TimestampingGranted {
    /// Software TX stamps (the driver calls `skb_tx_timestamp`).
    pub software_tx: bool,
    /// Software RX stamps.
    pub software_rx: bool,
    /// Hardware TX stamps.
    pub hardware_tx: bool,
    /// Hardware RX stamps.
    pub hardware_rx: bool,
}

impl TimestampingGranted {
    /// No stamps at all (the user clock only).
    pub const NONE: TimestampingGranted = TimestampingGranted {
        software_tx: false,
        software_rx: false,
        hardware_tx: false,
        hardware_rx: false,
    };

    /// Sent datagrams get a TX stamp of some kind.
    pub fn any_tx(&self) -> bool {
        self.software_tx || self.hardware_tx
    }
}

/// What one `recv` got.
#[derive(Copy, Clone, Debug, Default)]
pub struct RecvMeta {
    /// The frame's real length.  If it is larger than the buffer given to
    /// [`PacketSocket::recv`], the frame was truncated to the buffer.
    pub len: usize,
    /// Kernel software RX stamp (`CLOCK_REALTIME` ns), if any.
    pub software: Option<Instant>,
    /// Raw hardware RX stamp (the NIC's PHC, ns), if any.
    pub hardware: Option<Instant>,
    /// The frame was sent by this host (`PACKET_OUTGOING`).
    pub outgoing: bool,
}

impl RecvMeta {
    /// True when the frame did not fit in a buffer of `buf_len` bytes.
    pub fn truncated(&self, buf_len: usize) -> bool {
        self.len > buf_len
    }
}

/// A TX timestamp from the error queue.
#[derive(Copy, Clone, Debug, Default)]
pub struct TxStamp {
    /// Bytes of the looped-back frame copied into the buffer.
    pub len: usize,
    /// Kernel software TX stamp (`CLOCK_REALTIME` ns), if any.
    pub software: Option<Instant>,
    /// Raw hardware TX stamp (PHC ns), if any.
    pub hardware: Option<Instant>,
}

/// A non-blocking `AF_PACKET`/`SOCK_RAW` socket bound to `ifname` and
/// `ethertype` (host order), with the ifindex: the one opening of a packet
/// socket, for [`PacketSocket::open`] and the rings. `what` names the socket
/// in the permission error ("a raw packet socket", "a packet ring"). Errors
/// as [`PacketSocket::open`].
pub(crate) fn open_bound(
    ifname: &str,
    ethertype: u16,
    what: &str,
) -> Result<(OwnedFd, u32), SysError> {
    let ifindex = crate::iface::interface_index(ifname)?;
    // Protocol 0: the socket receives nothing until bind() names the
    // ethertype together with the interface, so no frame of another
    // interface slips in between socket() and bind().
    // SAFETY: plain socket(2) call with constant arguments.
    let raw = unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if raw < 0 {
        let e = io::Error::last_os_error();
        return Err(if is_perm(&e) {
            SysError::NeedCapability {
                cap: "CAP_NET_RAW",
                what: format!("opening {what} on `{ifname}`"),
            }
        } else if e.raw_os_error() == Some(libc::EAFNOSUPPORT) {
            SysError::Unsupported {
                what: "raw packet sockets".into(),
                why: "the kernel has no AF_PACKET support (CONFIG_PACKET)".into(),
            }
        } else {
            SysError::io(format!("opening a raw packet socket on `{ifname}`"), e)
        });
    }
    // SAFETY: `raw` was just returned by socket(2) and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };

    // SAFETY: sockaddr_ll is plain old data; all-zero is a valid value.
    let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = ethertype.to_be();
    sll.sll_ifindex = ifindex as i32;
    // SAFETY: `sll` is a valid sockaddr_ll and its exact size is passed.
    let rc = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    cvt(rc).map_err(|e| match e.raw_os_error() {
        Some(libc::ENODEV) | Some(libc::ENXIO) => SysError::NoSuchInterface {
            name: ifname.into(),
        },
        _ => SysError::io(format!("binding the packet socket to `{ifname}`"), e),
    })?;
    // Binding to an interface that is not up succeeds but leaves ENETDOWN
    // pending on the socket; report it now, clearly.
    if crate::fd::get_int(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_ERROR).ok()
        == Some(libc::ENETDOWN)
    {
        return Err(SysError::InterfaceDown {
            name: ifname.to_string(),
        });
    }
    Ok((fd, ifindex))
}

impl PacketSocket {
    /// Opens a non-blocking `AF_PACKET` raw socket bound to `ifname` and
    /// `ethertype` (host byte order, e.g. `0x88B5`).  Fails with
    /// `NoSuchInterface`, `NeedCapability { cap: "CAP_NET_RAW" }`, or
    /// `InterfaceDown` when the interface is administratively down.
    pub fn open(ifname: &str, ethertype: u16) -> Result<PacketSocket, SysError> {
        let (fd, ifindex) = open_bound(ifname, ethertype, "a raw packet socket")?;
        Ok(PacketSocket {
            fd,
            ifindex,
            ifname: ifname.to_string(),
            ethertype,
        })
    }

    /// The index of the bound interface.
    pub fn interface_index(&self) -> u32 {
        self.ifindex
    }

    /// The name of the bound interface.
    pub fn interface_name(&self) -> &str {
        &self.ifname
    }

    /// The bound ethertype (host byte order).
    pub fn ethertype(&self) -> u16 {
        self.ethertype
    }

    /// The raw file descriptor (for poll/epoll).
    /// Wait up to `timeout` (millisecond resolution) for a frame to read;
    /// true when one is ready. For receivers that should sleep in the
    /// kernel between frames rather than busy-poll.
    pub fn wait_readable(&self, timeout: std::time::Duration) -> Result<bool, SysError> {
        let mut pfd = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
        // SAFETY: `pfd` is a valid, initialised pollfd that lives for the call;
        // nfds is 1.
        let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                return Ok(false);
            }
            return Err(SysError::io(
                format!("waiting for frames on `{}`", self.ifname),
                e,
            ));
        }
        Ok(rc > 0 && pfd.revents & libc::POLLIN != 0)
    }

    pub fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Turns on `SO_TIMESTAMPING`: software TX and RX stamps always, and
    /// hardware TX/RX (raw PHC time) when `want_hardware` and the device
    /// reports the capability.  `SOF_TIMESTAMPING_OPT_TSONLY` is not used:
    /// each error-queue message carries the sent frame.  With hardware TX
    /// stamps, `OPT_TX_SWHW` keeps the software TX stamp too: a frame's two
    /// stamps then come in two messages.
    pub fn enable_timestamping(
        &self,
        want_hardware: bool,
    ) -> Result<TimestampingGranted, SysError> {
        let mut flags = SOF_TX_SOFTWARE | SOF_RX_SOFTWARE | SOF_SOFTWARE;
        let (mut hw_tx, mut hw_rx) = (false, false);
        if want_hardware {
            // Asked through this socket, so the answer is from the socket's
            // namespace whatever thread calls.  Unknown caps (driver
            // without GET_TS_INFO): ask for hardware anyway.
            let caps = crate::tsinfo::get_ts_info_with(&self.fd, &self.ifname).ok();
            hw_tx = caps.as_ref().is_none_or(|c| c.hw_tx());
            hw_rx = caps.as_ref().is_none_or(|c| c.hw_rx());
            if hw_tx || hw_rx {
                flags |= SOF_RAW_HARDWARE;
            }
            if hw_tx {
                // Both TX stamps, in two error-queue messages: the kernel's
                // when the driver queues the frame, the NIC's when it leaves.
                flags |= SOF_TX_HARDWARE | crate::cmsg::SOF_OPT_TX_SWHW;
            }
            if hw_rx {
                flags |= SOF_RX_HARDWARE;
            }
        }
        self.set_int(libc::SOL_SOCKET, SO_TIMESTAMPING_OLD, flags as libc::c_int)
            .map_err(|e| {
                if e.raw_os_error() == Some(libc::ENOPROTOOPT) {
                    SysError::Unsupported {
                        what: "SO_TIMESTAMPING".into(),
                        why: "the kernel does not offer it on packet sockets".into(),
                    }
                } else {
                    SysError::io(
                        format!(
                            "enabling SO_TIMESTAMPING on the packet socket of `{}`",
                            self.ifname
                        ),
                        e,
                    )
                }
            })?;
        // Read back what the kernel kept.
        let got = self
            .get_int(libc::SOL_SOCKET, SO_TIMESTAMPING_OLD)
            .map(|v| v as u32)
            .unwrap_or(flags);
        Ok(TimestampingGranted {
            software_tx: got & SOF_TX_SOFTWARE != 0 && got & SOF_SOFTWARE != 0,
            software_rx: got & SOF_RX_SOFTWARE != 0 && got & SOF_SOFTWARE != 0,
            hardware_tx: hw_tx && got & SOF_TX_HARDWARE != 0 && got & SOF_RAW_HARDWARE != 0,
            hardware_rx: hw_rx && got & SOF_RX_HARDWARE != 0 && got & SOF_RAW_HARDWARE != 0,
        })
    }

    /// `PACKET_QDISC_BYPASS`: sent frames go straight to the driver,
    /// skipping the qdisc (and taps such as tcpdump).
    pub fn set_qdisc_bypass(&self, on: bool) -> Result<(), SysError> {
        self.set_int(SOL_PACKET, PACKET_QDISC_BYPASS, on as libc::c_int)
            .map_err(|e| {
                if e.raw_os_error() == Some(libc::ENOPROTOOPT) {
                    SysError::Unsupported {
                        what: "PACKET_QDISC_BYPASS".into(),
                        why: "the kernel is older than 3.14".into(),
                    }
                } else {
                    SysError::io("setting PACKET_QDISC_BYPASS", e)
                }
            })
    }

    /// `PACKET_IGNORE_OUTGOING`: the socket never receives frames this
    /// host sends (kernel >= 4.20).
    pub fn set_ignore_outgoing(&self, on: bool) -> Result<(), SysError> {
        self.set_int(SOL_PACKET, PACKET_IGNORE_OUTGOING, on as libc::c_int).map_err(|e| {
            if e.raw_os_error() == Some(libc::ENOPROTOOPT) {
                SysError::Unsupported {
                    what: "PACKET_IGNORE_OUTGOING".into(),
                    why: "the kernel is older than 4.20; outgoing frames are flagged in RecvMeta::outgoing instead".into(),
                }
            } else {
                SysError::io("setting PACKET_IGNORE_OUTGOING", e)
            }
        })
    }

    /// Accept only frames whose 16-bit big-endian field at `offset` (from
    /// the start of the MAC header, VLAN tag already removed by the
    /// kernel) equals `value`: a classic BPF filter (`SO_ATTACH_FILTER`),
    /// so that frames of other streams are never queued on this socket.
    /// The frame engine uses it to give the latency stream its own socket,
    /// with exact per-frame windows, beside the load's receive ring.
    pub fn filter_u16(&self, offset: u32, value: u16) -> Result<(), SysError> {
        const BPF_LD_H_ABS: u16 = 0x28; // BPF_LD | BPF_H | BPF_ABS
        const BPF_JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
        const BPF_RET_K: u16 = 0x06; // BPF_RET | BPF_K
        let prog = [
            libc::sock_filter {
                code: BPF_LD_H_ABS,
                jt: 0,
                jf: 0,
                k: offset,
            },
            libc::sock_filter {
                code: BPF_JEQ_K,
                jt: 0,
                jf: 1,
                k: u32::from(value),
            },
            libc::sock_filter {
                code: BPF_RET_K,
                jt: 0,
                jf: 0,
                k: 0x0004_0000,
            },
            libc::sock_filter {
                code: BPF_RET_K,
                jt: 0,
                jf: 0,
                k: 0,
            },
        ];
        let fprog = libc::sock_fprog {
            len: prog.len() as u16,
            filter: prog.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: `fprog` points at `prog`, which outlives the call; the
        // kernel copies the program before setsockopt returns.
        let rc = unsafe {
            libc::setsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_ATTACH_FILTER,
                (&fprog as *const libc::sock_fprog).cast(),
                size_of::<libc::sock_fprog>() as libc::socklen_t,
            )
        };
        cvt(rc)
            .map(|_| ())
            .map_err(|e| SysError::io("attaching a stream filter (SO_ATTACH_FILTER)", e))
    }

    fn set_buffer(
        &self,
        opt: libc::c_int,
        force: libc::c_int,
        bytes: usize,
        name: &str,
    ) -> Result<usize, SysError> {
        crate::fd::set_socket_buffer(self.fd.as_raw_fd(), opt, force, bytes)
            .map_err(|e| SysError::io(format!("setting {name} to {bytes} bytes"), e))
    }

    /// Sets `SO_RCVBUF` (forcing past `net.core.rmem_max` when allowed) and
    /// returns the size the kernel granted (read back; the kernel doubles
    /// the request for its bookkeeping).
    pub fn set_recv_buffer(&self, bytes: usize) -> Result<usize, SysError> {
        self.set_buffer(libc::SO_RCVBUF, libc::SO_RCVBUFFORCE, bytes, "SO_RCVBUF")
    }

    /// Sets `SO_SNDBUF` (see [`PacketSocket::set_recv_buffer`]).
    pub fn set_send_buffer(&self, bytes: usize) -> Result<usize, SysError> {
        self.set_buffer(libc::SO_SNDBUF, libc::SO_SNDBUFFORCE, bytes, "SO_SNDBUF")
    }

    /// Sends one complete Ethernet frame (header included) with one
    /// `send()`.  `Ok(false)` when the queue is full (EAGAIN/ENOBUFS): retry
    /// later.  Does not allocate.
    pub fn send(&self, frame: &[u8]) -> Result<bool, SysError> {
        // SAFETY: `frame` is a valid readable buffer of `frame.len()` bytes.
        let n = unsafe {
            libc::send(
                self.fd.as_raw_fd(),
                frame.as_ptr() as *const libc::c_void,
                frame.len(),
                libc::MSG_DONTWAIT,
            )
        };
        if n >= 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::ENOBUFS) | Some(libc::EINTR) => Ok(false),
            Some(libc::ENETDOWN) | Some(libc::ENXIO) => Err(SysError::InterfaceDown { name: self.ifname.clone() }),
            Some(libc::EMSGSIZE) => Err(SysError::io(
                format!("sending a {}-byte frame on `{}` (larger than the MTU plus the link header; see `ip link`)", frame.len(), self.ifname),
                e,
            )),
            _ => Err(SysError::io(format!("sending a frame on `{}`", self.ifname), e)),
        }
    }

    /// One non-blocking `recvmsg()`.  `Ok(None)` when nothing is queued.
    /// The frame is copied into `buf`; [`RecvMeta::len`] is its real length
    /// (larger than `buf.len()` if truncated).  Does not allocate.
    pub fn recv(&self, buf: &mut [u8]) -> Result<Option<RecvMeta>, SysError> {
        let mut addr = libc::sockaddr_ll::zeroed();
        // MSG_TRUNC on a packet socket makes recvmsg return the real length.
        let flags = libc::MSG_DONTWAIT | libc::MSG_TRUNC;
        let got = recv_msg(self.fd.as_raw_fd(), buf, Some(&mut addr), flags);
        let r = match got {
            Ok(r) => r,
            Err(e) if is_again(&e) => return Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::ENETDOWN) => {
                return Err(SysError::InterfaceDown {
                    name: self.ifname.clone(),
                })
            }
            Err(e) => return Err(SysError::io(format!("receiving on `{}`", self.ifname), e)),
        };
        let c = r.controls;
        Ok(Some(RecvMeta {
            len: r.len,
            software: c.software,
            hardware: c.hardware,
            outgoing: addr.sll_pkttype == PACKET_OUTGOING,
        }))
    }

    /// One non-blocking `recvmsg(MSG_ERRQUEUE)`.  `Ok(None)` when the error
    /// queue is empty.  Otherwise the looped-back frame is copied into
    /// `buf` (truncated to it) and its TX stamp returned; a stamp the kernel
    /// did not provide is `None`.  A non-timestamp error in the queue is
    /// returned as an error.  Does not allocate.
    pub fn recv_tx_timestamp(&self, buf: &mut [u8]) -> Result<Option<TxStamp>, SysError> {
        let r = recv_errqueue(self.fd.as_raw_fd(), buf).map_err(|e| {
            SysError::io(
                format!("reading the TX timestamp queue of `{}`", self.ifname),
                e,
            )
        })?;
        let Some(r) = r else { return Ok(None) };
        let c = r.controls;
        if let Some(err) = c.ext_err {
            if err.ee_origin != SO_EE_ORIGIN_TIMESTAMPING && err.ee_errno != libc::ENOMSG as u32 {
                return Err(SysError::io(
                    format!(
                        "the error queue of `{}` reported an error (origin {})",
                        self.ifname, err.ee_origin
                    ),
                    io::Error::from_raw_os_error(err.ee_errno as i32),
                ));
            }
        }
        Ok(Some(TxStamp {
            len: r.len.min(buf.len()),
            software: c.software,
            hardware: c.hardware,
        }))
    }
}

impl AsRawFd for PacketSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_missing_interface() {
        match PacketSocket::open("misura-nope1", 0x88B5) {
            Err(SysError::NoSuchInterface { name }) => assert_eq!(name, "misura-nope1"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    #[ignore = "needs root (CAP_NET_RAW / CAP_SYS_ADMIN)"]
    fn loopback_socket_options() {
        assert!(
            crate::host::is_root(),
            "needs root (CAP_NET_RAW / CAP_SYS_ADMIN): run as root with --include-ignored"
        );
        let s = PacketSocket::open("lo", 0x88B5).expect("open on lo");
        assert_eq!(s.interface_index(), 1);
        let g = s.enable_timestamping(true).expect("timestamping");
        assert!(
            g.software_tx && g.software_rx && !g.hardware_tx && !g.hardware_rx,
            "{g:?}"
        );
        s.set_qdisc_bypass(true).unwrap();
        s.set_ignore_outgoing(true).unwrap();
        assert!(s.set_recv_buffer(1 << 20).unwrap() >= 1 << 20);
        assert!(s.set_send_buffer(1 << 20).unwrap() >= 1 << 20);
        let mut buf = [0u8; 64];
        assert!(s.recv(&mut buf).unwrap().is_none());
        assert!(s.recv_tx_timestamp(&mut buf).unwrap().is_none());
    }
}
