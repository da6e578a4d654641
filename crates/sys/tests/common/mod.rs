//! What the veth tests share: a network namespace of the test's own with a
//! veth pair `a` <-> `b`, both up, deleted on drop (unique names per process
//! and test), and a thread inside it for the socket work (`setns` is per
//! thread).
#![allow(dead_code)]

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use misura_sys::{iface, netns};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A namespace with a veth pair `a` <-> `b`, both up.  Dropping it deletes
/// the namespace (and with it the pair).
pub struct Lab {
    pub ns: String,
    pub a: String,
    pub b: String,
}

/// Runs `ip ARGS`; its stderr is the error.
pub fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl Lab {
    /// Namespace `misura-{tag}-{pid}-{n}`, interfaces `{short}{pid}x{n}a/b`
    /// (under 16 bytes). Fails the test with `need_root` when not root.
    pub fn new(need_root: &str, tag: &str, short: &str) -> Lab {
        assert!(misura_sys::host::is_root(), "{need_root}");
        let pid = std::process::id();
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let lab = Lab {
            ns: format!("misura-{tag}-{pid}-{n}"),
            a: format!("{short}{}x{n}a", pid % 1_000_000),
            b: format!("{short}{}x{n}b", pid % 1_000_000),
        };
        // From here on Drop cleans up, even if a step below panics.
        ip(&["netns", "add", &lab.ns])
            .unwrap_or_else(|e| panic!("cannot create a network namespace: {e}"));
        ip(&[
            "-n", &lab.ns, "link", "add", &lab.a, "type", "veth", "peer", "name", &lab.b,
        ])
        .expect("veth pair");
        ip(&["-n", &lab.ns, "link", "set", &lab.a, "up"]).expect("a up");
        ip(&["-n", &lab.ns, "link", "set", &lab.b, "up"]).expect("b up");
        lab
    }

    /// Runs `f(a, b, ns)` in a fresh thread that has entered the namespace,
    /// once both ends report up.
    pub fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&str, &str, &str) -> T + Send + 'static,
    ) -> T {
        let (ns, a, b) = (self.ns.clone(), self.a.clone(), self.b.clone());
        std::thread::spawn(move || {
            netns::enter(&ns).expect("enter the test namespace");
            wait_oper_up(&a);
            wait_oper_up(&b);
            f(&a, &b, &ns)
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = ip(&["-n", &self.ns, "link", "del", &self.a]);
        let _ = ip(&["netns", "del", &self.ns]);
    }
}

/// Bounded wait (2 s) for a veth end to report operstate up.
pub fn wait_oper_up(name: &str) {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let info = iface::interface_info(name).expect("interface_info");
        if info.oper_up {
            return;
        }
        assert!(Instant::now() < deadline, "{name} never came up: {info:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}
