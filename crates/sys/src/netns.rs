//! Entering a network namespace.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::error::is_perm;
use crate::SysError;

/// The path for a namespace name: `/run/netns/NAME`, or the argument itself
/// when it starts with '/' (e.g. `/proc/1234/ns/net`).
pub fn netns_path(name: &str) -> Result<String, SysError> {
    if name.starts_with('/') {
        return Ok(name.to_string());
    }
    if name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0') {
        return Err(SysError::NoSuchNetns {
            name: name.to_string(),
        });
    }
    Ok(format!("/run/netns/{name}"))
}

/// Moves the calling thread into network namespace `name` (a name under
/// `/run/netns`, as `ip netns` makes, or an absolute path).  The namespace
/// is per thread: call it before spawning threads so they inherit it, or
/// from the thread that needs it.  Needs `CAP_SYS_ADMIN`.
pub fn enter(name: &str) -> Result<(), SysError> {
    let path = netns_path(name)?;
    let cpath = std::ffi::CString::new(path.clone()).map_err(|_| SysError::NoSuchNetns {
        name: name.to_string(),
    })?;
    // SAFETY: `cpath` is a valid NUL-terminated string for the whole call.
    let raw = unsafe { libc::open(cpath.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if raw < 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::ENOTDIR) => SysError::NoSuchNetns {
                name: name.to_string(),
            },
            _ if is_perm(&e) => SysError::NeedCapability {
                cap: "CAP_SYS_ADMIN",
                what: format!("opening network namespace `{path}`"),
            },
            _ => SysError::io(format!("opening network namespace `{path}`"), e),
        });
    }
    // SAFETY: `raw` was just returned by open(2) and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: `fd` is an open file descriptor; setns only reads it.
    let rc = unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc < 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            _ if is_perm(&e) => SysError::NeedCapability {
                cap: "CAP_SYS_ADMIN",
                what: format!("entering network namespace `{name}` (setns)"),
            },
            Some(libc::EINVAL) => SysError::Unsupported {
                what: format!("entering `{path}`"),
                why: "it is not a network namespace file (expected /run/netns/NAME or /proc/PID/ns/net)".into(),
            },
            _ => SysError::io(format!("entering network namespace `{name}` (setns)"), e),
        });
    }
    Ok(())
}

/// The inode of the calling thread's network namespace
/// (`/proc/thread-self/ns/net`), to tell namespaces apart.
pub fn current_netns_id() -> Option<u64> {
    let link = std::fs::read_link("/proc/thread-self/ns/net").ok()?;
    let s = link.to_string_lossy();
    s.strip_prefix("net:[")?.strip_suffix(']')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_namespace() {
        match enter("misura-no-such-ns") {
            Err(SysError::NoSuchNetns { name }) => assert_eq!(name, "misura-no-such-ns"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(enter("a/b"), Err(SysError::NoSuchNetns { .. })));
        assert!(matches!(
            enter("/nonexistent/ns"),
            Err(SysError::NoSuchNetns { .. })
        ));
        let msg = SysError::NoSuchNetns { name: "x".into() }.to_string();
        assert!(
            msg.contains("ip netns list") && msg.contains("misura lab up"),
            "{msg}"
        );
    }

    #[test]
    #[ignore = "needs root (CAP_NET_RAW / CAP_SYS_ADMIN)"]
    fn not_a_namespace_file() {
        assert!(
            crate::host::is_root(),
            "needs root (CAP_NET_RAW / CAP_SYS_ADMIN): run as root with --include-ignored"
        );
        // Runs in a scratch thread so a surprise success cannot leak.
        let r = std::thread::spawn(|| enter("/proc/self/status"))
            .join()
            .unwrap();
        assert!(matches!(r, Err(SysError::Unsupported { .. })), "{r:?}");
    }

    #[test]
    #[ignore = "needs root (CAP_NET_RAW / CAP_SYS_ADMIN)"]
    fn enter_own_namespace_by_path() {
        assert!(
            crate::host::is_root(),
            "needs root (CAP_NET_RAW / CAP_SYS_ADMIN): run as root with --include-ignored"
        );
        let before = current_netns_id();
        let r = std::thread::spawn(|| {
            enter("/proc/self/ns/net")?;
            Ok::<_, SysError>(current_netns_id())
        })
        .join()
        .unwrap();
        assert!(before.is_some());
        assert_eq!(r.expect("re-entering our own namespace by path"), before);
    }
}
