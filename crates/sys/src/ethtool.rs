//! Reading and changing the ethtool settings that move timestamps: link
//! mode (`ETHTOOL_GSET`), Energy-Efficient Ethernet (`ETHTOOL_GEEE`/`SEEE`),
//! interrupt coalescing (`ETHTOOL_GCOALESCE`/`SCOALESCE`) and the offloads
//! that merge or split frames (the legacy one-feature commands
//! `ETHTOOL_GGRO`/`SGRO`, `GGSO`/`SGSO`, `GTSO`/`STSO` and the LRO bit of
//! `ETHTOOL_GFLAGS`/`SFLAGS`, which every kernel since 2.6.39 still maps onto
//! the feature bits).
//!
//! Reads need no privilege; changes need `CAP_NET_ADMIN`. All calls act in
//! the calling thread's network namespace.

use std::os::fd::OwnedFd;

use crate::error::is_perm;
use crate::sys::{self, EthtoolCmd, EthtoolErr};
use crate::SysError;

const ETHTOOL_GCOALESCE: u32 = 0x0e;
const ETHTOOL_SCOALESCE: u32 = 0x0f;
const ETHTOOL_GTSO: u32 = 0x1e;
const ETHTOOL_STSO: u32 = 0x1f;
const ETHTOOL_GGSO: u32 = 0x23;
const ETHTOOL_SGSO: u32 = 0x24;
const ETHTOOL_GFLAGS: u32 = 0x25;
const ETHTOOL_SFLAGS: u32 = 0x26;
const ETHTOOL_GGRO: u32 = 0x2b;
const ETHTOOL_SGRO: u32 = 0x2c;
const ETHTOOL_GEEE: u32 = 0x44;
const ETHTOOL_SEEE: u32 = 0x45;
const ETH_FLAG_LRO: u32 = 1 << 15;

/// What an ethtool call was doing, for the error message.
fn map_err(e: EthtoolErr, ifname: &str, what: &str, fd: &OwnedFd) -> SysError {
    match e {
        EthtoolErr::Name(e) => e,
        EthtoolErr::Os(e) => match e.raw_os_error() {
            Some(libc::ENODEV) => SysError::NoSuchInterface {
                name: ifname.to_string(),
            },
            Some(libc::EOPNOTSUPP) | Some(libc::ENOTTY) => SysError::Unsupported {
                what: format!("{what} of `{ifname}`"),
                why: format!(
                    "not supported by driver {}",
                    crate::iface::ethtool_driver(fd, ifname).unwrap_or_else(|| "unknown".into())
                ),
            },
            _ if is_perm(&e) => SysError::NeedCapability {
                cap: "CAP_NET_ADMIN",
                what: format!("changing the {what} of `{ifname}`"),
            },
            _ => SysError::io(format!("{what} of `{ifname}` (ethtool ioctl)"), e),
        },
    }
}

/// Runs one ethtool command on a fresh control socket.
///
/// # Safety
/// As [`sys::ethtool`]: `T` must be the kernel's struct for `data`'s command.
unsafe fn call<T>(ifname: &str, what: &str, data: &mut T) -> Result<(), SysError> {
    let fd = sys::control_socket()?;
    // SAFETY: forwarded from the caller's contract.
    unsafe { sys::ethtool(&fd, ifname, data) }.map_err(|e| map_err(e, ifname, what, &fd))
}

// ---- link mode ------------------------------------------------------------

/// Link speed, duplex and autonegotiation.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LinkMode {
    /// Mb/s; `None` when the driver says unknown (no link).
    pub speed_mbps: Option<u32>,
    /// `full`, `half` or `unknown`.
    pub duplex: String,
    /// Autonegotiation on.
    pub autoneg: bool,
}

/// `ETHTOOL_GSET`.
pub fn link_mode(ifname: &str) -> Result<LinkMode, SysError> {
    let fd = sys::control_socket()?;
    let c = EthtoolCmd::get(&fd, ifname).map_err(|e| map_err(e, ifname, "link settings", &fd))?;
    let speed = c.speed();
    Ok(LinkMode {
        speed_mbps: (speed != 0 && speed != u32::MAX && speed != 0xffff).then_some(speed),
        duplex: match c.duplex {
            0 => "half",
            1 => "full",
            _ => "unknown",
        }
        .into(),
        autoneg: c.autoneg != 0,
    })
}

// ---- EEE ------------------------------------------------------------------

/// `struct ethtool_eee`.
#[repr(C)]
#[derive(Default)]
struct EthtoolEee {
    cmd: u32,
    supported: u32,
    advertised: u32,
    lp_advertised: u32,
    eee_active: u32,
    eee_enabled: u32,
    tx_lpi_enabled: u32,
    tx_lpi_timer: u32,
    reserved: [u32; 2],
}

/// Energy-Efficient Ethernet state.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Eee {
    /// EEE enabled (may be inactive if the link partner does not agree).
    pub enabled: bool,
    /// EEE negotiated and in use on the link.
    pub active: bool,
    /// Low-power-idle on the transmit side.
    pub tx_lpi_enabled: bool,
    /// Microseconds of idle before entering low-power idle.
    pub tx_lpi_timer_us: u32,
}

fn get_eee_raw(ifname: &str) -> Result<EthtoolEee, SysError> {
    let mut e = EthtoolEee {
        cmd: ETHTOOL_GEEE,
        ..Default::default()
    };
    // SAFETY: `EthtoolEee` is the kernel's `struct ethtool_eee`.
    unsafe { call(ifname, "Energy-Efficient Ethernet settings", &mut e) }?;
    Ok(e)
}

/// `ETHTOOL_GEEE`.
pub fn eee(ifname: &str) -> Result<Eee, SysError> {
    let e = get_eee_raw(ifname)?;
    Ok(Eee {
        enabled: e.eee_enabled != 0,
        active: e.eee_active != 0,
        tx_lpi_enabled: e.tx_lpi_enabled != 0,
        tx_lpi_timer_us: e.tx_lpi_timer,
    })
}

/// Turns EEE on or off (`ETHTOOL_SEEE`, read-modify-write), as
/// `ethtool --set-eee IF eee on|off` does.
pub fn set_eee(ifname: &str, enabled: bool) -> Result<(), SysError> {
    let mut e = get_eee_raw(ifname)?;
    e.cmd = ETHTOOL_SEEE;
    e.eee_enabled = enabled as u32;
    // SAFETY: `EthtoolEee` is the kernel's `struct ethtool_eee`.
    unsafe { call(ifname, "Energy-Efficient Ethernet settings", &mut e) }
}

// ---- coalescing -----------------------------------------------------------

/// The coalescing parameters misura reads and changes, by ethtool's name
/// and index in `struct ethtool_coalesce` (after `cmd`, 22 `u32`s).
pub const COALESCE_PARAMS: [(&str, usize); 8] = [
    ("rx-usecs", 0),
    ("rx-frames", 1),
    ("tx-usecs", 4),
    ("tx-frames", 5),
    ("adaptive-rx", 9),
    ("adaptive-tx", 10),
    ("rx-usecs-irq", 2),
    ("tx-usecs-irq", 6),
];

/// `struct ethtool_coalesce`: `cmd` then 22 `u32` parameters.
#[repr(C)]
#[derive(Default)]
struct EthtoolCoalesce {
    cmd: u32,
    params: [u32; 22],
}

/// Interrupt coalescing as `ethtool -c` shows it (adaptive as 0/1).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Coalesce {
    /// Every parameter of [`COALESCE_PARAMS`] with its value.
    pub params: Vec<(String, u32)>,
}

impl Coalesce {
    /// One parameter by ethtool's name.
    pub fn get(&self, name: &str) -> Option<u32> {
        self.params.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }
}

fn get_coalesce_raw(ifname: &str) -> Result<EthtoolCoalesce, SysError> {
    let mut c = EthtoolCoalesce {
        cmd: ETHTOOL_GCOALESCE,
        ..Default::default()
    };
    // SAFETY: `EthtoolCoalesce` is the kernel's `struct ethtool_coalesce`.
    unsafe { call(ifname, "interrupt coalescing", &mut c) }?;
    Ok(c)
}

/// `ETHTOOL_GCOALESCE`.
pub fn coalesce(ifname: &str) -> Result<Coalesce, SysError> {
    let c = get_coalesce_raw(ifname)?;
    Ok(Coalesce {
        params: COALESCE_PARAMS
            .iter()
            .map(|(n, i)| (n.to_string(), c.params[*i]))
            .collect(),
    })
}

/// Sets one coalescing parameter (read-modify-write of the whole struct,
/// `ETHTOOL_SCOALESCE`), as `ethtool -C IF NAME VALUE` does. One parameter
/// per call, so a driver refusing one does not block the others.
pub fn set_coalesce(ifname: &str, name: &str, value: u32) -> Result<(), SysError> {
    let Some((_, idx)) = COALESCE_PARAMS.iter().find(|(n, _)| *n == name) else {
        return Err(SysError::invalid(format!(
            "unknown coalescing parameter `{name}`"
        )));
    };
    let mut c = get_coalesce_raw(ifname)?;
    c.cmd = ETHTOOL_SCOALESCE;
    c.params[*idx] = value;
    // SAFETY: `EthtoolCoalesce` is the kernel's `struct ethtool_coalesce`.
    unsafe { call(ifname, &format!("interrupt coalescing ({name})"), &mut c) }
}

// ---- offloads -------------------------------------------------------------

/// `struct ethtool_value`.
#[repr(C)]
#[derive(Default)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// The offloads that merge received frames or split sent ones, so that
/// one timestamp stands for several frames or a frame's stamp moves.
pub const OFFLOADS: [&str; 4] = ["gro", "lro", "gso", "tso"];

fn offload_cmds(name: &str) -> Option<(u32, u32, &'static str)> {
    Some(match name {
        "gro" => (ETHTOOL_GGRO, ETHTOOL_SGRO, "generic-receive-offload"),
        "lro" => (ETHTOOL_GFLAGS, ETHTOOL_SFLAGS, "large-receive-offload"),
        "gso" => (ETHTOOL_GGSO, ETHTOOL_SGSO, "generic-segmentation-offload"),
        "tso" => (ETHTOOL_GTSO, ETHTOOL_STSO, "tcp-segmentation-offload"),
        _ => return None,
    })
}

fn get_value(ifname: &str, cmd: u32, what: &str) -> Result<u32, SysError> {
    let mut v = EthtoolValue { cmd, data: 0 };
    // SAFETY: `EthtoolValue` is the kernel's `struct ethtool_value`, used by
    // every legacy one-value get command.
    unsafe { call(ifname, what, &mut v) }?;
    Ok(v.data)
}

/// Whether offload `name` (one of [`OFFLOADS`]) is on.
pub fn offload(ifname: &str, name: &str) -> Result<bool, SysError> {
    let (get, _, long) =
        offload_cmds(name).ok_or_else(|| SysError::invalid(format!("unknown offload `{name}`")))?;
    let v = get_value(ifname, get, long)?;
    Ok(if name == "lro" {
        v & ETH_FLAG_LRO != 0
    } else {
        v != 0
    })
}

/// Turns offload `name` on or off, as `ethtool -K IF NAME on|off` does.
pub fn set_offload(ifname: &str, name: &str, on: bool) -> Result<(), SysError> {
    let (get, set, long) =
        offload_cmds(name).ok_or_else(|| SysError::invalid(format!("unknown offload `{name}`")))?;
    let data = if name == "lro" {
        let flags = get_value(ifname, get, long)?;
        if on {
            flags | ETH_FLAG_LRO
        } else {
            flags & !ETH_FLAG_LRO
        }
    } else {
        on as u32
    };
    let mut v = EthtoolValue { cmd: set, data };
    // SAFETY: `EthtoolValue` is the kernel's `struct ethtool_value`, used by
    // every legacy one-value set command.
    unsafe { call(ifname, long, &mut v) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_sizes_match_the_kernel() {
        assert_eq!(std::mem::size_of::<EthtoolCoalesce>(), 92);
        assert_eq!(std::mem::size_of::<EthtoolEee>(), 40);
        assert_eq!(std::mem::size_of::<EthtoolCmd>(), 44);
    }

    #[test]
    fn loopback_answers_or_says_why() {
        // lo has no coalescing: the error names the driver.
        match coalesce("lo") {
            Ok(_) => {}
            Err(SysError::Unsupported { why, .. }) => assert!(why.contains("driver"), "{why}"),
            Err(e) => panic!("{e}"),
        }
        assert!(offload("lo", "gso").is_ok());
        assert!(matches!(
            offload("misura-nope0", "gro"),
            Err(SysError::NoSuchInterface { .. })
        ));
    }
}
