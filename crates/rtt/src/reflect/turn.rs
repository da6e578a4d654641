//! The reflector loop's common state (the core, its clocks, counters, the
//! stop rule) and its buffer sizes, shared by the UDP and raw-probe loops.

use super::clock;
use misura_measure::reflector::Reflector;
use misura_measure::TimestampSource;
use misura_report::reflect::IoCounters;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Receive buffer: a jumbo frame. A longer datagram is cut short and
/// dropped as malformed (its reply could not be as long as it).
pub(super) const BUF_LEN: usize = 9216;
/// Datagrams handled between two looks at the stop flag.
pub(super) const BATCH: usize = 256;
/// A blocking receive gives up this often to look at the stop flag.
pub(super) const STOP_CHECK: Duration = Duration::from_millis(100);

/// The loop's common state: the core, the clocks, counters, the stop rule.
pub(super) struct Loop<'a> {
    pub reflector: Reflector,
    pub clocks: clock::Clocks,
    pub io: IoCounters,
    pub stop: &'a AtomicUsize,
    pub deadline: Option<Instant>,
    pub busy_poll: bool,
    /// The reflector's turnaround (its TX − RX stamp of each reply) on the
    /// NIC's stamps, and on the kernel's.
    pub turnaround_nic: misura_stats::Summary,
    pub turnaround_kernel: misura_stats::Summary,
}

impl Loop<'_> {
    pub fn should_stop(&self) -> bool {
        self.stop.load(Ordering::Relaxed) != 0 || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    pub fn turnaround(&mut self, source: TimestampSource, ns: i64) {
        match source {
            TimestampSource::NicHardware => self.turnaround_nic.record(ns),
            _ => self.turnaround_kernel.record(ns),
        }
    }
}
