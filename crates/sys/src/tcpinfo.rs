//! What the kernel knows about one connected socket: `TCP_INFO`
//! (retransmissions, smoothed RTT, congestion window, path MTU) and, for
//! UDP, the path MTU (`IP_MTU`) and the don't-fragment policy
//! (`IP_MTU_DISCOVER`).

use crate::SysError;
use std::os::fd::{AsFd, AsRawFd};

/// The fields of `struct tcp_info` misura reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// Segments retransmitted over the connection's life (`tcpi_total_retrans`).
    pub total_retrans: u32,
    /// Smoothed RTT and its mean deviation, microseconds (`tcpi_rtt`, `tcpi_rttvar`).
    pub rtt_us: u32,
    pub rttvar_us: u32,
    /// Minimum RTT seen, microseconds (`tcpi_min_rtt`; 0 on kernels before 4.6).
    pub min_rtt_us: u32,
    /// Congestion window, segments, and the sender's MSS, bytes.
    pub snd_cwnd: u32,
    pub snd_mss: u32,
    /// Path MTU the connection uses, bytes.
    pub pmtu: u32,
    /// Bytes acknowledged by the peer / received from it (kernel ≥ 4.1 / 4.2).
    pub bytes_acked: u64,
    pub bytes_received: u64,
}

/// `getsockopt(TCP_INFO)` on a TCP socket.
pub fn tcp_info(sock: &impl AsFd) -> Result<TcpInfo, SysError> {
    let fd = sock.as_fd().as_raw_fd();
    // SAFETY: `tcp_info` is a plain C struct; all-zero is a valid value.
    let mut ti: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `fd` is a valid descriptor borrowed for the call; `ti` is a
    // writable buffer of `len` bytes and the kernel writes at most `len`.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut ti as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(SysError::Io {
            what: "getsockopt(TCP_INFO)".into(),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(TcpInfo {
        total_retrans: ti.tcpi_total_retrans,
        rtt_us: ti.tcpi_rtt,
        rttvar_us: ti.tcpi_rttvar,
        min_rtt_us: ti.tcpi_min_rtt,
        snd_cwnd: ti.tcpi_snd_cwnd,
        snd_mss: ti.tcpi_snd_mss,
        pmtu: ti.tcpi_pmtu,
        bytes_acked: ti.tcpi_bytes_acked,
        bytes_received: ti.tcpi_bytes_received,
    })
}

fn getsockopt_int(
    sock: &impl AsFd,
    level: libc::c_int,
    opt: libc::c_int,
    what: &str,
) -> Result<i32, SysError> {
    crate::fd::get_int(sock.as_fd().as_raw_fd(), level, opt).map_err(|source| SysError::Io {
        what: what.into(),
        source,
    })
}

fn setsockopt_int(
    sock: &impl AsFd,
    level: libc::c_int,
    opt: libc::c_int,
    v: libc::c_int,
    what: &str,
) -> Result<(), SysError> {
    crate::fd::set_int(sock.as_fd().as_raw_fd(), level, opt, v).map_err(|source| SysError::Io {
        what: what.into(),
        source,
    })
}

/// The path MTU the kernel holds for a *connected* IPv4 socket (`IP_MTU`),
/// or for IPv6 (`IPV6_MTU`) when `ipv6`.
pub fn path_mtu(sock: &impl AsFd, ipv6: bool) -> Result<u32, SysError> {
    let v = if ipv6 {
        getsockopt_int(
            sock,
            libc::IPPROTO_IPV6,
            libc::IPV6_MTU,
            "getsockopt(IPV6_MTU) (is the socket connected?)",
        )?
    } else {
        getsockopt_int(
            sock,
            libc::IPPROTO_IP,
            libc::IP_MTU,
            "getsockopt(IP_MTU) (is the socket connected?)",
        )?
    };
    Ok(v.max(0) as u32)
}

/// Don't fragment: `IP_MTU_DISCOVER = IP_PMTUDISC_DO` (IPv4) or
/// `IPV6_MTU_DISCOVER = IPV6_PMTUDISC_DO` (IPv6). A datagram larger than the
/// path MTU then fails with `EMSGSIZE` instead of leaving in fragments.
pub fn set_dont_fragment(sock: &impl AsFd, ipv6: bool) -> Result<(), SysError> {
    if ipv6 {
        setsockopt_int(
            sock,
            libc::IPPROTO_IPV6,
            libc::IPV6_MTU_DISCOVER,
            libc::IPV6_PMTUDISC_DO,
            "setsockopt(IPV6_MTU_DISCOVER)",
        )
    } else {
        setsockopt_int(
            sock,
            libc::IPPROTO_IP,
            libc::IP_MTU_DISCOVER,
            libc::IP_PMTUDISC_DO,
            "setsockopt(IP_MTU_DISCOVER)",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn tcp_info_of_a_loopback_connection() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut s, _) = l.accept().unwrap();
        c.write_all(&[7u8; 10_000]).unwrap();
        let mut buf = vec![0u8; 10_000];
        s.read_exact(&mut buf).unwrap();
        let ti = tcp_info(&c).unwrap();
        assert!(ti.snd_mss > 0 && ti.pmtu > 0, "{ti:?}");
        let got = tcp_info(&s).unwrap();
        assert!(
            got.bytes_received >= 10_000 || got.bytes_received == 0,
            "{got:?}"
        );
    }

    #[test]
    fn udp_path_mtu_and_df() {
        let u = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        assert!(path_mtu(&u, false).is_err(), "unconnected: no path MTU");
        u.connect("127.0.0.1:9").unwrap();
        set_dont_fragment(&u, false).unwrap();
        let mtu = path_mtu(&u, false).unwrap();
        assert!(mtu >= 1280, "{mtu}");
        // Above the path MTU with DF set the send fails locally.
        let e = u.send(&vec![0u8; mtu as usize + 100]).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EMSGSIZE));
    }
}
