//! Running `ip`, `tc` and `sysctl`, each bounded in time, and the preflight
//! check that they and the capability are there.

use super::*;

pub(super) fn find_program(name: &str, fallbacks: &[&str]) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    fallbacks.iter().map(PathBuf::from).find(|p| p.is_file())
}

pub(super) fn ip_path() -> Option<&'static Path> {
    static IP: OnceLock<Option<PathBuf>> = OnceLock::new();
    IP.get_or_init(|| {
        find_program(
            "ip",
            &["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"],
        )
    })
    .as_deref()
}

pub(super) fn sysctl_path() -> String {
    static SYSCTL: OnceLock<String> = OnceLock::new();
    SYSCTL
        .get_or_init(|| {
            find_program(
                "sysctl",
                &["/usr/sbin/sysctl", "/sbin/sysctl", "/usr/bin/sysctl"],
            )
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sysctl".to_string())
        })
        .clone()
}

#[cfg(test)]
thread_local! {
    /// Fault injection for tests: fail the n-th (0-based) mutating command of this thread.
    static FAIL_AT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    static MUTATIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
pub(super) fn inject_failure_at(n: Option<usize>) {
    FAIL_AT.with(|f| f.set(n));
    MUTATIONS.with(|m| m.set(0));
}

#[derive(Copy, Clone, PartialEq, Eq)]
pub(super) enum Kind {
    Query,
    Change,
}

/// Runs `ip ARGS`, returns stdout. Bounded by [`CMD_TIMEOUT`].
pub(super) fn ip(kind: Kind, args: &[&str]) -> Result<String, LabError> {
    let prog = ip_path().ok_or(LabError::IpMissing)?;
    let cmd_text = format!("ip {}", args.join(" "));
    #[cfg(test)]
    if kind == Kind::Change {
        let n = MUTATIONS.with(|m| {
            let n = m.get();
            m.set(n + 1);
            n
        });
        if FAIL_AT.with(|f| f.get()) == Some(n) {
            return Err(LabError::Command {
                cmd: cmd_text,
                status: Some(1),
                stderr: "injected failure (test)".to_string(),
            });
        }
    }
    let _ = kind;
    let mut child = match Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(LabError::IpMissing),
        Err(e) => return Err(LabError::Io(e)),
    };
    let mut out_pipe = child.stdout.take();
    let mut err_pipe = child.stderr.take();
    let out_thread = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = out_pipe.as_mut() {
            let _ = p.read_to_string(&mut s);
        }
        s
    });
    let err_thread = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(p) = err_pipe.as_mut() {
            let _ = p.read_to_string(&mut s);
        }
        s
    });
    let deadline = Instant::now() + CMD_TIMEOUT;
    let mut nap = Duration::from_micros(200);
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break Some(st);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    };
    let stdout = out_thread.join().unwrap_or_default();
    let mut stderr = err_thread.join().unwrap_or_default();
    match status {
        Some(st) if st.success() => Ok(stdout),
        other => {
            if stderr.contains("Operation not permitted") {
                return Err(LabError::NotPermitted);
            }
            if other.is_none() {
                stderr = format!("timed out after {} s; {stderr}", CMD_TIMEOUT.as_secs());
            }
            Err(LabError::Command {
                cmd: cmd_text,
                status: other.and_then(|s| s.code()),
                stderr,
            })
        }
    }
}

/// Whether this process has CAP_NET_ADMIN (12) and CAP_SYS_ADMIN (21), from
/// `/proc/self/status`.
pub(super) fn has_net_admin() -> bool {
    let Ok(text) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    for line in text.lines() {
        if let Some(hex) = line.strip_prefix("CapEff:") {
            if let Ok(bits) = u64::from_str_radix(hex.trim(), 16) {
                return bits & (1 << 12) != 0 && bits & (1 << 21) != 0;
            }
        }
    }
    false
}

pub(super) fn preflight() -> Result<(), LabError> {
    if ip_path().is_none() {
        return Err(LabError::IpMissing);
    }
    if !has_net_admin() {
        return Err(LabError::NotPermitted);
    }
    Ok(())
}
