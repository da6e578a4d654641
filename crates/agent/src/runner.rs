//! One measurement of one target: `misura rtt …` or `misura oneway …` as a
//! child process (the same binary), bounded in time and output, always
//! reaped. A child keeps a crashing or wedged measurement from taking the
//! agent with it, and the kernel frees everything it held when it exits.

use crate::config::Target;
use crate::metrics::ErrorReason;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A result document larger than this is not a result.
const MAX_STDOUT: u64 = 32 << 20;
/// Tail of the child's stderr kept for the log line.
const STDERR_TAIL: usize = 2048;

/// What one run produced.
pub enum RunOutput {
    /// The child's stdout (a JSON result, not yet parsed), and whether it
    /// exited successfully.
    Done {
        stdout: Vec<u8>,
        success: bool,
        stderr_tail: String,
    },
    Failed {
        reason: ErrorReason,
        detail: String,
    },
    /// The agent is stopping; the child was killed.
    Stopped,
}

/// The time limit of one run: its schedule and timeout, plus generous room
/// for process start-up and the host fingerprint.
pub fn time_limit(t: &Target) -> Duration {
    Duration::from_nanos((t.run_ns() as u64).saturating_mul(3) / 2) + Duration::from_secs(10)
}

fn tail(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(&bytes[bytes.len().saturating_sub(STDERR_TAIL)..]);
    s.trim().lines().last().unwrap_or("").to_string()
}

/// Run `target` once; `extra` arguments go after its own (e.g. `--frames`).
pub fn run(exe: &Path, target: &Target, extra: &[String], stop: &AtomicUsize) -> RunOutput {
    let mut child = match Command::new(exe)
        .args(target.child_args())
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            return RunOutput::Failed {
                reason: ErrorReason::Spawn,
                detail: format!("cannot start {}: {e}", exe.display()),
            }
        }
    };
    // Drain both pipes concurrently so a large result never blocks the child.
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = (&mut out).take(MAX_STDOUT + 1).read_to_end(&mut v);
        // Keep draining past the limit so the child can finish.
        let _ = std::io::copy(&mut out, &mut std::io::sink());
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let mut chunk = [0u8; 4096];
        while let Ok(n) = err.read(&mut chunk) {
            if n == 0 {
                break;
            }
            v.extend_from_slice(&chunk[..n]);
            if v.len() > 2 * STDERR_TAIL {
                v.drain(..v.len() - STDERR_TAIL);
            }
        }
        v
    });
    let deadline = Instant::now() + time_limit(target);
    let outcome = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) => {}
            Err(e) => {
                break Err((
                    ErrorReason::Spawn,
                    format!("waiting for the measurement: {e}"),
                ))
            }
        }
        if stop.load(Ordering::Relaxed) != 0 {
            break Err((ErrorReason::Timeout, String::new()));
        }
        if Instant::now() >= deadline {
            break Err((
                ErrorReason::Timeout,
                format!(
                    "no result within {:.1} s: killed",
                    time_limit(target).as_secs_f64()
                ),
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if outcome.is_err() {
        let _ = child.kill();
    }
    // Always reap, also after kill.
    let _ = child.wait();
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    match outcome {
        Ok(status) if stdout.len() as u64 > MAX_STDOUT => {
            let _ = status;
            RunOutput::Failed {
                reason: ErrorReason::BadOutput,
                detail: format!("result larger than {MAX_STDOUT} bytes"),
            }
        }
        Ok(status) => RunOutput::Done {
            stdout,
            success: status.success(),
            stderr_tail: tail(&stderr),
        },
        Err(_) if stop.load(Ordering::Relaxed) != 0 => RunOutput::Stopped,
        Err((reason, detail)) => RunOutput::Failed { reason, detail },
    }
}
