//! Cross-timestamps of a PTP hardware clock against the system clock
//! (`CLOCK_REALTIME`): the raw material for relating two NICs' clocks when
//! no PTP synchronises them.
//!
//! Four ways, best first, as the kernel's `testptp.c` and linuxptp's
//! `phc2sys` try them:
//!
//! * `PTP_SYS_OFFSET_PRECISE`: the device and the system clock captured at
//!   one instant by hardware (PCIe PTM or Intel ART); no sandwich at all.
//! * `PTP_SYS_OFFSET_EXTENDED`: the driver reads the system clock just
//!   before and just after the one register read that latches the PHC, so
//!   the window holds only that read.
//! * `PTP_SYS_OFFSET`: the kernel reads system, PHC, system, … around the
//!   driver's whole `gettime64`, so the window holds the driver's locking.
//! * a user-space sandwich: `clock_gettime` on the system clock, the PHC
//!   (its dynamic clock id) and the system clock again; two system calls
//!   wide, but always available where the PHC can be read.
//!
//! Each sample is (system before, PHC, system after); for the precise method
//! before = after. The fit and its uncertainty are pure code in
//! `misura_measure::phc_track`.

use crate::phc::PhcClock;
use crate::SysError;

/// How a cross-timestamp was taken.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum CrossMethod {
    /// `PTP_SYS_OFFSET_PRECISE`.
    Precise,
    /// `PTP_SYS_OFFSET_EXTENDED`.
    Extended,
    /// `PTP_SYS_OFFSET`.
    Basic,
    /// `clock_gettime` system, PHC, system from user space.
    UserSandwich,
}

impl CrossMethod {
    /// Best first.
    pub const ALL: [CrossMethod; 4] = [
        CrossMethod::Precise,
        CrossMethod::Extended,
        CrossMethod::Basic,
        CrossMethod::UserSandwich,
    ];

    /// The name results and messages use (the ioctl's name).
    pub fn name(self) -> &'static str {
        match self {
            CrossMethod::Precise => "PTP_SYS_OFFSET_PRECISE",
            CrossMethod::Extended => "PTP_SYS_OFFSET_EXTENDED",
            CrossMethod::Basic => "PTP_SYS_OFFSET",
            CrossMethod::UserSandwich => "clock_gettime sandwich",
        }
    }

    /// Parses [`CrossMethod::name`] or a short form (`precise`, `extended`,
    /// `basic`, `sandwich`).
    pub fn parse(s: &str) -> Option<CrossMethod> {
        let l = s.to_ascii_lowercase();
        CrossMethod::ALL.into_iter().find(|m| {
            l == m.name().to_ascii_lowercase()
                || l == match m {
                    CrossMethod::Precise => "precise",
                    CrossMethod::Extended => "extended",
                    CrossMethod::Basic => "basic",
                    CrossMethod::UserSandwich => "sandwich",
                }
        })
    }
}

/// One cross-timestamp, all in nanoseconds: the PHC's reading lies between
/// the two system clock (`CLOCK_REALTIME`) readings.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CrossStamp {
    pub sys_before: i64,
    pub phc: i64,
    pub sys_after: i64,
}

/// Up to this many samples per ioctl (`PTP_MAX_SAMPLES`).
pub const MAX_SAMPLES: u32 = 25;

fn ns(t: &libc::ptp_clock_time) -> i64 {
    t.sec
        .saturating_mul(1_000_000_000)
        .saturating_add(t.nsec as i64)
}

impl PhcClock {
    /// `n` cross-timestamps (1 to [`MAX_SAMPLES`]) by the first method of
    /// `methods` that this driver answers, with the method used. A method
    /// the driver does not have (`EOPNOTSUPP`, `EINVAL`, `ENOTTY`) falls
    /// through to the next; any other error is returned.
    pub fn cross_timestamp(
        &self,
        n: u32,
        methods: &[CrossMethod],
    ) -> Result<(CrossMethod, Vec<CrossStamp>), SysError> {
        let n = n.clamp(1, MAX_SAMPLES);
        let mut tried = Vec::new();
        for &m in methods {
            match self.cross_timestamp_by(m, n) {
                Ok(v) => return Ok((m, v)),
                Err(e) if unsupported(&e) => tried.push(m.name()),
                Err(e) => return Err(e),
            }
        }
        Err(SysError::Unsupported {
            what: "cross-timestamping a PTP hardware clock against the system clock".into(),
            why: format!("the driver answers none of {}", tried.join(", ")),
        })
    }

    /// `n` cross-timestamps by one method.
    pub fn cross_timestamp_by(
        &self,
        method: CrossMethod,
        n: u32,
    ) -> Result<Vec<CrossStamp>, SysError> {
        let n = n.clamp(1, MAX_SAMPLES);
        let fd = self.raw_fd();
        match method {
            CrossMethod::Precise => (0..n)
                .map(|_| {
                    // SAFETY: all-zero is a valid ptp_sys_offset_precise.
                    let mut p: libc::ptp_sys_offset_precise = unsafe { std::mem::zeroed() };
                    // SAFETY: `fd` is an open PTP clock device; the ioctl
                    // writes only into `p`, which has the size its number
                    // encodes.
                    let r = unsafe { libc::ioctl(fd, libc::PTP_SYS_OFFSET_PRECISE, &mut p) };
                    if r != 0 {
                        return Err(SysError::last_os("PTP_SYS_OFFSET_PRECISE"));
                    }
                    let sys = ns(&p.sys_realtime);
                    Ok(CrossStamp {
                        sys_before: sys,
                        phc: ns(&p.device),
                        sys_after: sys,
                    })
                })
                .collect(),
            CrossMethod::Extended => {
                // SAFETY: all-zero is a valid ptp_sys_offset_extended
                // (clockid 0 is CLOCK_REALTIME, the only one older kernels know).
                let mut p: libc::ptp_sys_offset_extended = unsafe { std::mem::zeroed() };
                p.n_samples = n;
                // SAFETY: as above; the kernel fills ts[0..n].
                let r = unsafe { libc::ioctl(fd, libc::PTP_SYS_OFFSET_EXTENDED, &mut p) };
                if r != 0 {
                    return Err(SysError::last_os("PTP_SYS_OFFSET_EXTENDED"));
                }
                Ok(p.ts[..n as usize]
                    .iter()
                    .map(|t| CrossStamp {
                        sys_before: ns(&t[0]),
                        phc: ns(&t[1]),
                        sys_after: ns(&t[2]),
                    })
                    .collect())
            }
            CrossMethod::Basic => {
                // SAFETY: all-zero is a valid ptp_sys_offset.
                let mut p: libc::ptp_sys_offset = unsafe { std::mem::zeroed() };
                p.n_samples = n;
                // SAFETY: as above; the kernel fills ts[0..2n+1].
                let r = unsafe { libc::ioctl(fd, libc::PTP_SYS_OFFSET, &mut p) };
                if r != 0 {
                    return Err(SysError::last_os("PTP_SYS_OFFSET"));
                }
                Ok((0..n as usize)
                    .map(|i| CrossStamp {
                        sys_before: ns(&p.ts[2 * i]),
                        phc: ns(&p.ts[2 * i + 1]),
                        sys_after: ns(&p.ts[2 * i + 2]),
                    })
                    .collect())
            }
            CrossMethod::UserSandwich => (0..n)
                .map(|_| {
                    let sys_before = crate::clock::realtime_ns();
                    let phc = crate::clock::try_now_ns(self.clock_id())
                        .map_err(|e| SysError::io("reading the PTP clock (clock_gettime)", e))?;
                    let sys_after = crate::clock::realtime_ns();
                    Ok(CrossStamp {
                        sys_before,
                        phc,
                        sys_after,
                    })
                })
                .collect(),
        }
    }
}

/// The driver or kernel lacks that way of cross-timestamping.
fn unsupported(e: &SysError) -> bool {
    match e {
        SysError::Io { source, .. } => matches!(
            source.raw_os_error(),
            Some(libc::EOPNOTSUPP) | Some(libc::EINVAL) | Some(libc::ENOTTY) | Some(libc::ENODEV)
        ),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_parse_back() {
        for m in CrossMethod::ALL {
            assert_eq!(CrossMethod::parse(m.name()), Some(m));
        }
        assert_eq!(CrossMethod::parse("extended"), Some(CrossMethod::Extended));
        assert_eq!(
            CrossMethod::parse("SANDWICH"),
            Some(CrossMethod::UserSandwich)
        );
        assert_eq!(CrossMethod::parse("ptp"), None);
    }

    #[test]
    fn clock_time_to_ns() {
        let t = libc::ptp_clock_time {
            sec: 2,
            nsec: 5,
            reserved: 0,
        };
        assert_eq!(ns(&t), 2_000_000_005);
    }

    #[test]
    fn ioctl_sizes_match_the_kernel_header() {
        // linux/ptp_clock.h: 16-byte ptp_clock_time, 2*25+1 of them after a
        // 16-byte head; 25*3 after a 16-byte head; three plus 16 bytes.
        assert_eq!(std::mem::size_of::<libc::ptp_sys_offset>(), 16 + 51 * 16);
        assert_eq!(
            std::mem::size_of::<libc::ptp_sys_offset_extended>(),
            16 + 75 * 16
        );
        assert_eq!(std::mem::size_of::<libc::ptp_sys_offset_precise>(), 64);
    }
}
