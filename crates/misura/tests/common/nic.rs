//! The NIC lab from integration tests: `scripts/nic-lab.sh` boots a QEMU
//! guest with four emulated Intel NIC ports (one PTP hardware clock per
//! port), runs a shell script in it with the misura this test was built
//! with, and hands back what it printed and the files it left in `$OUT`.
//!
//! The ports are Intel 82576 (`igb`: hardware TX stamps on any frame, RX
//! stamps on PTP event frames, with the lab's igb-rx-unlatch workaround)
//! when a QEMU 8 or later is found (`MISURA_NIC_QEMU`, else
//! `.tools/qemu/`, fetched by scripts/nic-lab/get-qemu.sh, else the
//! system's), otherwise Intel 82574L (`e1000e`: stamps granted, none
//! delivered). [`NicLab::nic`] asks for one; a test asking for igb without
//! such a QEMU fails, naming scripts/nic-lab/get-qemu.sh.
//!
//! ```ignore
//! let run = NicLab::new(Topology::Cable).nic(Nic::Igb).run("ethtool -T eth1");
//! ```
//!
//! Tests using it are `#[ignore = "needs root and the NIC lab (…)"]`;
//! [`NicLab::new`] fails, naming the package, when a piece is missing.
//! `MISURA_NIC_ACCEL` (auto, kvm, tcg) reaches the script unchanged.

use super::{require_file, require_root, require_tool, TempDir, BIN};
use serde_json::Value;
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

/// The emulated NIC model (`--nic`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nic {
    /// Intel 82576, the igb driver; needs QEMU 8 or later.
    Igb,
    /// Intel 82574L, the e1000e driver; delivers no hardware stamp.
    E1000e,
}

impl Nic {
    fn arg(self) -> &'static str {
        match self {
            Nic::Igb => "igb",
            Nic::E1000e => "e1000e",
        }
    }
}

/// One guest configuration; each [`NicLab::run`] boots a fresh guest.
pub struct NicLab {
    topology: Topology,
    timeout_s: u32,
    nic: Option<Nic>,
    unlatch: bool,
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
    /// The NIC model and QEMU version, from lab.txt ("4 x igb; QEMU …").
    pub ports: String,
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
        // The guest's kernel: the host's in /boot, or the one
        // scripts/nic-lab/get-kernel.sh unpacked into the lab's cache (as
        // scripts/nic-lab.sh looks for it; nothing installed on the host).
        let cache = std::env::var("MISURA_NIC_CACHE").unwrap_or_else(|_| {
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/nic-lab").into()
        });
        let has_vmlinuz = |dir: &str| {
            std::fs::read_dir(dir)
                .into_iter()
                .flatten()
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("vmlinuz-"))
        };
        if !has_vmlinuz("/boot") && !has_vmlinuz(&format!("{cache}/kernel/boot")) {
            require_file(
                "/boot/vmlinuz-*",
                "run scripts/nic-lab/get-kernel.sh (it unpacks Debian's linux-image-amd64 into target/nic-lab/kernel, installing nothing)",
            );
        }
        NicLab {
            topology,
            timeout_s: 120,
            nic: None,
            unlatch: true,
        }
    }

    /// The NIC model (default: igb with a QEMU 8 or later, else e1000e).
    /// Fails at once if igb is asked for and no such QEMU is found.
    pub fn nic(mut self, nic: Nic) -> NicLab {
        if nic == Nic::Igb {
            let (path, major) = qemu();
            assert!(
                major >= 8,
                "the igb NIC lab needs QEMU 8 or later; {} is QEMU {major}: run \
                 scripts/nic-lab/get-qemu.sh (QEMU 10 from bookworm-backports into .tools/qemu; \
                 scripts/test.sh does) or set MISURA_NIC_QEMU",
                path.display()
            );
        }
        self.nic = Some(nic);
        self
    }

    /// igb without the RX unlatch workaround (--no-unlatch): QEMU's own
    /// behaviour, one RX stamp after a reset.
    pub fn no_unlatch(mut self) -> NicLab {
        self.unlatch = false;
        self
    }

    /// Bound on the script's own run time inside the guest (default 120 s).
    pub fn timeout(mut self, seconds: u32) -> NicLab {
        self.timeout_s = seconds;
        self
    }

    /// Boot, set up the topology, run `script` (bash, as root, `$OUT` the
    /// results directory), power off. Panics if the lab itself failed
    /// (exit 125: the guest did not boot or finish), with its messages.
    ///
    /// One guest at a time per test process: two TCG guests of two vCPUs
    /// each on this 2-CPU host starved each other's vCPU threads (RCU
    /// stalls on the console, a boot that never finished in 180 s, in two
    /// CI runs in a row), while one boots in 20-25 s.
    pub fn run(&self, script: &str) -> NicRun {
        static GUEST: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one = GUEST.lock().unwrap_or_else(|p| p.into_inner());
        let dir = TempDir::new("nic-lab");
        let out = dir.path("run");
        let mut c = Command::new("bash");
        c.arg(script_path())
            .args(["--misura", BIN, "--timeout", &self.timeout_s.to_string()])
            .arg("--out")
            .arg(&out);
        if let Some(nic) = self.nic {
            c.args(["--nic", nic.arg()]);
        }
        if !self.unlatch {
            c.arg("--no-unlatch");
        }
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
        let lab_txt = read("lab.txt");
        let field = |key: &str| {
            lab_txt
                .lines()
                .find_map(|l| l.strip_prefix(key).map(String::from))
                .unwrap_or_default()
        };
        let (accel, ports) = (field("accelerator: "), field("ports: "));
        NicRun {
            exit,
            stdout: read("stdout"),
            stderr: read("stderr"),
            lab_log,
            accel,
            ports,
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

    /// A file the lab itself returned (lab.txt, dmesg, unlatch.log, …).
    pub fn lab_file(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path("run").join(name)).unwrap_or_default()
    }

    /// The guest kernel's log.
    pub fn dmesg(&self) -> String {
        std::fs::read_to_string(self.dir.path("run").join("dmesg")).unwrap_or_default()
    }

    /// The JSON result a `misura_cmd(name, …)` line left, after checking
    /// that misura exited with one of `ok` (`$OUT/NAME.rc`).
    pub fn json(&self, name: &str, ok: &[&str]) -> Value {
        let rc = self.file(&format!("{name}.rc"));
        assert!(
            ok.contains(&rc.trim()),
            "misura {name} exited {rc} in the guest: {}\n{}",
            self.file(&format!("{name}.err")),
            self.describe()
        );
        serde_json::from_str(&self.file(&format!("{name}.json"))).expect("misura's JSON")
    }

    /// Fails unless the script exited 0, showing what it printed.
    pub fn assert_ok(&self) -> &NicRun {
        assert_eq!(self.exit, 0, "the guest script failed\n{}", self.describe());
        self
    }

    /// Exit, accelerator, stdout and stderr (tails), for failure messages.
    pub fn describe(&self) -> String {
        format!(
            "exit {} ({}; {})\nlab: {}\nstdout (tail):\n{}\nstderr (tail):\n{}",
            self.exit,
            self.accel,
            self.ports,
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
/// A guest script's line that runs `misura --no-store ARGS --json`, with its
/// JSON in `$OUT/NAME.json`, its stderr in `NAME.err` and its exit status in
/// `NAME.rc` (read back with `NicRun::json`).
pub fn misura_cmd(name: &str, args: &str) -> String {
    format!(
        "misura --no-store {args} --json > $OUT/{name}.json 2> $OUT/{name}.err; echo $? > $OUT/{name}.rc\n"
    )
}

/// The number at JSON pointer `path` of `v`.
pub fn number(v: &Value, path: &str) -> f64 {
    v.pointer(path)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{path} missing in {v:#}"))
}

pub fn script_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/nic-lab.sh")
}

/// The QEMU the lab would use (as scripts/nic-lab.sh picks it) and its major
/// version (0 when none runs).
pub fn qemu() -> (PathBuf, u32) {
    let tools =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/qemu/usr/bin/qemu-system-x86_64");
    let path = match std::env::var_os("MISURA_NIC_QEMU") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ if tools.exists() => tools,
        _ => PathBuf::from("qemu-system-x86_64"),
    };
    let major = Command::new(&path)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| {
            let v = String::from_utf8_lossy(&o.stdout).into_owned();
            v.strip_prefix("QEMU emulator version ")?
                .split('.')
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0);
    (path, major)
}
