//! misura processes inside the lab's namespaces. Deleting a namespace (or
//! rewiring its cables) under a running `misura serve` or `reflect` leaves it
//! running, detached, on an address nothing reaches any more: the next client
//! then waits and fails with "nothing listens" while `ps` shows the server.
//! So before the lab deletes or rewires a namespace it stops the misura
//! processes in it (SIGTERM, up to [`TERM_WAIT`], then SIGKILL) and names
//! them. A process is in the namespace when `/proc/PID/ns/net` is the same
//! nsfs inode as `/run/netns/NAME`.

use std::os::unix::fs::MetadataExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

/// How long a process has to end after SIGTERM before it gets SIGKILL.
pub const TERM_WAIT: Duration = Duration::from_secs(3);
/// How long to wait for a process to end after SIGKILL.
const KILL_WAIT: Duration = Duration::from_secs(1);
/// The longest command line kept in a [`Stopped`].
const MAX_COMMAND: usize = 160;

/// A misura process the lab stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Stopped {
    /// Its process id.
    pub pid: u32,
    /// The namespace it ran in.
    pub netns: String,
    /// Its command line (at most 160 characters).
    pub command: String,
    /// "SIGTERM" if it ended on that, "SIGKILL" if it needed that, "still
    /// running" if it survived both (it then runs on in a namespace with no
    /// name).
    pub ended_by: String,
}

/// (dev, inode) of a namespace file, `None` when it cannot be read.
fn ns_id(path: &str) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Whether `pid` still runs in the namespace `id` (a zombie does not).
fn running_in(pid: u32, id: (u64, u64)) -> bool {
    let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| r.trim_start().starts_with('Z'))
        })
        .unwrap_or(true);
    !zombie && ns_id(&format!("/proc/{pid}/ns/net")) == Some(id)
}

/// The misura processes (other than this one) running in namespace `netns`,
/// with their command lines.
pub(crate) fn misura_in(netns: &str) -> Vec<(u32, String)> {
    let Some(id) = ns_id(&format!("/run/netns/{netns}")) else {
        return Vec::new();
    };
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if pid == me || comm.trim() != "misura" || !running_in(pid, id) {
            continue;
        }
        let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let mut command: String = String::from_utf8_lossy(&raw)
            .split('\0')
            .filter(|a| !a.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        if command.chars().count() > MAX_COMMAND {
            command = command.chars().take(MAX_COMMAND - 1).collect::<String>() + "…";
        }
        found.push((pid, command));
    }
    found.sort();
    found
}

fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .args([sig, &pid.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Waits up to `bound` for every pid in `pids` to leave namespace `id`;
/// returns those still there.
fn wait_gone(pids: &[u32], id: (u64, u64), bound: Duration) -> Vec<u32> {
    let end = Instant::now() + bound;
    loop {
        let left: Vec<u32> = pids
            .iter()
            .copied()
            .filter(|&p| running_in(p, id))
            .collect();
        if left.is_empty() || Instant::now() >= end {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Stops the misura processes running in `netns`: SIGTERM (they save what
/// they measured), up to [`TERM_WAIT`], then SIGKILL. Returns each one and
/// how it ended.
pub(crate) fn stop_misura_in(netns: &str) -> Vec<Stopped> {
    let found = misura_in(netns);
    let Some(id) = ns_id(&format!("/run/netns/{netns}")) else {
        return Vec::new();
    };
    if found.is_empty() {
        return Vec::new();
    }
    let pids: Vec<u32> = found.iter().map(|(p, _)| *p).collect();
    for &p in &pids {
        signal(p, "-TERM");
    }
    let after_term = wait_gone(&pids, id, TERM_WAIT);
    for &p in &after_term {
        signal(p, "-KILL");
    }
    let after_kill = wait_gone(&after_term, id, KILL_WAIT);
    found
        .into_iter()
        .map(|(pid, command)| Stopped {
            pid,
            netns: netns.to_string(),
            command,
            ended_by: if after_kill.contains(&pid) {
                "still running"
            } else if after_term.contains(&pid) {
                "SIGKILL"
            } else {
                "SIGTERM"
            }
            .to_string(),
        })
        .collect()
}

#[cfg(test)]
#[path = "procs_tests.rs"]
mod tests;
