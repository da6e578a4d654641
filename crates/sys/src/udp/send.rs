//! Sending: [`UdpTsSocket::send_to`], and from a chosen local address
//! (`IP_PKTINFO` / `IPV6_PKTINFO`).

use super::{is_icmp_pending, UdpTsSocket};
use crate::cmsg::{CmsgBuf, CMSG_BUF};
use crate::sockaddr::to_sockaddr;
use crate::SysError;
use std::io;
use std::mem::{size_of, zeroed};
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;

impl UdpTsSocket {
    /// Sends one datagram to `dst`.  `Ok(false)` when the socket buffer is
    /// full (EAGAIN/ENOBUFS): retry later.  Does not allocate.
    pub fn send_to(&self, buf: &[u8], dst: SocketAddr) -> Result<bool, SysError> {
        self.send_to_from(buf, dst, None)
    }

    /// Sends one datagram to `dst` from the local address `src`
    /// (`IP_PKTINFO` / `IPV6_PKTINFO` control message), for a reflector
    /// bound to a wildcard address to answer from the address the request
    /// was sent to ([`UdpRecvMeta::dst`]).  `None` lets the kernel choose,
    /// as [`UdpTsSocket::send_to`].  Does not allocate.
    pub fn send_to_from(
        &self,
        buf: &[u8],
        dst: SocketAddr,
        src: Option<IpAddr>,
    ) -> Result<bool, SysError> {
        if dst.is_ipv6() != self.is_v6() || src.is_some_and(|s| s.is_ipv6() != self.is_v6()) {
            return Err(SysError::invalid(format!(
                "sending to {dst}{} from a socket bound to {}: the address families differ (bind a socket of each family)",
                src.map(|s| format!(" from {s}")).unwrap_or_default(),
                self.local
            )));
        }
        let (ss, ss_len) = to_sockaddr(&dst);
        let connected = src.is_none() && self.peer == Some(dst);
        let mut cmsg = CmsgBuf::new();
        let mut iov = libc::iovec {
            iov_base: buf.as_ptr() as *mut libc::c_void,
            iov_len: buf.len(),
        };
        // SAFETY: msghdr is plain old data; all-zero is a valid value.
        let mut hdr: libc::msghdr = unsafe { zeroed() };
        if !connected {
            hdr.msg_name = &ss as *const libc::sockaddr_storage as *mut libc::c_void;
            hdr.msg_namelen = ss_len;
        }
        hdr.msg_iov = &mut iov;
        hdr.msg_iovlen = 1;
        if let Some(src) = src {
            let (level, ty, size) = match src {
                IpAddr::V4(_) => (
                    libc::IPPROTO_IP,
                    libc::IP_PKTINFO,
                    size_of::<libc::in_pktinfo>(),
                ),
                IpAddr::V6(_) => (
                    libc::IPPROTO_IPV6,
                    libc::IPV6_PKTINFO,
                    size_of::<libc::in6_pktinfo>(),
                ),
            };
            hdr.msg_control = cmsg.0.as_mut_ptr() as *mut libc::c_void;
            // SAFETY: CMSG_SPACE only computes a size.
            hdr.msg_controllen = unsafe { libc::CMSG_SPACE(size as u32) } as _;
            debug_assert!(hdr.msg_controllen as usize <= CMSG_BUF);
            // SAFETY: msg_control points at `cmsg`, 8-aligned and at least
            // msg_controllen (CMSG_SPACE of the payload) bytes long, so
            // CMSG_FIRSTHDR is non-null and header plus data fit in it.
            unsafe {
                let c = libc::CMSG_FIRSTHDR(&hdr);
                (*c).cmsg_level = level;
                (*c).cmsg_type = ty;
                (*c).cmsg_len = libc::CMSG_LEN(size as u32) as _;
                let data = libc::CMSG_DATA(c);
                match src {
                    IpAddr::V4(a) => std::ptr::write_unaligned(
                        data as *mut libc::in_pktinfo,
                        libc::in_pktinfo {
                            ipi_ifindex: 0,
                            ipi_spec_dst: libc::in_addr {
                                s_addr: u32::from(a).to_be(),
                            },
                            ipi_addr: libc::in_addr { s_addr: 0 },
                        },
                    ),
                    IpAddr::V6(a) => std::ptr::write_unaligned(
                        data as *mut libc::in6_pktinfo,
                        libc::in6_pktinfo {
                            ipi6_addr: libc::in6_addr {
                                s6_addr: a.octets(),
                            },
                            ipi6_ifindex: 0,
                        },
                    ),
                }
            }
        }
        let mut retried = false;
        loop {
            // SAFETY: every pointer in `hdr` refers to a live local (`ss`,
            // `iov` -> `buf`, `cmsg`) of the stated size for the whole call;
            // sendmsg only reads them.
            // MSG_DONTWAIT: a full send queue is Ok(false) even on a socket
            // switched to blocking mode for its receives.
            let n = unsafe { libc::sendmsg(self.fd.as_raw_fd(), &hdr, libc::MSG_DONTWAIT) };
            if n >= 0 {
                return Ok(true);
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::ENOBUFS) | Some(libc::EINTR) => return Ok(false),
                _ if is_icmp_pending(&e) && !retried => {
                    // An earlier ICMP error surfaced here (and was cleared
                    // by it); the datagram was not sent.  Once more.
                    retried = true;
                }
                Some(libc::EMSGSIZE) => {
                    return Err(SysError::io(
                        format!(
                            "sending a {}-byte datagram to {dst} (larger than the path MTU allows; see `ip link`)",
                            buf.len()
                        ),
                        e,
                    ))
                }
                Some(libc::EINVAL) if src.is_some() => {
                    return Err(SysError::io(
                        format!(
                            "sending to {dst} from {}: not a local address? (see `ip addr`)",
                            src.map(|s| s.to_string()).unwrap_or_default()
                        ),
                        e,
                    ))
                }
                _ => return Err(SysError::io(format!("sending a datagram to {dst}"), e)),
            }
        }
    }
}
