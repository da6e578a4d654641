//! `misura agent`: configuration errors, and a lab run scraped by a real
//! Prometheus (Debian `prometheus`), checked through Prometheus' HTTP API,
//! including a SIGHUP reload that adds a target without resetting the first.

#[macro_use]
mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn agent_with(config: &str) -> (std::process::Output, TempDir) {
    let d = TempDir::new("agent-cfg");
    let p = d.path("agent.toml");
    std::fs::write(&p, config).unwrap();
    let o = run(&["agent", "--config", p.to_str().unwrap(), "--check"]);
    (o, d)
}

const ONE_TARGET: &str = r#"# misura agent test
[[target]]
name = "r1"
kind = "rtt"
address = "198.18.0.2:8620"
interval = "1s"
count = 5
period = "20ms"
timeout = "200ms"
"#;

#[test]
fn unknown_key_is_reported_with_its_line() {
    let (o, _d) = agent_with(&ONE_TARGET.replace("count = 5", "cuont = 5"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("agent.toml:7:") && err.contains("cuont"),
        "{err}"
    );
}

#[test]
fn impossible_intervals_are_refused() {
    let (o, _d) = agent_with(&ONE_TARGET.replace("\"1s\"", "\"0s\""));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("agent.toml:6:") && err.contains("impossible"),
        "{err}"
    );
    // 5 × 20 ms + 200 ms = 0.3 s of measuring does not fit in 100 ms.
    let (o, _d) = agent_with(&ONE_TARGET.replace("\"1s\"", "\"100ms\""));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("shorter than one measurement"), "{err}");
    let (o, _d) = agent_with(ONE_TARGET);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `curl` inside a namespace; None while the server is not answering.
fn curl(ns: &str, url: &str) -> Option<(u16, String)> {
    let o = Command::new("ip")
        .args([
            "netns",
            "exec",
            ns,
            "curl",
            "-s",
            "-m",
            "3",
            "-w",
            "\n%{http_code}",
            url,
        ])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let (body, code) = text.rsplit_once('\n')?;
    Some((code.parse().ok()?, body.to_string()))
}

/// An instant query through Prometheus' HTTP API: (labels, value) per series.
fn query(ns: &str, port: u16, q: &str) -> Vec<(Value, f64)> {
    let enc: String = q
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"_-.".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    let Some((200, body)) = curl(
        ns,
        &format!("http://127.0.0.1:{port}/api/v1/query?query={enc}"),
    ) else {
        return Vec::new();
    };
    let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    v["data"]["result"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| {
                    (
                        r["metric"].clone(),
                        r["value"][1]
                            .as_str()
                            .unwrap_or("NaN")
                            .parse()
                            .unwrap_or(f64::NAN),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Poll `q` until `ok` holds for its result, at most `limit`.
fn wait_query(
    ns: &str,
    port: u16,
    q: &str,
    limit: Duration,
    ok: impl Fn(&[(Value, f64)]) -> bool,
) -> Vec<(Value, f64)> {
    let start = Instant::now();
    loop {
        let r = query(ns, port, q);
        if ok(&r) {
            return r;
        }
        assert!(
            start.elapsed() < limit,
            "Prometheus query `{q}` not satisfied within {limit:?}; last result {r:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn value_for(r: &[(Value, f64)], target: &str) -> Option<f64> {
    r.iter()
        .find(|(m, _)| m["target"] == target)
        .map(|(_, v)| *v)
}

fn signal(child: &Child, sig: &str) {
    let st = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
}

fn wait_exit(child: &mut Child, limit: Duration) -> Option<i32> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(st) = child.try_wait().unwrap() {
            return st.code();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("process {} did not exit within {limit:?}", child.id());
}

#[test]
#[ignore = "needs root, prometheus and curl (apt-get install prometheus curl)"]
fn prometheus_scrapes_the_agent_in_the_lab() {
    need_root!();
    let prometheus = require_file("/usr/bin/prometheus", "apt-get install prometheus");
    require_tool("curl", "apt-get install curl");
    let mut lab = Lab::up("ag", "a", "hosts");
    lab.reflector(&["--listen", "198.18.0.2", "--port", "8620", "--no-store"]);
    lab.reflector(&["--listen", "198.18.0.2", "--port", "8621", "--no-store"]);
    let ns = lab.ns(1);

    let config = lab.path("agent.toml");
    std::fs::write(&config, ONE_TARGET).unwrap();
    let agent_log = std::fs::File::create(lab.path("agent.log")).unwrap();
    let mut agent = misura()
        .args([
            "agent",
            "--config",
            config.to_str().unwrap(),
            "--netns",
            &ns,
            "--listen",
            "198.18.0.1:9862",
        ])
        .stdout(Stdio::null())
        .stderr(agent_log)
        .spawn()
        .unwrap();

    // The endpoint itself.
    let start = Instant::now();
    let health = loop {
        if let Some(r) = curl(&ns, "http://198.18.0.1:9862/healthz") {
            break r;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "agent endpoint did not come up"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(health, (200, "ok\n".to_string()));
    assert_eq!(
        curl(&ns, "http://198.18.0.1:9862/nope").map(|r| r.0),
        Some(404)
    );
    let (code, body) = curl(&ns, "http://198.18.0.1:9862/metrics").unwrap();
    assert_eq!(code, 200);
    assert!(body.ends_with("# EOF\n"), "{body}");

    // Prometheus in the same namespace, scraping every second.
    let port = 19090 + (std::process::id() % 1000) as u16;
    let prom_dir = lab.path("prom");
    std::fs::create_dir_all(&prom_dir).unwrap();
    let prom_cfg = prom_dir.join("prometheus.yml");
    std::fs::write(
        &prom_cfg,
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: misura\n    static_configs:\n      - targets: ['198.18.0.1:9862']\n",
    )
    .unwrap();
    let prom_log = std::fs::File::create(prom_dir.join("prometheus.log")).unwrap();
    let prom = Command::new("ip")
        .args(["netns", "exec", &ns, prometheus.to_str().unwrap()])
        .arg(format!("--config.file={}", prom_cfg.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            prom_dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(prom_log)
        .spawn()
        .unwrap();
    lab.children.push(prom);

    let limit = Duration::from_secs(60);
    let r = wait_query(&ns, port, "misura_rtt_network_seconds_count", limit, |r| {
        value_for(r, "r1").is_some_and(|v| v >= 10.0)
    });
    assert!(value_for(&r, "r1").unwrap() >= 10.0);
    // Sane values: on veth the network RTT (kernel RTT minus the turnaround)
    // is positive and can be below 1 µs; what ping sees is above 1 µs; both
    // stay far below 10 ms.
    for (figure, low) in [("network", 0.0), ("user", 1e-6)] {
        let q = format!("histogram_quantile(0.5, rate(misura_rtt_{figure}_seconds_bucket[10s]))");
        let r = wait_query(&ns, port, &q, limit, |r| {
            value_for(r, "r1").is_some_and(|v| v.is_finite())
        });
        let median = value_for(&r, "r1").unwrap();
        assert!(
            median > low && median < 0.01,
            "median {figure} RTT {median} s"
        );
        let q = format!("misura_rtt_{figure}_seconds_sum / misura_rtt_{figure}_seconds_count");
        let r = wait_query(&ns, port, &q, limit, |r| value_for(r, "r1").is_some());
        let mean = value_for(&r, "r1").unwrap();
        assert!(mean > 0.0 && mean < 0.01, "mean {figure} RTT {mean} s");
    }
    let r = wait_query(&ns, port, "misura_probes_lost_total", limit, |r| {
        value_for(r, "r1").is_some()
    });
    assert_eq!(value_for(&r, "r1"), Some(0.0), "no loss on veth");
    let r = wait_query(
        &ns,
        port,
        "time() - misura_last_success_timestamp_seconds",
        limit,
        |r| value_for(r, "r1").is_some(),
    );
    let age = value_for(&r, "r1").unwrap();
    assert!((-5.0..30.0).contains(&age), "last success {age} s ago");
    let r = wait_query(&ns, port, "misura_target_info", limit, |r| !r.is_empty());
    assert_eq!(r[0].0["timestamp_source"], "kernel software", "{r:?}");
    let r = wait_query(
        &ns,
        port,
        "sum by (target) (misura_target_errors_total)",
        limit,
        |r| !r.is_empty(),
    );
    assert_eq!(value_for(&r, "r1"), Some(0.0));

    // SIGHUP with a second target: both measured, the first never reset.
    let before = value_for(&query(&ns, port, "misura_probes_sent_total"), "r1").unwrap();
    assert!(before > 0.0);
    let two = format!("{ONE_TARGET}\n[[target]]\nname = \"r2\"\nkind = \"rtt\"\naddress = \"198.18.0.2:8621\"\ninterval = \"1s\"\ncount = 5\nperiod = \"20ms\"\ntimeout = \"200ms\"\n");
    std::fs::write(&config, two).unwrap();
    signal(&agent, "-HUP");
    wait_query(&ns, port, "misura_rtt_network_seconds_count", limit, |r| {
        value_for(r, "r2").is_some_and(|v| v >= 5.0)
    });
    let r = wait_query(&ns, port, "misura_probes_sent_total", limit, |r| {
        value_for(r, "r1").is_some_and(|v| v > before)
    });
    assert!(value_for(&r, "r1").unwrap() > before);
    let r = query(&ns, port, "resets(misura_probes_sent_total[5m])");
    assert_eq!(
        value_for(&r, "r1"),
        Some(0.0),
        "the first target's counter reset: {r:?}"
    );
    let r = query(&ns, port, "misura_agent_config_reloads_total");
    assert!(
        r.iter().any(|(m, v)| m["result"] == "ok" && *v == 1.0),
        "{r:?}"
    );

    // A broken configuration on SIGHUP is refused; the agent keeps going.
    std::fs::write(&config, "[[target]]\nname = 1\n").unwrap();
    signal(&agent, "-HUP");
    wait_query(
        &ns,
        port,
        "misura_agent_config_reloads_total{result=\"error\"}",
        limit,
        |r| r.first().is_some_and(|(_, v)| *v == 1.0),
    );
    assert_eq!(
        curl(&ns, "http://198.18.0.1:9862/healthz").map(|r| r.0),
        Some(200)
    );

    // Clean stop; interrupted by SIGTERM: 143, as the README documents.
    signal(&agent, "-TERM");
    let code = wait_exit(&mut agent, Duration::from_secs(15));
    let log = std::fs::read_to_string(lab.path("agent.log")).unwrap_or_default();
    assert_eq!(code, Some(143), "agent log:\n{log}");
    assert!(log.contains("stopped"), "{log}");
}

#[test]
fn example_configuration_is_valid() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/agent.toml");
    let o = run(&["agent", "--config", example.to_str().unwrap(), "--check"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("lab-h2: rtt"));
}
