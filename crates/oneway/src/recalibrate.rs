//! The `misura calibrate` command a calibration mismatch suggests: it must
//! run as pasted, on the set-up of the run that found the mismatch, so it
//! carries every flag that made that set-up (namespace, ports, link speed
//! given by hand, VLAN tag, frame format or ethertype) and writes the
//! profile the run was given. Issue 36: the hint once lacked `--netns`
//! (pasted, it exited 4) and `--link-speed` (the new profile mismatched
//! again).

use misura_report::OnewayConfig;
use std::path::Path;

/// `misura calibrate …` for the set-up `cfg` describes, writing `profile`.
pub fn calibrate_command(cfg: &OnewayConfig, profile: &Path) -> String {
    let mut cmd = vec!["misura".to_string(), "calibrate".to_string()];
    let mut flag = |name: &str, value: &str| {
        cmd.push(name.to_string());
        cmd.push(shell_word(value));
    };
    if let Some(ns) = &cfg.netns {
        flag("--netns", ns);
    }
    flag("--tx", &cfg.tx);
    flag("--rx", &cfg.rx);
    if cfg.link_speed_source == "--link-speed" {
        flag("--link-speed", &rate_text(cfg.link.rate_bps));
    }
    if cfg.frame_format.as_deref() == Some("ptp") {
        flag("--frame-format", "ptp");
    } else if cfg.ethertype != misura_wire::ETHERTYPE_MISURA {
        flag("--ethertype", &format!("{:#06x}", cfg.ethertype));
    }
    flag("--profile", &profile.display().to_string());
    if cfg.link.vlan {
        cmd.push("--vlan".into());
    }
    cmd.join(" ")
}

/// A rate as `--link-speed` reads it back exactly: 1G, 100M, or bit/s.
fn rate_text(bps: u64) -> String {
    if bps % 1_000_000_000 == 0 {
        format!("{}G", bps / 1_000_000_000)
    } else if bps % 1_000_000 == 0 {
        format!("{}M", bps / 1_000_000)
    } else {
        bps.to_string()
    }
}

/// `s` as one shell word: as it is when nothing in it is special.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:@%+,=-".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_words_read_back() {
        assert_eq!(rate_text(1_000_000_000), "1G");
        assert_eq!(rate_text(2_500_000_000), "2500M");
        assert_eq!(rate_text(100_000_000), "100M");
        assert_eq!(rate_text(1_234_567), "1234567");
        assert_eq!(shell_word("cal.json"), "cal.json");
        assert_eq!(shell_word("my cal.json"), "'my cal.json'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }
}
