//! What the libraries report reaches stderr through the binary's logger:
//! as it was worded before, and with the sd-daemon(3) level prefix when
//! stderr is the journal (`JOURNAL_STREAM` names fd 2's device and inode).

#[macro_use]
mod common;

use common::*;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// `misura --store <unwritable> clock sources --json` with stderr into
/// `err`: misura-run warns that the result was not kept. `journal` sets
/// JOURNAL_STREAM to the file's own "dev:ino" (else to another inode).
fn warn_into(dir: &TempDir, err: &Path, journal: bool) -> String {
    let blocker = dir.path("not-a-directory");
    std::fs::write(&blocker, "").unwrap();
    let file = std::fs::File::create(err).unwrap();
    let m = file.metadata().unwrap();
    let ino = if journal { m.ino() } else { m.ino() + 1 };
    let mut child = misura()
        .args(["--store", blocker.join("runs.db").to_str().unwrap()])
        .args(["clock", "sources", "--json"])
        .env("JOURNAL_STREAM", format!("{}:{ino}", m.dev()))
        .env_remove("MISURA_LOG")
        .stdout(std::process::Stdio::null())
        .stderr(file)
        .spawn()
        .expect("running misura");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("misura clock sources ran over 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = std::fs::read_to_string(err).unwrap();
    assert!(status.success(), "{status}: {text}");
    text
}

#[test]
fn a_library_warning_gets_the_journal_level_prefix_only_in_the_journal() {
    let dir = TempDir::new("logging");
    let said = "misura: warning: the result was not kept: ";
    let journal = warn_into(&dir, &dir.path("journal.txt"), true);
    assert!(
        journal
            .lines()
            .any(|l| l.starts_with(&format!("<4>{said}"))),
        "no <4>-prefixed warning with JOURNAL_STREAM naming stderr:\n{journal}"
    );
    let plain = warn_into(&dir, &dir.path("plain.txt"), false);
    assert!(
        plain.lines().any(|l| l.starts_with(said)),
        "the warning is missing or reworded:\n{plain}"
    );
    assert!(
        !plain.contains("<4>"),
        "a level prefix though stderr is not the journal:\n{plain}"
    );
}
