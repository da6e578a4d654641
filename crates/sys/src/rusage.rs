//! CPU time the kernel has accounted to this process or thread
//! (`getrusage(2)`): user and system time in nanoseconds, for CPU
//! utilisation and service demand (seed 004's netperf figures).

fn usage(who: libc::c_int) -> (u64, u64) {
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage for the duration of the call.
    let rc = unsafe { libc::getrusage(who, &mut ru) };
    if rc != 0 {
        return (0, 0);
    }
    let ns = |tv: libc::timeval| {
        (tv.tv_sec.max(0) as u64) * 1_000_000_000 + (tv.tv_usec.max(0) as u64) * 1000
    };
    (ns(ru.ru_utime), ns(ru.ru_stime))
}

/// The whole process's (all threads') CPU time so far: `(user_ns, system_ns)`
/// (`RUSAGE_SELF`). The kernel accounts it in ticks or microseconds, so a
/// difference over less than a few milliseconds says little.
pub fn process_cpu() -> (u64, u64) {
    usage(libc::RUSAGE_SELF)
}

/// The calling thread's CPU time so far: `(user_ns, system_ns)`
/// (`RUSAGE_THREAD`).
pub fn thread_cpu() -> (u64, u64) {
    usage(libc::RUSAGE_THREAD)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work() {
        let (u0, s0) = process_cpu();
        let (tu0, ts0) = thread_cpu();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_millis(50) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let (u1, s1) = process_cpu();
        let (tu1, ts1) = thread_cpu();
        assert!(u1 + s1 > u0 + s0, "process CPU time did not grow");
        assert!(tu1 + ts1 > tu0 + ts0, "thread CPU time did not grow");
        assert!(
            tu1 + ts1 <= u1 + s1 + 1_000_000,
            "a thread used more than its process"
        );
    }
}
