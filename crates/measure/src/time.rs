//! Where a timestamp came from.

use serde::{Deserialize, Serialize};

/// The origin of a timestamp, carried next to every figure derived from it.
///
/// All sources misura combines in one frame record share one timescale
/// (CLOCK_REALTIME on Linux: the kernel's software stamps use it, so the user
/// windows are read from it too). NIC hardware stamps live on the NIC's own
/// clock and are only ever compared with stamps from the same clock.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimestampSource {
    /// `clock_gettime()` read by misura around a system call.
    UserClock,
    /// `SO_TIMESTAMPING` software stamps taken by the kernel at the driver.
    KernelSoftware,
    /// `SO_TIMESTAMPING` raw hardware stamps taken by the NIC.
    NicHardware,
}

impl TimestampSource {
    pub fn as_str(self) -> &'static str {
        match self {
            TimestampSource::UserClock => "user clock",
            TimestampSource::KernelSoftware => "kernel software",
            TimestampSource::NicHardware => "NIC hardware",
        }
    }
}
