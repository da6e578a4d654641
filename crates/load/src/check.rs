//! The checks of a `misura load` plan: every bound, and the flows and
//! transactions it asks for, planned before anything is measured.

use crate::error::PlanError;
use crate::plan::LoadPlan;

/// Longest loaded phase.
const MAX_DURATION_NS: i64 = 3_600_000_000_000;
/// Shortest loaded phase.
const MIN_DURATION_NS: i64 = 2_000_000_000;
/// Idle phases: long enough for an offset, short enough to be a phase.
const MIN_IDLE_NS: i64 = 1_000_000_000;
const MAX_IDLE_NS: i64 = 600_000_000_000;
/// Streams per direction.
const MAX_STREAMS: u32 = 128;

impl LoadPlan {
    /// Every bound, then the flows and transactions, in that order.
    pub fn check(&self) -> Result<(), PlanError> {
        let d = self.duration.ns;
        if !(MIN_DURATION_NS..=MAX_DURATION_NS).contains(&d) {
            return Err(PlanError::LoadedPhase {
                duration: self.duration.clone(),
            });
        }
        if !(MIN_IDLE_NS..=MAX_IDLE_NS).contains(&self.idle.ns) {
            return Err(PlanError::IdlePhase {
                idle: self.idle.clone(),
            });
        }
        if self.up > MAX_STREAMS || self.down > MAX_STREAMS {
            return Err(PlanError::Streams {
                up: self.up,
                down: self.down,
                max: MAX_STREAMS,
            });
        }
        let no_udp = self.udp_up.is_none() && self.udp_down.is_none();
        if self.up == 0 && self.down == 0 && no_udp {
            return Err(PlanError::NoLoad);
        }
        if self.period.ns * 10 > self.idle.ns {
            return Err(PlanError::FewIdleProbes {
                period: self.period.clone(),
                idle: self.idle.clone(),
            });
        }
        if self.rr {
            crate::rr::check(self)?;
        }
        self.cpu_load.check()?;
        crate::flows::plan(self).map(drop)
    }
}
