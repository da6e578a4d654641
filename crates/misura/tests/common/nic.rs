//! The NIC lab from integration tests: `scripts/nic-lab.sh` boots a QEMU
//! guest with four emulated Intel 82574L ports (the e1000e driver: hardware
//! TX/RX timestamping granted though never delivered, one PTP hardware clock
//! per port), runs a shell script in it
//! with the misura this test was built with, and hands back what it printed
//! and the files it left in `$OUT`.
//!
//! Tests using it are `#[ignore = "needs root and the NIC lab (…)"]`;
//! [`NicLab::new`] fails, naming the package, when a piece is missing.
//! `MISURA_NIC_ACCEL` (auto, kvm, tcg) reaches the script unchanged.

use super::{require_file, require_root, require_tool, TempDir, BIN};
use std::path::{Path, PathBuf};
use std::process::Command;

/// How the guest's ports are cabled (see scripts/nic-lab.sh).
#[derive(Clone, Copy, Debug)]
pub enum Topology {
    /// eth0 <-> eth1 through one hub: a calibration cable.
    Cable,
    /// eth0 <-> eth2 and eth1 <-> eth3, eth2 and eth3 bridged in the guest
    /// namespace `sut`, with netem and/or tbf on the port towards eth1.
    Sut {
        netem: Option<&'static str>,
        tbf: Option<&'static str>,
    },
}

/// One guest configuration; each [`NicLab::run`] boots a fresh guest.
pub struct NicLab {
    topology: Topology,
    timeout_s: u32,
}

/// What one boot gave back.
pub struct NicRun {
    /// The script's exit code (124: killed at the timeout).
    pub exit: i32,
    pub stdout: String,
    pub stderr: String,
    /// The lab's own messages (accelerator, times).
    pub lab_log: String,
    /// The accelerator used and why, from lab.txt.
    pub accel: String,
    /// Everything the lab returned: exit, stdout, stderr, dmesg,
    /// console.log, lab.txt and files/ (the guest's $OUT). Removed on drop.
    pub dir: TempDir,
}

impl NicLab {
    /// Fails clearly unless running as root with the lab's packages.
    pub fn new(topology: Topology) -> NicLab {
        require_root();
        require_tool("qemu-system-x86_64", "apt-get install qemu-system-x86");
        require_file("/bin/busybox", "apt-get install busybox-static");
        require_tool("ethtool", "apt-get install ethtool");
        require_tool("tcpdump", "apt-get install tcpdump");
        require_tool("phc_ctl", "apt-get install linuxptp");
        require_tool("cpio", "apt-get install cpio");
        require_tool("strip", "apt-get install binutils");
        let kernel = std::fs::read_dir("/boot")
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with("vmlinuz-"));
        if !kernel {
            require_file("/boot/vmlinuz-*", "apt-get install linux-image-amd64");
        }
        NicLab {
            topology,
            timeout_s: 120,
        }
    }

    /// Bound on the script's own run time inside the guest (default 120 s).
    pub fn timeout(mut self, seconds: u32) -> NicLab {
        self.timeout_s = seconds;
        self
    }

    /// Boot, set up the topology, run `script` (bash, as root, `$OUT` the
    /// results directory), power off. Panics if the lab itself failed
    /// (exit 125: the guest did not boot or finish), with its messages.
    pub fn run(&self, script: &str) -> NicRun {
        let dir = TempDir::new("nic-lab");
        let out = dir.path("run");
        let mut c = Command::new("bash");
        c.arg(script_path())
            .args(["--misura", BIN, "--timeout", &self.timeout_s.to_string()])
            .arg("--out")
            .arg(&out);
        match self.topology {
            Topology::Cable => {
                c.args(["--topology", "cable"]);
            }
            Topology::Sut { netem, tbf } => {
                c.args(["--topology", "sut"]);
                if let Some(n) = netem {
                    c.args(["--netem", n]);
                }
                if let Some(t) = tbf {
                    c.args(["--tbf", t]);
                }
            }
        }
        let o = c
            .arg("--")
            .arg(script)
            .output()
            .expect("running scripts/nic-lab.sh");
        let lab_log = String::from_utf8_lossy(&o.stderr).into_owned();
        let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap_or_default();
        let exit = read("exit").trim().parse().unwrap_or_else(|_| {
            panic!(
                "the NIC lab failed (status {:?}), no exit code from the guest:\n{lab_log}\n\
                 console (tail):\n{}",
                o.status.code(),
                tail(&read("console.log"), 3000)
            )
        });
        let accel = read("lab.txt")
            .lines()
            .find_map(|l| l.strip_prefix("accelerator: ").map(String::from))
            .unwrap_or_default();
        NicRun {
            exit,
            stdout: read("stdout"),
            stderr: read("stderr"),
            lab_log,
            accel,
            dir,
        }
    }
}

impl NicRun {
    /// The guest's `$OUT` on the host.
    pub fn out_dir(&self) -> PathBuf {
        self.dir.path("run").join("files")
    }

    /// A file the script left in `$OUT`.
    pub fn file(&self, name: &str) -> String {
        let p = self.out_dir().join(name);
        std::fs::read_to_string(&p)
            .unwrap_or_else(|e| panic!("{}: {e}\n{}", p.display(), self.describe()))
    }

    /// The guest kernel's log.
    pub fn dmesg(&self) -> String {
        std::fs::read_to_string(self.dir.path("run").join("dmesg")).unwrap_or_default()
    }

    /// Fails unless the script exited 0, showing what it printed.
    pub fn assert_ok(&self) -> &NicRun {
        assert_eq!(self.exit, 0, "the guest script failed\n{}", self.describe());
        self
    }

    /// Exit, accelerator, stdout and stderr (tails), for failure messages.
    pub fn describe(&self) -> String {
        format!(
            "exit {} ({})\nlab: {}\nstdout (tail):\n{}\nstderr (tail):\n{}",
            self.exit,
            self.accel,
            self.lab_log.trim(),
            tail(&self.stdout, 4000),
            tail(&self.stderr, 4000)
        )
    }
}

fn tail(s: &str, n: usize) -> &str {
    let mut i = s.len().saturating_sub(n);
    while !s.is_char_boundary(i) {
        i += 1;
    }
    &s[i..]
}

/// scripts/nic-lab.sh in this checkout.
pub fn script_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/nic-lab.sh")
}
