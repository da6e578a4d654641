//! Tuning the measuring loop's thread as the flags ask: pinned to a CPU,
//! SCHED_FIFO, memory locked so no page fault lands inside the loop. What
//! was obtained goes into the result's host facts.

use crate::error::Result;
use misura_report::LoopTuning;
use misura_report::Warning;

/// What the flags ask of the loop thread.
#[derive(Clone, Debug, PartialEq)]
pub struct Tuning {
    pub cpu: Option<usize>,
    pub rt_priority: Option<i32>,
    pub lock_memory: bool,
}

/// Tune the calling thread, the one that will run the loop. Pinning and the
/// real-time priority were asked for by name, so failing them is an error;
/// memory that cannot be locked is a warning.
pub fn tune(t: &Tuning, netns: Option<String>, warnings: &mut Vec<Warning>) -> Result<LoopTuning> {
    let mut tuning = LoopTuning {
        netns,
        ..Default::default()
    };
    if let Some(cpu) = t.cpu {
        misura_sys::sched::pin_to_cpu(cpu)?;
        tuning.cpu = Some(cpu);
    }
    if let Some(p) = t.rt_priority {
        misura_sys::sched::set_fifo_priority(p)?;
        tuning.rt_priority = Some(p);
    }
    if t.lock_memory {
        tuning.memory_locked = misura_run::host::lock_memory(warnings);
    }
    Ok(tuning)
}

/// Back to normal scheduling once the loop is over: what follows (the
/// report, the store) needs no real-time priority.
pub fn untune(tuning: &LoopTuning) {
    if tuning.rt_priority.is_some() {
        let _ = misura_sys::sched::set_normal_scheduling();
    }
}
