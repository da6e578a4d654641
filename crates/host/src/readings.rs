//! What the host check and the host tune both read: interface names and
//! how to say that a reading is missing.

use misura_sys::hostinfo::{self, Reading};
use misura_sys::SysError;

/// The state of a reading that has no value.
pub fn missing(r: &Reading) -> String {
    match r {
        Reading::Value(v) => v.clone(),
        Reading::Absent => "absent".into(),
        Reading::Unreadable(why) => format!("unreadable: {why}"),
    }
}

/// The state of a failed ethtool read, in words.
pub fn sys_state(e: &SysError) -> String {
    match e {
        SysError::Unsupported { why, .. } => why.clone(),
        SysError::NeedCapability { .. } => "unreadable: permission denied".into(),
        other => format!("unreadable: {other}"),
    }
}

/// The interfaces to look at: those named, after checking that they exist,
/// or every interface of the namespace but lo.
pub fn resolve_interfaces(named: &[String]) -> Result<Vec<String>, SysError> {
    if named.is_empty() {
        let mut all: Vec<String> = hostinfo::interface_names()
            .into_iter()
            .filter(|n| n != "lo")
            .collect();
        all.sort();
        return Ok(all);
    }
    let mut out: Vec<String> = Vec::new();
    for n in named {
        misura_sys::iface::interface_index(n)?;
        if !out.contains(n) {
            out.push(n.clone());
        }
    }
    Ok(out)
}
