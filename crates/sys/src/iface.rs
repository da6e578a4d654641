//! Facts about one network interface.
//!
//! Everything is read through sockets created by the calling thread (ioctls,
//! ethtool, rtnetlink), so the answers are those of the thread's network
//! namespace — also after [`crate::netns::enter`], where `/sys/class/net`
//! still shows the namespace that mounted sysfs.  `/sys` is used only as a
//! fallback, and only after checking that its `ifindex` matches.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::sys::{self, EthtoolCmd, EthtoolErr, IfReq};
use crate::SysError;

/// What misura needs to know about an interface.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InterfaceInfo {
    /// Interface name.
    pub name: String,
    /// Interface index in its namespace.
    pub index: u32,
    /// Link-layer address (zero if the link has none of 6 bytes).
    pub mac: [u8; 6],
    /// MTU in bytes.
    pub mtu: u32,
    /// Operationally up (operstate `up`, or `unknown` with the link running,
    /// as for loopback and some virtual drivers).
    pub oper_up: bool,
    /// Administratively up (`IFF_UP`).
    pub admin_up: bool,
    /// RFC 2863 operstate as `ip link` prints it, lowercase: `up`, `down`,
    /// `lowerlayerdown`, `dormant`, `testing`, `notpresent`, `unknown`.
    pub operstate: String,
    /// Link speed in Mb/s; `None` when unknown (-1) or unreadable.
    pub speed_mbps: Option<u64>,
    /// Driver name (`ETHTOOL_GDRVINFO`, else the `/sys` driver link); veth
    /// reports `veth`.
    pub driver: Option<String>,
}

const IFF_UP: u32 = 0x1;
const IFF_RUNNING: u32 = 0x40;

/// The index of `name` in the calling thread's namespace.
pub fn interface_index(name: &str) -> Result<u32, SysError> {
    let fd = sys::control_socket()?;
    index_with(&fd, name)
}

fn index_with(fd: &OwnedFd, name: &str) -> Result<u32, SysError> {
    let mut ifr = IfReq::new(name)?;
    match sys::ifreq_ioctl(fd, sys::SIOCGIFINDEX, &mut ifr) {
        // SAFETY: SIOCGIFINDEX succeeded, so the kernel wrote `ifr_ifindex` (an int).
        Ok(()) => Ok(unsafe { ifr.data.int } as u32),
        Err(e) if e.raw_os_error() == Some(libc::ENODEV) => Err(SysError::NoSuchInterface {
            name: name.to_string(),
        }),
        Err(e) => Err(SysError::io(
            format!("looking up interface `{name}` (SIOCGIFINDEX)"),
            e,
        )),
    }
}

/// Reads everything in [`InterfaceInfo`] for `name`.
pub fn interface_info(name: &str) -> Result<InterfaceInfo, SysError> {
    let fd = sys::control_socket()?;
    let index = index_with(&fd, name)?;

    let mut ifr = IfReq::new(name)?;
    sys::ifreq_ioctl(&fd, sys::SIOCGIFFLAGS, &mut ifr)
        .map_err(|e| SysError::io(format!("reading the flags of `{name}` (SIOCGIFFLAGS)"), e))?;
    // SAFETY: SIOCGIFFLAGS succeeded, so the kernel wrote `ifr_flags` (a short).
    let flags = unsafe { ifr.data.flags } as u16 as u32;

    let mut ifr = IfReq::new(name)?;
    sys::ifreq_ioctl(&fd, sys::SIOCGIFMTU, &mut ifr)
        .map_err(|e| SysError::io(format!("reading the MTU of `{name}` (SIOCGIFMTU)"), e))?;
    // SAFETY: SIOCGIFMTU succeeded, so the kernel wrote `ifr_mtu` (an int).
    let mtu = unsafe { ifr.data.int }.max(0) as u32;

    let mut mac = [0u8; 6];
    let mut ifr = IfReq::new(name)?;
    if sys::ifreq_ioctl(&fd, sys::SIOCGIFHWADDR, &mut ifr).is_ok() {
        // SAFETY: SIOCGIFHWADDR succeeded, so the kernel wrote `ifr_hwaddr` (a sockaddr).
        let sa = unsafe { ifr.data.hwaddr };
        for (m, &c) in mac.iter_mut().zip(sa.sa_data.iter()) {
            *m = c as u8;
        }
    }

    let operstate = match link_operstate(index) {
        Some(s) => s.to_string(),
        None => sys_string(name, index, "operstate").unwrap_or_else(|| {
            if flags & IFF_RUNNING != 0 {
                "up"
            } else {
                "down"
            }
            .to_string()
        }),
    };
    let admin_up = flags & IFF_UP != 0;
    let oper_up = operstate == "up" || (operstate == "unknown" && flags & IFF_RUNNING != 0);

    let speed_mbps = ethtool_speed(&fd, name).or_else(|| {
        sys_string(name, index, "speed")
            .and_then(|s| s.parse::<i64>().ok())
            .filter(|&s| s > 0 && s != u32::MAX as i64)
            .map(|s| s as u64)
    });
    let driver = ethtool_driver(&fd, name).or_else(|| sys_driver(name, index));

    Ok(InterfaceInfo {
        name: name.to_string(),
        index,
        mac,
        mtu,
        oper_up,
        admin_up,
        operstate,
        speed_mbps,
        driver,
    })
}

/// Checks that `name` exists and is up; [`SysError::InterfaceDown`] otherwise.
pub fn require_up(name: &str) -> Result<InterfaceInfo, SysError> {
    let info = interface_info(name)?;
    if !info.admin_up || !info.oper_up {
        return Err(SysError::InterfaceDown {
            name: name.to_string(),
        });
    }
    Ok(info)
}

fn ethtool_speed(fd: &OwnedFd, name: &str) -> Option<u64> {
    match EthtoolCmd::get(fd, name) {
        Ok(cmd) => {
            let speed = cmd.speed();
            // SPEED_UNKNOWN is (u32)-1; 0 means "no link / not reported".
            (speed != u32::MAX && speed != 0).then_some(speed as u64)
        }
        Err(EthtoolErr::Name(_)) | Err(EthtoolErr::Os(_)) => None,
    }
}

/// `struct ethtool_drvinfo`.
#[repr(C)]
pub(crate) struct EthtoolDrvinfo {
    cmd: u32,
    driver: [libc::c_char; 32],
    version: [libc::c_char; 32],
    fw_version: [libc::c_char; 32],
    bus_info: [libc::c_char; 32],
    erom_version: [libc::c_char; 32],
    reserved2: [libc::c_char; 12],
    n_priv_flags: u32,
    n_stats: u32,
    testinfo_len: u32,
    eedump_len: u32,
    regdump_len: u32,
}

pub(crate) fn ethtool_driver(fd: &OwnedFd, name: &str) -> Option<String> {
    let mut info = EthtoolDrvinfo {
        cmd: sys::ETHTOOL_GDRVINFO,
        driver: [0; 32],
        version: [0; 32],
        fw_version: [0; 32],
        bus_info: [0; 32],
        erom_version: [0; 32],
        reserved2: [0; 12],
        n_priv_flags: 0,
        n_stats: 0,
        testinfo_len: 0,
        eedump_len: 0,
        regdump_len: 0,
    };
    // SAFETY: `EthtoolDrvinfo` is the kernel's `struct ethtool_drvinfo`.
    match unsafe { sys::ethtool(fd, name, &mut info) } {
        Ok(()) => Some(sys::c_buf_to_string(&info.driver)).filter(|s| !s.is_empty()),
        Err(_) => None,
    }
}

/// `/sys/class/net/NAME/FILE`, trimmed, but only if that directory is the
/// same interface (same ifindex) as the one in the caller's namespace.
fn sys_string(name: &str, index: u32, file: &str) -> Option<String> {
    let dir = format!("/sys/class/net/{name}");
    let idx = std::fs::read_to_string(format!("{dir}/ifindex")).ok()?;
    if idx.trim().parse::<u32>().ok()? != index {
        return None;
    }
    std::fs::read_to_string(format!("{dir}/{file}"))
        .ok()
        .map(|s| s.trim().to_string())
}

fn sys_driver(name: &str, index: u32) -> Option<String> {
    sys_string(name, index, "ifindex")?;
    let link = std::fs::read_link(format!("/sys/class/net/{name}/device/driver")).ok()?;
    link.file_name().map(|s| s.to_string_lossy().into_owned())
}

// ---- rtnetlink: IFLA_OPERSTATE -------------------------------------------

const RTM_GETLINK: u16 = 18;
const RTM_NEWLINK: u16 = 16;
const NLMSG_ERROR: u16 = 2;
const NLM_F_REQUEST: u16 = 1;
const IFLA_OPERSTATE: u16 = 16;

fn operstate_name(v: u8) -> &'static str {
    match v {
        1 => "notpresent",
        2 => "down",
        3 => "lowerlayerdown",
        4 => "testing",
        5 => "dormant",
        6 => "up",
        _ => "unknown",
    }
}

/// Asks rtnetlink (in the calling thread's namespace) for the link's
/// operstate; `None` on any failure.
fn link_operstate(index: u32) -> Option<&'static str> {
    // SAFETY: plain socket(2) call with constant arguments.
    let raw = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_ROUTE,
        )
    };
    if raw < 0 {
        return None;
    }
    // SAFETY: `raw` was just returned by socket(2) and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let tv = libc::timeval {
        tv_sec: 1,
        tv_usec: 0,
    };
    // SAFETY: `tv` is a valid timeval and its exact size is passed.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            &tv as *const libc::timeval as *const libc::c_void,
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };

    // nlmsghdr (16 bytes) + ifinfomsg (16 bytes)
    let mut req = [0u8; 32];
    req[0..4].copy_from_slice(&32u32.to_ne_bytes());
    req[4..6].copy_from_slice(&RTM_GETLINK.to_ne_bytes());
    req[6..8].copy_from_slice(&NLM_F_REQUEST.to_ne_bytes());
    req[8..12].copy_from_slice(&1u32.to_ne_bytes()); // seq
    req[16] = libc::AF_UNSPEC as u8;
    req[20..24].copy_from_slice(&(index as i32).to_ne_bytes());
    // SAFETY: `req` is a valid buffer of the given length; send(2) only reads it.
    let n = unsafe {
        libc::send(
            fd.as_raw_fd(),
            req.as_ptr() as *const libc::c_void,
            req.len(),
            0,
        )
    };
    if n != req.len() as isize {
        return None;
    }
    let mut buf = vec![0u8; 32 * 1024];
    // SAFETY: `buf` is a valid writable buffer of the given length.
    let n = unsafe {
        libc::recv(
            fd.as_raw_fd(),
            buf.as_mut_ptr() as *mut libc::c_void,
            buf.len(),
            0,
        )
    };
    if n < 16 {
        return None;
    }
    parse_operstate(&buf[..n as usize])
}

fn parse_operstate(msg: &[u8]) -> Option<&'static str> {
    let u16_at = |b: &[u8], i: usize| b.get(i..i + 2).map(|s| u16::from_ne_bytes([s[0], s[1]]));
    let u32_at = |b: &[u8], i: usize| {
        b.get(i..i + 4)
            .map(|s| u32::from_ne_bytes([s[0], s[1], s[2], s[3]]))
    };
    let len = (u32_at(msg, 0)? as usize).min(msg.len());
    let ty = u16_at(msg, 4)?;
    if ty == NLMSG_ERROR || ty != RTM_NEWLINK {
        return None;
    }
    let mut off = 32; // nlmsghdr + ifinfomsg
    while off + 4 <= len {
        let rta_len = u16_at(msg, off)? as usize;
        let rta_type = u16_at(msg, off + 2)? & 0x3fff;
        if rta_len < 4 || off + rta_len > len {
            break;
        }
        if rta_type == IFLA_OPERSTATE && rta_len >= 5 {
            return Some(operstate_name(msg[off + 4]));
        }
        off += (rta_len + 3) & !3;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_info() {
        let lo = interface_info("lo").expect("lo exists");
        assert_eq!(lo.index, 1);
        assert!(lo.admin_up);
        assert!(lo.oper_up, "{lo:?}");
        assert_eq!(lo.operstate, "unknown");
        assert_eq!(lo.mac, [0; 6]);
        assert!(lo.mtu >= 1500);
    }

    #[test]
    fn missing_and_invalid_names() {
        for name in ["misura-nope0", "", "a/b", "0123456789abcdefg", "x y"] {
            match interface_info(name) {
                Err(SysError::NoSuchInterface { name: n }) => assert_eq!(n, name),
                other => panic!("{name:?}: {other:?}"),
            }
        }
        let msg = SysError::NoSuchInterface { name: "p9".into() }.to_string();
        assert!(msg.contains("`p9`") && msg.contains("ip link"), "{msg}");
    }
}
