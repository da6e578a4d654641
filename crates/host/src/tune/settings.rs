//! Reading and writing the settings the plan changes, in the words the
//! plan and the state file use ("on"/"off", numbers, sysfs text).

use crate::readings::{missing, sys_state};
use misura_report::host::SettingKind;
use misura_sys::hostinfo::{self, Reading};
use misura_sys::{ethtool, tsinfo, SysError};

fn onoff(b: bool) -> String {
    if b { "on" } else { "off" }.into()
}

/// The current value of a setting, as the plan and the state file write it.
pub(super) fn current(kind: SettingKind, iface: Option<&str>, key: &str) -> Result<String, String> {
    let i = iface.unwrap_or("");
    match kind {
        SettingKind::Sysfs => match hostinfo::read(key) {
            Reading::Value(v) => Ok(v),
            r => Err(missing(&r)),
        },
        SettingKind::Eee => ethtool::eee(i)
            .map(|e| onoff(e.enabled))
            .map_err(|e| sys_state(&e)),
        SettingKind::Coalesce => ethtool::coalesce(i)
            .map_err(|e| sys_state(&e))
            .and_then(|c| {
                c.get(key)
                    .ok_or_else(|| format!("no coalescing parameter {key}"))
            })
            .map(|v| {
                if key.starts_with("adaptive") {
                    onoff(v != 0)
                } else {
                    v.to_string()
                }
            }),
        SettingKind::Offload => ethtool::offload(i, key)
            .map(onoff)
            .map_err(|e| sys_state(&e)),
        SettingKind::Timestamping => tsinfo::hw_timestamping(i)
            .map(|c| c.describe())
            .map_err(|e| sys_state(&e)),
    }
}

fn set(kind: SettingKind, iface: Option<&str>, key: &str, value: &str) -> Result<(), SysError> {
    let i = iface.unwrap_or("");
    match kind {
        SettingKind::Sysfs => hostinfo::write(key, value),
        SettingKind::Eee => ethtool::set_eee(i, value == "on"),
        SettingKind::Coalesce => {
            let v = match value {
                "on" => 1,
                "off" => 0,
                n => n.parse().map_err(|_| SysError::Unsupported {
                    what: format!("setting {key} of `{i}` to `{n}`"),
                    why: "not a number".into(),
                })?,
            };
            ethtool::set_coalesce(i, key, v)
        }
        SettingKind::Offload => ethtool::set_offload(i, key, value == "on"),
        SettingKind::Timestamping => {
            let cfg =
                tsinfo::HwTstampConfig::parse(value).ok_or_else(|| SysError::Unsupported {
                    what: format!("setting hardware timestamping of `{i}` to `{value}`"),
                    why: "not `tx MODE, rx FILTER` (e.g. `tx on, rx all`)".into(),
                })?;
            tsinfo::set_hw_timestamping(i, &cfg).map(|_| ())
        }
    }
}

/// Set a value and read it back: drivers may accept a value and keep
/// another. The error says why, in words.
pub(super) fn set_and_check(
    kind: SettingKind,
    iface: Option<&str>,
    key: &str,
    value: &str,
) -> Result<(), String> {
    set(kind, iface, key, value)
        .map_err(|e| sys_state(&e))
        .and_then(|()| match current(kind, iface, key) {
            Ok(now) if now == value => Ok(()),
            Ok(now) => Err(format!("the driver kept {now}")),
            Err(e) => Err(format!("cannot read it back: {e}")),
        })
}
