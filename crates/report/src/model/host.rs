//! `misura host check` and `misura host tune`: the check item model, the plan
//! of safe changes and the state file that `--revert` reads (their text
//! forms are in `text::host`). Pure: the binary reads the host and applies
//! the changes.

use super::meta::{HostFingerprint, Meta};
use misura_wire::hwtstamp::{value_of, RX_FILTERS, TX_TYPES};
use serde::{Deserialize, Serialize};

/// Format of `misura host check --json`.
pub const CHECK_FORMAT: &str = "misura.host-check";

/// Format of `misura host tune --json`.
pub const TUNE_FORMAT: &str = "misura.host-tune";

/// Format of the file `misura host tune --apply` writes and `--revert` reads.
pub const STATE_FORMAT: &str = "misura.host-tune-state";

/// What a setting does to timing precision as it stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    #[serde(rename = "ok")]
    Ok,
    #[serde(rename = "hurts precision")]
    Hurts,
    #[serde(rename = "unknown")]
    Unknown,
    #[serde(rename = "n/a")]
    NotApplicable,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Hurts => "hurts precision",
            Verdict::Unknown => "unknown",
            Verdict::NotApplicable => "n/a",
        }
    }
}

/// One checked item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckItem {
    /// `host`, `time sync`, or the interface name.
    pub scope: String,
    /// What is checked, e.g. `cpu governor`, `coalescing`.
    pub item: String,
    /// Its current state, or why it could not be read
    /// (`unreadable: permission denied`, `not supported by driver veth`).
    pub state: String,
    pub verdict: Verdict,
    /// Why it matters, one line.
    pub why: String,
    /// The exact command that changes it; `None` when nothing can.
    pub command: Option<String>,
}

/// How many items have each verdict.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerdictCounts {
    pub ok: usize,
    pub hurts_precision: usize,
    pub unknown: usize,
    pub not_applicable: usize,
}

impl VerdictCounts {
    pub fn of(items: &[CheckItem]) -> VerdictCounts {
        let mut c = VerdictCounts::default();
        for i in items {
            match i.verdict {
                Verdict::Ok => c.ok += 1,
                Verdict::Hurts => c.hurts_precision += 1,
                Verdict::Unknown => c.unknown += 1,
                Verdict::NotApplicable => c.not_applicable += 1,
            }
        }
        c
    }
}

/// The result of `misura host check`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HostCheckReport {
    #[serde(flatten)]
    pub meta: Meta,
    /// The network namespace the interfaces were read in.
    pub netns: Option<String>,
    pub host: HostFingerprint,
    /// The interfaces checked.
    pub interfaces: Vec<String>,
    pub items: Vec<CheckItem>,
    pub counts: VerdictCounts,
    /// Each NIC hardware clock against the system clock (empty in results
    /// from before they were listed).
    #[serde(default)]
    pub phcs: Vec<super::clock::PhcInfo>,
    /// ptp4l, phc2sys, ts2phc or timemaster processes found running.
    #[serde(default)]
    pub ptp_daemons: Vec<super::clock::PtpDaemon>,
}

// ---- tune -------------------------------------------------------------------

/// How a setting is changed.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SettingKind {
    /// A sysfs/procfs file; `key` is its path.
    Sysfs,
    /// Energy-Efficient Ethernet on/off; `key` is `eee`.
    Eee,
    /// An interrupt coalescing parameter; `key` is ethtool's name (`rx-usecs`).
    Coalesce,
    /// An offload on/off; `key` is `gro`, `lro`, `gso` or `tso`.
    Offload,
    /// The NIC's hardware timestamping (`SIOCSHWTSTAMP`); `key` is
    /// `hwtstamp`, values as `tx on, rx all` (TX type, RX filter).
    Timestamping,
}

/// One change: what, from which value to which, and the commands for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub kind: SettingKind,
    /// The interface, for interface settings.
    pub interface: Option<String>,
    pub key: String,
    /// Value before (what `--revert` restores).
    pub old: String,
    /// Value the plan sets.
    pub new: String,
    /// The shell command that makes the change.
    pub command: String,
    /// The shell command that undoes it.
    pub revert_command: String,
}

impl Change {
    /// A change of `kind`/`key` from `old` to `new`, with its commands
    /// (interface commands run in `netns` when given).
    pub fn new(
        kind: SettingKind,
        interface: Option<&str>,
        key: &str,
        old: &str,
        new: &str,
        netns: Option<&str>,
    ) -> Change {
        Change {
            kind,
            interface: interface.map(str::to_string),
            key: key.to_string(),
            old: old.to_string(),
            new: new.to_string(),
            command: command_for(kind, interface, key, new, netns),
            revert_command: command_for(kind, interface, key, old, netns),
        }
    }

    /// `rx-usecs of p1` / `/sys/.../scaling_governor`.
    pub fn label(&self) -> String {
        match &self.interface {
            Some(i) => format!("{i} {}", self.key),
            None => self.key.clone(),
        }
    }
}

/// The command that sets `key` to `value`.
pub fn command_for(
    kind: SettingKind,
    interface: Option<&str>,
    key: &str,
    value: &str,
    netns: Option<&str>,
) -> String {
    let i = interface.unwrap_or("IF");
    let ns = netns
        .map(|n| format!("ip netns exec {n} "))
        .unwrap_or_default();
    match kind {
        SettingKind::Sysfs => format!("echo {value} > {key}"),
        SettingKind::Eee => format!("{ns}ethtool --set-eee {i} eee {value}"),
        SettingKind::Coalesce => format!("{ns}ethtool -C {i} {key} {value}"),
        SettingKind::Offload => format!("{ns}ethtool -K {i} {key} {value}"),
        SettingKind::Timestamping => format!("{ns}hwstamp_ctl -i {i} {}", hwstamp_args(value)),
    }
}

/// `tx on, rx all` as linuxptp's `hwstamp_ctl` arguments (`-t 1 -r 1`).
fn hwstamp_args(value: &str) -> String {
    let mut out = Vec::new();
    for part in value.split(',') {
        let part = part.trim();
        let (flag, word, names): (&str, &str, &[&str]) = if let Some(w) = part.strip_prefix("tx ") {
            ("-t", w, &TX_TYPES)
        } else if let Some(w) = part.strip_prefix("rx ") {
            ("-r", w, &RX_FILTERS)
        } else {
            continue;
        };
        let n = value_of(word, names).map_or_else(|| word.to_string(), |i| i.to_string());
        out.push(format!("{flag} {n}"));
    }
    out.join(" ")
}

/// What the plan does with one setting.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum PlanEntry {
    /// Differs from the safe value: to change (or changed, or failed).
    Change {
        #[serde(flatten)]
        change: Change,
        /// After `--apply`: `applied`, or why it failed; `planned` otherwise.
        outcome: String,
    },
    /// Already at the safe value.
    Already {
        scope: String,
        item: String,
        value: String,
    },
    /// Cannot be changed on this machine, and why.
    Skipped {
        scope: String,
        item: String,
        reason: String,
    },
}

/// Decides one entry from the setting's current value (or why it cannot be
/// read) and the safe value.
pub fn plan_entry(
    kind: SettingKind,
    interface: Option<&str>,
    key: &str,
    item: &str,
    current: Result<String, String>,
    safe: &str,
    netns: Option<&str>,
) -> PlanEntry {
    let scope = interface.unwrap_or("host").to_string();
    match current {
        Err(reason) => PlanEntry::Skipped {
            scope,
            item: item.to_string(),
            reason,
        },
        Ok(v) if v == safe => PlanEntry::Already {
            scope,
            item: item.to_string(),
            value: v,
        },
        Ok(v) => PlanEntry::Change {
            change: Change::new(kind, interface, key, &v, safe, netns),
            outcome: "planned".into(),
        },
    }
}

/// The result of `misura host tune` (plan, apply or revert).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TuneReport {
    #[serde(flatten)]
    pub meta: Meta,
    /// `plan`, `apply` or `revert`.
    pub action: String,
    pub netns: Option<String>,
    pub interfaces: Vec<String>,
    pub entries: Vec<PlanEntry>,
    /// The state file written (apply) or read (revert).
    pub state_file: Option<String>,
}

/// What `--apply` changed, for `--revert`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TuneState {
    #[serde(flatten)]
    pub meta: Meta,
    /// The namespace the interface changes were made in.
    pub netns: Option<String>,
    /// Every change made, in order; `--revert` undoes them in reverse.
    pub changes: Vec<Change>,
}

/// Checks a state file's format and version before `--revert` trusts it.
pub fn check_state(s: &TuneState) -> Result<(), String> {
    if s.meta.format != STATE_FORMAT {
        return Err(format!(
            "format is `{}`, not `{STATE_FORMAT}`",
            s.meta.format
        ));
    }
    if s.meta.format_version > crate::FORMAT_VERSION {
        return Err(format!(
            "format version {} is newer than this misura reads ({})",
            s.meta.format_version,
            crate::FORMAT_VERSION
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamping_commands() {
        assert_eq!(
            command_for(
                SettingKind::Timestamping,
                Some("eth0"),
                "hwtstamp",
                "tx on, rx all",
                None
            ),
            "hwstamp_ctl -i eth0 -t 1 -r 1"
        );
        assert_eq!(
            command_for(
                SettingKind::Timestamping,
                Some("eth0"),
                "hwtstamp",
                "tx off, rx none",
                Some("n")
            ),
            "ip netns exec n hwstamp_ctl -i eth0 -t 0 -r 0"
        );
        assert_eq!(
            command_for(
                SettingKind::Timestamping,
                Some("eth1"),
                "hwtstamp",
                "tx on, rx ptpv2-event",
                None
            ),
            "hwstamp_ctl -i eth1 -t 1 -r 12"
        );
    }

    #[test]
    fn plan_entries() {
        let e = plan_entry(
            SettingKind::Offload,
            Some("p1"),
            "gro",
            "gro",
            Ok("on".into()),
            "off",
            Some("ns"),
        );
        match e {
            PlanEntry::Change { change, .. } => {
                assert_eq!(change.command, "ip netns exec ns ethtool -K p1 gro off");
                assert_eq!(
                    change.revert_command,
                    "ip netns exec ns ethtool -K p1 gro on"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            plan_entry(
                SettingKind::Eee,
                Some("p1"),
                "eee",
                "eee",
                Ok("off".into()),
                "off",
                None
            ),
            PlanEntry::Already { .. }
        ));
        assert!(matches!(
            plan_entry(
                SettingKind::Coalesce,
                Some("p1"),
                "rx-usecs",
                "coalescing rx-usecs",
                Err("not supported by driver veth".into()),
                "0",
                None
            ),
            PlanEntry::Skipped { .. }
        ));
        assert_eq!(
            command_for(
                SettingKind::Sysfs,
                None,
                "/sys/x",
                "performance",
                Some("ns")
            ),
            "echo performance > /sys/x"
        );
    }

    #[test]
    fn verdicts_serialise_as_words() {
        assert_eq!(
            serde_json::to_string(&Verdict::Hurts).unwrap(),
            "\"hurts precision\""
        );
        assert_eq!(
            serde_json::to_string(&Verdict::NotApplicable).unwrap(),
            "\"n/a\""
        );
    }
}
