//! CPU pinning, real-time priority and memory locking for the calling thread.

use crate::error::is_perm;
use crate::SysError;

/// Number of online CPUs (`sysconf(_SC_NPROCESSORS_ONLN)`, at least 1).
pub fn online_cpus() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n < 1 {
        1
    } else {
        n as usize
    }
}

/// The online CPU list as the kernel prints it (e.g. `0-1`).
pub fn online_cpu_list() -> String {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| format!("0-{}", online_cpus().saturating_sub(1)))
}

fn cpu_list_contains(list: &str, cpu: usize) -> bool {
    list.split(',').any(|part| match part.split_once('-') {
        Some((a, b)) => matches!((a.trim().parse::<usize>(), b.trim().parse::<usize>()), (Ok(a), Ok(b)) if (a..=b).contains(&cpu)),
        None => part.trim().parse::<usize>() == Ok(cpu),
    })
}

/// Pins the calling thread to `cpu` (`sched_setaffinity`).
pub fn pin_to_cpu(cpu: usize) -> Result<(), SysError> {
    let online = online_cpu_list();
    let setsize = 8 * std::mem::size_of::<libc::cpu_set_t>();
    if cpu >= setsize || !cpu_list_contains(&online, cpu) {
        return Err(SysError::invalid(format!(
            "pinning the thread to CPU {cpu}: that CPU is not online; online CPUs are {online} (see /sys/devices/system/cpu/online)"
        )));
    }
    // SAFETY: cpu_set_t is plain old data; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` < the set's bit size, checked above.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t and its exact size is passed; pid 0
    // means the calling thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc < 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::EINVAL) => SysError::io(
                format!("pinning the thread to CPU {cpu}: not allowed by this process's cpuset (online CPUs are {online}; see `taskset -p $$` and the cgroup's cpuset.cpus)"),
                e,
            ),
            _ if is_perm(&e) => SysError::NeedCapability { cap: "CAP_SYS_NICE", what: format!("pinning the thread to CPU {cpu}") },
            _ => SysError::io(format!("pinning the thread to CPU {cpu}"), e),
        });
    }
    Ok(())
}

/// The CPUs the calling thread may run on.
pub fn current_affinity() -> Result<Vec<usize>, SysError> {
    // SAFETY: cpu_set_t is plain old data; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t and its exact size is passed.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc < 0 {
        return Err(SysError::last_os("reading the thread's CPU affinity"));
    }
    let n = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: every index is < the set's bit size.
    Ok((0..n)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// Allows the calling thread to run on every online CPU again.
pub fn unpin() -> Result<(), SysError> {
    // SAFETY: cpu_set_t is plain old data; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let online = online_cpu_list();
    let n = 8 * std::mem::size_of::<libc::cpu_set_t>();
    for c in (0..n).filter(|&c| cpu_list_contains(&online, c)) {
        // SAFETY: `c` < the set's bit size.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t and its exact size is passed.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc < 0 {
        return Err(SysError::last_os("unpinning the thread"));
    }
    Ok(())
}

/// Runs the calling thread under `SCHED_FIFO` at `priority` (1..=99).
pub fn set_fifo_priority(priority: i32) -> Result<(), SysError> {
    if !(1..=99).contains(&priority) {
        return Err(SysError::invalid(format!(
            "SCHED_FIFO priority {priority}: it must be 1..=99"
        )));
    }
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid sched_param; pid 0 means the calling thread.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
    if rc < 0 {
        let e = std::io::Error::last_os_error();
        return Err(if is_perm(&e) {
            SysError::NeedCapability {
                cap: "CAP_SYS_NICE",
                what: format!(
                    "real-time scheduling (SCHED_FIFO {priority}) (or raise `ulimit -r`; as root, a cgroup without RT runtime also refuses it)"
                ),
            }
        } else {
            SysError::io(format!("setting SCHED_FIFO priority {priority}"), e)
        });
    }
    Ok(())
}

/// Puts the calling thread back under the normal scheduler (`SCHED_OTHER`).
pub fn set_normal_scheduling() -> Result<(), SysError> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid sched_param; pid 0 means the calling thread.
    let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) };
    if rc < 0 {
        return Err(SysError::last_os("restoring SCHED_OTHER"));
    }
    Ok(())
}

/// The calling thread's scheduling policy and priority.
pub fn current_policy() -> (i32, i32) {
    // SAFETY: no pointers; pid 0 means the calling thread.
    let policy = unsafe { libc::sched_getscheduler(0) };
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid, writable sched_param.
    unsafe { libc::sched_getparam(0, &mut param) };
    (policy, param.sched_priority)
}

/// Locks all current and future memory (`mlockall(MCL_CURRENT|MCL_FUTURE)`)
/// so page faults cannot stall the measurement.
pub fn lock_memory() -> Result<(), SysError> {
    // SAFETY: mlockall has no memory-safety preconditions.
    let rc = unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    if rc < 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::EPERM) | Some(libc::ENOMEM) => SysError::NeedCapability {
                cap: "CAP_IPC_LOCK",
                what: "locking memory with mlockall (or raise the locked-memory limit: `ulimit -l unlimited`, or LimitMEMLOCK= in a systemd unit)".into(),
            },
            _ => SysError::io("locking memory with mlockall", e),
        });
    }
    Ok(())
}

/// Undoes [`lock_memory`] (`munlockall`).
pub fn unlock_memory() -> Result<(), SysError> {
    // SAFETY: munlockall has no memory-safety preconditions.
    let rc = unsafe { libc::munlockall() };
    if rc < 0 {
        return Err(SysError::last_os("unlocking memory (munlockall)"));
    }
    Ok(())
}

/// The nice value engine threads ask for: the highest weight the fair
/// scheduler gives (`nice -20`).
pub const ENGINE_NICE: i32 = -20;

/// Gives the calling thread the fair scheduler's nice value `nice`
/// (`setpriority(PRIO_PROCESS, 0, nice)`: on Linux, the calling thread
/// only). `Ok(false)` when not allowed (no CAP_SYS_NICE and `ulimit -e`
/// below it): the thread runs on at the nice value it had.
pub fn set_nice(nice: i32) -> Result<bool, SysError> {
    if !(-20..=19).contains(&nice) {
        return Err(SysError::invalid(format!(
            "nice value {nice}: it must be -20..=19"
        )));
    }
    // SAFETY: setpriority has no memory-safety preconditions; who 0 with
    // PRIO_PROCESS is the calling thread on Linux.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
    if rc < 0 {
        let e = std::io::Error::last_os_error();
        if is_perm(&e) {
            return Ok(false);
        }
        return Err(SysError::io(format!("setting nice {nice}"), e));
    }
    Ok(true)
}

/// The shortest and longest slice the kernel takes (EEVDF clamps
/// `sched_runtime` of a fair task to 0.1–100 ms).
pub const SLICE_NS: std::ops::RangeInclusive<u64> = 100_000..=100_000_000;

/// Asks the scheduler to give the calling thread a slice of `ns`
/// (`sched_setattr` with `sched_runtime` on a fair task; Linux 6.12's
/// EEVDF custom slices). A shorter slice than the others' gives the thread
/// an earlier deadline each time it wakes, so its wake-up preempts a task
/// already on the CPU instead of waiting until that one blocks. Keeps the
/// thread's policy and nice value. `Ok(Some(ns))`: the slice the kernel
/// reports back; `Ok(None)`: the kernel kept no custom slice (before
/// 6.12, or a real-time policy: it reads back 0 or the default), nothing to
/// do about it.
pub fn set_slice(ns: u64) -> Result<Option<u64>, SysError> {
    if !SLICE_NS.contains(&ns) {
        return Err(SysError::invalid(format!(
            "scheduler slice {ns} ns: it must be {}..={} ns",
            SLICE_NS.start(),
            SLICE_NS.end()
        )));
    }
    let size = std::mem::size_of::<libc::sched_attr>() as u32;
    // SAFETY: sched_attr is plain old data; all-zero is a valid value.
    let mut attr: libc::sched_attr = unsafe { std::mem::zeroed() };
    // SAFETY: `attr` is a valid, writable sched_attr of `size` bytes; pid 0
    // is the calling thread.
    let rc = unsafe { libc::syscall(libc::SYS_sched_getattr, 0, &mut attr, size, 0) };
    if rc < 0 {
        return Err(SysError::io(
            "reading the thread's scheduling attributes (sched_getattr)",
            std::io::Error::last_os_error(),
        ));
    }
    if attr.sched_policy != libc::SCHED_OTHER as u32
        && attr.sched_policy != libc::SCHED_BATCH as u32
    {
        return Ok(None);
    }
    attr.size = size;
    attr.sched_runtime = ns;
    // SAFETY: `attr` is a valid sched_attr whose size field says its size;
    // pid 0 is the calling thread.
    let rc = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &attr, 0) };
    if rc < 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EINVAL) || is_perm(&e) {
            return Ok(None);
        }
        return Err(SysError::io(
            format!("setting a scheduler slice of {ns} ns"),
            e,
        ));
    }
    // SAFETY: as for the first read.
    let rc = unsafe { libc::syscall(libc::SYS_sched_getattr, 0, &mut attr, size, 0) };
    Ok((rc == 0 && attr.sched_runtime == ns).then_some(ns))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_outside_the_kernels_range_is_refused() {
        assert!(set_slice(1_000).is_err());
        assert!(set_slice(1_000_000_000).is_err());
    }

    #[test]
    fn a_slice_is_kept_or_said_to_be_unsupported() {
        // On this thread only (each test runs on its own thread).
        match set_slice(200_000) {
            Ok(Some(ns)) => assert_eq!(ns, 200_000),
            Ok(None) => {} // a kernel before 6.12
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn cpu_lists() {
        assert!(cpu_list_contains("0-1", 1));
        assert!(!cpu_list_contains("0-1", 2));
        assert!(cpu_list_contains("0,2-3,7", 7));
        assert!(!cpu_list_contains("0,2-3,7", 1));
    }

    #[test]
    fn invalid_cpu_names_online_cpus() {
        let err = std::thread::spawn(|| pin_to_cpu(4000))
            .join()
            .unwrap()
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("CPU 4000") && msg.contains(&online_cpu_list()),
            "{msg}"
        );
    }

    #[test]
    fn pin_to_cpu0() {
        std::thread::spawn(|| {
            pin_to_cpu(0).expect("pin to 0");
            assert_eq!(current_affinity().unwrap(), vec![0]);
            unpin().unwrap();
            assert_eq!(current_affinity().unwrap().len(), online_cpus());
        })
        .join()
        .unwrap();
        assert!(online_cpus() >= 1);
    }

    #[test]
    fn fifo_priority_and_back() {
        std::thread::spawn(|| {
            assert!(set_fifo_priority(0).is_err());
            assert!(set_fifo_priority(100).is_err());
            match set_fifo_priority(1) {
                Ok(()) => {
                    assert_eq!(current_policy(), (libc::SCHED_FIFO, 1));
                    set_normal_scheduling().unwrap();
                    assert_eq!(current_policy(), (libc::SCHED_OTHER, 0));
                }
                Err(SysError::NeedCapability { cap, .. }) if !crate::host::is_root() => {
                    assert_eq!(cap, "CAP_SYS_NICE")
                }
                Err(e) => panic!("{e}"),
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn lock_and_unlock_memory() {
        match lock_memory() {
            Ok(()) => unlock_memory().unwrap(),
            Err(e) if !crate::host::is_root() => {
                assert!(e.to_string().contains("ulimit -l"), "{e}")
            }
            Err(e) => panic!("{e}"),
        }
    }
}
