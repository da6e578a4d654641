//! The Debian package as a user gets it: built by scripts/package.sh (or
//! taken from $MISURA_TEST_DEB, which scripts/test.sh builds once before the
//! tests), its contents listed with `dpkg-deb -c`, then installed on this
//! machine with dpkg, run from the installed paths (`misura --version`,
//! `man -w misura`, `misura demo --help`, the completions, the units), each
//! unit's capability set tried as user nobody on a lab of its own (enough for
//! what the unit runs, and needed), the file capabilities opted into and out
//! of, and purged again.
//!
//! It installs into the real system, so it refuses to run where a misura
//! package or a /usr/bin/misura is already present (it would replace it).

#[macro_use]
mod common;

use common::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Run `cmd`, expecting success; its standard output.
fn ok(cmd: &mut Command) -> String {
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(o.status.success(), "{cmd:?} failed:\n{}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The package to test: $MISURA_TEST_DEB, or one built now.
fn package() -> PathBuf {
    if let Some(p) = std::env::var_os("MISURA_TEST_DEB") {
        let p = PathBuf::from(p);
        assert!(p.is_file(), "MISURA_TEST_DEB={} is not a file", p.display());
        return p;
    }
    let out = ok(Command::new("bash")
        .arg(repo_root().join("scripts/package.sh"))
        .current_dir(repo_root()));
    PathBuf::from(
        out.lines()
            .last()
            .expect("package.sh printed no path")
            .trim(),
    )
}

/// dpkg, waiting (up to 5 min) while another dpkg or apt holds its lock.
fn dpkg(args: &[&str]) -> Output {
    let end = Instant::now() + Duration::from_secs(300);
    loop {
        let o = Command::new("dpkg")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .output()
            .expect("running dpkg");
        let t = text(&o);
        if o.status.success() || !t.contains("lock") || Instant::now() > end {
            return o;
        }
        std::thread::sleep(Duration::from_secs(2));
    }
}

/// Purges the package however the test ends.
struct Installed;

impl Drop for Installed {
    fn drop(&mut self) {
        let _ = dpkg(&["--purge", "misura"]);
    }
}

/// The installed misura as a user runs it: a clean environment, the system PATH.
fn installed(args: &[&str]) -> Command {
    let mut c = Command::new("/usr/bin/misura");
    c.args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin:/usr/sbin:/sbin")
        .env("HOME", test_home())
        .env("XDG_DATA_HOME", test_home().join("data"));
    c
}

fn contents(deb: &Path) -> BTreeSet<String> {
    ok(Command::new("dpkg-deb").arg("-c").arg(deb))
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .map(|p| p.trim_start_matches('.').to_string())
        .collect()
}

/// The manual pages this build's misura writes, as installed paths.
fn expected_pages() -> Vec<String> {
    let dir = TempDir::new("package-man");
    let o = misura()
        .args(["man", "--out", dir.0.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let mut pages: Vec<String> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            format!("/usr/share/man/man1/{name}.gz")
        })
        .collect();
    pages.sort();
    pages
}

const UNITS: [&str; 4] = [
    "misura-reflect.service",
    "misura-serve.service",
    "misura-agent.service",
    "misura-agent@.service",
];

fn check_contents(deb: &Path) {
    let files = contents(deb);
    let mut want: Vec<String> = [
        "/usr/bin/misura",
        "/usr/share/bash-completion/completions/misura",
        "/usr/share/zsh/vendor-completions/_misura",
        "/usr/share/fish/vendor_completions.d/misura.fish",
        "/etc/default/misura",
        "/usr/share/doc/misura/copyright",
        "/usr/share/doc/misura/changelog.gz",
        "/usr/share/doc/misura/LICENSE-MIT",
        "/usr/share/doc/misura/LICENSE-APACHE",
        "/usr/share/doc/misura/README.md",
        "/usr/share/doc/misura/examples/agent.toml",
        "/usr/share/doc/misura/monitoring.md",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    want.extend(UNITS.iter().map(|u| format!("/usr/lib/systemd/system/{u}")));
    let pages = expected_pages();
    assert!(pages.len() > 30, "only {} pages", pages.len());
    want.extend(pages.iter().cloned());
    for w in &want {
        assert!(
            files.contains(w),
            "the package lacks {w}; it has:\n{files:#?}"
        );
    }
    // No page the binary does not write (a stale staging directory).
    let shipped = files
        .iter()
        .filter(|f| f.starts_with("/usr/share/man/man1/") && f.ends_with(".gz"));
    assert_eq!(
        shipped.count(),
        pages.len(),
        "manual pages in the package vs misura man --out"
    );
    let depends = ok(Command::new("dpkg-deb")
        .args(["-f"])
        .arg(deb)
        .arg("Depends"));
    assert!(depends.contains("libc6"), "Depends: {depends}");
}

/// As user nobody, with NoNewPrivs off, so file capabilities apply: a raw
/// reflector on lo for 1 s; the exit code.
fn raw_reflector_as_nobody() -> (Option<i32>, String) {
    let o = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .args([
            "/usr/bin/misura",
            "reflect",
            "--l2",
            "lo",
            "--duration",
            "1s",
            "--no-store",
            "--quiet",
        ])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", "/nonexistent")
        .output()
        .expect("running setpriv");
    (o.status.code(), text(&o))
}

fn set_capabilities(value: &str) {
    std::fs::write(
        "/etc/default/misura",
        format!("MISURA_FILE_CAPABILITIES=\"{value}\"\n"),
    )
    .unwrap();
    ok(Command::new("dpkg-reconfigure")
        .arg("misura")
        .env("DEBIAN_FRONTEND", "noninteractive"));
}

fn getcap() -> String {
    ok(Command::new("getcap").arg("/usr/bin/misura"))
        .trim()
        .to_string()
}

/// The capabilities an installed unit grants (`AmbientCapabilities=`), in
/// setpriv's spelling: `["+net_raw", "+net_admin"]`.
fn unit_capabilities(unit: &str) -> Vec<String> {
    let text = std::fs::read_to_string(format!("/usr/lib/systemd/system/{unit}")).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("AmbientCapabilities="))
        .unwrap_or_else(|| panic!("{unit} has no AmbientCapabilities= line"));
    let bounding = text
        .lines()
        .find(|l| l.starts_with("CapabilityBoundingSet="))
        .unwrap_or_else(|| panic!("{unit} has no CapabilityBoundingSet= line"));
    let caps: Vec<String> = line["AmbientCapabilities=".len()..]
        .split_whitespace()
        .map(|c| format!("+{}", c.trim_start_matches("CAP_").to_lowercase()))
        .collect();
    assert_eq!(
        bounding["CapabilityBoundingSet=".len()..]
            .split_whitespace()
            .count(),
        caps.len(),
        "{unit}: the bounding set is not the ambient set"
    );
    caps
}

/// The installed misura as user nobody inside namespace `ns`, holding
/// exactly `caps` (as a unit's DynamicUser with AmbientCapabilities would).
fn as_nobody(ns: &str, caps: &[String], args: &[&str]) -> Command {
    let set = std::iter::once("-all".to_string())
        .chain(caps.iter().cloned())
        .collect::<Vec<_>>()
        .join(",");
    let mut c = Command::new("ip");
    c.args([
        "netns",
        "exec",
        ns,
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
    ])
    .arg("--clear-groups")
    .arg(format!("--inh-caps={set}"))
    .arg(format!("--ambient-caps={set}"))
    .args(["--", "/usr/bin/misura", "--no-store"])
    .args(args)
    .env_clear()
    .env("PATH", "/usr/bin:/bin:/usr/sbin:/sbin")
    .env("HOME", "/nonexistent");
    c
}

/// `misura ARGS` as nobody in `ns` succeeds holding `caps` and, holding
/// none, exits 3 (missing privilege); the successful run's output.
fn succeeds_only_with(ns: &str, caps: &[String], args: &[&str]) -> Output {
    let o = as_nobody(ns, caps, args).output().unwrap();
    assert!(o.status.success(), "{args:?} with {caps:?}: {}", text(&o));
    let without = as_nobody(ns, &[], args).output().unwrap();
    assert_eq!(
        without.status.code(),
        Some(3),
        "{args:?} without capabilities: {}",
        text(&without)
    );
    o
}

/// Each unit's capabilities are enough for what it runs, and needed: the
/// agent's one-way measurement, the reflector on port 862 and on raw frames,
/// the server with none at all; without them the first two exit 3.
fn check_unit_capabilities() {
    let lab = Lab::up("package", "u", "direct");
    let ns = lab.tester();
    let oneway = [
        "oneway", "--tx", "p1", "--rx", "p2", "--count", "200", "--period", "1ms",
    ];
    let agent = unit_capabilities("misura-agent.service");
    assert_eq!(agent, unit_capabilities("misura-agent@.service"));
    let o = succeeds_only_with(&ns, &agent, &[&oneway[..], &["--json", "-q"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["totals"]["received"], 200, "{}", v["totals"]);

    let reflect = unit_capabilities("misura-reflect.service");
    let udp = [
        "reflect",
        "--listen",
        "127.0.0.1",
        "--port",
        "862",
        "--duration",
        "1s",
        "-q",
    ];
    succeeds_only_with(&ns, &reflect, &udp);
    succeeds_only_with(
        &ns,
        &reflect,
        &["reflect", "--l2", "p2", "--duration", "1s", "-q"],
    );

    let serve = unit_capabilities("misura-serve.service");
    assert!(serve.is_empty(), "the server is granted {serve:?}");
    let server = as_nobody(&ns, &serve, &["serve", "--listen", "127.0.0.1", "-q"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let client = || {
        Command::new("ip")
            .args([
                "netns",
                "exec",
                &ns,
                "/usr/bin/misura",
                "--no-store",
                "tcp",
                "127.0.0.1",
            ])
            .args(["--duration", "1s", "-q"])
            .output()
            .unwrap()
    };
    let end = Instant::now() + Duration::from_secs(10);
    let mut o = client();
    while !o.status.success() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(200));
        o = client();
    }
    let term = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status();
    assert!(term.unwrap().success(), "kill -TERM the server");
    let served = server.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "tcp against serve without capabilities: {}",
        text(&o)
    );
    assert_eq!(served.status.code(), Some(143), "{}", text(&served));
}

fn check_installed() {
    let v = ok(&mut installed(&["--version"]));
    assert_eq!(v.trim(), format!("misura {}", env!("CARGO_PKG_VERSION")));

    let page = ok(Command::new("man").args(["-w", "misura"]));
    assert_eq!(page.trim(), "/usr/share/man/man1/misura.1.gz");
    let page = ok(Command::new("man").args(["-w", "misura-lab-up"]));
    assert_eq!(page.trim(), "/usr/share/man/man1/misura-lab-up.1.gz");
    let shown = ok(Command::new("man")
        .args(["-P", "cat", "misura-rtt"])
        .env("MANWIDTH", "100"));
    assert!(
        shown.contains("--count") && shown.contains("STAMP"),
        "{shown}"
    );

    let demo = ok(&mut installed(&["demo", "--help"]));
    assert!(
        demo.contains("virtual lab") && demo.contains("--count"),
        "{demo}"
    );

    let complete = ok(Command::new("bash").args([
        "--norc",
        "-c",
        "source /usr/share/bash-completion/completions/misura && complete -p misura",
    ]));
    assert!(complete.contains("_misura"), "{complete}");

    // The installed units, checked by systemd against the installed binary.
    if let Some(analyze) = which("systemd-analyze") {
        for unit in UNITS {
            let path = if unit.ends_with("@.service") {
                // A template is verified through an instance of it.
                let inst = test_home().join("misura-agent@lab.service");
                std::fs::copy(format!("/usr/lib/systemd/system/{unit}"), &inst).unwrap();
                inst
            } else {
                PathBuf::from(format!("/usr/lib/systemd/system/{unit}"))
            };
            let o = Command::new(&analyze)
                .args(["verify", "--man=no"])
                .arg(&path)
                .output()
                .unwrap();
            let complaints: Vec<&str> = std::str::from_utf8(&o.stderr)
                .unwrap()
                .lines()
                .filter(|l| l.contains("misura"))
                .collect();
            assert!(
                complaints.is_empty(),
                "systemd-analyze verify {unit}: {complaints:#?}"
            );
        }
    }

    check_unit_capabilities();

    // File capabilities: none unless asked for; asked, the raw socket opens
    // for an unprivileged user; withdrawn, it does not.
    assert_eq!(getcap(), "", "capabilities set without being asked for");
    let (code, out) = raw_reflector_as_nobody();
    assert_eq!(code, Some(3), "without capabilities: {out}");
    assert!(out.contains("CAP_NET_RAW"), "{out}");
    set_capabilities("cap_net_raw,cap_net_admin");
    let caps = getcap();
    assert!(
        caps.contains("cap_net_admin") && caps.contains("cap_net_raw") && caps.contains("ep"),
        "{caps}"
    );
    let (code, out) = raw_reflector_as_nobody();
    assert_eq!(code, Some(0), "with cap_net_raw: {out}");
    set_capabilities("cap_sys_admin");
    assert_eq!(getcap(), "", "a capability not offered was set");
    set_capabilities("");
    assert_eq!(getcap(), "");
}

#[test]
#[ignore = "needs root: builds the Debian package and installs it on this machine with dpkg"]
fn the_package_installs_runs_from_its_paths_and_purges() {
    require_root();
    for tool in [
        "dpkg",
        "dpkg-deb",
        "man",
        "getcap",
        "setpriv",
        "dpkg-reconfigure",
    ] {
        require_tool(
            tool,
            "apt install dpkg man-db libcap2-bin util-linux debconf",
        );
    }
    let listed = Command::new("dpkg-query")
        .args(["-W", "-f", "${Status}", "misura"])
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&listed.stdout).contains("installed")
            && !Path::new("/usr/bin/misura").exists(),
        "misura is already installed here (dpkg -l misura, /usr/bin/misura): this test \
         installs and purges the package, so remove it first (dpkg --purge misura)"
    );
    let deb = package();
    check_contents(&deb);

    let guard = Installed;
    let o = dpkg(&["-i", deb.to_str().unwrap()]);
    assert!(
        o.status.success(),
        "dpkg -i {}:\n{}",
        deb.display(),
        text(&o)
    );
    check_installed();

    // Removed: the binary, pages and units go, the edited conffile stays;
    // purged: that goes too.
    let o = dpkg(&["--remove", "misura"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!Path::new("/usr/bin/misura").exists());
    assert!(!Path::new("/usr/share/man/man1/misura.1.gz").exists());
    assert!(!Path::new("/usr/lib/systemd/system/misura-agent.service").exists());
    assert!(Path::new("/etc/default/misura").exists());
    let o = dpkg(&["--purge", "misura"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!Path::new("/etc/default/misura").exists());
    drop(guard);
}
