//! The results store from the command line: runs are kept, listed, shown as
//! they were printed, compared; bad stores are refused without damage.

#[macro_use]
mod common;

use common::*;

fn store_args(path: &std::path::Path) -> Vec<String> {
    vec!["--store".into(), path.to_str().unwrap().into()]
}

fn run_owned(args: &[String]) -> std::process::Output {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&a)
}

#[test]
fn runs_are_kept_listed_shown_and_compared() {
    let dir = std::env::temp_dir().join(format!("misura-store-it-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("results.sqlite");
    for _ in 0..2 {
        let mut a = store_args(&db);
        a.extend(["clock".into(), "sources".into(), "--json".into()]);
        let o = run_owned(&a);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(
            String::from_utf8_lossy(&o.stderr).is_empty()
                || !String::from_utf8_lossy(&o.stderr).contains("not kept")
        );
    }
    let mut a = store_args(&db);
    a.extend(["history".into(), "--json".into()]);
    let v = json_of(&run_owned(&a));
    let runs = v.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["subcommand"], "clock-sources");
    let id = runs[1]["id"].as_i64().unwrap().to_string();
    let mut a = store_args(&db);
    a.extend(["show".into(), id.clone(), "--json".into()]);
    let shown = json_of(&run_owned(&a));
    assert_eq!(shown["format"], "misura.clock-sources");
    // Filters.
    let mut a = store_args(&db);
    a.extend([
        "history".into(),
        "--subcommand".into(),
        "rtt".into(),
        "--json".into(),
    ]);
    assert_eq!(json_of(&run_owned(&a)).as_array().unwrap().len(), 0);
    // An unknown run id, and a file that is not a store.
    let mut a = store_args(&db);
    a.extend(["show".into(), "999".into()]);
    let o = run_owned(&a);
    // The store's code (6), as for any other store problem.
    assert_eq!(o.status.code(), Some(6));
    assert!(String::from_utf8_lossy(&o.stderr).contains("999"));
    let junk = dir.join("junk.sqlite");
    std::fs::write(&junk, b"not a database at all, really not").unwrap();
    let mut a = store_args(&junk);
    a.extend(["history".into()]);
    let o = run_owned(&a);
    assert_ne!(o.status.code(), Some(0));
    assert_eq!(
        std::fs::read(&junk).unwrap(),
        b"not a database at all, really not"
    );
    // A run with a broken store still prints its result and succeeds.
    let mut a = store_args(&junk);
    a.extend(["clock".into(), "sources".into(), "--json".into()]);
    let o = run_owned(&a);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("not kept"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_processes_write_the_store_at_once() {
    let dir = std::env::temp_dir().join(format!("misura-store-par-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("results.sqlite");
    let children: Vec<_> = (0..2)
        .map(|_| {
            common::misura()
                .args([
                    "--store",
                    db.to_str().unwrap(),
                    "clock",
                    "sources",
                    "--json",
                ])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success());
        assert!(
            !String::from_utf8_lossy(&o.stderr).contains("not kept"),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let v = json_of(&run(&[
        "--store",
        db.to_str().unwrap(),
        "history",
        "--json",
    ]));
    assert_eq!(v.as_array().unwrap().len(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every measuring command keeps its run, the server too when it stops:
/// tcp, udp, rr and setup against a `misura serve` on loopback, then the
/// server's own run; each is listed, shown as text, and the two tcp runs
/// compared; `report` renders a stored run.
#[test]
fn throughput_runs_and_the_servers_own_run_are_kept() {
    let dir = TempDir::new("store-tp");
    let db = dir.path("results.sqlite");
    let db_s = db.to_str().unwrap().to_string();
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut serve = misura()
        .args(["--store", &db_s, "serve", "--listen", "127.0.0.1", "--port"])
        .arg(port.to_string())
        .arg("--quiet")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    struct Kill<'a>(&'a mut std::process::Child);
    impl Drop for Kill<'_> {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let guard = Kill(&mut serve);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect(&listen).is_err() {
        assert!(std::time::Instant::now() < deadline, "serve did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let clients: [&[&str]; 5] = [
        &["tcp", "--duration", "300ms"],
        &["tcp", "--duration", "300ms"],
        &["udp", "--duration", "300ms", "--rate", "5M"],
        &["rr", "--duration", "300ms"],
        &["setup", "--count", "2", "--idle", "0s"],
    ];
    for c in clients {
        let mut a = vec!["--store", &db_s, c[0], &listen, "-q"];
        a.extend_from_slice(&c[1..]);
        let o = run(&a);
        assert!(
            o.status.success(),
            "{a:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let pid = guard.0.id().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let st = guard.0.wait().unwrap();
    assert_eq!(st.code(), Some(143), "serve exits 143 on SIGTERM");
    drop(guard);

    let v = json_of(&run(&["--store", &db_s, "history", "--json"]));
    let mut kinds: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["subcommand"].as_str().unwrap().to_string())
        .collect();
    kinds.sort();
    assert_eq!(kinds, ["rr", "serve", "setup", "tcp", "tcp", "udp"]);
    for r in v.as_array().unwrap() {
        let id = r["id"].as_i64().unwrap().to_string();
        let o = run(&["--store", &db_s, "show", &id]);
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "show {id}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            text.starts_with("misura "),
            "show {id} ({}) is not the printed text:\n{text}",
            r["subcommand"]
        );
    }
    let tcp: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["subcommand"] == "tcp")
        .map(|r| r["id"].as_i64().unwrap().to_string())
        .collect();
    let o = run(&["--store", &db_s, "compare", &tcp[0], &tcp[1]]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("throughput"));
    let html = dir.path("r.html");
    let o = run(&[
        "--store",
        &db_s,
        "report",
        &tcp[0],
        "--html",
        html.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("misura.tcp"));
}

/// Reading the store writes nothing to it (its mtime stays), a store that
/// does not read is called damaged with exit 6 (not 7, the calibration
/// profile's code), and a `--since` that is not a time is refused.
#[test]
fn reading_leaves_the_store_alone_and_bad_stores_and_times_are_named() {
    let dir = std::env::temp_dir().join(format!("misura-store-ro-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("results.sqlite");
    let mut a = store_args(&db);
    a.extend(["clock".into(), "sources".into(), "--json".into()]);
    assert!(run_owned(&a).status.success());
    // Let WAL checkpoints of the writing run settle before timing reads.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let mtime = |p: &std::path::Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let before = mtime(&db);
    for cmd in [
        &["history"][..],
        &["show", "1"],
        &["history", "--since", "2020-01-01"],
    ] {
        let mut a = store_args(&db);
        a.extend(cmd.iter().map(|s| s.to_string()));
        let o = run_owned(&a);
        assert!(
            o.status.success(),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    assert_eq!(mtime(&db), before, "reading changed the store's mtime");
    let mut a = store_args(&db);
    a.extend(["history".into(), "--since".into(), "garbage".into()]);
    let o = run_owned(&a);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a UTC time prefix"));
    // A file that is not a store at all: exit 6, named.
    let junk = dir.join("junk.sqlite");
    std::fs::write(&junk, vec![0x5a; 8192]).unwrap();
    let mut a = store_args(&junk);
    a.push("history".into());
    let o = run_owned(&a);
    assert_eq!(
        o.status.code(),
        Some(6),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
