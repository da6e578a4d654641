//! The one logger: what the libraries report through the `log` facade,
//! written to stderr by the binary. Hand-written rather than env_logger:
//! each message must come out exactly as the libraries printed it before
//! (`misura agent: …`, `misura: warning: …`; tests and users read them), with
//! no timestamp, level word or module added, and when stderr is the journal
//! (`misura agent` under systemd) each line gets its sd-daemon(3) level
//! prefix (`<4>` …) so journald records the level. Level: info, or
//! `MISURA_LOG=debug|info|warn|error` (`MISURA_DEBUG` set means debug);
//! `--quiet` is each command's own and its libraries still honour it. What
//! it decides before writing (the journal, the prefixes, the level) is
//! `misura_cli::logging`'s; the writing is the binary's.

use log::{Log, Metadata, Record};
use misura_cli::logging::prefix;

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
    let journal = misura_cli::logging::stderr_is_journal();
    let level = misura_cli::logging::level();
    if log::set_logger(Box::leak(Box::new(Logger { journal }))).is_ok() {
        log::set_max_level(level);
    }
    misura_cli::progress::set_sink(|line| eprint!("{line}"));
}
