//! Every command example of the README and of the guides (docs/guide/*.md)
//! runs as written (issue 36), on a lab of this test's own (its namespaces'
//! prefix replaces `misura-`) and in a scratch HOME (results store,
//! profiles: never the user's), each checked for the exit code its text
//! promises (0 unless the text beside it says `exit N`). Every example is
//! bounded ([`EXAMPLE_LIMIT`]). Examples that cannot run here are listed
//! with the reason in [`SKIPPED`] (README) and [`GUIDE_SKIPPED`]: forms for
//! the reader's NIC, package, service or NIC lab guest, the standards'
//! hours-long forms, and three that take minutes each, skipped for time;
//! each test prints how many examples it ran and skipped, and why.
//!
//! - `the_readmes_examples_run_as_written`: the README's command table and
//!   "A first session on the lab". The servers the table lists (`reflect`,
//!   `serve`) are started as it shows and must stay up; the clients after
//!   them use them; a row's `after `X`` runs first.
//! - `the_guides_examples_run_as_written`: each guide's ```sh blocks in
//!   order, as a reader pastes them, then the forms in its tables. `lab up`
//!   and `lab down` run as written (an example needing another topology
//!   gets it first); `… &` servers stay up until the block's `kill %1`; a
//!   server form without `&` is started, must be up half a second later,
//!   and is stopped, as a reader stops it before the next line. Set-up
//!   lines run as written (`mkdir -p`, `openssl rand`, here-documents);
//!   lines that change the machine (`apt`, `install` into /etc,
//!   `systemctl`, `tee /etc/…`) or run another tool (`curl`, `irtt`,
//!   `getcap`) do not. A server form without `--netns` runs in the lab's
//!   far host (`h2`), as on a reader's far host; `HOST` is that host as
//!   `h1` reaches it, and a form on it that gives no `--duration` runs 1 s,
//!   not its default 10 s ([`FORM_DURATION`]). An example that comes out
//!   inconclusive (exit 8: the tester's own limit, which the guides allow
//!   on a busy host) runs once more. What a guide leaves to its reader is
//!   set up by [`set_up`]: the reflector instrument.md's loop measures, the
//!   stored runs results.md names by number (real short rtt runs, numbered
//!   as the text names them), chronyd for `clock tsc --ntp`, the package's
//!   example agent.toml where install.md reads it from /etc.
//!
//! The two tests take turns (`one_at_a_time`): each loads the CPUs. On
//! this 2-vCPU machine the README's 27 examples take about 140 s, the
//! guides' 74 about 280 s.

#[macro_use]
mod common;

use common::*;
use std::path::PathBuf;
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
        "needs its row's `lab up --police 50M` first, which this test leaves to the lab steps; the guides' test runs the same command after rfc2544-y1564.md's `lab up --police 50M` (PASS, exit 0) and on the bare bridge (FAIL, exit 9)",
    ),
    (
        "misura agent",
        "needs agent.toml and runs until stopped; the guides' test runs the same command with fleet.md's agent.toml",
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

/// Guide examples that cannot run here, matched as [`SKIPPED`] (a part
/// ending in `$` matches the whole command), each with the reason.
const GUIDE_SKIPPED: &[(&str, &str)] = &[
    (
        "misura demo",
        "builds the default misura-* lab, which other runs on this machine may hold; its steps run as oneway.md's examples",
    ),
    (
        "man misura",
        "needs the Debian package installed (tests/package.rs installs it)",
    ),
    (
        "--interface eth0",
        "names the reader's NIC; CI machines have none called eth0",
    ),
    (
        "--store /var/lib/misura-reflect/",
        "reads the store of the Debian package's misura-reflect service (systemd)",
    ),
    (
        "misura reflect --l2$",
        "names the reflector `rtt --l2` talks to, in a flag table; its runnable form, `misura reflect --l2 m0 --netns misura-h2`, runs",
    ),
    (
        "misura rfc2544 --netns misura-tester --tx p1 --rx p2$",
        "the RFC's durations: several hours for its seven sizes, as the guide says",
    ),
    (
        "--service ...",
        "a form: `...` stands for the reader's services; 15 min with the standard's durations",
    ),
    (
        "misura rfc2544 --netns misura-tester --tx p1 --rx p2 --sizes 64,512",
        "for time: 1-2 min (51 s in the guide's run); its exit, 0 or 8 (inconclusive), rests on how busy the tester is, as the guide says; tests/rfc2544.rs runs rfc2544 on known shapes",
    ),
    (
        "--duration 30s --service name=voice",
        "for time: 95 s to 3 min as the guide says; the policer's two y1564 examples below run",
    ),
    (
        "misura setup HOST --idle 0s,1s,5s",
        "for time: 18 s of idle gaps; the block above runs `misura setup … --idle 0s,1s` on the lab",
    ),
    (
        "oneway --tx eth0 --rx eth1",
        "runs inside the NIC lab's QEMU guest (scripts/nic-lab.sh; 20-25 s a boot under TCG, QEMU 10 for igb); tests/nic_lab.rs runs oneway there the same way",
    ),
];

/// What a reader meets in a markdown text, in order.
#[derive(Clone, Debug, PartialEq)]
enum Item {
    /// A `misura …` command (or a shell loop around one): as a reader pastes
    /// it (continuations joined, `sudo` and the comment dropped), the exit
    /// code the text beside it promises, and whether it ends with `&` (a
    /// server left running).
    Example {
        cmd: String,
        promise: i32,
        background: bool,
    },
    /// Any other line of a ```sh block (a here-document whole).
    Shell(String),
}

/// The items of a markdown text: each line of its ```sh blocks (`;` and
/// `&` split a line into its commands) and the inline `misura …` commands
/// of its table cells.
fn items(markdown: &str) -> Vec<Item> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    let mut comments = String::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        let t = line.trim();
        if t.starts_with("```") {
            in_sh = !in_sh && (t == "```sh" || t == "```bash");
            continue;
        }
        if in_sh {
            let code = match t.find(" #") {
                Some(i) if !t[..i].contains('\'') => {
                    comments.push_str(&t[i..]);
                    t[..i].trim_end()
                }
                _ => t,
            };
            pending.push_str(code.trim_end_matches('\\').trim_end());
            if code.ends_with('\\') {
                pending.push(' ');
                continue;
            }
            let whole = std::mem::take(&mut pending);
            let promise = exit_in(&std::mem::take(&mut comments)).unwrap_or(0);
            let whole = whole.trim();
            if whole.is_empty() || whole.starts_with('#') {
                continue;
            }
            if let Some(i) = whole.find("<<'EOF'") {
                // A here-document: its lines are data, not commands.
                let mut doc = whole[..i + 7].to_string();
                for l in lines.by_ref() {
                    doc.push('\n');
                    doc.push_str(l);
                    if l.trim() == "EOF" {
                        break;
                    }
                }
                out.push(Item::Shell(doc));
                continue;
            }
            if whole.starts_with("for ") && whole.contains("misura ") {
                out.push(Item::Example {
                    cmd: whole.replace("do sudo ", "do "),
                    promise,
                    background: false,
                });
                continue;
            }
            for (cmd, background) in commands(whole) {
                out.push(if cmd.starts_with("misura ") {
                    Item::Example {
                        cmd,
                        promise,
                        background,
                    }
                } else {
                    Item::Shell(cmd)
                });
            }
        } else if t.starts_with('|') {
            for cell in t.split('|') {
                for (i, part) in cell.split('`').enumerate() {
                    if i % 2 == 1 && part.starts_with("misura ") && part.contains(' ') {
                        out.push(Item::Example {
                            cmd: part.to_string(),
                            promise: promised_exit(t, part),
                            background: false,
                        });
                    }
                }
            }
        }
    }
    out
}

/// The commands of one shell line: split at `;` and at a lone `&` (which
/// leaves the command before it running), `sudo` dropped.
fn commands(line: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for part in line.split("; ") {
        let mut rest = part.trim();
        while !rest.is_empty() {
            let (cmd, background, tail) = match rest.find(" & ") {
                Some(i) => (&rest[..i], true, &rest[i + 3..]),
                None => match rest.strip_suffix('&').filter(|c| !c.ends_with('&')) {
                    Some(c) => (c, true, ""),
                    None => (rest, false, ""),
                },
            };
            out.push((
                cmd.trim().trim_start_matches("sudo ").to_string(),
                background,
            ));
            rest = tail.trim();
        }
    }
    out
}

/// The `misura …` commands of a markdown text, as [`items`] finds them.
fn examples(markdown: &str) -> Vec<String> {
    items(markdown)
        .into_iter()
        .filter_map(|i| match i {
            Item::Example { cmd, .. } => Some(cmd),
            Item::Shell(_) => None,
        })
        .collect()
}

/// `exit N` in a text, the first one.
fn exit_in(text: &str) -> Option<i32> {
    let i = text.find("exit ")?;
    text[i + 5..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// The exit code the text beside an example promises: `exit N` in its
/// table row, else 0.
fn promised_exit(markdown: &str, cmd: &str) -> i32 {
    markdown
        .lines()
        .find(|l| l.contains(cmd))
        .and_then(|l| exit_in(&l[l.find(cmd)? + cmd.len()..]))
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
/// has them), `misura` being this build, in a scratch home (`home`, its
/// results store in `home/data`).
struct Runner {
    lab: Lab,
    dir: PathBuf,
    home: PathBuf,
    servers: Vec<(String, Child)>,
}

impl Runner {
    fn new(lab: Lab, home: PathBuf) -> Runner {
        std::fs::create_dir_all(home.join("data")).expect("a scratch home");
        Runner {
            dir: lab.dir.clone(),
            lab,
            home,
            servers: Vec::new(),
        }
    }

    fn shell(&self, cmd: &str) -> Command {
        let mut c = Command::new("sh");
        c.current_dir(&self.dir)
            .env("HOME", &self.home)
            .env("XDG_DATA_HOME", self.home.join("data"))
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

    /// A server example (quiet: `-q`): it must still run half a second later.
    fn start(&mut self, cmd: &str) {
        let exec = format!("exec \"{BIN}\" {} -q", cmd.trim_start_matches("misura "));
        if let Err(e) = self.start_as(cmd, &exec) {
            panic!("{e}");
        }
    }

    /// A server example as written, in namespace `netns` when given: it
    /// must still run half a second later. Its output goes to a file, not a pipe:
    /// reading a pipe to its end could wait on whatever else holds it.
    fn start_in(&mut self, cmd: &str, netns: Option<&str>) -> Result<(), String> {
        let args = cmd.trim_start_matches("misura ");
        let exec = match netns {
            Some(ns) => format!("exec ip netns exec {ns} \"{BIN}\" {args}"),
            None => format!("exec \"{BIN}\" {args}"),
        };
        self.start_as(cmd, &exec)
    }

    /// Runs `exec`, named `cmd`; `Err` says how it ended at once.
    fn start_as(&mut self, cmd: &str, exec: &str) -> Result<(), String> {
        let log = self.dir.join(format!("server-{}.err", self.servers.len()));
        let mut child = self
            .shell(exec)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("a server's log"))
            .spawn()
            .expect("starting a server example");
        // A server that cannot start (a bad flag, a missing file, a port in
        // use) ends within milliseconds.
        std::thread::sleep(Duration::from_millis(500));
        if let Some(st) = child.try_wait().unwrap() {
            return Err(format!(
                "`{cmd}` ended at once ({st}): {}",
                std::fs::read_to_string(&log).unwrap_or_default().trim_end()
            ));
        }
        self.servers.push((cmd.to_string(), child));
        Ok(())
    }

    fn stop_servers(&mut self) {
        for (_, c) in &mut self.servers {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.servers.clear();
    }

    /// The lab in the topology `n` needs, unless it is there. With
    /// `servers`, the README's reflector and server in h2 are started again
    /// after a rewiring (which stops the lab's misura processes).
    fn topology(&mut self, n: Needs, have: &mut Needs, servers: bool) {
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
        if matches!(n, Needs::Hosts | Needs::Routed) {
            self.stop_servers();
            if servers {
                for s in [
                    "misura reflect --netns misura-h2",
                    "misura serve --netns misura-h2",
                ] {
                    let c = self.localise(s);
                    self.start(&c);
                }
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
    skipped_in(SKIPPED, cmd)
}

/// The reason `cmd` is skipped in `list`: an entry it contains, or equals
/// when the entry ends in `$`.
fn skipped_in(list: &[(&str, &'static str)], cmd: &str) -> Option<&'static str> {
    list.iter()
        .find(|(part, _)| match part.strip_suffix('$') {
            Some(whole) => cmd == whole,
            None => cmd.contains(part),
        })
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
    let _one = one_at_a_time();
    let mut r = Runner::new(Lab::new("dx", "r"), test_home().to_path_buf());
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
        r.topology(needs(cmd), &mut have, true);
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
                why_failed(&o.stderr)
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
    conclude("README examples", ran, t0, &skips, &failures);
}

/// Says how many examples ran and which were skipped, and why; fails with
/// every example that did not keep its promise.
fn conclude(what: &str, ran: usize, t0: Instant, skips: &[String], failures: &[String]) {
    eprintln!(
        "{ran} {what} ran in {:.0} s; {} skipped:\n  {}",
        t0.elapsed().as_secs_f64(),
        skips.len(),
        skips.join("\n  ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The guides, in the order they run. results.md names stored runs by
/// number (12, 15 and 19, and instrument.md's loop's 21-23): the guides
/// before it store fewer than 12 runs, and [`set_up`] numbers those runs.
const GUIDES: &[&str] = &[
    "lab.md",
    "oneway.md",
    "instrument.md",
    "results.md",
    "rtt.md",
    "throughput.md",
    "load.md",
    "fleet.md",
    "install.md",
    "rfc2544-y1564.md",
    "without-hardware.md",
];

/// A server example: it runs until stopped.
fn is_server(cmd: &str) -> bool {
    cmd.starts_with("misura reflect")
        || cmd.starts_with("misura serve")
        || cmd.starts_with("misura exchange --respond")
        || (cmd.starts_with("misura agent") && !cmd.contains("--check"))
}

/// What a guide example needs of the lab, which `have`: as a README one,
/// `HOST` being the far host, a server without `--netns` running there;
/// the hosts' namespaces alone are in `routed` too.
fn guide_needs(cmd: &str, have: Needs) -> Needs {
    let cmd = cmd.replace(" HOST", " 198.18.0.2");
    let n = if is_server(&cmd) && !cmd.contains("--netns") {
        Needs::Hosts
    } else {
        needs(&cmd)
    };
    if n == Needs::Hosts && have == Needs::Routed && !cmd.contains("198.18.0.") {
        Needs::Routed
    } else {
        n
    }
}

/// The topology a guide's `lab up` leaves (`lab down`: none).
fn lab_after(cmd: &str) -> Option<Needs> {
    if cmd.starts_with("misura lab down") {
        return Some(Needs::Nothing);
    }
    if !cmd.starts_with("misura lab up") {
        return None;
    }
    Some(
        [
            ("direct", Needs::Direct),
            ("switch", Needs::Tester),
            ("hosts", Needs::Hosts),
            ("routed", Needs::Routed),
        ]
        .into_iter()
        .find(|(t, _)| cmd.contains(&format!("--topology {t}")))
        .map_or(Needs::Lab, |(_, n)| n),
    )
}

/// How long throughput.md's forms on `HOST` without a `--duration` run:
/// seven of them at their default 10 s (a sweep's five sizes 10 s each)
/// would add some 110 s to this test; the flags they show are what they
/// check.
const FORM_DURATION: &str = "1s";

/// A form on `HOST` given [`FORM_DURATION`].
fn shortened(cmd: &str) -> bool {
    cmd.contains(" HOST")
        && !cmd.contains("--duration")
        && ["tcp", "udp", "rr", "sweep"]
            .iter()
            .any(|c| cmd.starts_with(&format!("misura {c} ")))
}

impl Runner {
    /// A guide example on this lab: as [`Runner::localise`], with `HOST`
    /// the far host as h1 reaches it and install.md's /etc/misura/agent.toml
    /// the scratch copy [`set_up`] makes; a form on `HOST` that gives no
    /// `--duration` (its default is 10 s) runs for [`FORM_DURATION`].
    fn localise_guide(&self, cmd: &str) -> String {
        let mut c = self
            .localise(cmd)
            .replace(
                "/etc/misura/agent.toml",
                &self.dir.join("etc-misura-agent.toml").display().to_string(),
            )
            .replace(
                " HOST",
                &format!(" 198.18.0.2 --netns {}h1", self.lab.prefix),
            );
        if shortened(cmd) {
            c.push_str(&format!(" --duration {FORM_DURATION}"));
        }
        c
    }

    /// A server (as localised) is up.
    fn serving(&mut self, local: &str) -> bool {
        self.servers
            .iter_mut()
            .any(|(s, c)| s == local && matches!(c.try_wait(), Ok(None)))
    }

    /// One non-misura line of a guide's ```sh block: set-up runs (as
    /// localised), `kill %N` stops the servers; lines that change the
    /// machine or run another tool do not run.
    fn shell_line(&mut self, line: &str) {
        if line.starts_with("kill %") {
            self.stop_servers();
            return;
        }
        let set_up = ["mkdir -p ", "openssl rand ", "cat > "];
        if !set_up.iter().any(|p| line.starts_with(p)) {
            return;
        }
        let local = self.localise(line);
        let o = self.run(&local);
        assert!(
            o.status.success(),
            "`{local}` failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    /// The results store's next run gets number `id` (none of that number
    /// or above may be there yet).
    fn next_run_is(&self, id: i64) {
        let store = self.home.join("data/misura/results.sqlite");
        let c = rusqlite::Connection::open(&store).expect("the guides' results store");
        let last: i64 = c
            .query_row("SELECT COALESCE(MAX(id), 0) FROM runs", [], |r| r.get(0))
            .expect("reading the store's runs");
        assert!(
            last < id,
            "the store holds run {last} already: run {id} cannot be made (the guides before results.md stored too many)"
        );
        let n = c
            .execute(
                "UPDATE sqlite_sequence SET seq = ?1 WHERE name = 'runs'",
                [id - 1],
            )
            .unwrap();
        if n == 0 {
            c.execute(
                "INSERT INTO sqlite_sequence (name, seq) VALUES ('runs', ?1)",
                [id - 1],
            )
            .unwrap();
        }
    }
}

/// What a guide leaves to its reader before `cmd`, done here; `Err` says
/// why it cannot be (the example is then skipped with that reason).
fn set_up(r: &mut Runner, cmd: &str, have: &mut Needs) -> Result<(), String> {
    if cmd.starts_with("for n in 0 1 2; do misura rtt") {
        // instrument.md's loop measures against rtt.md's reflector; its runs
        // are results.md's 21-23, and results.md's 12, 15 and 19 are rtt
        // runs of one target before them: real short runs, numbered so.
        r.topology(Needs::Hosts, have, false);
        let reflector = r.localise("misura reflect --netns misura-h2");
        if !r.serving(&reflector) {
            r.start_in(&reflector, None)?;
        }
        let rtt = r.localise("misura rtt 198.18.0.2 --netns misura-h1 --count 100 --period 1ms -q");
        for id in [12, 15, 19] {
            if !r.home.join("data/misura/results.sqlite").exists() {
                assert!(r.run(&rtt).status.success(), "`{rtt}` failed");
            }
            r.next_run_is(id);
            let o = r.run(&rtt);
            assert!(
                o.status.success(),
                "`{rtt}` (stored run {id}) failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        r.next_run_is(21);
    }
    if cmd.contains("--ntp 198.18.0.2") {
        // An NTP server in the far host, as tests/tsc.rs runs it: chronyd
        // serving its own clock (`-x`: it never sets it), up when it answers.
        if !std::path::Path::new(CHRONYD).exists() {
            return Err("needs chronyd serving NTP from misura-h2 (apt-get install chrony)".into());
        }
        r.topology(Needs::Hosts, have, false);
        let conf = chrony_conf(&r.dir);
        let ns = format!("{}h2", r.lab.prefix);
        r.start_as(
            "chronyd",
            &format!(
                "exec ip netns exec {ns} {CHRONYD} -d -x -f {}",
                conf.display()
            ),
        )?;
        let probe = r.localise(
            "misura clock tsc --netns misura-h1 --ntp 198.18.0.2 --interval 100ms --count 2 -q",
        );
        let t0 = Instant::now();
        while !r.run(&probe).status.success() {
            if t0.elapsed() > Duration::from_secs(10) {
                return Err("chronyd in misura-h2 did not answer within 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }
    if cmd.contains(" HOST") {
        // The forms' HOST runs `misura serve`, as the block's first line
        // shows (a reader starts it there and leaves it up).
        r.topology(Needs::Hosts, have, false);
        let serve = r.localise("misura serve --netns misura-h2");
        if !r.serving(&serve) {
            r.start_in(&serve, None)?;
        }
    }
    if cmd.contains("/etc/misura/agent.toml") {
        // What the package installs as /usr/share/doc/misura/examples/agent.toml.
        std::fs::write(
            r.dir.join("etc-misura-agent.toml"),
            repo_file("examples/agent.toml"),
        )
        .unwrap();
    }
    Ok(())
}

/// The line of an example's stderr that says why it failed: its error,
/// else its last line.
fn why_failed(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let last = lines.clone().next_back().unwrap_or("").to_string();
    lines
        .find(|l| l.contains("error"))
        .map_or(last, str::to_string)
}

/// The exit code the guide promises for `cmd`: `exit N` beside it, and
/// results.md's "without any [converter], `--png` is refused (exit 2)".
fn guide_promise(cmd: &str, promise: i32) -> i32 {
    let converter = ["rsvg-convert", "chromium", "convert"]
        .iter()
        .any(|c| which(c).is_some());
    if cmd.contains("--png") && !converter {
        2
    } else {
        promise
    }
}

#[test]
#[ignore = "needs root: network namespaces and raw sockets"]
fn the_guides_examples_run_as_written() {
    need_root!();
    let _one = one_at_a_time();
    let guides: Vec<&str> = match std::env::var("MISURA_DOCS_GUIDES") {
        // Some guides only, for working on them: MISURA_DOCS_GUIDES=rtt.md,load.md
        Ok(only) => GUIDES
            .iter()
            .copied()
            .filter(|g| only.split(',').any(|o| o == *g))
            .collect(),
        Err(_) => GUIDES.to_vec(),
    };
    let mut r = Runner::new(Lab::new("dx", "g"), test_home().join("guides"));
    let mut have = Needs::Nothing;
    let (mut ran, mut short, mut skips, mut failures) = (0, 0, Vec::new(), Vec::new());
    let t0 = Instant::now();
    for guide in &guides {
        let md = repo_file(&format!("docs/guide/{guide}"));
        let tg = Instant::now();
        let mut n = 0;
        for item in items(&md) {
            let (cmd, promise, background) = match item {
                Item::Shell(line) => {
                    r.shell_line(&line);
                    continue;
                }
                Item::Example {
                    cmd,
                    promise,
                    background,
                } => (cmd, promise, background),
            };
            if let Some(why) = skipped_in(GUIDE_SKIPPED, &cmd) {
                skips.push(format!("{guide}: {cmd}: {why}"));
                continue;
            }
            if let Err(why) = set_up(&mut r, &cmd, &mut have) {
                skips.push(format!("{guide}: {cmd}: {why}"));
                continue;
            }
            r.topology(guide_needs(&cmd, have), &mut have, false);
            let local = r.localise_guide(&cmd);
            let t = Instant::now();
            n += 1;
            if is_server(&cmd) {
                // A reader's far host runs a server without --netns.
                let far = format!("{}h2", r.lab.prefix);
                let netns = (!cmd.contains("--netns")).then_some(far.as_str());
                if let Err(e) = r.start_in(&local, netns) {
                    failures.push(format!("{guide}: {e}"));
                    continue;
                }
                if !background {
                    // In the foreground it runs until the reader stops it.
                    let (_, mut c) = r.servers.pop().expect("the server just started");
                    let _ = c.kill();
                    let _ = c.wait();
                }
                eprintln!("{:>5.1} s  up  {local}", t.elapsed().as_secs_f64());
                continue;
            }
            let want = guide_promise(&cmd, promise);
            let mut o = r.run(&local);
            if o.status.code() == Some(8) && want != 8 {
                // Inconclusive: the tester's own limit, which the guides
                // allow on a busy host; a second run, as tests/rfc2544.rs.
                eprintln!("exit 8 (inconclusive: the tester's limit): once more");
                o = r.run(&local);
            }
            eprintln!(
                "{:>5.1} s  exit {:?}  {local}",
                t.elapsed().as_secs_f64(),
                o.status.code()
            );
            if shortened(&cmd) {
                short += 1;
            }
            if o.status.code() != Some(want) {
                failures.push(format!(
                    "{guide}: `{cmd}` exited {:?}, the guide promises {want}: {}",
                    o.status.code(),
                    why_failed(&o.stderr)
                ));
            }
            if let Some(n) = lab_after(&cmd) {
                have = n;
            }
        }
        r.stop_servers();
        eprintln!(
            "{guide}: {n} examples in {:.0} s",
            tg.elapsed().as_secs_f64()
        );
        ran += n;
    }
    let what = format!("guide examples ({short} forms on HOST with --duration {FORM_DURATION})");
    conclude(&what, ran, t0, &skips, &failures);
}

#[test]
fn the_guides_examples_are_found() {
    let mut n = 0;
    for g in GUIDES {
        n += examples(&repo_file(&format!("docs/guide/{g}"))).len();
    }
    let listed = std::fs::read_dir(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/guide"),
    )
    .unwrap()
    .flatten()
    .filter(|e| e.file_name().to_string_lossy().ends_with(".md"))
    .count();
    eprintln!("docs/guide/*.md: {n} misura examples");
    assert!(n > 50, "{n}");
    // testing.md has no example; every other guide is run.
    assert_eq!(listed, GUIDES.len() + 1, "a guide missing from GUIDES");
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

#[test]
fn shell_lines_split_as_a_shell_runs_them() {
    let md = "```sh\nsudo misura serve --netns a & sudo misura reflect --netns a &\nsudo kill %1; sudo misura lab down   # exit 0\ncat > a.toml <<'EOF'\nmisura = \"not a command\"\nEOF\nfor n in 0 1; do sudo misura rtt h --cpu-load $n; done\n# a comment\nsudo misura lab up --topology switch --police 50M\nsudo misura y1564 --service x   # FAIL, exit 9\nmisura --version && man misura\n```\n";
    let ex = |cmd: &str, promise: i32, background: bool| Item::Example {
        cmd: cmd.into(),
        promise,
        background,
    };
    assert_eq!(
        items(md),
        vec![
            ex("misura serve --netns a", 0, true),
            ex("misura reflect --netns a", 0, true),
            Item::Shell("kill %1".into()),
            ex("misura lab down", 0, false),
            Item::Shell("cat > a.toml <<'EOF'\nmisura = \"not a command\"\nEOF".into()),
            ex(
                "for n in 0 1; do misura rtt h --cpu-load $n; done",
                0,
                false
            ),
            ex("misura lab up --topology switch --police 50M", 0, false),
            ex("misura y1564 --service x", 9, false),
            ex("misura --version && man misura", 0, false),
        ]
    );
    assert_eq!(
        skipped_in(&[("misura reflect --l2$", "why")], "misura reflect --l2"),
        Some("why")
    );
    assert_eq!(
        skipped_in(&[("misura reflect --l2$", "why")], "misura reflect --l2 m0"),
        None
    );
}
