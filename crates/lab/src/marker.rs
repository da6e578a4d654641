//! The marker file of each namespace the lab made: only namespaces with a
//! matching marker (same inode) are changed or removed.

use super::*;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct Marker {
    pub(super) netns: String,
    pub(super) topology: Topology,
    pub(super) prefix: String,
    /// Creation time, seconds since the Unix epoch.
    pub(super) created_unix: u64,
    /// Creation time, RFC 3339 UTC.
    #[serde(default)]
    pub(super) created: String,
    pub(super) pid: u32,
    /// Inode of the namespace (nsfs) when it was created; identifies it even if
    /// someone deletes it and makes another with the same name.
    #[serde(default)]
    pub(super) netns_inode: Option<u64>,
    /// The SUT's shape as last set (see [`shape`]); the qdisc is the truth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) shape: Option<Shape>,
}

pub(super) fn marker_path(netns: &str) -> PathBuf {
    Path::new(MARKER_DIR).join(format!("{netns}.json"))
}

pub(super) fn read_marker(netns: &str) -> Option<Marker> {
    let text = std::fs::read_to_string(marker_path(netns)).ok()?;
    serde_json::from_str(&text).ok()
}

pub(super) fn write_marker(m: &Marker) -> Result<(), LabError> {
    std::fs::create_dir_all(MARKER_DIR)?;
    let path = marker_path(&m.netns);
    let tmp = Path::new(MARKER_DIR).join(format!(".{}.json.tmp{}", m.netns, std::process::id()));
    let text = serde_json::to_string_pretty(m).map_err(std::io::Error::other)?;
    std::fs::write(&tmp, text + "\n")?;
    std::fs::rename(&tmp, &path)?;
    Ok(())
}

pub(super) fn remove_marker(netns: &str) {
    let _ = std::fs::remove_file(marker_path(netns));
}

pub(super) fn netns_inode(netns: &str) -> Option<u64> {
    for dir in ["/run/netns", "/var/run/netns"] {
        if let Ok(md) = std::fs::metadata(Path::new(dir).join(netns)) {
            return Some(md.ino());
        }
    }
    None
}

/// RFC 3339 UTC rendering of a Unix time (civil-from-days, Howard Hinnant).
pub(super) fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}
