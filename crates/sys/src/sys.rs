//! Private helpers shared by the modules: `ifreq`, control sockets, ethtool.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::SysError;

pub(crate) const IFNAMSIZ: usize = 16;

// Values from the kernel's UAPI headers, stable ABI; kept here so the crate
// does not depend on which libc release exports which constant.
pub(crate) const SIOCETHTOOL: libc::c_ulong = 0x8946;
pub(crate) const SIOCSHWTSTAMP: libc::c_ulong = 0x89b0;
pub(crate) const SIOCGIFINDEX: libc::c_ulong = 0x8933;
pub(crate) const SIOCGIFFLAGS: libc::c_ulong = 0x8913;
pub(crate) const SIOCGIFMTU: libc::c_ulong = 0x8921;
pub(crate) const SIOCGIFHWADDR: libc::c_ulong = 0x8927;
pub(crate) const ETHTOOL_GSET: u32 = 0x0000_0001;
pub(crate) const ETHTOOL_GDRVINFO: u32 = 0x0000_0003;
pub(crate) const ETHTOOL_GET_TS_INFO: u32 = 0x0000_0041;

/// The interface-request union of `struct ifreq` (24 bytes on 64-bit).
#[repr(C)]
#[derive(Copy, Clone)]
pub(crate) union IfrData {
    pub ptr: *mut libc::c_void,
    pub int: libc::c_int,
    pub flags: libc::c_short,
    pub hwaddr: libc::sockaddr,
    _pad: [u8; 24],
}

/// `struct ifreq`.
#[repr(C)]
#[derive(Copy, Clone)]
pub(crate) struct IfReq {
    pub name: [libc::c_char; IFNAMSIZ],
    pub data: IfrData,
}

impl IfReq {
    pub(crate) fn new(ifname: &str) -> Result<IfReq, SysError> {
        let name = ifname_bytes(ifname)?;
        Ok(IfReq {
            name,
            data: IfrData { _pad: [0; 24] },
        })
    }
}

/// A valid interface name as the kernel's NUL-terminated `[c_char; 16]`.
/// Names the kernel could never have (empty, too long, '/', whitespace,
/// NUL) are reported as [`SysError::NoSuchInterface`].
pub(crate) fn ifname_bytes(ifname: &str) -> Result<[libc::c_char; IFNAMSIZ], SysError> {
    let bad = ifname.is_empty()
        || ifname.len() >= IFNAMSIZ
        || ifname == "."
        || ifname == ".."
        || ifname
            .bytes()
            .any(|b| b == 0 || b == b'/' || b == b':' || b.is_ascii_whitespace());
    if bad {
        return Err(SysError::NoSuchInterface {
            name: ifname.to_string(),
        });
    }
    let mut out = [0 as libc::c_char; IFNAMSIZ];
    for (o, b) in out.iter_mut().zip(ifname.bytes()) {
        *o = b as libc::c_char;
    }
    Ok(out)
}

/// A datagram socket in the calling thread's network namespace, used only
/// as a handle for interface ioctls.  AF_INET like ethtool(8); AF_UNIX if
/// IPv4 is unavailable (the generic device ioctls work on any socket).
pub(crate) fn control_socket() -> Result<OwnedFd, SysError> {
    for family in [libc::AF_INET, libc::AF_UNIX] {
        // SAFETY: plain socket(2) call with constant arguments; no pointers.
        let fd = unsafe { libc::socket(family, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if fd >= 0 {
            // SAFETY: `fd` was just returned by socket(2) and is owned by nobody else.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
    }
    Err(SysError::last_os(
        "opening a control socket for interface ioctls",
    ))
}

/// `ioctl(fd, req, ifr)`; returns the OS error on failure.
pub(crate) fn ifreq_ioctl(fd: &OwnedFd, req: libc::c_ulong, ifr: &mut IfReq) -> io::Result<()> {
    // SAFETY: `ifr` is a valid, writable `struct ifreq` for the whole call; the
    // requests used with it read and write only inside that struct (or, for
    // SIOCETHTOOL/SIOCSHWTSTAMP, the buffer its `ptr` points to, which the
    // caller keeps alive and sized for the command).
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), req as _, ifr as *mut IfReq) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Runs an ethtool command whose request/answer struct is `T` (whose first
/// field must be the `u32 cmd`) on `ifname`.
///
/// # Safety
/// `T` must be the `repr(C)` struct the kernel expects for the command in
/// its first field, so the kernel reads and writes only inside it.
pub(crate) unsafe fn ethtool<T>(
    fd: &OwnedFd,
    ifname: &str,
    data: &mut T,
) -> Result<(), EthtoolErr> {
    let mut ifr = IfReq::new(ifname).map_err(EthtoolErr::Name)?;
    ifr.data.ptr = data as *mut T as *mut libc::c_void;
    ifreq_ioctl(fd, SIOCETHTOOL, &mut ifr).map_err(EthtoolErr::Os)
}

pub(crate) enum EthtoolErr {
    Name(SysError),
    Os(io::Error),
}

/// `struct ethtool_cmd` (ETHTOOL_GSET; the kernel fills it from
/// get_link_ksettings for drivers that only have the new interface). The
/// one copy, for `ethtool` (link mode) and `iface` (speed).
#[repr(C)]
#[derive(Default)]
pub(crate) struct EthtoolCmd {
    cmd: u32,
    supported: u32,
    advertising: u32,
    speed: u16,
    pub(crate) duplex: u8,
    port: u8,
    phy_address: u8,
    transceiver: u8,
    pub(crate) autoneg: u8,
    mdio_support: u8,
    maxtxpkt: u32,
    maxrxpkt: u32,
    speed_hi: u16,
    eth_tp_mdix: u8,
    eth_tp_mdix_ctrl: u8,
    lp_advertising: u32,
    reserved: [u32; 2],
}

impl EthtoolCmd {
    /// `ETHTOOL_GSET` on `fd`.
    pub(crate) fn get(fd: &OwnedFd, ifname: &str) -> Result<EthtoolCmd, EthtoolErr> {
        let mut c = EthtoolCmd {
            cmd: ETHTOOL_GSET,
            ..Default::default()
        };
        // SAFETY: `EthtoolCmd` is the kernel's `struct ethtool_cmd` for ETHTOOL_GSET.
        unsafe { ethtool(fd, ifname, &mut c) }?;
        Ok(c)
    }

    /// The speed as the kernel wrote it, both halves joined (Mb/s;
    /// SPEED_UNKNOWN is `u32::MAX`, 0 or 0xffff from some drivers).
    pub(crate) fn speed(&self) -> u32 {
        ((self.speed_hi as u32) << 16) | self.speed as u32
    }
}

/// Copies a NUL-terminated C string out of a fixed buffer.
pub(crate) fn c_buf_to_string(buf: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = buf
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}
