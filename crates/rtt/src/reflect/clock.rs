//! The reflector's clocks as its replies state them: the system clock
//! (the kernel's NTP state) for software stamps, and the NIC's PTP
//! hardware clock for hardware stamps (its offset from the system clock,
//! and whether ptp4l/phc2sys discipline it).

use misura_measure::reflector::{ClockState, Stamp};
use misura_measure::time;
use misura_measure::TimestampSource;
use misura_sys::phc::PhcClock;
use misura_wire::stamp::sync_source;
use std::time::{Duration, Instant};

/// How often the clocks' state is read again.
const REFRESH: Duration = Duration::from_secs(1);
/// Paired reads per look at the PHC's offset.
const OFFSET_READS: u32 = 5;

/// The kernel's NTP state, as the reflector states it in its replies.
pub fn system_state() -> ClockState {
    match misura_sys::timesync::time_sync() {
        Ok(t) if t.synchronized => ClockState {
            synchronized: true,
            sync_source: sync_source::NTP,
            uncertainty_ns: t.max_error_ns.max(1),
        },
        Ok(t) => ClockState {
            uncertainty_ns: t.max_error_ns.max(ClockState::FREE_RUNNING.uncertainty_ns),
            ..ClockState::FREE_RUNNING
        },
        Err(_) => ClockState::FREE_RUNNING,
    }
}

/// A NIC stamp's state: PTP-synchronised (S set) when a PTP daemon
/// disciplines the clock, else free-running; its error against UTC is
/// what the system clock knows of UTC plus the PHC's measured distance
/// from the system clock (one second when that is unknown).
pub fn nic_state(system: &ClockState, offset: Option<(f64, f64)>, disciplined: bool) -> ClockState {
    let uncertainty_ns = match offset {
        Some((off, half)) => (off.abs() + half).ceil() as u64 + system.uncertainty_ns,
        None => ClockState::FREE_RUNNING.uncertainty_ns,
    };
    ClockState {
        synchronized: disciplined,
        sync_source: if disciplined {
            sync_source::PTP
        } else {
            sync_source::LOCAL_FREE_RUNNING
        },
        uncertainty_ns: uncertainty_ns.max(1),
    }
}

/// The NIC's clock, when its stamps are on.
pub struct Nic {
    /// `/dev/ptpN`.
    pub device: String,
    phc: Option<PhcClock>,
    /// PTP daemons that name it.
    pub disciplined_by: Vec<String>,
    /// Why the clock cannot be read, when it cannot.
    pub error: Option<String>,
    /// PHC − CLOCK_REALTIME and its half-width, ns, last read.
    pub offset: Option<(f64, f64)>,
    pub state: ClockState,
}

/// Both clocks, read again every second.
pub struct Clocks {
    pub system: ClockState,
    pub nic: Option<Nic>,
    read: Instant,
}

impl Clocks {
    /// The system clock, and the NIC's clock `/dev/ptp{phc_index}` when
    /// hardware stamps are on (a clock that cannot be opened is kept with
    /// its error: its stamps still come, their Error Estimate says one
    /// second).
    pub fn new(phc_index: Option<i32>) -> Clocks {
        let system = system_state();
        let nic = phc_index.map(|i| {
            let device = format!("/dev/ptp{i}");
            let dev = misura_sys::phc::list()
                .into_iter()
                .find(|d| d.dev.display().to_string() == device);
            let disciplined_by = dev
                .as_ref()
                .map(|d| misura_run::ptp::disciplining(d, &misura_run::ptp::daemons()))
                .unwrap_or_default();
            let (phc, error) = match PhcClock::open(std::path::Path::new(&device)) {
                Ok(c) => (Some(c), None),
                Err(e) => (None, Some(e.to_string())),
            };
            let mut n = Nic {
                device,
                phc,
                disciplined_by,
                error,
                offset: None,
                state: ClockState::FREE_RUNNING,
            };
            n.read(&system);
            n
        });
        Clocks {
            system,
            nic,
            read: Instant::now(),
        }
    }

    /// Reads the clocks again when a second has passed.
    pub fn refresh(&mut self) {
        if self.read.elapsed() < REFRESH {
            return;
        }
        self.system = system_state();
        if let Some(n) = self.nic.as_mut() {
            n.read(&self.system);
        }
        self.read = Instant::now();
    }

    /// The state of the clock `rx` was taken on.
    pub fn for_stamp(&self, rx: &Stamp) -> &ClockState {
        match (&self.nic, rx.source) {
            (Some(n), TimestampSource::NicHardware) => &n.state,
            _ => &self.system,
        }
    }
}

impl Nic {
    fn read(&mut self, system: &ClockState) {
        if let Some(phc) = &self.phc {
            self.offset = misura_run::ptp::offset_now(phc, OFFSET_READS);
            if self.offset.is_none() {
                self.error = Some(format!("{} could not be read", self.device));
            }
        }
        self.state = nic_state(system, self.offset, !self.disciplined_by.is_empty());
    }
}

/// The request's RX stamp: the NIC's when `hardware` (hardware stamps
/// on and one came), else the kernel's, else the user clock read right
/// after the receive.
pub fn rx_stamp(
    software: Option<time::Instant>,
    hw: Option<time::Instant>,
    after_recv: time::Instant,
) -> Stamp {
    match (hw, software) {
        (Some(at), _) => Stamp {
            at,
            source: TimestampSource::NicHardware,
        },
        (None, Some(at)) => Stamp {
            at,
            source: TimestampSource::KernelSoftware,
        },
        (None, None) => Stamp {
            at: after_recv,
            source: TimestampSource::UserClock,
        },
    }
}

/// The reply's Timestamp (its transmit time) on the clock of `rx`: the
/// user clock before the send for software stamps; for a NIC stamp, the
/// NIC's RX stamp plus the time since the kernel's RX stamp on the user
/// clock (both clocks tick at the same rate to a few ppm over these µs),
/// so the reply's two stamps are on one clock. The precise transmit stamp
/// follows up either way.
pub fn reply_timestamp(
    rx: &Stamp,
    software: Option<time::Instant>,
    now: time::Instant,
) -> time::Instant {
    match (rx.source, software) {
        (TimestampSource::NicHardware, Some(sw)) => rx.at + (now - sw).max(time::Span::ZERO),
        (TimestampSource::NicHardware, None) => rx.at,
        _ => now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nic_stamps_state_their_clock() {
        let ntp = ClockState {
            synchronized: true,
            sync_source: sync_source::NTP,
            uncertainty_ns: 2_000,
        };
        let free = nic_state(&ntp, Some((-1_500.4, 300.0)), false);
        assert!(!free.synchronized);
        assert_eq!(free.sync_source, sync_source::LOCAL_FREE_RUNNING);
        assert_eq!(free.uncertainty_ns, 1_801 + 2_000);
        let ptp = nic_state(&ntp, Some((20.0, 10.0)), true);
        assert!(ptp.synchronized);
        assert_eq!(ptp.sync_source, sync_source::PTP);
        // An unreadable PHC: a second.
        assert_eq!(nic_state(&ntp, None, false).uncertainty_ns, 1_000_000_000);
    }

    #[test]
    fn the_reply_stays_on_the_clock_of_its_rx_stamp() {
        let at = time::Instant::from_ns;
        let hw = rx_stamp(Some(at(1_000_000)), Some(at(5_000)), at(1_000_900));
        assert_eq!(hw.source, TimestampSource::NicHardware);
        // 700 ns after the kernel's RX stamp, on the NIC's clock.
        assert_eq!(
            reply_timestamp(&hw, Some(at(1_000_000)), at(1_000_700)),
            at(5_700)
        );
        let sw = rx_stamp(Some(at(1_000_000)), None, at(1_000_900));
        assert_eq!(sw.source, TimestampSource::KernelSoftware);
        assert_eq!(
            reply_timestamp(&sw, Some(at(1_000_000)), at(1_000_700)),
            at(1_000_700)
        );
        let user = rx_stamp(None, None, at(42));
        assert_eq!((user.at, user.source), (at(42), TimestampSource::UserClock));
    }
}
