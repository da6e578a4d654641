//! NIC hardware clocks (PHCs) against the system clock, for `clock
//! sources`, `host check` and `reflect`: each clock's read cost, its
//! offset and drift against CLOCK_REALTIME, and the PTP daemons
//! (ptp4l, phc2sys, ...) that may be disciplining it.

use misura_measure::phc_track::{ClockTrack, CrossSample};
use misura_report::clock::{PhcInfo, PtpDaemon};
use misura_stats::Summary;
use misura_sys::clock::{monotonic_raw_ns, realtime_ns, try_now_ns};
use misura_sys::phc::{PhcClock, PtpDevice};
use misura_sys::phc_cross::CrossMethod;

/// Processes that synchronise PTP clocks, by their `comm`.
const DAEMONS: [&str; 4] = ["ptp4l", "phc2sys", "ts2phc", "timemaster"];
/// Most /proc entries looked at (a bounded scan).
const MAX_PROCS: usize = 65_536;
/// Most bytes of a daemon's command line kept.
const MAX_CMDLINE: usize = 256;

/// The PTP daemons running now (a scan of /proc/*/comm).
pub fn daemons() -> Vec<PtpDaemon> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out: Vec<PtpDaemon> = dir
        .flatten()
        .take(MAX_PROCS)
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
            let name = DAEMONS.iter().find(|d| **d == comm.trim())?;
            let raw = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let mut cmdline: String = String::from_utf8_lossy(&raw)
                .split('\0')
                .filter(|a| !a.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            if cmdline.len() > MAX_CMDLINE {
                let mut cut = MAX_CMDLINE;
                while !cmdline.is_char_boundary(cut) {
                    cut -= 1;
                }
                cmdline.truncate(cut);
            }
            Some(PtpDaemon {
                name: name.to_string(),
                pid,
                cmdline,
            })
        })
        .collect();
    out.sort_by_key(|d| d.pid);
    out
}

/// The daemons whose command line names `dev`'s clock or one of its
/// interfaces, or that follow every clock (`phc2sys -a`, timemaster).
pub fn disciplining(dev: &PtpDevice, daemons: &[PtpDaemon]) -> Vec<String> {
    let dev_path = dev.dev.display().to_string();
    daemons
        .iter()
        .filter(|d| {
            let args: Vec<&str> = d.cmdline.split(' ').collect();
            d.name == "timemaster"
                || (d.name == "phc2sys" && args.contains(&"-a"))
                || args
                    .iter()
                    .any(|a| *a == dev_path || dev.interfaces.iter().any(|i| a == i))
        })
        .map(|d| format!("{} (pid {})", d.name, d.pid))
        .collect()
}

/// Median and p99 cost of one `clock_gettime` on `clock`, ns, over `reads`
/// single reads each timed with CLOCK_MONOTONIC_RAW (the empty bracket's
/// median subtracted).
fn read_cost(clock: &PhcClock, reads: usize) -> std::io::Result<(Option<f64>, Option<f64>)> {
    let id = clock.clock_id();
    let mut bracket = Summary::new();
    for _ in 0..reads.min(2_000) {
        let t0 = monotonic_raw_ns();
        let t1 = monotonic_raw_ns();
        bracket.record(t1 - t0);
    }
    let empty = bracket.quantile(0.5).unwrap_or(0);
    let mut cost = Summary::new();
    for _ in 0..reads {
        let t0 = monotonic_raw_ns();
        let ok = try_now_ns(id).is_ok();
        let t1 = monotonic_raw_ns();
        if !ok {
            return Err(std::io::Error::last_os_error());
        }
        cost.record((t1 - t0 - empty).max(0));
    }
    let q = |p: f64| cost.quantile(p).map(|v| v as f64);
    Ok((q(0.5), q(0.99)))
}

/// `rounds` rounds of cross-timestamps of `clock` against CLOCK_REALTIME,
/// `gap` apart, by the best method the driver answers, fitted (offset and
/// drift, `misura_measure::phc_track`); the method's name.
fn track(
    clock: &PhcClock,
    rounds: usize,
    per_round: u32,
    gap: std::time::Duration,
) -> Result<(ClockTrack, &'static str), String> {
    let mut t = ClockTrack::new();
    let mut method = "";
    for r in 0..rounds {
        if r > 0 {
            std::thread::sleep(gap);
        }
        let (m, stamps) = clock
            .cross_timestamp(per_round, &CrossMethod::ALL)
            .map_err(|e| e.to_string())?;
        method = m.name();
        // A refused round (a preempted read) is counted by the track.
        let _ = t.add_round(&cross_samples(&stamps));
    }
    Ok((t, method))
}

/// How hard to look at each clock.
#[derive(Copy, Clone, Debug)]
pub struct Effort {
    /// Single reads timed for the read cost.
    pub reads: usize,
    /// Rounds of cross-timestamps (one fitted point each), `gap_ms` apart.
    pub rounds: usize,
    /// Cross-timestamps per round (the narrowest is the point).
    pub per_round: u32,
    pub gap_ms: u64,
}

impl Effort {
    /// About a quarter of a second per clock.
    pub const QUICK: Effort = Effort {
        reads: 1_000,
        rounds: 9,
        per_round: 10,
        gap_ms: 25,
    };
}

/// `dev` read against the system clock; a clock that cannot be opened or
/// read is a row with its error, never a failure.
pub fn measure(dev: &PtpDevice, daemons: &[PtpDaemon], effort: Effort) -> PhcInfo {
    let mut info = PhcInfo {
        device: dev.dev.display().to_string(),
        clock_name: dev.clock_name.clone(),
        interfaces: dev.interfaces.clone(),
        usable: false,
        error: None,
        read_cost_median_ns: None,
        read_cost_p99_ns: None,
        reads: 0,
        method: None,
        samples: 0,
        offset_ns: None,
        offset_uncertainty_ns: None,
        drift_ppm: None,
        drift_uncertainty_ppm: None,
        span_ns: None,
        disciplined_by: disciplining(dev, daemons),
    };
    let clock = match PhcClock::open(&dev.dev) {
        Ok(c) => c,
        Err(e) => {
            info.error = Some(format!(
                "{e}: no read cost, offset or drift for this clock (hardware stamps on its interfaces still come, but cannot be related to the system clock)"
            ));
            return info;
        }
    };
    let (median, p99) = match read_cost(&clock, effort.reads) {
        Ok(c) => c,
        Err(e) => {
            info.error = Some(format!(
                "clock_gettime on {} failed: {e}; no read cost, offset or drift",
                info.device
            ));
            return info;
        }
    };
    info.usable = true;
    info.read_cost_median_ns = median;
    info.read_cost_p99_ns = p99;
    info.reads = effort.reads as u64;
    let gap = std::time::Duration::from_millis(effort.gap_ms);
    let (t, method) = match track(&clock, effort.rounds, effort.per_round, gap) {
        Ok(t) => t,
        Err(e) => {
            info.error = Some(format!("cross-timestamping {}: {e}", info.device));
            return info;
        }
    };
    info.method = Some(method.to_string());
    info.samples = effort.rounds as u64 * u64::from(effort.per_round);
    if let Some(f) = t.describe(realtime_ns()) {
        // ≈95 %: twice the points' scatter about the line, plus where in
        // its sandwich the PHC was really read.
        info.offset_ns = Some(f.offset_ns);
        info.offset_uncertainty_ns = Some(2.0 * f.residual_ns + f.median_half_width.as_ns() as f64);
        info.drift_ppm = Some(f.drift_ppm);
        info.drift_uncertainty_ppm = Some(2.0 * f.drift_se_ppm);
        info.span_ns = Some(f.span.as_ns());
    } else {
        info.error = Some(format!(
            "{} of {} rounds of cross-timestamps refused (sandwiches wider than 1 ms): no offset or drift",
            t.rejected(),
            effort.rounds
        ));
    }
    info
}

/// Every PHC of the host against the system clock, and the daemons.
pub fn survey(effort: Effort) -> (Vec<PhcInfo>, Vec<PtpDaemon>) {
    let d = daemons();
    let phcs = misura_sys::phc::list()
        .iter()
        .map(|dev| measure(dev, &d, effort))
        .collect();
    (phcs, d)
}

/// PHC − CLOCK_REALTIME now and its uncertainty (half the narrowest
/// sandwich), ns, from one round of `n` cross-timestamps (the reflector's
/// Error Estimate for hardware stamps).
pub fn offset_now(clock: &PhcClock, n: u32) -> Option<(f64, f64)> {
    let (_, s) = clock.cross_timestamp(n, &CrossMethod::ALL).ok()?;
    let b = s
        .iter()
        .filter(|s| s.sys_after >= s.sys_before)
        .min_by_key(|s| s.sys_after - s.sys_before)?;
    let w = b.sys_after - b.sys_before;
    Some(((b.phc - (b.sys_before + w / 2)) as f64, w as f64 / 2.0))
}

/// `sys`'s cross-timestamps as the samples `measure`'s clock track takes.
pub(crate) fn cross_samples(stamps: &[misura_sys::phc_cross::CrossStamp]) -> Vec<CrossSample> {
    stamps
        .iter()
        .map(|s| CrossSample {
            sys_before: s.sys_before,
            phc: s.phc,
            sys_after: s.sys_after,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn daemon(name: &str, cmdline: &str) -> PtpDaemon {
        PtpDaemon {
            name: name.into(),
            pid: 7,
            cmdline: cmdline.into(),
        }
    }

    #[test]
    fn daemons_are_matched_to_clocks_by_their_arguments() {
        let dev = PtpDevice {
            name: "ptp1".into(),
            dev: PathBuf::from("/dev/ptp1"),
            clock_name: Some("e1000e".into()),
            interfaces: vec!["eth1".into()],
        };
        let ds = [
            daemon("ptp4l", "ptp4l -i eth1 -m"),
            daemon("ptp4l", "ptp4l -i eth10"),
            daemon("phc2sys", "phc2sys -s /dev/ptp1 -c CLOCK_REALTIME"),
            daemon("phc2sys", "phc2sys -a -r"),
            daemon("phc2sys", "phc2sys -s eth0 -c CLOCK_REALTIME"),
        ];
        let got = disciplining(&dev, &ds);
        assert_eq!(got.len(), 3, "{got:?}");
        assert!(disciplining(&dev, &ds[1..2]).is_empty());
    }

    #[test]
    fn a_missing_clock_is_a_row_with_its_error() {
        let dev = PtpDevice {
            name: "ptp999".into(),
            dev: PathBuf::from("/dev/ptp999"),
            clock_name: None,
            interfaces: vec![],
        };
        let i = measure(&dev, &[], Effort::QUICK);
        assert!(!i.usable);
        let e = i.error.unwrap();
        assert!(
            e.contains("/dev/ptp999") && e.contains("cannot be related"),
            "{e}"
        );
    }
}
