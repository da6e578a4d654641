//! The README's command examples run as written (issue 36): every `misura …`
//! in its command table and in "A first session on the lab", on a lab of
//! this test's own (its namespaces' prefix replaces `misura-`), each checked
//! for the exit code the text promises (0 unless it says `exit N`). The
//! servers the table lists (`reflect`, `serve`) are started as it shows and
//! must stay up; the clients after them use them. A few examples cannot run
//! here; [`SKIPPED`] says why, each.
//!
//! Not yet: the guides' examples (docs/guide/*.md), which need more set-up
//! each (a responder, a store with given runs, hours-long forms); they are
//! counted by `the_guides_examples_are_counted` so the gap stays visible.

#[macro_use]
mod common;

use common::*;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn repo_file(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Examples that cannot run in CI, matched by a part of the command, each
/// with the reason.
const SKIPPED: &[(&str, &str)] = &[
    (
        "misura rfc2544",
        "its verdict depends on the lab's shape at that point (exit 8 on the bare bridge the tester cannot outrun); tests/rfc2544.rs runs it on a known shape",
    ),
    (
        "misura y1564",
        "needs its row's `lab up --police 50M` first, which this test leaves to the lab steps; tests/rfc2544.rs y1564_passes_through_the_policer_and_fails_on_the_bare_bridge runs both of its forms",
    ),
    (
        "misura agent",
        "needs agent.toml and runs until stopped (docs/guide/fleet.md)",
    ),
    (
        "misura host check --interface eth0",
        "names the reader's NIC; CI machines have none called eth0",
    ),
    (
        "misura demo",
        "builds the default misura-* lab, which other runs on this machine may hold",
    ),
    ("apt install", "installs a package (tests/package.rs does)"),
    (
        "misura compare 3 11",
        "needs stored runs 3 and 11 of one command",
    ),
    (
        "man misura",
        "needs the Debian package installed (tests/package.rs installs it)",
    ),
];

/// The `misura …` commands of a markdown text: inline ones in table cells
/// (`` `misura …` ``) and lines of ```sh blocks (continuations joined,
/// `sudo` and comments dropped).
fn examples(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in markdown.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_sh = !in_sh && (t == "```sh" || t == "```bash");
            continue;
        }
        if in_sh {
            let code = match t.find(" #") {
                Some(i) if !t[..i].contains('\'') => t[..i].trim_end(),
                _ => t,
            };
            pending.push_str(code.trim_end_matches('\\').trim_end());
            if code.ends_with('\\') {
                pending.push(' ');
                continue;
            }
            let cmd = pending.trim().trim_start_matches("sudo ").to_string();
            pending.clear();
            if cmd.starts_with("misura ") {
                out.push(cmd);
            }
        } else if t.starts_with('|') {
            for cell in t.split('|') {
                for (i, part) in cell.split('`').enumerate() {
                    if i % 2 == 1 && part.starts_with("misura ") && part.contains(' ') {
                        out.push(part.to_string());
                    }
                }
            }
        }
    }
    out
}

/// The exit code the text beside an example promises: `exit N` in its
/// table row, else 0.
fn promised_exit(markdown: &str, cmd: &str) -> i32 {
    markdown
        .lines()
        .find(|l| l.contains(cmd))
        .and_then(|l| {
            let after = &l[l.find(cmd)? + cmd.len()..];
            let i = after.find("exit ")?;
            after[i + 5..]
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// What its row says to do first: `after `X`:` before the example (a
/// server when X ends with `&`).
fn precondition(markdown: &str, cmd: &str) -> Option<String> {
    let line = markdown.lines().find(|l| l.contains(cmd))?;
    let before = &line[..line.find(cmd)?];
    let i = before.rfind("after `")?;
    let rest = &before[i + 7..];
    Some(rest[..rest.find('`')?].to_string())
}

/// What an example needs of the lab.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Needs {
    Nothing,
    /// The tester's ports on a cable (calibrate).
    Direct,
    /// The tester's ports through the bridge.
    Tester,
    /// A `lab` example: runs on what is there, in its place among the
    /// tester's examples.
    Lab,
    Hosts,
    Routed,
}

fn needs(cmd: &str) -> Needs {
    if cmd.starts_with("misura lab") {
        Needs::Lab
    } else if cmd.contains("198.18.1.2") {
        Needs::Routed
    } else if cmd.contains("misura-h") || cmd.contains("198.18.0.2") {
        Needs::Hosts
    } else if cmd.starts_with("misura calibrate") {
        Needs::Direct
    } else if cmd.contains("misura-tester") {
        Needs::Tester
    } else {
        Needs::Nothing
    }
}

/// The longest one README example may take (the slowest, y1564's, is
/// skipped here; the others take seconds).
const EXAMPLE_LIMIT: Duration = Duration::from_secs(120);

/// Runs examples through `sh -c` (redirections and `~` as a reader's shell
/// has them), `misura` being this build with the scratch home.
struct Runner {
    lab: Lab,
    dir: std::path::PathBuf,
    servers: Vec<(String, Child)>,
}

impl Runner {
    fn shell(&self, cmd: &str) -> Command {
        let home = test_home();
        let mut c = Command::new("sh");
        c.current_dir(&self.dir)
            .env("HOME", home)
            .env("XDG_DATA_HOME", home.join("data"))
            .arg("-c")
            .arg(format!("misura() {{ \"{BIN}\" \"$@\"; }}; {cmd}"));
        c
    }

    /// The example on this test's lab: `misura-` namespaces renamed, and
    /// `lab` commands given the prefix.
    fn localise(&self, cmd: &str) -> String {
        let mut c = cmd.replace("misura-", &self.lab.prefix);
        if c.starts_with("misura lab ") {
            c.push_str(&format!(" --prefix {}", self.lab.prefix));
        }
        c
    }

    /// An example run to its end, but never past [`EXAMPLE_LIMIT`]: its
    /// output goes to files (a pipe could be held open by something it
    /// started), and one that overruns is killed and fails its row.
    fn run(&self, cmd: &str) -> Output {
        let (out, err) = (self.dir.join("example.out"), self.dir.join("example.err"));
        let mut child = self
            .shell(cmd)
            .stdout(std::fs::File::create(&out).expect("an example's stdout file"))
            .stderr(std::fs::File::create(&err).expect("an example's stderr file"))
            .spawn()
            .expect("running sh");
        let t0 = Instant::now();
        let status = loop {
            if let Some(st) = child.try_wait().expect("waiting for an example") {
                break st;
            }
            if t0.elapsed() > EXAMPLE_LIMIT {
                let _ = child.kill();
                let st = child.wait().expect("reaping an example");
                std::fs::write(&err, format!("killed after {EXAMPLE_LIMIT:?}")).ok();
                break st;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        Output {
            status,
            stdout: std::fs::read(&out).unwrap_or_default(),
            stderr: std::fs::read(&err).unwrap_or_default(),
        }
    }

    /// A server example: it must still run after a second.
    fn start(&mut self, cmd: &str) {
        // Its stderr to a file, not a pipe: reading a pipe to its end could
        // wait on whatever else holds it.
        let log = self.dir.join(format!("server-{}.err", self.servers.len()));
        let mut child = self
            .shell(&format!(
                "exec \"{BIN}\" {} -q",
                cmd.trim_start_matches("misura ")
            ))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("a server's log"))
            .spawn()
            .expect("starting a server example");
        std::thread::sleep(Duration::from_secs(1));
        if let Some(st) = child.try_wait().unwrap() {
            panic!(
                "`{cmd}` ended at once ({st}): {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        self.servers.push((cmd.to_string(), child));
    }

    fn stop_servers(&mut self) {
        for (_, c) in &mut self.servers {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.servers.clear();
    }

    fn topology(&mut self, n: Needs, have: &mut Needs) {
        if matches!(n, Needs::Nothing | Needs::Lab) || n == *have {
            return;
        }
        match n {
            Needs::Direct => self.lab.topology("direct"),
            Needs::Tester => self.lab.topology("switch"),
            Needs::Hosts => self.lab.topology("hosts"),
            Needs::Routed => self.lab.topology("routed"),
            Needs::Nothing | Needs::Lab => {}
        }
        // Rewiring stops the lab's misura processes: the servers go with it
        // and are started again by the examples that need them.
        if matches!(n, Needs::Hosts | Needs::Routed) {
            self.stop_servers();
            for s in [
                "misura reflect --netns misura-h2",
                "misura serve --netns misura-h2",
            ] {
                let c = self.localise(s);
                self.start(&c);
            }
        }
        *have = n;
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        self.stop_servers();
    }
}

fn skipped(cmd: &str) -> Option<&'static str> {
    SKIPPED
        .iter()
        .find(|(part, _)| cmd.contains(part))
        .map(|(_, why)| *why)
}

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn the_readmes_examples_run_as_written() {
    need_root!();
    let readme = repo_file("README.md");
    let all = examples(&readme);
    assert!(
        all.len() >= 25,
        "found only {} examples in README.md",
        all.len()
    );
    let lab = Lab::new("dx", "r");
    let dir = lab.dir.clone();
    let mut r = Runner {
        lab,
        dir,
        servers: Vec::new(),
    };
    // Tester examples first, then the hosts', then routed, then the rest, so
    // the lab is rewired three times at most; the order within each is the
    // README's.
    let mut order: Vec<&String> = all.iter().collect();
    order.sort_by_key(|c| match needs(c) {
        Needs::Direct | Needs::Tester | Needs::Lab => 0,
        Needs::Hosts => 1,
        Needs::Routed => 2,
        Needs::Nothing => 3,
    });
    let mut have = Needs::Nothing;
    let (mut ran, mut skips, mut failures) = (0, Vec::new(), Vec::new());
    let t0 = Instant::now();
    for cmd in order {
        if let Some(why) = skipped(cmd) {
            skips.push(format!("{cmd}: {why}"));
            continue;
        }
        let local = r.localise(cmd);
        r.topology(needs(cmd), &mut have);
        if let Some(pre) = precondition(&readme, cmd).filter(|p| !p.starts_with("misura lab")) {
            let pre = r.localise(&pre);
            match pre.strip_suffix(" &") {
                Some(server) => r.start(server),
                None => assert!(r.run(&pre).status.success(), "`{pre}` failed"),
            }
        }
        if cmd.starts_with("misura reflect") || cmd.starts_with("misura serve") {
            // Already started with the topology; this checks it as written.
            let already = r.servers.iter().any(|(s, _)| *s == local);
            if !already {
                r.start(&local);
            }
            ran += 1;
            continue;
        }
        let t = Instant::now();
        let o = r.run(&local);
        ran += 1;
        let want = promised_exit(&readme, cmd);
        eprintln!(
            "{:>5.1} s  exit {:?}  {local}",
            t.elapsed().as_secs_f64(),
            o.status.code()
        );
        if o.status.code() != Some(want) {
            failures.push(format!(
                "`{cmd}` exited {:?}, the README promises {want}: {}",
                o.status.code(),
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            ));
        }
        // A rewiring example (lab up) changes what the lab holds.
        if cmd.starts_with("misura lab up") {
            have = if cmd.contains("direct") {
                Needs::Direct
            } else if cmd.contains("switch") {
                Needs::Tester
            } else {
                Needs::Lab
            };
        }
        if cmd.starts_with("misura lab down") {
            have = Needs::Nothing;
        }
    }
    eprintln!(
        "{ran} README examples ran in {:.0} s; {} skipped:\n  {}",
        t0.elapsed().as_secs_f64(),
        skips.len(),
        skips.join("\n  ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_guides_examples_are_counted() {
    let mut n = 0;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/guide");
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        n += examples(&std::fs::read_to_string(e.path()).unwrap()).len();
    }
    eprintln!("docs/guide/*.md: {n} misura examples (not run yet)");
    assert!(n > 50, "{n}");
}

#[test]
fn examples_are_extracted_as_a_reader_sees_them() {
    let md = "| `x` | y | `misura rtt 1.2.3.4 --count 2` (exit 8) |\n```sh\nsudo misura lab up   # a lab\nmisura oneway --tx p1 \\\n    --rx p2\necho no\n```\n";
    assert_eq!(
        examples(md),
        vec![
            "misura rtt 1.2.3.4 --count 2",
            "misura lab up",
            "misura oneway --tx p1 --rx p2"
        ]
    );
    assert_eq!(promised_exit(md, "misura rtt 1.2.3.4 --count 2"), 8);
    assert_eq!(promised_exit(md, "misura lab up"), 0);
    let row = "| x | after `mkdir -p d`: `misura completions bash > d/m` |";
    assert_eq!(
        precondition(row, "misura completions bash > d/m").as_deref(),
        Some("mkdir -p d")
    );
}
