//! The store on scratch databases: save, list and get; foreign, newer and
//! damaged files refused untouched; concurrent writers.

use super::*;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("misura-store-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d.join("results.sqlite")
}

fn facts(sub: &str, target: &str, at: &str) -> RunFacts {
    RunFacts {
        started_at: at.into(),
        subcommand: sub.into(),
        target: target.into(),
        sizes: "46".into(),
        timestamp_source: "kernel software".into(),
        host: "vm".into(),
        complete: true,
    }
}

#[test]
fn save_list_get() {
    let p = tmp("basic");
    let s = Store::open(&p).unwrap();
    let r = serde_json::json!({"format": "misura.rtt", "format_version": 1, "overall": {"network_rtt": {"median_ns": 1500}}});
    let a = s
        .save(&facts("rtt", "198.18.0.2:862", "2026-11-22T01:00:00Z"), &r)
        .unwrap();
    let b = s
        .save(
            &facts("oneway", "p1->p2", "2026-11-22T02:00:00Z"),
            &serde_json::json!({"format": "misura.oneway"}),
        )
        .unwrap();
    let all = s.list(&Filter::default()).unwrap();
    assert_eq!(all.iter().map(|r| r.id).collect::<Vec<_>>(), vec![b, a]);
    assert_eq!(
        all[1].headline.as_deref(),
        Some("network RTT median 1.50 µs")
    );
    let rtt = s
        .list(&Filter {
            subcommand: Some("rtt".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(rtt.len(), 1);
    let by_target = s
        .list(&Filter {
            target: Some("198.18".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(by_target[0].id, a);
    let since = s
        .list(&Filter {
            since: Some("2026-11-22T01:30".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(since.len(), 1);
    let until = s
        .list(&Filter {
            until: Some("2026-11-22T01".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(until.len(), 1);
    assert_eq!(s.get(a).unwrap().1, r);
    assert!(matches!(s.get(999), Err(StoreError::NoSuchRun(999))));
}

#[test]
fn foreign_newer_and_corrupt_files_are_refused_untouched() {
    // Another program's SQLite database.
    let p = tmp("foreign");
    {
        let c = Connection::open(&p).unwrap();
        c.execute_batch("CREATE TABLE cats (name TEXT); INSERT INTO cats VALUES ('tom');")
            .unwrap();
    }
    let before = std::fs::read(&p).unwrap();
    assert!(matches!(Store::open(&p), Err(StoreError::Foreign { .. })));
    assert_eq!(std::fs::read(&p).unwrap(), before);
    // A store from a newer misura.
    let p = tmp("newer");
    drop(Store::open(&p).unwrap());
    {
        let c = Connection::open(&p).unwrap();
        c.execute_batch("PRAGMA user_version = 99;").unwrap();
    }
    assert!(matches!(
        Store::open(&p),
        Err(StoreError::Newer { found: 99, .. })
    ));
    // Neither names a flag: the binary's words do.
    for e in [
        StoreError::Foreign { path: p.clone() },
        StoreError::Newer {
            path: p.clone(),
            found: 99,
        },
    ] {
        assert!(!e.to_string().contains("--"), "{e}");
    }
    // Not SQLite at all.
    let p = tmp("garbage");
    std::fs::write(
        &p,
        b"this is not a database, just some text that is long enough to have a header",
    )
    .unwrap();
    let before = std::fs::read(&p).unwrap();
    let e = Store::open(&p).err().expect("refused");
    assert!(e.to_string().contains("nothing was written"), "{e}");
    assert_eq!(std::fs::read(&p).unwrap(), before);
}

#[test]
fn a_store_with_damaged_pages_is_not_rewritten_by_opening_it() {
    // Issue 13, finding 12: a run against a damaged store rewrote two
    // header bytes (the change counters of a needless migration).
    let p = tmp("damaged");
    {
        let s = Store::open(&p).unwrap();
        let big = serde_json::json!({"format": "misura.rtt", "pad": "x".repeat(3000)});
        for i in 0..100 {
            s.save(
                &facts("rtt", &format!("t{i}"), "2026-11-22T01:00:00Z"),
                &big,
            )
            .unwrap();
        }
    }
    let mut bytes = std::fs::read(&p).unwrap();
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 20_000] {
        *b = 0xA5;
    }
    std::fs::write(&p, &bytes).unwrap();
    let s = Store::open(&p).expect("the header is intact, so it opens");
    drop(s);
    assert!(
        std::fs::read(&p).unwrap() == bytes,
        "opening changed the file"
    );
    // Saving into it fails naming the damage, or succeeds; a failure
    // leaves the main file as it was.
    let s = Store::open(&p).unwrap();
    let r = (0..50).try_for_each(|i| {
        s.save(
            &facts("rtt", &format!("u{i}"), "2026-11-23T01:00:00Z"),
            &serde_json::json!({"pad": "y".repeat(3000)}),
        )
        .map(drop)
    });
    if let Err(e) = r {
        assert!(matches!(e, StoreError::Damaged { .. }), "{e}");
        assert!(e.to_string().contains(".recover"), "{e}");
    }
}

#[test]
fn a_store_being_created_is_not_called_foreign() {
    let p = tmp("empty");
    std::fs::write(&p, b"").unwrap();
    assert!(matches!(
        Store::open_read_only(&p),
        Err(StoreError::Empty { .. })
    ));
}

#[test]
fn concurrent_writers_all_succeed() {
    let p = tmp("concurrent");
    drop(Store::open(&p).unwrap());
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let p = p.clone();
            std::thread::spawn(move || {
                let s = Store::open(&p).unwrap();
                for i in 0..50 {
                    s.save(
                        &facts(
                            "rtt",
                            &format!("t{t}"),
                            &format!("2026-11-22T00:{i:02}:00Z"),
                        ),
                        &serde_json::json!({"i": i}),
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(Store::open(&p).unwrap().count().unwrap(), 200);
}

#[test]
fn a_row_over_the_bound_is_named_not_read() {
    let p = tmp("large");
    let s = Store::open(&p).unwrap();
    let small = s
        .save(
            &facts("rtt", "a", "2026-11-22T01:00:00Z"),
            &serde_json::json!({"format": "misura.tcp", "throughput_bps": 1e9}),
        )
        .unwrap();
    // A histogram of far too many buckets, just over the bound.
    let n = MAX_ROW_BYTES as usize / 15;
    let buckets: Vec<_> = (0..n)
        .map(|i| serde_json::json!({"lo": i, "n": 1}))
        .collect();
    let big = s
        .save(
            &facts("rtt", "b", "2026-11-22T02:00:00Z"),
            &serde_json::json!({"format": "misura.rtt", "histogram": buckets}),
        )
        .unwrap();
    drop(buckets);
    let all = s.list(&Filter::default()).unwrap();
    let h = all.iter().find(|r| r.id == big).unwrap().headline.clone();
    assert!(
        h.as_deref()
            .is_some_and(|h| h.contains("over the") && h.contains("not read")),
        "{h:?}"
    );
    assert!(all.iter().any(|r| r.id == small && r.headline.is_some()));
    match s.get(big) {
        Err(StoreError::RowTooLarge { id, bytes, limit }) => {
            assert_eq!((id, limit), (big, MAX_ROW_BYTES));
            assert!(bytes > MAX_ROW_BYTES);
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    assert!(s.get(small).is_ok());
    let _ = std::fs::remove_dir_all(p.parent().unwrap());
}
