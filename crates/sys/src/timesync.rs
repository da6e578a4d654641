//! Is the system clock synchronised? The kernel's NTP state (`adjtimex(2)`).
//!
//! A STAMP reflector says in every reply whether its clock is synchronised
//! (the S bit of the Error Estimate) and to what (Timestamp Information
//! TLV). The kernel knows when a daemon (chrony, ntpd, systemd-timesyncd,
//! or ptp4l/phc2sys through the same interface) disciplines the clock: it
//! clears `STA_UNSYNC` and keeps a maximum error estimate. This reads that
//! state without changing anything (`modes = 0`).

use crate::SysError;

/// `STA_UNSYNC` in `timex.status`: the clock is not synchronised.
const STA_UNSYNC: i32 = 0x0040;
/// `TIME_ERROR`: the return value of `adjtimex` for an unsynchronised clock.
const TIME_ERROR: i32 = 5;

/// The kernel's view of `CLOCK_REALTIME`'s synchronisation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TimeSync {
    /// A discipline daemon keeps the clock synchronised (`STA_UNSYNC`
    /// clear and the state is not `TIME_ERROR`).
    pub synchronized: bool,
    /// Maximum error the kernel states, in nanoseconds (`maxerror`; it
    /// grows by 500 ppm of elapsed time while nobody updates it, up to 16 s).
    pub max_error_ns: u64,
    /// Estimated error, in nanoseconds (`esterror`).
    pub est_error_ns: u64,
}

/// Reads the kernel's synchronisation state (no privilege needed).
pub fn time_sync() -> Result<TimeSync, SysError> {
    // SAFETY: timex is plain old data; all-zero (modes = 0: read only) is valid.
    let mut tx: libc::timex = unsafe { std::mem::zeroed() };
    // SAFETY: `tx` is a valid, writable timex for the duration of the call.
    let state = unsafe { libc::adjtimex(&mut tx) };
    if state < 0 {
        return Err(SysError::last_os(
            "reading the clock's synchronisation state (adjtimex)",
        ));
    }
    Ok(TimeSync {
        synchronized: tx.status & STA_UNSYNC == 0 && state != TIME_ERROR,
        max_error_ns: (tx.maxerror.max(0) as u64).saturating_mul(1000),
        est_error_ns: (tx.esterror.max(0) as u64).saturating_mul(1000),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_without_error() {
        let s = super::time_sync().expect("adjtimex works everywhere on Linux");
        assert!(s.max_error_ns >= s.est_error_ns || !s.synchronized);
    }
}
