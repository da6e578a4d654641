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
    assert_eq!(o.status.code(), Some(2));
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
