//! What the binary's logger (`shared/logger.rs` in the binary, the one
//! writer of the `log` facade's messages) decides before it writes:
//! whether stderr is the journal (`misura agent` under systemd), each
//! level's sd-daemon(3) prefix there (`<4>` …), and the level from
//! `MISURA_LOG=debug|info|warn|error` (`MISURA_DEBUG` set means debug). It
//! writes nothing itself.

use log::{Level, LevelFilter};
use std::os::unix::fs::MetadataExt;

/// Whether this process's stderr is the journal (`JOURNAL_STREAM`).
pub fn stderr_is_journal() -> bool {
    let stream = std::env::var("JOURNAL_STREAM").ok();
    is_journal(stream.as_deref(), stderr_id())
}

/// The level `MISURA_LOG` and `MISURA_DEBUG` ask for (info by default).
pub fn level() -> LevelFilter {
    level_from(
        std::env::var("MISURA_LOG").ok().as_deref(),
        std::env::var_os("MISURA_DEBUG").is_some(),
    )
}

/// (st_dev, st_ino) of fd 2, by fstat(2) on a duplicate of it.
fn stderr_id() -> Option<(u64, u64)> {
    use std::os::fd::AsFd;
    let fd = std::io::stderr().as_fd().try_clone_to_owned().ok()?;
    let m = std::fs::File::from(fd).metadata().ok()?;
    Some((m.dev(), m.ino()))
}

/// Whether stderr is the journal: systemd sets `JOURNAL_STREAM` to
/// "<dev>:<inode>" of the stream it connected; a child whose stderr went
/// elsewhere inherits the variable but not the stream.
pub fn is_journal(stream: Option<&str>, stderr: Option<(u64, u64)>) -> bool {
    let (Some(s), Some((dev, ino))) = (stream, stderr) else {
        return false;
    };
    let Some((d, i)) = s.trim().split_once(':') else {
        return false;
    };
    d.parse::<u64>() == Ok(dev) && i.parse::<u64>() == Ok(ino)
}

/// The syslog level prefix of sd-daemon(3).
pub fn prefix(level: Level) -> &'static str {
    match level {
        Level::Error => "<3>",
        Level::Warn => "<4>",
        Level::Info => "<6>",
        Level::Debug | Level::Trace => "<7>",
    }
}

/// `MISURA_LOG` wins; else debug when `MISURA_DEBUG` is set; else info.
pub fn level_from(misura_log: Option<&str>, misura_debug: bool) -> LevelFilter {
    match misura_log.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        Some("debug") => LevelFilter::Debug,
        Some("info") => LevelFilter::Info,
        Some("warn") | Some("warning") => LevelFilter::Warn,
        Some("error") => LevelFilter::Error,
        _ if misura_debug => LevelFilter::Debug,
        _ => LevelFilter::Info,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_only_when_the_stream_is_stderr() {
        assert!(is_journal(Some("8:1234"), Some((8, 1234))));
        assert!(is_journal(Some("8:1234\n"), Some((8, 1234))));
        assert!(!is_journal(Some("8:1235"), Some((8, 1234))));
        assert!(!is_journal(Some("9:1234"), Some((8, 1234))));
        assert!(!is_journal(None, Some((8, 1234))));
        assert!(!is_journal(Some("8:1234"), None));
        assert!(!is_journal(Some(""), Some((0, 0))));
        assert!(!is_journal(Some("x:y"), Some((8, 1234))));
    }

    #[test]
    fn levels_get_sd_daemon_prefixes() {
        assert_eq!(prefix(Level::Error), "<3>");
        assert_eq!(prefix(Level::Warn), "<4>");
        assert_eq!(prefix(Level::Info), "<6>");
        assert_eq!(prefix(Level::Debug), "<7>");
    }

    #[test]
    fn misura_log_sets_the_level() {
        assert_eq!(level_from(None, false), LevelFilter::Info);
        assert_eq!(level_from(None, true), LevelFilter::Debug);
        assert_eq!(level_from(Some("warn"), true), LevelFilter::Warn);
        assert_eq!(level_from(Some("ERROR"), false), LevelFilter::Error);
        assert_eq!(level_from(Some("debug"), false), LevelFilter::Debug);
        assert_eq!(level_from(Some("nonsense"), false), LevelFilter::Info);
    }
}
