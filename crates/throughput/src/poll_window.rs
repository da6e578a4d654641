//! The busy-poll window of a TCP reader that drives its sockets from one
//! poll(2) loop: `misura serve --busy-poll` (the server reading a forward
//! test) and `misura tcp --busy-poll` (the client reading a reverse or
//! bidirectional one). Before the loop sleeps it keeps polling for up to
//! the window, so data that comes within it is read without a wake-up: on
//! a VM each wake-up of an idle CPU costs the sender's CPU an interrupt
//! through the hypervisor (docs/own-cost.md).

use crate::error::Refusal;
use misura_cli::units::DurationArg;
use std::time::Duration;

/// The longest window: beyond it the reader spins through every gap, a
/// whole CPU.
pub const MAX: Duration = Duration::from_millis(1);

/// `--busy-poll`: zero or more, up to [`MAX`].
pub fn window(d: &DurationArg) -> Result<Duration, Refusal> {
    if d.ns < 0 || d.std() > MAX {
        return Err(Refusal::BusyPoll {
            value: d.clone(),
            max: MAX,
        });
    }
    Ok(d.std())
}
