//! Reading (and, for `misura host tune`, writing) the sysfs and procfs
//! items that affect timing, each read on its own so that one unreadable
//! file never hides the others.

use std::path::{Path, PathBuf};

use crate::error::is_perm;
use crate::SysError;

/// What reading one file gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reading {
    /// The file's content, trimmed.
    Value(String),
    /// The file does not exist (the kernel has no such feature).
    Absent,
    /// The file exists but could not be read; the reason in words.
    Unreadable(String),
}

impl Reading {
    /// The value, if there is one.
    pub fn value(&self) -> Option<&str> {
        match self {
            Reading::Value(v) => Some(v),
            _ => None,
        }
    }
}

/// Reads a small text file (sysfs, procfs), trimmed.
pub fn read(path: impl AsRef<Path>) -> Reading {
    match std::fs::read_to_string(path.as_ref()) {
        Ok(s) => Reading::Value(s.trim().to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Reading::Absent,
        Err(e) if is_perm(&e) => Reading::Unreadable("permission denied".into()),
        Err(e) => Reading::Unreadable(e.to_string()),
    }
}

/// Writes `value` to a sysfs or procfs file (needs root).
pub fn write(path: impl AsRef<Path>, value: &str) -> Result<(), SysError> {
    let p = path.as_ref();
    std::fs::write(p, value).map_err(|e| {
        if is_perm(&e) {
            SysError::NeedCapability {
                cap: "CAP_SYS_ADMIN",
                what: format!("writing `{value}` to {} (needs root)", p.display()),
            }
        } else {
            SysError::io(format!("writing `{value}` to {}", p.display()), e)
        }
    })
}

/// Whether a path exists (e.g. `/proc/xenomai`).
pub fn exists(path: impl AsRef<Path>) -> bool {
    path.as_ref().exists()
}

/// The CPUs listed in `/sys/devices/system/cpu` (`cpu0`, `cpu1`, ...), by number.
pub fn cpus() -> Vec<usize> {
    let mut v: Vec<usize> = std::fs::read_dir("/sys/devices/system/cpu")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| {
                    e.file_name()
                        .to_str()?
                        .strip_prefix("cpu")?
                        .parse::<usize>()
                        .ok()
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}

/// The cpuidle driver in use (`haltpoll` on a KVM guest that has it).
pub const CPUIDLE_DRIVER: &str = "/sys/devices/system/cpu/cpuidle/current_driver";

/// How long (ns) an idle vCPU under the haltpoll driver polls before it
/// halts; 0 halts at once.
pub const HALT_POLL_NS: &str = "/sys/module/haltpoll/parameters/guest_halt_poll_ns";

/// The kernel's default for [`HALT_POLL_NS`].
pub const HALT_POLL_NS_DEFAULT: u64 = 200_000;

/// One idle state of a CPU (`/sys/devices/system/cpu/cpuN/cpuidle/stateK`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdleState {
    /// K in stateK.
    pub index: usize,
    /// `POLL`, `C1`, `C6`, `haltpoll`, ...
    pub name: String,
    /// Exit latency in microseconds.
    pub latency_us: u64,
    /// Disabled through sysfs.
    pub disabled: bool,
    /// The `disable` file, for `misura host tune`.
    pub disable_path: PathBuf,
}

/// The idle states of `cpu`; empty without cpuidle.
pub fn idle_states(cpu: usize) -> Vec<IdleState> {
    let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle");
    let mut v: Vec<IdleState> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let index = e
                        .file_name()
                        .to_str()?
                        .strip_prefix("state")?
                        .parse()
                        .ok()?;
                    let p = e.path();
                    Some(IdleState {
                        index,
                        name: read(p.join("name")).value()?.to_string(),
                        latency_us: read(p.join("latency")).value()?.parse().ok()?,
                        disabled: read(p.join("disable")).value() == Some("1"),
                        disable_path: p.join("disable"),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort_by_key(|s| s.index);
    v
}

/// `RLIMIT_MEMLOCK` (soft, hard) in bytes; `None` = unlimited.
pub fn memlock_limit() -> Result<(Option<u64>, Option<u64>), SysError> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid, writable rlimit for the whole call.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut r) } != 0 {
        return Err(SysError::last_os("reading RLIMIT_MEMLOCK (getrlimit)"));
    }
    let f = |v: libc::rlim_t| (v != libc::RLIM_INFINITY).then_some(v as u64);
    Ok((f(r.rlim_cur), f(r.rlim_max)))
}

/// The calling thread's timer slack in nanoseconds (`PR_GET_TIMERSLACK`):
/// inherited from the shell that started the process unless the thread
/// set its own ([`crate::timer::set_timer_slack_ns`]).
pub fn timer_slack_ns() -> Result<u64, SysError> {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer arguments.
    let r = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    if r < 0 {
        return Err(SysError::last_os("reading the timer slack (prctl)"));
    }
    Ok(r as u64)
}

/// Which of `names` run as processes (matched against `/proc/PID/comm`,
/// which the kernel cuts to 15 bytes), each once.
pub fn running(names: &[&str]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return found;
    };
    for e in dir.filter_map(|e| e.ok()) {
        let is_pid = e
            .file_name()
            .to_str()
            .is_some_and(|s| s.bytes().all(|b| b.is_ascii_digit()));
        if !is_pid {
            continue;
        }
        if let Some(comm) = read(e.path().join("comm")).value() {
            for n in names {
                let short = &n[..n.len().min(15)];
                if comm == short && !found.iter().any(|f| f == n) {
                    found.push(n.to_string());
                }
            }
        }
    }
    found
}

/// Where `cmd` is on `PATH` (plus /usr/sbin and /sbin, which a user's PATH
/// often lacks).
pub fn which(cmd: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"])
        .map(|d| Path::new(d).join(cmd))
        .find(|p| p.is_file());
    found
}

/// The names of the interfaces in the calling thread's network namespace
/// (`if_nameindex(3)`, which asks the kernel through a socket).
pub fn interface_names() -> Vec<String> {
    // SAFETY: if_nameindex has no preconditions; it returns NULL or an
    // array terminated by an entry with index 0, freed below.
    let list = unsafe { libc::if_nameindex() };
    if list.is_null() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        // SAFETY: the array is terminated by a zero entry, not passed yet.
        let e = unsafe { &*list.add(i) };
        if e.if_index == 0 || e.if_name.is_null() {
            break;
        }
        // SAFETY: `if_name` is a NUL-terminated string owned by the array.
        let name = unsafe { std::ffi::CStr::from_ptr(e.if_name) };
        out.push(name.to_string_lossy().into_owned());
        i += 1;
    }
    // SAFETY: `list` came from if_nameindex and is freed once.
    unsafe { libc::if_freenameindex(list) };
    out
}

/// One line of `/proc/interrupts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IrqLine {
    /// IRQ number.
    pub irq: u32,
    /// The last column: the action names (e.g. `enp1s0-TxRx-0`).
    pub name: String,
}

/// Parses `/proc/interrupts` text into its numbered IRQs.
pub fn parse_interrupts(text: &str) -> Vec<IrqLine> {
    let mut lines = text.lines();
    let ncpu = lines.next().map_or(0, |h| h.split_whitespace().count());
    lines
        .filter_map(|l| {
            let (num, rest) = l.split_once(':')?;
            let irq = num.trim().parse().ok()?;
            // counts, then chip, hwirq/trigger, then the action names.
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let name = fields
                .get(ncpu + 2..)
                .map(|f| f.join(" "))
                .unwrap_or_default();
            Some(IrqLine { irq, name })
        })
        .collect()
}

/// The IRQs of interface `ifname`: those whose action name contains the
/// interface name, plus, when `/sys/class/net/IF` is this interface (same
/// `ifindex`), its device's MSI vectors.
pub fn interface_irqs(ifname: &str, ifindex: Option<u32>) -> Result<Vec<IrqLine>, SysError> {
    let text = std::fs::read_to_string("/proc/interrupts")
        .map_err(|e| SysError::io("reading /proc/interrupts", e))?;
    let all = parse_interrupts(&text);
    let mut msi: Vec<u32> = Vec::new();
    // virtio-net's queues are named after its virtio device, not the interface.
    let mut device: Option<String> = None;
    let dir = format!("/sys/class/net/{ifname}");
    let same = read(format!("{dir}/ifindex"))
        .value()
        .and_then(|v| v.parse::<u32>().ok());
    if ifindex.is_some() && same == ifindex {
        device = std::fs::read_link(format!("{dir}/device"))
            .ok()
            .and_then(|l| l.file_name().map(|f| f.to_string_lossy().into_owned()))
            .filter(|d| d.starts_with("virtio"));
        if let Ok(d) = std::fs::read_dir(format!("{dir}/device/msi_irqs")) {
            msi = d
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect();
        }
    }
    Ok(all
        .into_iter()
        .filter(|l| {
            msi.contains(&l.irq)
                || device.as_ref().is_some_and(|d| {
                    l.name.starts_with(&format!("{d}-input"))
                        || l.name.starts_with(&format!("{d}-output"))
                })
                || l.name
                    .split(|c: char| c.is_whitespace() || c == ',')
                    .any(|w| w == ifname || w.starts_with(&format!("{ifname}-")))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_says_why_not() {
        assert!(matches!(read("/proc/sys/kernel/ostype"), Reading::Value(v) if v == "Linux"));
        assert_eq!(read("/nonexistent/misura"), Reading::Absent);
        assert!(!cpus().is_empty());
        assert!(interface_names().iter().any(|n| n == "lo"));
        assert!(timer_slack_ns().is_ok());
        assert!(memlock_limit().is_ok());
    }

    #[test]
    fn interrupts_parse() {
        let text = "           CPU0       CPU1\n\
  24:          1          0  IO-APIC   5-edge      ACPI:Ged\n\
  40:        100          3  PCI-MSIX-0000:00:05.0   1-edge      enp1s0-TxRx-0\n\
 NMI:          0          0   Non-maskable interrupts\n";
        let v = parse_interrupts(text);
        assert_eq!(v.len(), 2);
        assert_eq!(
            v[1],
            IrqLine {
                irq: 40,
                name: "enp1s0-TxRx-0".into()
            }
        );
    }
}
