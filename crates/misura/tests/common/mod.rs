//! Helpers shared by the integration tests: running the binary in a data
//! directory of its own, failing clearly when a requirement is missing, labs
//! with unique prefixes that are always taken down, JSON and CSV checks.
//!
//! Tests that need root or a peer tool are `#[ignore = "needs …"]`, so a plain
//! `cargo test` lists them as ignored with the reason instead of counting them
//! as passed; `cargo test -- --include-ignored` (scripts/test.sh as root) runs
//! them, and then a missing requirement fails the test through
//! [`require_root`], [`require_tool`] or [`require_file`].
#![allow(dead_code)]

pub mod nic;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_misura");

/// `misura` with `HOME` and `XDG_DATA_HOME` pointing into a scratch directory
/// of this test process, so no test reaches the user's results store,
/// calibration profiles or tune state files, even one that forgets
/// `--no-store`. Every test spawns the binary through this.
pub fn misura() -> Command {
    let home = test_home();
    let mut c = Command::new(BIN);
    c.env("HOME", home).env("XDG_DATA_HOME", home.join("data"));
    c
}

/// `misura ARGS` under unshare(1) in a mount namespace of its own where the
/// host-wide settings `host tune` writes (governors and idle states under
/// /sys/devices/system/cpu, guest halt polling under /sys/module/haltpoll)
/// are read-only: a test may apply a plan to its lab's ports, never to the
/// machine. With the scratch home, as [`misura`] gives it.
pub fn misura_host_read_only(unshare: &Path, args: &[&str]) -> Command {
    let guard = "ro() { mount --bind \"$1\" \"$1\" && mount -o remount,bind,ro \"$1\"; } \
                 && ro /sys/devices/system/cpu \
                 && { [ ! -d /sys/module/haltpoll/parameters ] || ro /sys/module/haltpoll/parameters; } \
                 && exec \"$0\" \"$@\"";
    let home = test_home();
    let mut c = Command::new(unshare);
    c.env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            guard,
            BIN,
        ])
        .args(args);
    c
}

/// The scratch home of this test process (`$TMPDIR/misura-test-home-PID`).
/// Those of processes that have ended are removed on first use.
pub fn test_home() -> &'static Path {
    static HOME: OnceLock<PathBuf> = OnceLock::new();
    HOME.get_or_init(|| {
        const STEM: &str = "misura-test-home-";
        let tmp = std::env::temp_dir();
        for e in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(pid) = name.strip_prefix(STEM) {
                if !Path::new("/proc").join(pid).exists() {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let home = tmp.join(format!("{STEM}{}", std::process::id()));
        std::fs::create_dir_all(home.join("data")).expect("creating the tests' scratch home");
        home
    })
}

pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// Fail unless running as root: for tests marked
/// `#[ignore = "needs root: …"]` and run with `--include-ignored`.
pub fn require_root() {
    assert!(
        is_root(),
        "this test needs root (network namespaces, raw sockets): run the suite as root, \
         `sudo bash scripts/test.sh`; a plain `cargo test` lists it as ignored"
    );
}

/// Fail, naming the tool and how to install it, unless `name` is on PATH or
/// in the repository's .tools/bin; returns its path.
pub fn require_tool(name: &str, install: &str) -> PathBuf {
    which(name).unwrap_or_else(|| {
        panic!(
            "this test needs `{name}`, which is not installed: {install} \
             (`sudo bash scripts/test.sh` installs it)"
        )
    })
}

/// Fail, naming the file and how to get it, unless `path` exists.
pub fn require_file(path: &str, install: &str) -> PathBuf {
    let p = PathBuf::from(path);
    assert!(
        p.exists(),
        "this test needs {path}, which is missing: {install} \
         (`sudo bash scripts/test.sh` installs it)"
    );
    p
}

/// Fail unless running as root. Tests using it are marked
/// `#[ignore = "needs root: …"]`.
#[macro_export]
macro_rules! need_root {
    () => {
        common::require_root()
    };
}

pub fn run(args: &[&str]) -> Output {
    misura().args(args).output().expect("running misura")
}

pub fn json_of(o: &Output) -> Value {
    assert!(
        o.status.success(),
        "misura failed ({:?}): {}\nstdout: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&o.stdout[..o.stdout.len().min(4000)])
    );
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

/// The codes of a result's `warnings`, in order.
pub fn warning_codes(v: &Value) -> Vec<&str> {
    v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["code"].as_str())
        .collect()
}

/// Nanoseconds in a JSON number as milliseconds (NaN where it is none).
pub fn ms(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN) / 1e6
}

/// Validate a result against one of the schemas in `schema/`.
pub fn schema_check(v: &Value, schema_file: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../schema")
        .join(schema_file);
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let validator = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(v)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "result does not match {schema_file}:\n{}",
        errors.join("\n")
    );
}

/// A CSV file of integers (empty cells are None): header and rows, every
/// row checked to have the header's width.
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<Option<i64>>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| {
            let r: Vec<Option<i64>> = l
                .split(',')
                .map(|c| {
                    if c.is_empty() {
                        None
                    } else {
                        Some(c.parse().unwrap())
                    }
                })
                .collect();
            assert_eq!(
                r.len(),
                header.len(),
                "row `{l}` has the wrong number of columns"
            );
            r
        })
        .collect();
    (header, rows)
}

pub fn col(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("column {name} missing"))
}

/// A lab with a unique prefix and a scratch directory, taken down on drop
/// together with any child processes the test started.
pub struct Lab {
    pub prefix: String,
    pub dir: PathBuf,
    pub children: Vec<Child>,
}

impl Lab {
    /// `family` tells the test files apart, `tag` the tests in one file.
    pub fn new(family: &str, tag: &str) -> Lab {
        let prefix = format!("misura-{family}{}{tag}-", std::process::id() % 100_000);
        let dir =
            std::env::temp_dir().join(format!("misura-{family}-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Lab {
            prefix,
            dir,
            children: Vec::new(),
        }
    }

    /// A lab already brought up in `topology`.
    pub fn up(family: &str, tag: &str, topology: &str) -> Lab {
        let lab = Lab::new(family, tag);
        lab.topology(topology);
        lab
    }

    /// A lab brought up as a switch shaped to `shape` (a tbf on the bridge
    /// port towards p2), e.g. `20M`.
    pub fn shaped_switch(family: &str, tag: &str, shape: &str) -> Lab {
        let lab = Lab::new(family, tag);
        let o = lab.bring_up("switch", &["--shape", shape]);
        assert!(
            o.status.success(),
            "lab up --shape {shape}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        lab
    }

    /// `misura lab up --topology TOPOLOGY --prefix PREFIX EXTRA…` for this
    /// lab, whatever it gives.
    pub fn bring_up(&self, topology: &str, extra: &[&str]) -> Output {
        let mut args = vec![
            "lab",
            "up",
            "--topology",
            topology,
            "--prefix",
            &self.prefix,
        ];
        args.extend_from_slice(extra);
        run(&args)
    }

    pub fn topology(&self, topology: &str) {
        let o = self.bring_up(topology, &[]);
        assert!(
            o.status.success(),
            "lab up {topology}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    pub fn tester(&self) -> String {
        format!("{}tester", self.prefix)
    }

    /// `misura lab up --topology routed --shape SHAPE` for this lab.
    pub fn routed(&self, shape: &str) -> Output {
        self.bring_up("routed", &["--shape", shape])
    }

    /// `misura COMMAND --netns h{host} -q` (serve, reflect) in the
    /// background, killed with the lab.
    pub fn server(&mut self, host: u8, command: &str) {
        let c = misura()
            .args(["--no-store", command, "--netns", &self.ns(host), "-q"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.children.push(c);
    }

    pub fn ns(&self, host: u8) -> String {
        format!("{}h{host}", self.prefix)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// `misura --no-store load 198.18.1.2 --netns h1 --idle 2s EXTRA…`: from
    /// the routed lab's near host to its far one, whatever it gives.
    pub fn load(&self, extra: &[&str]) -> Output {
        let ns = self.ns(1);
        let mut args = vec![
            "--no-store",
            "load",
            "198.18.1.2",
            "--netns",
            &ns,
            "--idle",
            "2s",
        ];
        args.extend_from_slice(extra);
        run(&args)
    }

    /// `misura oneway` between the tester's ports.
    pub fn oneway(&self, extra: &[&str]) -> Output {
        self.between_ports("oneway", extra)
            .output()
            .expect("running misura")
    }

    /// `misura COMMAND` (oneway, calibrate) from the tester's port p1 to p2.
    pub fn between_ports(&self, command: &str, extra: &[&str]) -> Command {
        let mut c = misura();
        c.args([
            command,
            "--netns",
            &self.tester(),
            "--tx",
            "p1",
            "--rx",
            "p2",
            "-q",
        ])
        .args(extra);
        c
    }

    /// `misura exchange` in host `host` of the hosts topology, towards the
    /// other host's m0.
    pub fn exchange(&self, host: u8, extra: &[&str]) -> Command {
        let peer = if host == 1 {
            "02:6d:73:00:02:02"
        } else {
            "02:6d:73:00:02:01"
        };
        let mut c = misura();
        c.args([
            "exchange",
            "--netns",
            &self.ns(host),
            "--interface",
            "m0",
            "--peer",
            peer,
        ])
        .args(extra);
        c
    }

    /// `misura rtt` from host 1.
    pub fn rtt(&self, extra: &[&str]) -> Output {
        let ns = self.ns(1);
        let mut args = vec!["rtt", "--netns", &ns, "-q"];
        args.extend_from_slice(extra);
        run(&args)
    }

    /// Start `misura reflect` in host 2 and wait for its start-up line,
    /// printed once its socket is bound.
    pub fn reflector(&mut self, extra: &[&str]) {
        let ns = self.ns(2);
        let mut args = vec!["reflect", "--netns", &ns];
        args.extend_from_slice(extra);
        let mut child = misura()
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            let mut lines = std::io::BufReader::new(stderr).lines();
            let first = lines.next().and_then(|l| l.ok()).unwrap_or_default();
            let _ = tx.send(first);
            for _ in lines {} // keep draining so the reflector never blocks on stderr
        });
        let first = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("reflector did not start within 10 s");
        assert!(
            first.contains("misura reflect"),
            "reflector start-up: {first}"
        );
        self.children.push(child);
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = run(&["lab", "down", "--prefix", &self.prefix]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A scratch directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// `$TMPDIR/misura-{tag}-PID-N`, fresh and empty.
    pub fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "misura-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("binding 127.0.0.1:0")
        .port()
}

/// An executable on PATH or in the repository's .tools/bin.
pub fn which(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/bin"));
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

/// `misura serve` on 127.0.0.1 (a free port, `--no-store`, quiet), up and
/// listening when `start` returns (bounded: 10 s), killed and reaped when
/// dropped.
pub struct LocalServe {
    child: Child,
    pub port: u16,
}

impl LocalServe {
    pub fn start(extra: &[&str]) -> LocalServe {
        let port = free_port();
        let child = misura()
            .args(["--no-store", "serve", "--listen", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .arg("-q")
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting misura serve");
        let s = LocalServe { child, port };
        let t = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "misura serve did not listen on 127.0.0.1:{port} within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        s
    }

    /// HOST:PORT for a client.
    pub fn target(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for LocalServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `misura reflect` on loopback for a few seconds.
pub struct LocalReflector(std::process::Child, u16);

impl LocalReflector {
    pub fn start(seconds: u32) -> LocalReflector {
        let port = free_port();
        let child = misura()
            .args(["--no-store", "reflect", "--listen", "127.0.0.1", "-q"])
            .args(["--port", &port.to_string(), "--duration"])
            .arg(format!("{seconds}s"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        LocalReflector(child, port)
    }

    pub fn target(&self) -> String {
        format!("127.0.0.1:{}", self.1)
    }
}

impl Drop for LocalReflector {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// chronyd, which serves NTP from a lab namespace in the tests.
pub const CHRONYD: &str = "/usr/sbin/chronyd";

/// A chrony.conf in `dir` for chronyd serving NTP on the hosts lab's far
/// address, 198.18.0.2 (`local stratum 1`, no command port, its files in
/// `dir`); run it as `CHRONYD -d -x -f CONF` (`-x`: it never sets the
/// clock) in the far host's namespace.
pub fn chrony_conf(dir: &Path) -> PathBuf {
    let conf = dir.join("chrony.conf");
    std::fs::write(
        &conf,
        format!(
            "local stratum 1\nallow 198.18.0.0/24\nbindaddress 198.18.0.2\nport 123\ncmdport 0\npidfile {0}/chronyd.pid\ndriftfile {0}/drift\n",
            dir.display()
        ),
    )
    .expect("writing chrony.conf");
    conf
}

/// Held by tests that load the CPUs (the frame engine at full rate): on a
/// 2-vCPU machine two of them at once would each find the tester limited
/// by the other. `let _one = one_at_a_time();` at the test's top.
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

impl Lab {
    /// A peer tool (`iperf3 -s`, `irtt server`) run in h{host}, killed with
    /// the lab.
    pub fn peer(&mut self, host: u8, argv: &[&str]) {
        let c = Command::new("ip")
            .args(["netns", "exec", &self.ns(host)])
            .args(argv)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {argv:?} in h{host}: {e}"));
        self.children.push(c);
    }

    /// Waits (at most 10 s) until something listens on `port` in h{host}:
    /// `proto` "t" for TCP, "u" for UDP.
    pub fn wait_port(&self, host: u8, proto: &str, port: u16) {
        let t = std::time::Instant::now();
        let want = format!(":{port} ");
        let flags = format!("-l{proto}nH");
        loop {
            let o = Command::new("ip")
                .args(["netns", "exec", &self.ns(host), "ss", &flags])
                .output()
                .unwrap();
            if String::from_utf8_lossy(&o.stdout).contains(&want) {
                return;
            }
            assert!(
                t.elapsed() < std::time::Duration::from_secs(10),
                "nothing listens on {proto} {port} in h{host} after 10 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// Read one misura control message off `s` (tests' fake peers and clients).
pub fn control_read(s: &mut std::net::TcpStream) -> Option<misura_wire::control::Message> {
    use misura_wire::control;
    use std::io::Read;
    let mut h = [0u8; control::HEADER_LEN];
    s.read_exact(&mut h).ok()?;
    let header = control::parse_header(&h).ok()?;
    let mut p = vec![0u8; header.payload_len];
    s.read_exact(&mut p).ok()?;
    control::parse_payload(&header, &p).ok()
}

/// Write one misura control message to `s`.
pub fn control_send(s: &mut std::net::TcpStream, m: &misura_wire::control::Message) {
    use std::io::Write;
    let mut b = Vec::new();
    m.emit(&mut b).unwrap();
    s.write_all(&b).unwrap();
}
