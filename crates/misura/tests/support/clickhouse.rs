//! A ClickHouse server of a test's own, in the lab's namespace, and `curl`
//! inside a namespace (shared by the fleet tests).
#![allow(dead_code)]

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A Prometheus-style query API's answer (VictoriaMetrics, Prometheus).
pub fn query(ns: &str, url: &str) -> Option<Value> {
    serde_json::from_str(&curl(ns, url, None)?).ok()
}

/// `curl` inside `ns`: POST `body` (or GET without one); the body of a
/// 200 answer.
pub fn curl(ns: &str, url: &str, body: Option<&str>) -> Option<String> {
    let mut c = Command::new("ip");
    c.args([
        "netns",
        "exec",
        ns,
        "curl",
        "-s",
        "-f",
        "-g",
        "--max-time",
        "5",
    ]);
    if let Some(b) = body {
        c.args(["--data-binary", b]);
    }
    let o = c.arg(url).output().ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

/// A ClickHouse server of the test's own: a minimal configuration, data in
/// the lab's directory, HTTP on 127.0.0.1:`port` inside `ns`.
pub struct ClickHouse {
    ns: String,
    dir: PathBuf,
    port: u16,
    child: Option<Child>,
}

impl ClickHouse {
    pub fn new(ns: &str, dir: PathBuf, port: u16) -> ClickHouse {
        std::fs::create_dir_all(&dir).unwrap();
        let d = dir.display();
        let config = format!(
            r#"<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>{d}/server.log</log><errorlog>{d}/err.log</errorlog><size>10M</size><count>1</count></logger>
  <http_port>{port}</http_port>
  <tcp_port>{tcp}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>{d}/data/</path>
  <tmp_path>{d}/tmp/</tmp_path>
  <user_files_path>{d}/user_files/</user_files_path>
  <format_schema_path>{d}/format_schemas/</format_schema_path>
  <mark_cache_size>67108864</mark_cache_size>
  <users><default><password></password><networks><ip>::/0</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <profiles><default></default></profiles>
  <quotas><default></default></quotas>
</yandex>
"#,
            tcp = port + 1
        );
        std::fs::write(dir.join("config.xml"), config).unwrap();
        ClickHouse {
            ns: ns.into(),
            dir,
            port,
            child: None,
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    pub fn start(&mut self) {
        let log = std::fs::File::create(self.dir.join("stdout.log")).unwrap();
        let child = Command::new("ip")
            .args(["netns", "exec", &self.ns, "/usr/sbin/clickhouse-server"])
            .arg(format!(
                "--config-file={}",
                self.dir.join("config.xml").display()
            ))
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        self.child = Some(child);
        let t = Instant::now();
        while self.query("SELECT 1").as_deref() != Some("1\n") {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "clickhouse-server did not answer within 30 s: {}",
                std::fs::read_to_string(self.dir.join("err.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn query(&self, q: &str) -> Option<String> {
        curl(&self.ns, &self.url(), Some(q))
    }
}

impl Drop for ClickHouse {
    fn drop(&mut self) {
        self.stop();
    }
}
