//! The one logger: what the libraries report through the `log` facade,
//! written to stderr by the binary. Hand-written rather than env_logger:
//! each message must come out exactly as the libraries printed it before
//! (`misura agent: …`, `misura: warning: …`; tests and users read them), with
//! no timestamp, level word or module added, and when stderr is the journal
//! (`misura agent` under systemd) each line gets its sd-daemon(3) level
//! prefix (`<4>` …) so journald records the level. Level: info, or
//! `MISURA_LOG=debug|info|warn|error` (`MISURA_DEBUG` set means debug);
//! `--quiet` is each command's own and its libraries still honour it.

use log::{Level, LevelFilter, Log, Metadata, Record};
use std::os::unix::fs::MetadataExt;

struct Logger {
    journal: bool,
}

impl Log for Logger {
    fn enabled(&self, m: &Metadata) -> bool {
        m.level() <= log::max_level()
    }

    fn log(&self, r: &Record) {
        if !self.enabled(r.metadata()) {
            return;
        }
        let text = r.args().to_string();
        if self.journal {
            // journald reads a level per line.
            for line in text.lines() {
                eprintln!("{}{line}", prefix(r.level()));
            }
        } else {
            eprintln!("{text}");
        }
    }

    fn flush(&self) {}
}

/// Install the logger and the progress line's drawer, once, at startup.
pub fn install() {
    let stream = std::env::var("JOURNAL_STREAM").ok();
    let journal = is_journal(stream.as_deref(), stderr_id());
    let level = level_from(
        std::env::var("MISURA_LOG").ok().as_deref(),
        std::env::var_os("MISURA_DEBUG").is_some(),
    );
    if log::set_logger(Box::leak(Box::new(Logger { journal }))).is_ok() {
        log::set_max_level(level);
    }
    misura_cli::progress::set_sink(|line| eprint!("{line}"));
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
