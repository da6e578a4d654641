//! Words the first line of several text reports shares: where the run was
//! (its network namespace) and whether it stopped early.

use crate::model::run::StopReason;

/// " (netns NAME)" after the ports of a run in a namespace; nothing
/// otherwise.
pub(super) fn in_netns(netns: Option<&str>) -> String {
    netns.map(|n| format!(" (netns {n})")).unwrap_or_default()
}

/// "  [PARTIAL: why]" at the end of the first line of a result that stopped
/// early; nothing for a complete one.
pub(super) fn partial(complete: bool, reason: &StopReason) -> String {
    if complete {
        String::new()
    } else {
        format!("  [PARTIAL: {reason}]")
    }
}
