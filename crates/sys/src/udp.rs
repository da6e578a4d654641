//! A UDP socket for STAMP (RFC 8762) with kernel timestamps.
//!
//! * RX stamps come from the `SCM_TIMESTAMPING` control message of each
//!   received datagram, with the TTL / hop limit (`IP_RECVTTL`,
//!   `IPV6_RECVHOPLIMIT`) and the destination address of the IP header
//!   (`IP_PKTINFO`, `IPV6_RECVPKTINFO`), so a reflector bound to a wildcard
//!   can reply from the address the request was sent to
//!   ([`UdpTsSocket::send_to_from`]).
//! * TX stamps come from the error queue (`MSG_ERRQUEUE`), one message per
//!   sent datagram.  `SOF_TIMESTAMPING_OPT_TSONLY` means no payload comes
//!   back; `SOF_TIMESTAMPING_OPT_ID` numbers the datagrams (`ee_data`): 0 for
//!   the first datagram sent after timestamping was first enabled, +1 per
//!   datagram.  Match stamps to probes by that id.
//! * `IP_RECVERR` / `IPV6_RECVERR` are on, so ICMP errors (port or host
//!   unreachable) are queued on the error queue too; they are consumed
//!   silently by [`UdpTsSocket::recv_tx_timestamp`] and counted
//!   ([`UdpTsSocket::take_icmp_errors`]).  The kernel also raises such an
//!   error once as the result of the next `send`/`recv`; those calls retry
//!   once on the ICMP-derived errnos so the caller does not see it.

use crate::fd::{cvt, IntOption};
use misura_time::Instant;
use std::cell::Cell;
use std::io;
use std::mem::{size_of, zeroed};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

use crate::cmsg::{
    SOF_OPT_ID, SOF_OPT_TSONLY, SOF_OPT_TX_SWHW, SOF_RAW_HARDWARE, SOF_RX_HARDWARE,
    SOF_RX_SOFTWARE, SOF_SOFTWARE, SOF_TX_HARDWARE, SOF_TX_SOFTWARE, SO_TIMESTAMPING_OLD,
};
use crate::error::is_perm;
use crate::packet::TimestampingGranted;
use crate::sockaddr::{from_sockaddr, to_sockaddr};
use crate::SysError;

mod receive;
mod send;

/// What one [`UdpTsSocket::recv_from`] got.
#[derive(Copy, Clone, Debug)]
pub struct UdpRecvMeta {
    /// The datagram's real length.  If it is larger than the buffer given
    /// to [`UdpTsSocket::recv_from`], the datagram was truncated to it.
    pub len: usize,
    /// The sender.
    pub src: SocketAddr,
    /// Kernel software RX stamp (`CLOCK_REALTIME` ns), if any.
    pub software: Option<Instant>,
    /// Raw hardware RX stamp (the NIC's PHC, ns), if any.
    pub hardware: Option<Instant>,
    /// IPv4 TTL or IPv6 hop limit of the received packet, if reported.
    pub ttl_or_hoplimit: Option<u8>,
    /// The destination address of the IP header (`IP_PKTINFO` /
    /// `IPV6_PKTINFO`), if reported.
    pub dst: Option<IpAddr>,
}

impl Default for UdpRecvMeta {
    fn default() -> Self {
        UdpRecvMeta {
            len: 0,
            src: SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0)),
            software: None,
            hardware: None,
            ttl_or_hoplimit: None,
            dst: None,
        }
    }
}

impl UdpRecvMeta {
    /// True when the datagram did not fit in a buffer of `buf_len` bytes.
    pub fn truncated(&self, buf_len: usize) -> bool {
        self.len > buf_len
    }
}

/// A TX timestamp from the error queue.
#[derive(Copy, Clone, Debug)]
pub struct UdpTxStamp {
    /// The `SOF_TIMESTAMPING_OPT_ID` counter of the datagram: 0 for the
    /// first datagram sent after timestamping was enabled, +1 per datagram
    /// (wrapping).  Enabling again does not reset it.
    pub id: u32,
    /// Kernel software TX stamp (`CLOCK_REALTIME` ns), if any.
    pub software: Option<Instant>,
    /// Raw hardware TX stamp (PHC ns), if any.
    pub hardware: Option<Instant>,
}

/// A UDP socket (IPv4 or IPv6-only) with kernel timestamps.  Not `Sync`
/// (the ICMP error counter is a `Cell`); use one socket per thread.
#[derive(Debug)]
pub struct UdpTsSocket {
    fd: OwnedFd,
    local: SocketAddr,
    icmp_errors: Cell<u64>,
    /// The peer set with [`UdpTsSocket::connect`]: sends to it go without
    /// an address (no route lookup per datagram).
    peer: Option<SocketAddr>,
}

/// Errnos an ICMP error leaves pending on the socket (`sk_err`) with
/// `IP_RECVERR`: the next send or receive fails once with it.
fn is_icmp_pending(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ECONNREFUSED)
            | Some(libc::EHOSTUNREACH)
            | Some(libc::ENETUNREACH)
            | Some(libc::EHOSTDOWN)
            | Some(libc::EPROTO)
    )
}

impl UdpTsSocket {
    /// Opens a non-blocking UDP socket bound to `addr` (IPv4, or IPv6 with
    /// `IPV6_V6ONLY` on: bind both families to serve both), with
    /// `SO_REUSEADDR`.  Port 0 picks a free port ([`UdpTsSocket::local_addr`]).
    /// A port below `net.ipv4.ip_unprivileged_port_start` (1024), such as
    /// STAMP's 862, needs `CAP_NET_BIND_SERVICE`.
    pub fn bind(addr: SocketAddr) -> Result<UdpTsSocket, SysError> {
        let family = match addr {
            SocketAddr::V4(_) => libc::AF_INET,
            SocketAddr::V6(_) => libc::AF_INET6,
        };
        // SAFETY: plain socket(2) call with constant arguments.
        let raw = unsafe {
            libc::socket(
                family,
                libc::SOCK_DGRAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        };
        if raw < 0 {
            let e = io::Error::last_os_error();
            return Err(if e.raw_os_error() == Some(libc::EAFNOSUPPORT) {
                SysError::Unsupported {
                    what: format!("a UDP socket for {addr}"),
                    why: "the kernel has no support for this address family (IPv6 disabled?)"
                        .into(),
                }
            } else {
                SysError::io(format!("opening a UDP socket for {addr}"), e)
            });
        }
        // SAFETY: `raw` was just returned by socket(2) and is owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let mut sock = UdpTsSocket {
            fd,
            local: addr,
            icmp_errors: Cell::new(0),
            peer: None,
        };
        sock.set_int(libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)
            .map_err(|e| SysError::io("setting SO_REUSEADDR", e))?;
        if family == libc::AF_INET6 {
            sock.set_int(libc::IPPROTO_IPV6, libc::IPV6_V6ONLY, 1)
                .map_err(|e| SysError::io("setting IPV6_V6ONLY", e))?;
        }
        let (ss, len) = to_sockaddr(&addr);
        // SAFETY: `ss` holds a valid sockaddr of `len` bytes.
        let rc = unsafe {
            libc::bind(
                sock.fd.as_raw_fd(),
                &ss as *const libc::sockaddr_storage as *const libc::sockaddr,
                len,
            )
        };
        cvt(rc).map_err(|e| {
            if is_perm(&e) {
                SysError::PrivilegedPort { port: addr.port() }
            } else {
                match e.raw_os_error() {
                    Some(libc::EADDRINUSE) => SysError::PortInUse { addr, source: e },
                    Some(libc::EADDRNOTAVAIL) => SysError::io(
                        format!("binding {addr}: no interface has this address (see `ip addr`)"),
                        e,
                    ),
                    _ => SysError::io(format!("binding {addr}"), e),
                }
            }
        })?;
        sock.local = sock.read_local_addr()?;
        Ok(sock)
    }

    fn read_local_addr(&self) -> Result<SocketAddr, SysError> {
        // SAFETY: sockaddr_storage is plain old data; all-zero is a valid value.
        let mut ss: libc::sockaddr_storage = unsafe { zeroed() };
        let mut len = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        // SAFETY: `ss` and `len` are valid and writable; `len` holds the buffer size.
        let rc = unsafe {
            libc::getsockname(
                self.fd.as_raw_fd(),
                &mut ss as *mut libc::sockaddr_storage as *mut libc::sockaddr,
                &mut len,
            )
        };
        cvt(rc).map_err(|e| SysError::io("reading the bound UDP address", e))?;
        from_sockaddr(&ss, len).ok_or_else(|| SysError::invalid("the bound UDP address is not IP"))
    }

    /// The bound address (with the port the kernel picked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    fn is_v6(&self) -> bool {
        self.local.is_ipv6()
    }

    /// The raw file descriptor (for poll/epoll).
    pub fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Switches `O_NONBLOCK`.  The socket starts non-blocking; when
    /// blocking, [`UdpTsSocket::recv_from`] waits for a datagram and
    /// [`UdpTsSocket::send_to`] for buffer room.  The error queue never
    /// blocks.
    pub fn set_nonblocking(&self, on: bool) -> Result<(), SysError> {
        // SAFETY: fcntl(F_GETFL) on a file descriptor we own.
        let flags = unsafe { libc::fcntl(self.fd.as_raw_fd(), libc::F_GETFL) };
        let flags = cvt(flags).map_err(|e| SysError::io("reading the socket flags", e))?;
        let new = if on {
            flags | libc::O_NONBLOCK
        } else {
            flags & !libc::O_NONBLOCK
        };
        if new != flags {
            // SAFETY: fcntl(F_SETFL) with an int argument on a file descriptor we own.
            let rc = unsafe { libc::fcntl(self.fd.as_raw_fd(), libc::F_SETFL, new) };
            cvt(rc).map_err(|e| SysError::io("setting O_NONBLOCK", e))?;
        }
        Ok(())
    }

    /// `connect(2)`: the kernel keeps the route to `peer` and drops
    /// datagrams from anyone else; [`UdpTsSocket::send_to`] `peer` then
    /// sends without an address (no route lookup per datagram). The local
    /// address becomes the one the route chose.
    pub fn connect(&mut self, peer: SocketAddr) -> Result<(), SysError> {
        if peer.is_ipv6() != self.is_v6() {
            return Err(SysError::invalid(format!(
                "connecting a socket bound to {} to {peer}: the address families differ",
                self.local
            )));
        }
        let (ss, len) = to_sockaddr(&peer);
        // SAFETY: `ss` is a valid sockaddr of `len` bytes for the call.
        let rc = unsafe {
            libc::connect(
                self.fd.as_raw_fd(),
                &ss as *const libc::sockaddr_storage as *const libc::sockaddr,
                len,
            )
        };
        cvt(rc).map_err(|e| SysError::io(format!("connecting UDP {} to {peer}", self.local), e))?;
        self.peer = Some(peer);
        self.local = self.read_local_addr()?;
        Ok(())
    }

    /// Blocking receives ([`UdpTsSocket::set_nonblocking`]`(false)`) give
    /// up after `d` and return `Ok(None)`, so a loop that blocks in
    /// [`UdpTsSocket::recv_from`] still looks at its stop flag that often.
    /// The kernel rounds `d` up to its tick (1–10 ms): not a timer.
    pub fn set_recv_timeout(&self, d: Duration) -> Result<(), SysError> {
        crate::fd::set_recv_timeout(self.fd.as_raw_fd(), d)
            .map_err(|e| SysError::io("setting the receive timeout (SO_RCVTIMEO)", e))
    }

    /// Sets `SO_RCVBUF` (forcing past `net.core.rmem_max` when allowed) and
    /// returns the size granted: a server's queue that rides out bursts.
    pub fn set_recv_buffer(&self, bytes: usize) -> Result<usize, SysError> {
        crate::fd::set_socket_buffer(
            self.fd.as_raw_fd(),
            libc::SO_RCVBUF,
            libc::SO_RCVBUFFORCE,
            bytes,
        )
        .map_err(|e| SysError::io(format!("setting SO_RCVBUF to {bytes} bytes"), e))
    }

    /// `SO_BUSY_POLL`: a receive that finds the queue empty polls the
    /// device's queue for up to `usecs` µs before it sleeps or returns
    /// (only drivers with NAPI busy polling take part; veth does not).
    /// Raising it above `net.core.busy_read` needs CAP_NET_ADMIN; the
    /// kernel's refusal is returned as is.
    pub fn set_busy_poll(&self, usecs: u32) -> Result<(), SysError> {
        let v = libc::c_int::try_from(usecs).unwrap_or(libc::c_int::MAX);
        self.set_int(libc::SOL_SOCKET, libc::SO_BUSY_POLL, v)
            .map_err(|e| SysError::io(format!("setting SO_BUSY_POLL to {usecs} µs"), e))
    }

    /// Turns on `SO_TIMESTAMPING` with `TX_SOFTWARE | RX_SOFTWARE |
    /// SOFTWARE | OPT_ID | OPT_TSONLY`, plus `TX_HARDWARE | RX_HARDWARE |
    /// RAW_HARDWARE` when `want_hardware` (taken at the caller's word: the
    /// egress device is not known here; it must have been switched on with
    /// [`crate::tsinfo::enable_hw_timestamping`]), with `OPT_TX_SWHW`: a
    /// datagram stamped in hardware also gets its software TX stamp, in a
    /// second error-queue message with the same id (the software one comes
    /// first, at the driver; the NIC's later).  Also turns
    /// on the TTL / hop limit and pktinfo control messages and
    /// `IP_RECVERR` / `IPV6_RECVERR`.
    ///
    /// The OPT_ID counter starts at 0 the first time this is called;
    /// calling it again does not reset the counter.
    pub fn enable_timestamping(
        &self,
        want_hardware: bool,
    ) -> Result<TimestampingGranted, SysError> {
        let granted = self.enable_stamps(want_hardware)?;
        self.enable_control_messages(ReceiveInfo::ALL)?;
        Ok(granted)
    }

    /// [`UdpTsSocket::enable_timestamping`]'s stamps alone, without the
    /// control messages (for a caller that chooses those itself).
    pub fn enable_stamps(&self, want_hardware: bool) -> Result<TimestampingGranted, SysError> {
        let mut flags =
            SOF_TX_SOFTWARE | SOF_RX_SOFTWARE | SOF_SOFTWARE | SOF_OPT_ID | SOF_OPT_TSONLY;
        if want_hardware {
            flags |= SOF_TX_HARDWARE | SOF_RX_HARDWARE | SOF_RAW_HARDWARE | SOF_OPT_TX_SWHW;
        }
        self.set_int(libc::SOL_SOCKET, SO_TIMESTAMPING_OLD, flags as libc::c_int)
            .map_err(|e| {
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ENOPROTOOPT) | Some(libc::EINVAL)
                ) {
                    SysError::Unsupported {
                        what: "SO_TIMESTAMPING with OPT_ID and OPT_TSONLY on UDP".into(),
                        why: format!("the kernel refused it ({e}); Linux 4.0 or later is needed"),
                    }
                } else {
                    SysError::io(format!("enabling SO_TIMESTAMPING on UDP {}", self.local), e)
                }
            })?;
        // Read back what the kernel kept.
        let got = self
            .get_int(libc::SOL_SOCKET, SO_TIMESTAMPING_OLD)
            .map(|v| v as u32)
            .unwrap_or(flags);
        let hw = want_hardware && got & SOF_RAW_HARDWARE != 0;
        Ok(TimestampingGranted {
            software_tx: got & SOF_TX_SOFTWARE != 0 && got & SOF_SOFTWARE != 0,
            software_rx: got & SOF_RX_SOFTWARE != 0 && got & SOF_SOFTWARE != 0,
            hardware_tx: hw && got & SOF_TX_HARDWARE != 0,
            hardware_rx: hw && got & SOF_RX_HARDWARE != 0,
        })
    }

    /// `IP_RECVERR` / `IPV6_RECVERR` (ICMP errors on the error queue) and
    /// the TTL / hop limit and pktinfo control messages that `info` asks
    /// for, without kernel timestamps. Each costs every receive a control
    /// message copied out, so a reader asks only for what it uses (a
    /// connected client: neither; a reflector bound to one address: the TTL,
    /// its replies leaving from that address anyway).
    pub fn enable_control_messages(&self, info: ReceiveInfo) -> Result<(), SysError> {
        let [err, ttl, pktinfo] = if self.is_v6() {
            [
                (libc::IPPROTO_IPV6, libc::IPV6_RECVERR, "IPV6_RECVERR"),
                (
                    libc::IPPROTO_IPV6,
                    libc::IPV6_RECVHOPLIMIT,
                    "IPV6_RECVHOPLIMIT",
                ),
                (
                    libc::IPPROTO_IPV6,
                    libc::IPV6_RECVPKTINFO,
                    "IPV6_RECVPKTINFO",
                ),
            ]
        } else {
            [
                (libc::IPPROTO_IP, libc::IP_RECVERR, "IP_RECVERR"),
                (libc::IPPROTO_IP, libc::IP_RECVTTL, "IP_RECVTTL"),
                (libc::IPPROTO_IP, libc::IP_PKTINFO, "IP_PKTINFO"),
            ]
        };
        self.set_options_on(&[err])?;
        if info.ttl {
            self.set_options_on(&[ttl])?;
        }
        if info.pktinfo {
            self.set_options_on(&[pktinfo])?;
        }
        Ok(())
    }

    /// Sets each boolean socket option of `opts` to 1.
    fn set_options_on(&self, opts: &[(libc::c_int, libc::c_int, &str)]) -> Result<(), SysError> {
        for &(level, name, what) in opts {
            self.set_int(level, name, 1)
                .map_err(|e| SysError::io(format!("setting {what} on UDP {}", self.local), e))?;
        }
        Ok(())
    }
}

/// The control messages besides stamps a receive carries
/// ([`UdpTsSocket::enable_control_messages`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReceiveInfo {
    /// The request's TTL / hop limit (a STAMP reflector reports it).
    pub ttl: bool,
    /// The address the datagram was sent to (`IP_PKTINFO`): what a socket
    /// on the wildcard address answers from.
    pub pktinfo: bool,
}

impl ReceiveInfo {
    /// Neither.
    pub const NONE: ReceiveInfo = ReceiveInfo {
        ttl: false,
        pktinfo: false,
    };
    /// Both.
    pub const ALL: ReceiveInfo = ReceiveInfo {
        ttl: true,
        pktinfo: true,
    };
}

/// What [`UdpTsSocket::wait`] found ready (both false: the time ran out).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ready {
    /// A datagram is queued.
    pub data: bool,
    /// The error queue holds a TX stamp or an ICMP error.
    pub error_queue: bool,
}

impl AsRawFd for UdpTsSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn family_mismatch_is_an_error() {
        let s = UdpTsSocket::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        assert!(s.send_to(b"x", "[::1]:9".parse().unwrap()).is_err());
        assert!(s
            .send_to_from(
                b"x",
                "127.0.0.1:9".parse().unwrap(),
                Some("::1".parse().unwrap())
            )
            .is_err());
    }
}
