//! NIC hardware clocks (PTP hardware clocks, `/dev/ptpN`): which exist, which
//! interface each belongs to, and reading one with `clock_gettime` through
//! its dynamic clock id.

use crate::SysError;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

/// One PTP hardware clock as sysfs describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtpDevice {
    /// `ptp0`, …
    pub name: String,
    /// `/dev/ptp0`, …
    pub dev: PathBuf,
    /// The driver's `clock_name` (e.g. `igb`, `mlx5_ptp`).
    pub clock_name: Option<String>,
    /// Network interfaces of the device the clock belongs to (`device/net/*`);
    /// empty for clocks without one (e.g. `ptp_kvm`).
    pub interfaces: Vec<String>,
}

/// The index N of `ptpN`.
pub fn index(name: &str) -> Option<i32> {
    name.strip_prefix("ptp")?.parse().ok()
}

/// The PTP clocks under `/sys/class/ptp`, by index.
pub fn list() -> Vec<PtpDevice> {
    list_in(Path::new("/sys/class/ptp"))
}

fn list_in(class: &Path) -> Vec<PtpDevice> {
    let Ok(entries) = std::fs::read_dir(class) else {
        return Vec::new();
    };
    let mut out: Vec<PtpDevice> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            index(&name)?;
            let dir = e.path();
            let clock_name = std::fs::read_to_string(dir.join("clock_name"))
                .ok()
                .map(|s| s.trim().to_string());
            let mut interfaces: Vec<String> = std::fs::read_dir(dir.join("device/net"))
                .map(|d| {
                    d.flatten()
                        .map(|n| n.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            interfaces.sort();
            Some(PtpDevice {
                dev: PathBuf::from(format!("/dev/{name}")),
                name,
                clock_name,
                interfaces,
            })
        })
        .collect();
    out.sort_by_key(|d| index(&d.name));
    out
}

/// The dynamic POSIX clock id of an open clock device: `((~fd) << 3) | 3`
/// (`FD_TO_CLOCKID` in the kernel's testptp.c; CLOCKFD = 3).
pub const fn fd_to_clockid(fd: RawFd) -> libc::clockid_t {
    ((!fd) << 3) | 3
}

/// An open PTP hardware clock, read-only (reading needs no privilege beyond
/// the device's file mode; adjusting it would need write access).
#[derive(Debug)]
pub struct PhcClock {
    fd: OwnedFd,
}

impl PhcClock {
    /// Opens `dev` (e.g. `/dev/ptp0`) read-only.
    pub fn open(dev: &Path) -> Result<PhcClock, SysError> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .open(dev)
            .map_err(|e| {
                if crate::error::is_perm(&e) {
                    SysError::NeedCapability {
                        cap: "CAP_DAC_OVERRIDE",
                        what: format!(
                            "opening {} (or add the user to the group owning it)",
                            dev.display()
                        ),
                    }
                } else {
                    SysError::io(format!("opening the PTP clock {}", dev.display()), e)
                }
            })?;
        let clock = PhcClock { fd: file.into() };
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; an invalid clock id is
        // reported as an error, not undefined behaviour.
        if unsafe { libc::clock_gettime(clock.clock_id(), &mut ts) } != 0 {
            return Err(SysError::last_os(format!(
                "reading the PTP clock {} with clock_gettime",
                dev.display()
            )));
        }
        Ok(clock)
    }

    /// The clock id to pass to `clock_gettime`/`clock_getres`; valid while `self` lives.
    pub fn clock_id(&self) -> libc::clockid_t {
        fd_to_clockid(self.fd.as_raw_fd())
    }

    /// The open device, for the `PTP_SYS_OFFSET*` ioctls (`crate::phc_cross`).
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The PTP clock of a network interface (`ETHTOOL_GET_TS_INFO`'s PHC
    /// index), opened: `/dev/ptpN`.
    pub fn open_for_interface(iface: &str) -> Result<(i32, PhcClock), SysError> {
        let info = crate::tsinfo::get_ts_info(iface)?;
        let Some(index) = info.phc_index else {
            return Err(SysError::Unsupported {
                what: format!("a PTP hardware clock on {iface}"),
                why: "the driver reports no PHC (ethtool -T shows \"PTP Hardware Clock: none\")"
                    .into(),
            });
        };
        let dev = PathBuf::from(format!("/dev/ptp{index}"));
        Ok((index, PhcClock::open(&dev)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_clock_ids() {
        // FD_TO_CLOCKID(3) in the kernel's testptp.c.
        assert_eq!(fd_to_clockid(3), -29);
        assert_eq!(fd_to_clockid(0), -5);
        assert_eq!(index("ptp12"), Some(12));
        assert_eq!(index("pps0"), None);
    }

    #[test]
    fn listing_a_fake_sysfs() {
        let root = std::env::temp_dir().join(format!("misura-ptp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("ptp1/device/net/enp2s0")).unwrap();
        std::fs::create_dir_all(root.join("ptp0")).unwrap();
        std::fs::write(root.join("ptp1/clock_name"), "igb\n").unwrap();
        let l = list_in(&root);
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].name, "ptp0");
        assert!(l[0].interfaces.is_empty());
        assert_eq!(l[1].interfaces, vec!["enp2s0".to_string()]);
        assert_eq!(l[1].clock_name.as_deref(), Some("igb"));
        std::fs::remove_dir_all(&root).unwrap();
        assert!(list_in(Path::new("/nonexistent/ptp")).is_empty());
    }

    #[test]
    fn missing_device_is_a_clear_error() {
        let e = PhcClock::open(Path::new("/dev/ptp999"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/dev/ptp999"), "{e}");
    }
}
