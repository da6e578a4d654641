//! What both of serve's accept loops (misura's own and `--iperf3`) do
//! when accept() fails: its own module, so that the iperf3 server can use
//! it without importing serve's top (which starts the iperf3 server).

use std::time::Duration;

/// After a failed accept(): nothing when it only timed out (SO_RCVTIMEO,
/// to look at the stop flag); otherwise (EMFILE/ENFILE and the like, the
/// connection still in the backlog) say so and rest 100 ms instead of
/// spinning on the same error.
pub(crate) fn accept_failed(e: &std::io::Error, quiet: bool, who: &str) {
    if matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut
            | std::io::ErrorKind::Interrupted
    ) {
        return;
    }
    if !quiet {
        log::warn!("{who}: accept: {e}");
    }
    std::thread::sleep(Duration::from_millis(100));
}
