//! One item of the host check, and the kernel command line's words.

use misura_report::host::{CheckItem, Verdict};

pub fn item(
    scope: &str,
    name: &str,
    state: impl Into<String>,
    verdict: Verdict,
    why: &str,
    command: Option<String>,
) -> CheckItem {
    CheckItem {
        scope: scope.to_string(),
        item: name.to_string(),
        state: state.into(),
        verdict,
        why: why.to_string(),
        command,
    }
}

/// The kernel command line's `key=value` words for `keys` (before `--`,
/// after which the words are init's).
pub fn cmdline_params(cmdline: &str, keys: &[&str]) -> Vec<String> {
    cmdline
        .split_whitespace()
        .take_while(|w| *w != "--")
        .filter(|w| keys.iter().any(|k| w.split('=').next() == Some(k)))
        .map(str::to_string)
        .collect()
}
