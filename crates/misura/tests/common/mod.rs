//! Helpers shared by the integration tests: running the binary, skipping
//! without root, labs with unique prefixes that are always taken down, JSON
//! and CSV checks.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_misura");

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

/// Return from the test, saying why, unless running as root.
#[macro_export]
macro_rules! need_root {
    () => {
        if !common::is_root() {
            eprintln!("skipped: needs root (network namespaces, raw sockets)");
            return;
        }
    };
}

pub fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("running misura")
}

pub fn json_of(o: &Output) -> Value {
    assert!(
        o.status.success(),
        "misura failed ({:?}): {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

/// Validate a result against one of the schemas in `schema/`.
pub fn schema_check(v: &Value, schema_file: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../schema")
        .join(schema_file);
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
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

    pub fn topology(&self, topology: &str) {
        let o = run(&[
            "lab",
            "up",
            "--topology",
            topology,
            "--prefix",
            &self.prefix,
        ]);
        assert!(
            o.status.success(),
            "lab up {topology}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    pub fn tester(&self) -> String {
        format!("{}tester", self.prefix)
    }

    pub fn ns(&self, host: u8) -> String {
        format!("{}h{host}", self.prefix)
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// `misura oneway` between the tester's ports.
    pub fn oneway(&self, extra: &[&str]) -> Output {
        let tester = self.tester();
        let mut args = vec![
            "oneway", "--netns", &tester, "--tx", "p1", "--rx", "p2", "-q",
        ];
        args.extend_from_slice(extra);
        run(&args)
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
        let mut child = Command::new(BIN)
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

/// An executable on PATH or in the repository's .tools/bin.
pub fn which(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/bin"));
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}
