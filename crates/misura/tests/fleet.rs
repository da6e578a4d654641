//! The agent as a fleet member: its archive (the store's outbox delivered
//! to a real ClickHouse 18.16 and a real VictoriaMetrics, each started by
//! the test in the lab's namespace), surviving a ClickHouse outage and a
//! SIGKILL with every run in ClickHouse exactly once; and its central
//! configuration (a fleet template served over HTTP by the test).

#[macro_use]
mod common;
#[path = "support/clickhouse.rs"]
mod clickhouse;

use clickhouse::{curl, query, ClickHouse};
use common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} {}", child.id());
}

fn status_output(store: &Path) -> std::process::Output {
    run(&[
        "--store",
        store.to_str().unwrap(),
        "archive",
        "status",
        "--json",
    ])
}

fn archive_status(store: &Path) -> Value {
    json_of(&status_output(store))
}

/// `archive status --json`, or `None` while the agent has not made its
/// store and sink rows yet.
fn try_status(store: &Path, name: &str) -> Option<Value> {
    let v: Value = serde_json::from_slice(&status_output(store).stdout).ok()?;
    v["sinks"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == name)
        .cloned()
}

fn sink<'a>(status: &'a Value, name: &str) -> &'a Value {
    status["sinks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no sink {name} in {status}"))
}

/// Wait (bounded) until `f` holds.
/// The first sample's value in the answer to a PromQL query URL
/// (VictoriaMetrics' or Prometheus' HTTP API), as text.
fn first_value(ns: &str, url: &str) -> Option<String> {
    let r = query(ns, url)?;
    r["data"]["result"][0]["value"][1]
        .as_str()
        .map(String::from)
}

fn wait_for(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!("{what}: after {:.1} s", t.elapsed().as_secs_f64());
}

/// Every run id the agent kept, read from its store.
fn stored_run_ids(store: &Path) -> Vec<String> {
    let c =
        rusqlite::Connection::open_with_flags(store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut st = c
        .prepare("SELECT o.run_id FROM outbox o JOIN runs r ON r.id = o.run ORDER BY o.id")
        .unwrap();
    let ids = st
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    ids
}

fn agent_config(ch: &str, vm: &str) -> String {
    let mut c =
        String::from("[agent]\nname = \"lab-a1\"\nlabels = {site = \"lab\"}\nparallel = 4\n");
    for (i, port) in [8620, 8621, 8620, 8621].iter().enumerate() {
        c += &format!(
            "\n[[target]]\nname = \"r{i}\"\nkind = \"rtt\"\naddress = \"198.18.0.2:{port}\"\ninterval = \"1s\"\ncount = 5\nperiod = \"20ms\"\ntimeout = \"200ms\"\n"
        );
    }
    c += &format!(
        "\n[[sink]]\nname = \"ch\"\nkind = \"clickhouse\"\nurl = \"{ch}\"\nper_probe = true\nbatch = 2\nlinger = \"50ms\"\ntimeout = \"3s\"\n\n[[sink]]\nname = \"vm\"\nkind = \"remote-write\"\nurl = \"{vm}\"\n"
    );
    c
}

/// `misura --store STORE agent --config CONFIG EXTRA…`, stderr to `log`.
fn spawn_agent(store: &Path, config: &Path, extra: &[&str], log: PathBuf) -> Child {
    misura()
        .args(["--store", store.to_str().unwrap(), "agent", "--config"])
        .arg(config)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

fn start_agent(lab: &Lab, store: &Path, config: &Path, ns: &str, log: &str) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(lab.path(log))
        .unwrap();
    misura()
        .args(["--store", store.to_str().unwrap(), "agent", "--config"])
        .arg(config)
        .args(["--netns", ns, "--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap()
}

fn ch_count(ch: &ClickHouse, q: &str) -> u64 {
    ch.query(q).and_then(|s| s.trim().parse().ok()).unwrap_or(0)
}

#[test]
#[ignore = "needs root, clickhouse-server, victoria-metrics and curl (apt-get install clickhouse-server victoria-metrics curl)"]
fn archive_survives_a_clickhouse_outage_and_sigkill_exactly_once() {
    need_root!();
    require_file(
        "/usr/sbin/clickhouse-server",
        "apt-get install clickhouse-server",
    );
    let vm_bin = require_tool("victoria-metrics", "apt-get install victoria-metrics");
    require_tool("curl", "apt-get install curl");
    let mut lab = Lab::up("fl", "a", "hosts");
    lab.reflector(&["--listen", "198.18.0.2", "--port", "8620", "--no-store"]);
    lab.reflector(&["--listen", "198.18.0.2", "--port", "8621", "--no-store"]);
    let ns = lab.ns(1);

    let mut ch = ClickHouse::new(&ns, lab.path("clickhouse"), 18123);
    ch.start();
    let vm_port = 18428;
    let vm = Command::new("ip")
        .args(["netns", "exec", &ns])
        .arg(&vm_bin)
        .arg(format!("-httpListenAddr=127.0.0.1:{vm_port}"))
        .arg(format!("-storageDataPath={}", lab.path("vm").display()))
        .arg("-search.latencyOffset=1s")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(lab.path("vm.log")).unwrap())
        .spawn()
        .unwrap();
    lab.children.push(vm);
    let vm_url = format!("http://127.0.0.1:{vm_port}");
    wait_for("victoria-metrics up", Duration::from_secs(20), || {
        curl(&ns, &format!("{vm_url}/health"), None).is_some()
    });

    let config = lab.path("agent.toml");
    std::fs::write(
        &config,
        agent_config(&ch.url(), &format!("{vm_url}/api/v1/write")),
    )
    .unwrap();
    let store = lab.path("store/results.sqlite");
    let mut agent = start_agent(&lab, &store, &config, &ns, "agent.log");
    let log = || std::fs::read_to_string(lab.path("agent.log")).unwrap_or_default();

    // Results reach ClickHouse (created tables, per-probe rows).
    wait_for("8 runs in ClickHouse", Duration::from_secs(30), || {
        ch_count(&ch, "SELECT count() FROM misura_runs") >= 8
    });
    assert!(ch_count(&ch, "SELECT count() FROM misura_probes") >= 8 * 5);

    // ClickHouse goes away: results wait, the error is named.
    ch.stop();
    wait_for("results waiting for ch", Duration::from_secs(20), || {
        let s = archive_status(&store);
        sink(&s, "ch")["waiting"].as_i64().unwrap() >= 16 && !sink(&s, "ch")["last_error"].is_null()
    });
    let s = archive_status(&store);
    assert!(
        sink(&s, "ch")["oldest_waiting_ns"].as_i64().unwrap() > 0,
        "{s}"
    );
    assert_eq!(sink(&s, "vm")["last_error"], Value::Null, "{s}");

    // It comes back; the agent is killed while it catches up (batches of 2).
    let before = ch_count(&ch, "SELECT count() FROM misura_runs");
    ch.start();
    wait_for("catch-up started", Duration::from_secs(30), || {
        ch_count(&ch, "SELECT count() FROM misura_runs") > before
    });
    let _ = agent.kill();
    let _ = agent.wait();
    // As if the agent had died between an insert and recording its
    // acknowledgement: the whole outbox is sent again on restart.
    {
        let c = rusqlite::Connection::open(&store).unwrap();
        c.execute("UPDATE sinks SET acked = 0 WHERE name = 'ch'", [])
            .unwrap();
    }
    let mut agent = start_agent(&lab, &store, &config, &ns, "agent.log");
    wait_for(
        "a few more runs, all delivered",
        Duration::from_secs(30),
        || {
            stored_run_ids(&store).len() as u64 > before + 8
                && sink(&archive_status(&store), "ch")["waiting"].as_i64() == Some(0)
        },
    );
    signal(&agent, "-TERM");
    let t = Instant::now();
    while agent.try_wait().unwrap().is_none() {
        assert!(t.elapsed() < Duration::from_secs(20), "agent did not stop");
        std::thread::sleep(Duration::from_millis(100));
    }

    // Every run the sink acknowledged (all but those kept after its last
    // delivery) is in ClickHouse exactly once, and nothing else is.
    let s = archive_status(&store);
    let waiting = sink(&s, "ch")["waiting"].as_i64().unwrap() as usize;
    let all = stored_run_ids(&store);
    assert!(waiting <= 8, "{s}");
    let ids = &all[..all.len() - waiting];
    let rows: std::collections::HashMap<String, u64> = ch
        .query("SELECT run_id, count() FROM misura_runs GROUP BY run_id FORMAT TSV")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (id, n) = l.split_once('\t')?;
            Some((id.to_string(), n.parse().ok()?))
        })
        .collect();
    for id in ids {
        assert_eq!(
            rows.get(id),
            Some(&1),
            "run {id} in ClickHouse {:?} times\n{}",
            rows.get(id),
            log()
        );
    }
    assert_eq!(
        rows.len(),
        ids.len(),
        "ClickHouse holds runs the store does not\n{}",
        log()
    );
    let dup_probes = ch_count(
        &ch,
        "SELECT count() FROM (SELECT run_id, seq, count() AS n FROM misura_probes GROUP BY run_id, seq HAVING n > 1)",
    );
    assert_eq!(dup_probes, 0, "probe rows inserted twice");
    // Five probes per run (count = 5), each once.
    let probes = ch_count(
        &ch,
        "SELECT count() FROM misura_probes WHERE run_id IN (SELECT run_id FROM misura_runs)",
    );
    assert_eq!(probes, 5 * ids.len() as u64, "per-probe rows");
    eprintln!(
        "{} runs, {probes} probe rows in ClickHouse, each once",
        ids.len()
    );
    // The rewound position made the agent offer every run again: ClickHouse
    // was asked for more runs than it holds, and kept each once.
    let sent = sink(&s, "ch")["sent"].as_u64().unwrap();
    assert!(
        sent > ids.len() as u64,
        "sent {sent} for {} runs: nothing was offered twice",
        ids.len()
    );
    assert!(log().contains("sink ch:"), "{}", log());

    // The metrics are queryable: one series per target.
    let q = format!("{vm_url}/api/v1/query?query=count(misura_run_latency_median_seconds{{agent=%22lab-a1%22,site=%22lab%22}})");
    wait_for(
        "4 series in VictoriaMetrics",
        Duration::from_secs(20),
        || first_value(&ns, &q).as_deref() == Some("4"),
    );
    let r = query(
        &ns,
        &format!("{vm_url}/api/v1/query?query=max(misura_run_latency_median_seconds)"),
    )
    .unwrap();
    let v: f64 = r["data"]["result"][0]["value"][1]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(v > 0.0 && v < 0.01, "network RTT median {v} s on veth");
}

#[test]
fn example_fleet_configuration_is_valid_and_sink_mistakes_name_their_line() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/fleet-agent.toml");
    let o = run(&["agent", "--config", example.to_str().unwrap(), "--check"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    for want in [
        "sink clickhouse: clickhouse http://clickhouse.example.net:8123/ (batches of 500, per-probe rows)",
        "sink metrics: remote-write",
        "sink logstash: http",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
    let d = TempDir::new("fleet-cfg");
    let base = "[[target]]\nname = \"t\"\nkind = \"rtt\"\naddress = \"127.0.0.1:862\"\ninterval = \"5s\"\ncount = 3\n\n[[sink]]\n";
    for (sink, want) in [
        (
            "kind = \"kafka\"\nurl = \"http://x/\"\n",
            ":9: unknown sink kind \"kafka\"",
        ),
        (
            "kind = \"http\"\nurl = \"ftp://x/\"\n",
            ":10: sink url \"ftp://x/\"",
        ),
        (
            "kind = \"http\"\nurl = \"http://x/\"\nper_probe = true\n",
            ":11: per_probe belongs to kind \"clickhouse\"",
        ),
        (
            "kind = \"clickhouse\"\nurl = \"http://x/\"\nbatch = 0\n",
            ":11: sink batch = 0 is impossible",
        ),
        (
            "kind = \"clickhouse\"\nurl = \"http://x/\"\nmax_age = \"-1s\"\n",
            ":11: sink max_age",
        ),
        (
            "kind = \"clickhouse\"\nurl = \"http://x/\"\ncolour = 1\n",
            ":11: unknown field `colour`",
        ),
    ] {
        let p = d.path("a.toml");
        std::fs::write(&p, format!("{base}{sink}")).unwrap();
        let o = run(&["agent", "--config", p.to_str().unwrap(), "--check"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{sink}: {err}");
        assert!(err.contains(want), "{sink}: want {want}, got {err}");
    }
    // Sinks need the store: they are fed from it.
    let p = d.path("a.toml");
    std::fs::write(
        &p,
        format!("{base}kind = \"http\"\nurl = \"http://127.0.0.1:1/\"\n"),
    )
    .unwrap();
    let o = run(&[
        "--no-store",
        "agent",
        "--config",
        p.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--no-store with [[sink]]"));
}

/// A fleet template server: answers GET with the current template and its
/// ETag, 304 to a matching If-None-Match; counts the requests.
struct TemplateServer {
    port: u16,
    body: Arc<Mutex<(String, u32)>>,
    requests: Arc<Mutex<Vec<String>>>,
}

impl TemplateServer {
    fn start(initial: &str) -> TemplateServer {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let body = Arc::new(Mutex::new((initial.to_string(), 1)));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (b, r) = (body.clone(), requests.clone());
        std::thread::spawn(move || {
            for conn in l.incoming() {
                let Ok(mut s) = conn else { continue };
                let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
                let mut req = Vec::new();
                let mut buf = [0u8; 4096];
                while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => req.extend_from_slice(&buf[..n]),
                    }
                }
                let req = String::from_utf8_lossy(&req).to_string();
                let (text, version) = b.lock().unwrap().clone();
                let etag = format!("\"v{version}\"");
                let matched = req.lines().any(|l| {
                    l.to_ascii_lowercase().starts_with("if-none-match:") && l.contains(&etag)
                });
                r.lock()
                    .unwrap()
                    .push(if matched { "304" } else { "200" }.to_string());
                let reply = if matched {
                    format!(
                        "HTTP/1.1 304 Not Modified\r\nETag: {etag}\r\nConnection: close\r\n\r\n"
                    )
                } else {
                    format!(
                        "HTTP/1.1 200 OK\r\nETag: {etag}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                        text.len()
                    )
                };
                let _ = s.write_all(reply.as_bytes());
            }
        });
        TemplateServer {
            port,
            body,
            requests,
        }
    }

    fn set(&self, text: &str) {
        let mut g = self.body.lock().unwrap();
        g.0 = text.to_string();
        g.1 += 1;
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/fleet.toml", self.port)
    }
}

fn target(name: &str, address: &str, selector: &str) -> String {
    format!("[[target]]\nname = \"{name}\"\nkind = \"rtt\"\naddress = \"{address}\"\ninterval = \"1s\"\ncount = 3\nperiod = \"10ms\"\ntimeout = \"200ms\"\n{selector}\n")
}

fn metrics(port: u16) -> String {
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

fn targets_in(m: &str) -> Vec<String> {
    let mut t: Vec<String> = m
        .lines()
        .filter(|l| l.starts_with("misura_target_info{"))
        .filter_map(|l| {
            l.split("target=\"")
                .nth(1)?
                .split('"')
                .next()
                .map(String::from)
        })
        .collect();
    t.sort();
    t
}

#[test]
fn a_fleet_template_adds_and_removes_targets_without_restart() {
    let refl = LocalReflector::start(120);
    let addr = refl.target();
    let d = TempDir::new("fleet-template");
    let local = d.path("agent.toml");
    std::fs::write(
        &local,
        "[agent]\nname = \"a7\"\nlabels = {site = \"paris\"}\n",
    )
    .unwrap();
    let server = TemplateServer::start(&format!(
        "{}{}{}",
        target("everyone", &addr, ""),
        target("mine", &addr, "agents = [\"a7\"]"),
        target("other-site", &addr, "labels = {site = \"rome\"}")
    ));
    let port = free_port();
    let store = d.path("store.sqlite");
    let mut agent = spawn_agent(
        &store,
        &local,
        &[
            "--config-url",
            &server.url(),
            "--template-interval",
            "1s",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ],
        d.path("agent.log"),
    );
    let log = || std::fs::read_to_string(d.path("agent.log")).unwrap_or_default();
    wait_for("the template's targets", Duration::from_secs(15), || {
        targets_in(&metrics(port)) == ["everyone", "mine"]
    });
    // Unchanged template: conditional GETs answered 304.
    wait_for("a 304", Duration::from_secs(10), || {
        server.requests.lock().unwrap().iter().any(|r| r == "304")
    });
    // A change adds one target and removes another, no restart.
    server.set(&format!(
        "{}{}",
        target("everyone", &addr, ""),
        target("paris-only", &addr, "labels = {site = \"paris\"}")
    ));
    wait_for("the new template applied", Duration::from_secs(15), || {
        targets_in(&metrics(port)) == ["everyone", "paris-only"]
    });
    // A broken template is refused with its line; the running targets stay.
    server.set("[[target]]\nname = \"x\"\nkind = \"rtt\"\naddress = \"127.0.0.1:1\"\ninterval = \"1s\"\ncolour = \"red\"\n");
    wait_for(
        "the broken template counted",
        Duration::from_secs(15),
        || metrics(port).contains("misura_agent_template_fetches_total{result=\"error\"} 1"),
    );
    assert_eq!(targets_in(&metrics(port)), ["everyone", "paris-only"]);
    assert!(
        log().contains("fleet.toml:6:") && log().contains("colour"),
        "{}",
        log()
    );
    // The last good copy is kept on disk: an agent started while the
    // template server is down runs it.
    signal(&agent, "-TERM");
    let _ = agent.wait();
    let cached = std::fs::read_to_string(d.path("store.fleet-template.toml")).unwrap();
    assert!(cached.contains("paris-only"), "{cached}");
    drop(server);
    let mut again = spawn_agent(
        &store,
        &local,
        &[
            "--config-url",
            "http://127.0.0.1:1/fleet.toml",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ],
        d.path("agent2.log"),
    );
    wait_for(
        "the cached template's targets",
        Duration::from_secs(15),
        || targets_in(&metrics(port)) == ["everyone", "paris-only"],
    );
    signal(&again, "-TERM");
    let _ = again.wait();
    let _ = &mut agent;
}

#[test]
#[ignore = "needs root, prometheus and curl (apt-get install prometheus curl)"]
fn remote_write_reaches_prometheus() {
    need_root!();
    let prometheus = require_file("/usr/bin/prometheus", "apt-get install prometheus");
    require_tool("curl", "apt-get install curl");
    let mut lab = Lab::up("fl", "p", "hosts");
    lab.reflector(&["--listen", "198.18.0.2", "--port", "8620", "--no-store"]);
    let ns = lab.ns(1);
    let port = 19190;
    std::fs::write(
        lab.path("prometheus.yml"),
        "global:\n  scrape_interval: 15s\n",
    )
    .unwrap();
    let prom = Command::new("ip")
        .args(["netns", "exec", &ns])
        .arg(&prometheus)
        .arg(format!(
            "--config.file={}",
            lab.path("prometheus.yml").display()
        ))
        .arg(format!(
            "--storage.tsdb.path={}",
            lab.path("prom").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg("--web.enable-remote-write-receiver")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(lab.path("prometheus.log")).unwrap())
        .spawn()
        .unwrap();
    lab.children.push(prom);
    let base = format!("http://127.0.0.1:{port}");
    wait_for("prometheus ready", Duration::from_secs(30), || {
        curl(&ns, &format!("{base}/-/ready"), None).is_some()
    });
    let config = lab.path("agent.toml");
    std::fs::write(
        &config,
        format!(
            "[agent]\nname = \"lab-p\"\n\n{}\n[[sink]]\nname = \"prom\"\nkind = \"remote-write\"\nurl = \"{base}/api/v1/write\"\n",
            target("r0", "198.18.0.2:8620", "")
        ),
    )
    .unwrap();
    let store = lab.path("store/results.sqlite");
    let mut agent = start_agent(&lab, &store, &config, &ns, "agent.log");
    let q = format!("{base}/api/v1/query?query=sum(misura_run_probes_sent{{agent=%22lab-p%22,target=%22r0%22}})");
    wait_for(
        "the agent's samples in Prometheus",
        Duration::from_secs(30),
        || first_value(&ns, &q).as_deref() == Some("3"),
    );
    let r = query(
        &ns,
        &format!("{base}/api/v1/query?query=misura_run_latency_median_seconds"),
    )
    .unwrap();
    let m = &r["data"]["result"][0];
    assert_eq!(m["metric"]["figure"], "network_rtt", "{r}");
    let v: f64 = m["value"][1].as_str().unwrap().parse().unwrap();
    assert!(v > 0.0 && v < 0.01, "network RTT median {v} s on veth");
    signal(&agent, "-TERM");
    let _ = agent.wait();
    let s = archive_status(&store);
    assert!(sink(&s, "prom")["sent"].as_i64().unwrap() >= 1, "{s}");
    assert_eq!(sink(&s, "prom")["last_error"], Value::Null, "{s}");
}

/// (start, end) in ns of a stored result's measurement.
fn window(v: &Value) -> (u64, u64) {
    let start = v["started_at"].as_str().unwrap();
    // 2026-11-24T14:51:25.746148Z: seconds of the day are enough here.
    let t = &start[11..start.len() - 1];
    let (h, rest) = t.split_once(':').unwrap();
    let (m, s) = rest.split_once(':').unwrap();
    let ns = ((h.parse::<f64>().unwrap() * 3600.0
        + m.parse::<f64>().unwrap() * 60.0
        + s.parse::<f64>().unwrap())
        * 1e9) as u64;
    let len = v["elapsed_s"]
        .as_f64()
        .map(|e| (e * 1e9) as u64)
        .or_else(|| v["config"]["duration_ns"].as_u64())
        .unwrap();
    (ns, ns + len)
}

#[test]
fn throughput_runs_are_exclusive_and_missed_slots_are_counted() {
    let serve = LocalServe::start(&[]);
    let refl = LocalReflector::start(120);
    let d = TempDir::new("fleet-classes");
    let config = d.path("agent.toml");
    std::fs::write(
        &config,
        format!(
            "[agent]\nname = \"a1\"\nparallel = 4\n\n\
             [[target]]\nname = \"bulk\"\nkind = \"tcp\"\naddress = \"{s}\"\ninterval = \"4s\"\nduration = \"1500ms\"\ntimeout = \"2s\"\n\n\
             [[target]]\nname = \"txn\"\nkind = \"rr\"\naddress = \"{s}\"\ninterval = \"4s\"\nduration = \"500ms\"\ntimeout = \"2s\"\n\n\
             [[target]]\nname = \"lat1\"\nkind = \"rtt\"\naddress = \"{r}\"\ninterval = \"300ms\"\ncount = 3\nperiod = \"10ms\"\ntimeout = \"100ms\"\n\n\
             [[target]]\nname = \"lat2\"\nkind = \"rtt\"\naddress = \"{r}\"\ninterval = \"300ms\"\ncount = 3\nperiod = \"10ms\"\ntimeout = \"100ms\"\n",
            s = serve.target(),
            r = refl.target()
        ),
    )
    .unwrap();
    let port = free_port();
    let store = d.path("store.sqlite");
    let mut agent = spawn_agent(
        &store,
        &config,
        &["--listen", &format!("127.0.0.1:{port}")],
        d.path("agent.log"),
    );
    std::thread::sleep(Duration::from_secs(9));
    let m = metrics(port);
    signal(&agent, "-TERM");
    let _ = agent.wait();
    let log = std::fs::read_to_string(d.path("agent.log")).unwrap_or_default();

    // Results of every kind were kept.
    let c =
        rusqlite::Connection::open_with_flags(&store, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut st = c
        .prepare(
            "SELECT o.target, r.result FROM outbox o JOIN runs r ON r.id = o.run ORDER BY o.id",
        )
        .unwrap();
    let runs: Vec<(String, Value)> = st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .map(|r| {
            let (t, j) = r.unwrap();
            (t, serde_json::from_str(&j).unwrap())
        })
        .collect();
    let of = |name: &str| {
        runs.iter()
            .filter(|(t, _)| t == name)
            .map(|(_, v)| v)
            .collect::<Vec<_>>()
    };
    let (bulk, txn, lat) = (of("bulk"), of("txn"), [of("lat1"), of("lat2")].concat());
    assert!(
        !bulk.is_empty() && !txn.is_empty() && lat.len() >= 4,
        "bulk {} txn {} lat {}\n{log}",
        bulk.len(),
        txn.len(),
        lat.len()
    );
    assert!(bulk[0]["throughput_bps"].as_f64().unwrap() > 0.0);
    assert!(txn[0]["transactions_per_s"].as_f64().unwrap() > 0.0);
    // No measurement overlapped a throughput run.
    for x in bulk.iter().chain(&txn) {
        let (a, b) = window(x);
        for y in runs
            .iter()
            .map(|(_, v)| v)
            .filter(|y| !std::ptr::eq(*y, *x))
        {
            let (c, d) = window(y);
            assert!(
                d <= a || c >= b,
                "{} overlaps a throughput run: {:?} vs {:?}\n{log}",
                y["format"],
                (c, d),
                (a, b)
            );
        }
    }
    // The latency targets missed slots while bulk ran, and said so.
    let skipped: f64 = m
        .lines()
        .filter(|l| l.starts_with("misura_target_skipped_slots_total{target=\"lat"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert!(skipped >= 2.0, "skipped slots {skipped}\n{m}");
    assert!(log.contains("slot(s) missed"), "{log}");
}

/// An HTTP JSON receiver: answers every POST with the status set, keeps
/// (run id, body) of those it answered 200.
struct Receiver {
    port: u16,
    status: Arc<Mutex<u16>>,
    got: Arc<Mutex<Vec<(String, String)>>>,
}

impl Receiver {
    fn start(status: u16) -> Receiver {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let (st, got) = (
            Arc::new(Mutex::new(status)),
            Arc::new(Mutex::new(Vec::new())),
        );
        let (st2, got2) = (st.clone(), got.clone());
        std::thread::spawn(move || {
            for conn in l.incoming() {
                let Ok(mut s) = conn else { continue };
                let (st, got) = (st2.clone(), got2.clone());
                std::thread::spawn(move || {
                    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 65536];
                    loop {
                        // One request: head, then Content-Length bytes.
                        let head_end = loop {
                            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                                break Some(i + 4);
                            }
                            match s.read(&mut chunk) {
                                Ok(0) | Err(_) => break None,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                        };
                        let Some(head_end) = head_end else { return };
                        let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                        let field = |name: &str| {
                            head.lines()
                                .find(|l| l.to_ascii_lowercase().starts_with(name))
                                .and_then(|l| l.split_once(':'))
                                .map(|(_, v)| v.trim().to_string())
                        };
                        let len: usize = field("content-length:")
                            .and_then(|v| v.parse().ok())
                            .unwrap_or(0);
                        while buf.len() < head_end + len {
                            match s.read(&mut chunk) {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                            }
                        }
                        let body =
                            String::from_utf8_lossy(&buf[head_end..head_end + len]).to_string();
                        buf.drain(..head_end + len);
                        let code = *st.lock().unwrap();
                        if code == 200 {
                            got.lock()
                                .unwrap()
                                .push((field("misura-run-id:").unwrap_or_default(), body));
                        }
                        let reply =
                            format!("HTTP/1.1 {code} X\r\nContent-Length: 11\r\n\r\nnot today\r\n");
                        if s.write_all(reply.as_bytes()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        Receiver {
            port,
            status: st,
            got,
        }
    }
}

#[test]
fn http_sink_keeps_refused_results_waiting_and_delivers_each_later() {
    let refl = LocalReflector::start(120);
    let rx = Receiver::start(503);
    let d = TempDir::new("fleet-http");
    let config = d.path("agent.toml");
    std::fs::write(
        &config,
        format!(
            "[agent]\nname = \"h1\"\n\n{}\n[[sink]]\nname = \"json\"\nkind = \"http\"\nurl = \"http://127.0.0.1:{}/in\"\nbatch = 3\ntimeout = \"2s\"\nlinger = \"50ms\"\n",
            target("r", &refl.target(), ""),
            rx.port
        ),
    )
    .unwrap();
    let store = d.path("store.sqlite");
    let mut agent = spawn_agent(
        &store,
        &config,
        &["--listen", "127.0.0.1:0"],
        d.path("agent.log"),
    );
    let log = || std::fs::read_to_string(d.path("agent.log")).unwrap_or_default();
    // Refused: results wait, the reason is kept and shown.
    wait_for(
        "results waiting behind a 503",
        Duration::from_secs(20),
        || {
            try_status(&store, "json").is_some_and(|s| {
                s["waiting"].as_i64().unwrap_or(0) >= 3
                    && s["last_error"]
                        .as_str()
                        .is_some_and(|e| e.contains("503") && e.contains("not today"))
            })
        },
    );
    let o = run(&["--store", store.to_str().unwrap(), "archive", "status"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("json") && text.contains("503"), "{text}");
    assert!(
        log().contains("sink json: POST of run") && log().contains("receiver answered 503"),
        "{}",
        log()
    );
    // Accepted: everything waiting arrives, each once, as the result's JSON.
    *rx.status.lock().unwrap() = 200;
    wait_for("the backlog delivered", Duration::from_secs(30), || {
        sink(&archive_status(&store), "json")["waiting"].as_i64() == Some(0)
    });
    signal(&agent, "-TERM");
    let _ = agent.wait();
    let s = archive_status(&store);
    let waiting = sink(&s, "json")["waiting"].as_i64().unwrap() as usize;
    let all = stored_run_ids(&store);
    let acked = &all[..all.len() - waiting];
    let got = rx.got.lock().unwrap().clone();
    let ids: Vec<&str> = got.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        acked.iter().map(String::as_str).collect::<Vec<_>>(),
        "in order, each once"
    );
    for (_, body) in &got {
        let v: Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["format"], "misura.rtt");
        schema_check(&v, "rtt.schema.json");
    }
    assert!(sink(&s, "json")["last_error"].is_null(), "{s}");
}

/// The sum of a metric family's samples whose line starts with `prefix`.
fn metric_sum(m: &str, prefix: &str) -> f64 {
    m.lines()
        .filter(|l| l.starts_with(prefix))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[test]
#[ignore = "needs root (mounts a small tmpfs for the store)"]
fn a_full_disk_pauses_measurements_and_loses_no_result() {
    need_root!();
    let refl = LocalReflector::start(120);
    let d = TempDir::new("fleet-full");
    let dir = d.path("small");
    std::fs::create_dir_all(&dir).unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "misura-test-full"])
        .arg(&dir)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mount tmpfs");
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(dir.clone());
    let config = d.path("agent.toml");
    std::fs::write(
        &config,
        format!(
            "[agent]\nname = \"full\"\nparallel = 2\n\n{}{}",
            target("a", &refl.target(), "").replace("interval = \"1s\"", "interval = \"300ms\""),
            target("b", &refl.target(), "").replace("interval = \"1s\"", "interval = \"300ms\"")
        ),
    )
    .unwrap();
    let store = dir.join("results.sqlite");
    let port = free_port();
    let mut agent = spawn_agent(
        &store,
        &config,
        &["--listen", &format!("127.0.0.1:{port}")],
        d.path("agent.log"),
    );
    let log = || std::fs::read_to_string(d.path("agent.log")).unwrap_or_default();
    wait_for("the store full", Duration::from_secs(60), || {
        metric_sum(&metrics(port), "misura_agent_store_errors_total") > 0.0
    });
    assert!(
        log().contains("new measurements wait until it can"),
        "{}",
        log()
    );
    // Measurements stop (those under way finish and are held).
    std::thread::sleep(Duration::from_secs(2));
    let sent = metric_sum(&metrics(port), "misura_probes_sent_total");
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        metric_sum(&metrics(port), "misura_probes_sent_total"),
        sent,
        "runs went on with a full store"
    );
    // Room again: the held results are kept and measuring resumes.
    let ok = Command::new("mount")
        .args(["-o", "remount,size=64m"])
        .arg(&dir)
        .status()
        .unwrap()
        .success();
    assert!(ok, "remount");
    wait_for("measuring again", Duration::from_secs(20), || {
        metric_sum(&metrics(port), "misura_probes_sent_total") > sent + 6.0
    });
    let m = metrics(port);
    let sent = metric_sum(&m, "misura_probes_sent_total");
    signal(&agent, "-TERM");
    let _ = agent.wait();
    // Every result the agent counted is in the store (3 probes a run).
    let stored = stored_run_ids(&store).len() as f64;
    assert!(
        stored * 3.0 >= sent && stored * 3.0 <= sent + 6.0,
        "{stored} runs stored for {sent} probes counted\n{}",
        log()
    );
}
