//! The CPU's time-stamp counter (x86-64 only): read it, and say what the
//! CPU and kernel promise about it. Seed 003 read the TSC (37 ns a read then,
//! against 430 ns for gettimeofday) and had to estimate its frequency.

/// Whether this build can read a TSC.
pub const AVAILABLE: bool = cfg!(target_arch = "x86_64");

/// Read the TSC (`RDTSC`). Not ordered against surrounding instructions; see
/// [`read_ordered`]. Returns 0 where there is no TSC.
#[inline]
pub fn read() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        #[allow(unused_unsafe)]
        // SAFETY: RDTSC has no memory effects and is available on every
        // x86-64 CPU; user-space reads are allowed unless the kernel set
        // CR4.TSD, which Linux does not do for ordinary processes.
        unsafe {
            core::arch::x86_64::_rdtsc()
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// Read the TSC with `RDTSCP`, which waits for earlier instructions to
/// finish, and return (counter, processor id from IA32_TSC_AUX).
#[inline]
pub fn read_ordered() -> (u64, u32) {
    #[cfg(target_arch = "x86_64")]
    {
        let mut aux = 0u32;
        #[allow(unused_unsafe)]
        // SAFETY: RDTSCP writes only `aux`, a valid local; every x86-64 CPU
        // Linux runs on in practice has it (the `rdtscp` cpuinfo flag, which
        // callers can check with `flags()`).
        let t = unsafe { core::arch::x86_64::__rdtscp(&mut aux) };
        (t, aux)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        (0, 0)
    }
}

/// TSC-related CPU flags from /proc/cpuinfo: of `tsc`, `rdtscp`,
/// `constant_tsc` (fixed rate across P-states), `nonstop_tsc` (runs in deep
/// C-states), `tsc_known_freq`, `tsc_reliable`, `tsc_adjust`.
pub fn flags() -> Vec<String> {
    const WANTED: [&str; 7] = [
        "tsc",
        "rdtscp",
        "constant_tsc",
        "nonstop_tsc",
        "tsc_known_freq",
        "tsc_reliable",
        "tsc_adjust",
    ];
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let line = text.lines().find(|l| l.starts_with("flags")).unwrap_or("");
    let have: Vec<&str> = line.split_whitespace().collect();
    WANTED
        .iter()
        .filter(|f| have.contains(f))
        .map(|f| f.to_string())
        .collect()
}

/// The kernel's own TSC calibration in kHz, where it says: the `tsc_khz`
/// some kernels expose in sysfs, else the "tsc: Refined TSC clocksource
/// calibration: N MHz" or "tsc: Detected N MHz processor" boot message
/// (needs permission to read the kernel log; None otherwise).
pub fn kernel_khz() -> Option<(f64, String)> {
    for p in [
        "/sys/devices/system/cpu/cpu0/tsc_freq_khz",
        "/sys/module/tsc/parameters/tsc_khz",
    ] {
        if let Some(v) = std::fs::read_to_string(p)
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|v| *v > 0.0)
        {
            return Some((v, p.to_string()));
        }
    }
    let log = std::process::Command::new("dmesg").output().ok()?;
    let text = String::from_utf8_lossy(&log.stdout);
    let mut best = None;
    for l in text.lines() {
        for key in [
            "Refined TSC clocksource calibration:",
            "Detected ",
            "tsc: Detected ",
        ] {
            if !l.contains("tsc") {
                continue;
            }
            if let Some(rest) = l.split(key).nth(1) {
                if let Some(mhz) = rest
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse::<f64>().ok())
                {
                    if rest.contains("MHz") {
                        let refined = key.starts_with("Refined");
                        if refined || best.is_none() {
                            best = Some((mhz * 1000.0, format!("kernel log: {}", l.trim())));
                        }
                    }
                }
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsc_advances() {
        if !AVAILABLE {
            return;
        }
        let a = read();
        let (b, _) = read_ordered();
        let c = read();
        assert!(a > 0 && b >= a && c >= b);
    }
}
