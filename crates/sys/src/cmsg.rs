//! Control messages (`cmsg`) shared by the packet and UDP sockets: the
//! `SO_TIMESTAMPING` constants, a control buffer, `struct
//! sock_extended_err`, one decoder, and the one `recvmsg(2)` both sockets
//! read with ([`recv_msg`]), their error queues included ([`recv_errqueue`]).
//!
//! Control messages are decoded by type, as in quinn-udp: anything not
//! recognised is skipped, and a missing timestamp is reported as `None`
//! rather than an error, so the caller can record what it really got.

use misura_time::Instant;
use std::io;
use std::mem::{size_of, zeroed};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::RawFd;

pub(crate) const SOL_PACKET: libc::c_int = 263;
pub(crate) const PACKET_TX_TIMESTAMP: libc::c_int = 16;

pub(crate) const SO_TIMESTAMPING_OLD: libc::c_int = 37;
pub(crate) const SO_TIMESTAMPING_NEW: libc::c_int = 65;

/// `ee_origin` values of `struct sock_extended_err`.
pub(crate) const SO_EE_ORIGIN_ICMP: u8 = 2;
pub(crate) const SO_EE_ORIGIN_ICMP6: u8 = 3;
pub(crate) const SO_EE_ORIGIN_TIMESTAMPING: u8 = 4;

pub(crate) const SOF_TX_HARDWARE: u32 = 1 << 0;
pub(crate) const SOF_TX_SOFTWARE: u32 = 1 << 1;
pub(crate) const SOF_RX_HARDWARE: u32 = 1 << 2;
pub(crate) const SOF_RX_SOFTWARE: u32 = 1 << 3;
pub(crate) const SOF_SOFTWARE: u32 = 1 << 4;
pub(crate) const SOF_RAW_HARDWARE: u32 = 1 << 6;
pub(crate) const SOF_OPT_ID: u32 = 1 << 7;
pub(crate) const SOF_OPT_TSONLY: u32 = 1 << 11;
/// A hardware-stamped send also gets its software TX stamp (a second
/// error-queue message with the same OPT_ID).
pub(crate) const SOF_OPT_TX_SWHW: u32 = 1 << 14;

/// Room for every control message we ask for (a timestamping message is
/// 64 bytes, an extended error 48, plus TTL and pktinfo) with margin;
/// 8-aligned for `cmsghdr`.
pub(crate) const CMSG_BUF: usize = 512;
#[repr(C, align(8))]
pub(crate) struct CmsgBuf(pub(crate) [u8; CMSG_BUF]);

impl CmsgBuf {
    pub(crate) fn new() -> CmsgBuf {
        CmsgBuf([0; CMSG_BUF])
    }
}

/// `struct sock_extended_err`.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default)]
pub(crate) struct SockExtendedErr {
    pub(crate) ee_errno: u32,
    pub(crate) ee_origin: u8,
    pub(crate) ee_type: u8,
    pub(crate) ee_code: u8,
    pub(crate) ee_pad: u8,
    pub(crate) ee_info: u32,
    pub(crate) ee_data: u32,
}

/// The control messages of one `recvmsg`, decoded by type; unknown ones
/// are skipped.
#[derive(Default, Debug)]
pub(crate) struct Controls {
    /// `SCM_TIMESTAMPING` slot 0 (software, `CLOCK_REALTIME`).
    pub(crate) software: Option<Instant>,
    /// `SCM_TIMESTAMPING` slot 2 (raw hardware).
    pub(crate) hardware: Option<Instant>,
    /// `PACKET_TX_TIMESTAMP`, `IP_RECVERR` or `IPV6_RECVERR`.
    pub(crate) ext_err: Option<SockExtendedErr>,
    /// `IP_TTL` (from `IP_RECVTTL`) or `IPV6_HOPLIMIT`.
    pub(crate) ttl: Option<u8>,
    /// The destination address of the IP header (`IP_PKTINFO`'s
    /// `ipi_addr`, `IPV6_PKTINFO`'s `ipi6_addr`).
    pub(crate) dst: Option<IpAddr>,
}

/// A timestamp of zero means "not set" in `SCM_TIMESTAMPING`.
fn nonzero(sec: i64, nsec: i64) -> Option<i64> {
    (sec != 0 || nsec != 0).then(|| crate::clock::timespec_ns(sec, nsec))
}

impl Controls {
    pub(crate) fn parse(hdr: &libc::msghdr) -> Controls {
        let mut out = Controls::default();
        if hdr.msg_control.is_null() || (hdr.msg_controllen as usize) < size_of::<libc::cmsghdr>() {
            return out;
        }
        // SAFETY: `hdr` was filled by a successful recvmsg; msg_control and
        // msg_controllen describe a live buffer holding well-formed cmsgs.
        let mut cmsg = unsafe { libc::CMSG_FIRSTHDR(hdr) };
        let mut guard = 0;
        while !cmsg.is_null() && guard < 16 {
            guard += 1;
            // SAFETY: `cmsg` is non-null and was returned by CMSG_FIRSTHDR or
            // CMSG_NXTHDR, which keep it inside the control buffer.
            let (level, ty, len) = unsafe {
                (
                    (*cmsg).cmsg_level,
                    (*cmsg).cmsg_type,
                    (*cmsg).cmsg_len as usize,
                )
            };
            // SAFETY: CMSG_LEN only computes a size.
            let header = unsafe { libc::CMSG_LEN(0) } as usize;
            let data_len = len.saturating_sub(header);
            // SAFETY: `cmsg` is a valid cmsghdr in the buffer; CMSG_DATA
            // points just past its header.
            let data = unsafe { libc::CMSG_DATA(cmsg) };
            match (level, ty) {
                (libc::SOL_SOCKET, SO_TIMESTAMPING_OLD)
                    if data_len >= 3 * size_of::<libc::timespec>() =>
                {
                    // SAFETY: the kernel wrote three `struct timespec` here
                    // (length checked above); read unaligned to be safe.
                    let ts: [libc::timespec; 3] =
                        unsafe { std::ptr::read_unaligned(data as *const [libc::timespec; 3]) };
                    out.software =
                        nonzero(ts[0].tv_sec as i64, ts[0].tv_nsec as i64).map(Instant::from_ns);
                    out.hardware =
                        nonzero(ts[2].tv_sec as i64, ts[2].tv_nsec as i64).map(Instant::from_ns);
                }
                (libc::SOL_SOCKET, SO_TIMESTAMPING_NEW) if data_len >= 3 * 16 => {
                    // SAFETY: the kernel wrote three `struct __kernel_timespec`
                    // (two i64 each) here (length checked above).
                    let ts: [[i64; 2]; 3] =
                        unsafe { std::ptr::read_unaligned(data as *const [[i64; 2]; 3]) };
                    out.software = nonzero(ts[0][0], ts[0][1]).map(Instant::from_ns);
                    out.hardware = nonzero(ts[2][0], ts[2][1]).map(Instant::from_ns);
                }
                (SOL_PACKET, PACKET_TX_TIMESTAMP)
                | (libc::SOL_IP, libc::IP_RECVERR)
                | (libc::SOL_IPV6, libc::IPV6_RECVERR)
                    if data_len >= size_of::<SockExtendedErr>() =>
                {
                    // SAFETY: the kernel wrote a `struct sock_extended_err`
                    // here (length checked above).
                    out.ext_err =
                        Some(unsafe { std::ptr::read_unaligned(data as *const SockExtendedErr) });
                }
                (libc::SOL_IP, libc::IP_TTL) | (libc::SOL_IPV6, libc::IPV6_HOPLIMIT)
                    if data_len >= size_of::<libc::c_int>() =>
                {
                    // SAFETY: the kernel wrote one `int` here (length checked).
                    let v = unsafe { std::ptr::read_unaligned(data as *const libc::c_int) };
                    out.ttl = u8::try_from(v).ok();
                }
                (libc::SOL_IP, libc::IP_PKTINFO) if data_len >= size_of::<libc::in_pktinfo>() => {
                    // SAFETY: the kernel wrote a `struct in_pktinfo` here
                    // (length checked above).
                    let pi = unsafe { std::ptr::read_unaligned(data as *const libc::in_pktinfo) };
                    out.dst = Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(pi.ipi_addr.s_addr))));
                }
                (libc::SOL_IPV6, libc::IPV6_PKTINFO)
                    if data_len >= size_of::<libc::in6_pktinfo>() =>
                {
                    // SAFETY: the kernel wrote a `struct in6_pktinfo` here
                    // (length checked above).
                    let pi = unsafe { std::ptr::read_unaligned(data as *const libc::in6_pktinfo) };
                    out.dst = Some(IpAddr::V6(Ipv6Addr::from(pi.ipi6_addr.s6_addr)));
                }
                _ => {}
            }
            // SAFETY: `hdr` describes the control buffer and `cmsg` is in it;
            // CMSG_NXTHDR returns null past the end.
            cmsg = unsafe { libc::CMSG_NXTHDR(hdr, cmsg) };
        }
        out
    }
}

/// A socket address the kernel may fill in on receive.
///
/// # Safety
/// Plain old data: every bit pattern, all-zero included, is a valid value.
pub(crate) unsafe trait SockAddrBuf: Copy {
    /// All zero, for the kernel to fill.
    fn zeroed() -> Self {
        // SAFETY: the trait's contract: all-zero is a valid value.
        unsafe { zeroed() }
    }
}
// SAFETY: C structs of integers and byte arrays.
unsafe impl SockAddrBuf for libc::sockaddr_storage {}
// SAFETY: a C struct of integers and a byte array.
unsafe impl SockAddrBuf for libc::sockaddr_ll {}

/// What one [`recv_msg`] got.
pub(crate) struct Received {
    /// The return value of `recvmsg`: with `MSG_TRUNC`, the real length of
    /// the datagram or frame (larger than the buffer if truncated).
    pub(crate) len: usize,
    /// Its control messages, decoded.
    pub(crate) controls: Controls,
    /// How much of the address buffer the kernel filled (0 without one).
    pub(crate) name_len: libc::socklen_t,
}

/// One `recvmsg(2)` on `fd` into `buf`, with room for every control
/// message we ask for ([`CMSG_BUF`]) and, when `name` is given, the
/// sender's address written into it.  The errno as is on failure (EAGAIN
/// included: the caller knows what an empty queue means to it).  Does not
/// allocate.
pub(crate) fn recv_msg<A: SockAddrBuf>(
    fd: RawFd,
    buf: &mut [u8],
    name: Option<&mut A>,
    flags: libc::c_int,
) -> io::Result<Received> {
    let mut cmsg = CmsgBuf::new();
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    // SAFETY: msghdr is plain old data; all-zero is a valid value.
    let mut hdr: libc::msghdr = unsafe { zeroed() };
    if let Some(name) = name {
        hdr.msg_name = name as *mut A as *mut libc::c_void;
        hdr.msg_namelen = size_of::<A>() as libc::socklen_t;
    }
    hdr.msg_iov = &mut iov;
    hdr.msg_iovlen = 1;
    hdr.msg_control = cmsg.0.as_mut_ptr() as *mut libc::c_void;
    hdr.msg_controllen = CMSG_BUF as _;
    // SAFETY: every pointer in `hdr` refers to a live buffer of the stated
    // size for the whole call (`name`, a plain-old-data address of
    // `msg_namelen` bytes; `iov` -> `buf`; `cmsg`).
    let n = unsafe { libc::recvmsg(fd, &mut hdr, flags) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Received {
        len: n as usize,
        controls: Controls::parse(&hdr),
        name_len: hdr.msg_namelen,
    })
}

/// One message from the socket's error queue (`MSG_ERRQUEUE`, never
/// blocks): a TX stamp (kernel or hardware, or both: `OPT_TX_SWHW` sends
/// them in two messages) or a queued error, with its payload (the sent
/// frame, or nothing with `OPT_TSONLY`) copied into `buf`, truncated to
/// it.  `Ok(None)` when the queue is empty.  Does not allocate.
pub(crate) fn recv_errqueue(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<Received>> {
    let flags = libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT;
    match recv_msg::<libc::sockaddr_storage>(fd, buf, None, flags) {
        Ok(r) => Ok(Some(r)),
        Err(e) if crate::fd::is_again(&e) => Ok(None),
        Err(e) => Err(e),
    }
}
