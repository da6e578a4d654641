//! Hostile numbers and arguments (issue 13): refused with the limit named,
//! never a panic or an abort.

#[macro_use]
mod common;

use common::*;

#[test]
fn max_sources_beyond_its_bound_is_refused_not_a_panic_or_an_abort() {
    for v in ["18446744073709551615", "1000000000000", "50000000"] {
        let o = run(&["reflect", "--max-sources", v, "--duration", "1s"]);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(5), "--max-sources {v}: {e}");
        assert!(e.contains("1000000"), "--max-sources {v}: {e}");
    }
}

#[test]
fn a_non_utf8_path_argument_does_not_panic() {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;
    let dir = std::env::temp_dir().join(format!("misura-bounds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut name = dir.clone().into_os_string().into_vec();
    name.extend_from_slice(b"/r\xff.json");
    let path = OsString::from_vec(name);
    let o = misura()
        .args(["--no-store", "clock", "sources", "--export-json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{:?}: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(std::path::Path::new(&path).exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn endless_files_are_refused_at_their_limit_not_read_until_memory_runs_out() {
    for args in [
        &["rtt", "127.0.0.1", "--key-file", "/dev/zero"][..],
        &["reflect", "--key-file", "/dev/zero", "--duration", "1s"],
        &["serve", "--key-file", "/dev/zero", "--port", "1"],
        &["agent", "--config", "/dev/zero"],
        &["report", "/dev/zero", "--html", "/dev/null"],
    ] {
        let t = std::time::Instant::now();
        let o = run(args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?}");
        // A device is refused for what it is before it is read (issue 33,
        // item 11); a regular file beyond the limit is refused at the limit.
        assert!(
            e.contains("-byte limit") || e.contains("not a regular file"),
            "{args:?}: {e}"
        );
        assert!(t.elapsed() < std::time::Duration::from_secs(20), "{args:?}");
    }
}

#[test]
fn counts_and_rates_beyond_their_bounds_are_refused_at_once() {
    for (args, limit) in [
        (&["tcp", "127.0.0.1", "--clients", "100000"][..], "256"),
        (
            &["udp", "127.0.0.1", "--rate", "1G", "--clients", "100000"],
            "256",
        ),
        (
            &[
                "clock",
                "interference",
                "--load",
                "5000",
                "--duration",
                "1s",
            ],
            "4 per online CPU",
        ),
        (
            &["rtt", "127.0.0.1", "--rate", "1e-300"],
            "one probe per hour",
        ),
        (&["rtt", "127.0.0.1", "--period", "2h"], "1 hour"),
    ] {
        let t = std::time::Instant::now();
        let o = run(args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(5), "{args:?}: {e}");
        assert!(e.contains(limit), "{args:?}: {e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(10), "{args:?}");
    }
}
