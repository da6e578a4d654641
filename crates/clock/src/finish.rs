//! What every clock measurement does when its loop is over: how it
//! stopped, and the host's fingerprint with its warnings.

use misura_cli::warnings::Warn;
use misura_report::{HostFingerprint, LoopTuning, StopReason, Warning};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Whether the run finished, and why it stopped.
pub(crate) fn completion(stop: &AtomicUsize) -> (bool, StopReason) {
    match stop.load(Ordering::Relaxed) {
        0 => (true, StopReason::Finished),
        s => (false, misura_cli::exit::signal_reason(s)),
    }
}

/// The host fingerprint and its warnings; without the pinning and memory
/// ones unless the loop matters.
pub(crate) fn host_and_warnings(
    tuning: LoopTuning,
    loop_matters: bool,
) -> (HostFingerprint, Vec<Warning>) {
    let host = misura_run::host::fingerprint(tuning);
    let warnings = misura_run::host::warnings_for(&host, loop_matters);
    (host, warnings)
}

/// The same for a loop that tried to lock its memory: without "memory not
/// locked", which `misura_run::host::lock_memory` already reported with
/// the kernel's reason when the lock was refused.
pub(crate) fn host_and_warnings_after_lock(tuning: LoopTuning) -> (HostFingerprint, Vec<Warning>) {
    let (host, mut warnings) = host_and_warnings(tuning, true);
    let not_locked = Warn::MemoryNotLocked.code();
    warnings.retain(|w| w.code != not_locked);
    (host, warnings)
}
