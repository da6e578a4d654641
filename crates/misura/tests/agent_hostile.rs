//! The agent against hostile peers (issue 29): a sink that redirects, a
//! sink that is down or slow, a template server that stalls or pins a
//! refused version, targets its children would refuse, per-probe logs at
//! predictable paths. Each test reproduces one attack on loopback with a
//! reflector and HTTP servers of its own, bounded in time.

#[macro_use]
mod common;

use common::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a test server does with a request (its text): answer with a
/// whole response, or hold the connection this long and close it.
enum Answer {
    With(String),
    Stall(Duration),
}

/// An HTTP server on 127.0.0.1 whose answers `handler` decides; every
/// request's text is kept.
struct Server {
    port: u16,
    requests: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(handler: impl Fn(&str) -> Answer + Send + Sync + 'static) -> Server {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (reqs, handler) = (requests.clone(), Arc::new(handler));
        std::thread::spawn(move || {
            for c in l.incoming().take(2000) {
                let Ok(mut c) = c else { return };
                let (reqs, handler) = (reqs.clone(), handler.clone());
                std::thread::spawn(move || {
                    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                    let mut buf = Vec::new();
                    let mut b = [0u8; 65536];
                    // The head, then the body by Content-Length.
                    while let Ok(n) = c.read(&mut b) {
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&b[..n]);
                        let text = String::from_utf8_lossy(&buf).into_owned();
                        if let Some(end) = text.find("\r\n\r\n") {
                            let len = text[..end]
                                .lines()
                                .find_map(|l| {
                                    let (k, v) = l.split_once(':')?;
                                    k.eq_ignore_ascii_case("content-length")
                                        .then(|| v.trim().parse::<usize>().ok())?
                                })
                                .unwrap_or(0);
                            if buf.len() >= end + 4 + len {
                                break;
                            }
                        }
                    }
                    let text = String::from_utf8_lossy(&buf).into_owned();
                    reqs.lock().unwrap().push(text.clone());
                    match handler(&text) {
                        Answer::With(a) => {
                            let _ = c.write_all(a.as_bytes());
                        }
                        Answer::Stall(d) => std::thread::sleep(d),
                    }
                });
            }
        });
        Server { port, requests }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/fleet.toml", self.port)
    }

    fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

fn ok(body: &str, etag: &str) -> Answer {
    Answer::With(format!(
        "HTTP/1.1 200 OK\r\nETag: {etag}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ))
}

fn rtt_target(name: &str, address: &str) -> String {
    format!("[[target]]\nname = \"{name}\"\nkind = \"rtt\"\naddress = \"{address}\"\ninterval = \"1s\"\ncount = 3\nperiod = \"10ms\"\ntimeout = \"200ms\"\n")
}

struct Agent {
    child: Child,
    dir: TempDir,
    port: u16,
}

impl Agent {
    fn start(tag: &str, config: &str, extra: &[&str]) -> Agent {
        let dir = TempDir::new(tag);
        std::fs::write(dir.path("agent.toml"), config).unwrap();
        let port = free_port();
        let child = misura()
            .args(["--store", dir.path("results.sqlite").to_str().unwrap()])
            .args([
                "agent",
                "--config",
                dir.path("agent.toml").to_str().unwrap(),
            ])
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path("agent.log")).unwrap())
            .spawn()
            .unwrap();
        Agent { child, dir, port }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path("agent.log")).unwrap_or_default()
    }

    fn store(&self) -> std::path::PathBuf {
        self.dir.path("results.sqlite")
    }

    fn metrics(&self) -> String {
        let Ok(mut c) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return String::new();
        };
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let _ = c.write_all(b"GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
        let mut s = String::new();
        let _ = c.read_to_string(&mut s);
        s
    }

    fn signal(&self, sig: &str) {
        let _ = Command::new("kill")
            .args([sig, &self.child.id().to_string()])
            .status();
    }

    /// SIGTERM, and how long until it exited (at most `limit`).
    fn stop(&mut self, limit: Duration) -> Duration {
        self.signal("-TERM");
        let t = Instant::now();
        while self.child.try_wait().unwrap().is_none() {
            assert!(
                t.elapsed() < limit,
                "agent still running {limit:?} after SIGTERM\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        t.elapsed()
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_for(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// (waiting, sent, dropped, last_error) of `sink` in `store`.
fn sink_status(store: &Path, sink: &str) -> Option<(i64, i64, i64, String)> {
    let c =
        rusqlite::Connection::open_with_flags(store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .ok()?;
    c.query_row(
        "SELECT (SELECT count(*) FROM outbox o WHERE o.id > s.acked), sent, dropped, coalesce(last_error, '') FROM sinks s WHERE name = ?1",
        [sink],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )
    .ok()
}

fn metric(m: &str, prefix: &str) -> Option<f64> {
    m.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

#[test]
fn a_redirecting_sink_delivers_nothing_and_leaks_no_header() {
    let refl = LocalReflector::start(60);
    let elsewhere = Server::start(|_| ok("Ok.", "\"x\""));
    let to = format!("http://127.0.0.1:{}/", elsewhere.port);
    let loc = to.clone();
    let sink = Server::start(move |_| {
        Answer::With(format!(
            "HTTP/1.1 302 Found\r\nLocation: {loc}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ))
    });
    let config = format!(
        "{}\n[[sink]]\nname = \"h\"\nkind = \"http\"\nurl = \"http://127.0.0.1:{}/in\"\nbatch = 1\nlinger = \"10ms\"\nheaders = {{X-Api-Key = \"secret\"}}\n",
        rtt_target("r", &refl.target()),
        sink.port
    );
    let mut agent = Agent::start("hostile-redirect", &config, &[]);
    wait_for("3 POSTs refused", Duration::from_secs(20), || {
        sink.count() >= 1 && sink_status(&agent.store(), "h").is_some_and(|s| s.0 >= 3)
    });
    let (waiting, sent, _, error) = sink_status(&agent.store(), "h").unwrap();
    agent.stop(Duration::from_secs(10));
    assert_eq!(sent, 0, "a redirect counted as delivered\n{}", agent.log());
    assert!(waiting >= 3);
    assert!(error.contains("302") && error.contains(&to), "{error}");
    assert!(sink.requests.lock().unwrap()[0]
        .to_ascii_lowercase()
        .contains("x-api-key: secret"));
    assert_eq!(elsewhere.count(), 0, "the redirect was followed");
}

#[test]
fn outbox_bounds_hold_while_a_sink_is_down() {
    let refl = LocalReflector::start(60);
    let mut config = String::new();
    for i in 0..4 {
        config += &rtt_target(&format!("r{i}"), &refl.target());
    }
    config += "\n[[sink]]\nname = \"ch\"\nkind = \"clickhouse\"\nurl = \"http://127.0.0.1:1/\"\nper_probe = true\nmax_waiting = 5\n";
    let mut agent = Agent::start("hostile-bounds", &config, &["--no-create"]);
    let (mut worst, mut worst_lag) = (0, 0);
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(12) {
        if let Some((waiting, ..)) = sink_status(&agent.store(), "ch") {
            worst = worst.max(waiting);
            let shown = metric(&agent.metrics(), "misura_sink_waiting{").unwrap_or(0.0) as i64;
            let now = sink_status(&agent.store(), "ch").unwrap().0;
            worst_lag = worst_lag.max((now - shown).abs().min((waiting - shown).abs()));
        }
        std::thread::sleep(Duration::from_millis(150));
    }
    let (waiting, _, dropped, _) = sink_status(&agent.store(), "ch").unwrap();
    let c = rusqlite::Connection::open(agent.store()).unwrap();
    let logs: i64 = c
        .query_row(
            "SELECT count(*) FROM outbox WHERE probes IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    agent.stop(Duration::from_secs(10));
    eprintln!("waiting at most {worst} (now {waiting}), dropped {dropped}, per-probe logs kept {logs}, /metrics behind by at most {worst_lag}");
    assert!(dropped > 10, "{}", agent.log());
    assert!(worst <= 5, "waiting {worst} with max_waiting = 5");
    assert!(
        logs <= 5,
        "{logs} per-probe logs kept for 5 waiting results"
    );
    assert!(
        worst_lag <= 4,
        "misura_sink_waiting behind the store by {worst_lag}"
    );
}

#[test]
fn sigterm_does_not_wait_for_a_slow_sink_batch() {
    let refl = LocalReflector::start(60);
    let slow = Server::start(|_| {
        std::thread::sleep(Duration::from_millis(2500));
        ok("", "\"x\"")
    });
    let mut config = String::new();
    for i in 0..6 {
        config += &rtt_target(&format!("r{i}"), &refl.target());
    }
    config = format!(
        "[agent]\nparallel = 6\n{config}\n[[sink]]\nname = \"h\"\nkind = \"http\"\nurl = \"http://127.0.0.1:{}/\"\nbatch = 20\nlinger = \"3s\"\ntimeout = \"5s\"\n",
        slow.port
    );
    let mut agent = Agent::start("hostile-sigterm", &config, &[]);
    // A batch under way (20 POSTs of 2.5 s each would take 50 s).
    wait_for("a slow batch under way", Duration::from_secs(30), || {
        slow.count() >= 2
    });
    let took = agent.stop(Duration::from_secs(30));
    let (waiting, sent, ..) = sink_status(&agent.store(), "h").unwrap();
    eprintln!(
        "stopped {:.1} s after SIGTERM; sent {sent}, waiting {waiting}",
        took.as_secs_f64()
    );
    assert!(
        took < Duration::from_secs(6),
        "{:.1} s\n{}",
        took.as_secs_f64(),
        agent.log()
    );
    assert!(waiting > 0, "what was not delivered stays in the outbox");
}

#[test]
fn sink_and_target_fields_are_checked_as_their_commands_check_them() {
    let d = TempDir::new("hostile-check");
    let cases = [
        (
            &format!(
                "{}[[sink]]\nkind = \"http\"\nurl = \"http://127.0.0.1:1/\"\ntimeout = \"100h\"\n",
                rtt_target("t", "127.0.0.1:862")
            ),
            "at most 60 s",
        ),
        (
            &rtt_target("t", "127.0.0.1:862").replace("timeout = \"200ms\"", "timeout = \"0s\""),
            "timeout",
        ),
        (
            &rtt_target("t", "127.0.0.1:862").replace("period = \"10ms\"", "period = \"1ns\""),
            "1.00 µs",
        ),
        (
            &rtt_target("t", "127.0.0.1:862").replace("period = \"10ms\"", "period = \"50ns\""),
            "1.00 µs",
        ),
        (
            &format!("{}sizes = [8]\n", rtt_target("t", "127.0.0.1:862")),
            "misura rtt",
        ),
    ];
    for (text, want) in cases {
        std::fs::write(d.path("a.toml"), text).unwrap();
        let o = run(&[
            "agent",
            "--check",
            "--config",
            d.path("a.toml").to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(want), "{text}\n→ {err}");
    }
    // rtt itself refuses the period it cannot keep, naming the bound.
    let o = run(&[
        "--no-store",
        "rtt",
        "127.0.0.1:9",
        "--period",
        "50ns",
        "--count",
        "3",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(5), "{err}");
    assert!(err.contains("1.00 µs"), "{err}");
}

#[test]
fn a_stalled_template_server_holds_no_measurement() {
    let refl = LocalReflector::start(60);
    let stall = Server::start(|_| Answer::Stall(Duration::from_secs(30)));
    let config = format!(
        "[agent]\nname = \"a1\"\n{}",
        rtt_target("r", &refl.target())
    );
    let url = stall.url();
    let mut agent = Agent::start(
        "hostile-template",
        &config,
        &["--config-url", &url, "--template-interval", "1s"],
    );
    std::thread::sleep(Duration::from_secs(13));
    let m = agent.metrics();
    let runs = metric(&m, "misura_probes_sent_total{").unwrap_or(0.0) / 3.0;
    let took = agent.stop(Duration::from_secs(10));
    eprintln!(
        "{runs} runs in 13 s beside a stalled template server; stopped in {:.1} s",
        took.as_secs_f64()
    );
    assert!(
        runs >= 9.0,
        "{runs} runs in 13 s at a 1 s interval\n{}",
        agent.log()
    );
    assert!(took < Duration::from_secs(4), "{:.1} s", took.as_secs_f64());
    assert!(agent.log().contains("within 10.0 s"), "{}", agent.log());
    assert!(!agent.log().contains("timeout: global"), "{}", agent.log());
}

#[test]
fn a_refused_template_applies_once_its_cause_is_fixed() {
    let refl = LocalReflector::start(60);
    let addr = refl.target();
    let template = rtt_target("shared", &addr);
    let served = template.clone();
    let server = Server::start(move |req| {
        if req.to_ascii_lowercase().contains("if-none-match: \"v1\"") {
            Answer::With(
                "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nConnection: close\r\n\r\n".into(),
            )
        } else {
            ok(&served, "\"v1\"")
        }
    });
    // The local file has a target of the same name: the template is refused.
    let local = format!("[agent]\nname = \"a1\"\n{}", rtt_target("shared", &addr));
    let url = server.url();
    let mut agent = Agent::start(
        "hostile-etag",
        &local,
        &["--config-url", &url, "--template-interval", "60s"],
    );
    wait_for("the clash refused", Duration::from_secs(15), || {
        agent.log().contains("fleet template refused")
    });
    // Fixed locally, then SIGHUP: the template is fetched whole and applies.
    std::fs::write(
        agent.dir.path("agent.toml"),
        format!("[agent]\nname = \"a1\"\n{}", rtt_target("mine", &addr)),
    )
    .unwrap();
    agent.signal("-HUP");
    wait_for(
        "the fixed template applied",
        Duration::from_secs(15),
        || agent.log().contains("fleet template applied"),
    );
    agent.stop(Duration::from_secs(10));
    let _ = template;
}

#[test]
fn per_probe_logs_are_private_and_never_follow_a_symlink() {
    let refl = LocalReflector::start(60);
    let victim = TempDir::new("hostile-victim");
    std::fs::write(victim.path("precious"), "keep me\n").unwrap();
    let config = format!(
        "{}\n[[sink]]\nname = \"ch\"\nkind = \"clickhouse\"\nurl = \"http://127.0.0.1:1/\"\nper_probe = true\n",
        rtt_target("r0", &refl.target())
    );
    let mut agent = Agent::start("hostile-frames", &config, &["--no-create"]);
    // The paths an earlier agent used, planted as symlinks to the victim.
    let pid = agent.child.id();
    let tmp = std::env::temp_dir();
    let planted: Vec<_> = (1..8)
        .map(|n| tmp.join(format!("misura-agent-{pid}-r0-{n}.csv")))
        .collect();
    for p in &planted {
        let _ = std::os::unix::fs::symlink(victim.path("precious"), p);
    }
    wait_for("4 runs kept", Duration::from_secs(20), || {
        sink_status(&agent.store(), "ch").is_some_and(|s| s.0 >= 4)
    });
    agent.stop(Duration::from_secs(10));
    for p in &planted {
        let _ = std::fs::remove_file(p);
    }
    assert_eq!(
        std::fs::read_to_string(victim.path("precious")).unwrap(),
        "keep me\n"
    );
    let dir = agent.dir.path("results.probes");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "{}", dir.display());
    let c = rusqlite::Connection::open(agent.store()).unwrap();
    let with_probes: i64 = c
        .query_row(
            "SELECT count(*) FROM outbox WHERE length(probes) > 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(with_probes >= 4, "per-probe logs still reach the outbox");
}
