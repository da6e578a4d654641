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
        why: why.to_string(),
        // An ok row needs no change; its "change" would undo what is right
        // (`lro off` would have said `ethtool -K eth0 lro on`).
        command: command.filter(|_| !matches!(verdict, Verdict::Ok)),
        verdict,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ok_row_carries_no_change() {
        let cmd = || Some("ethtool -K eth0 lro on".to_string());
        assert_eq!(
            item("eth0", "lro", "off", Verdict::Ok, "w", cmd()).command,
            None
        );
        assert_eq!(
            item("eth0", "lro", "on", Verdict::Hurts, "w", cmd()).command,
            cmd()
        );
    }
}
