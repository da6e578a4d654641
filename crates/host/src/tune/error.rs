//! What `host tune` refuses or fails at, typed: which file and why, never a
//! flag's name (the binary writes the sentence and picks the exit class).

use std::io;
use std::path::PathBuf;

/// Why a tune, apply or revert did not run to its report.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// An interface named does not exist, or the namespace cannot be entered.
    #[error(transparent)]
    Sys(#[from] misura_sys::SysError),
    /// The state file to revert from cannot be read.
    #[error("cannot read the tune state file {}", path.display())]
    ReadState {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The state file is not JSON of a tune state.
    #[error("{} is not a misura host tune state file", path.display())]
    NotState {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// The state file is a tune state the model refuses (format, version).
    #[error("{}: {reason}", path.display())]
    BadState { path: PathBuf, reason: String },
    /// The state file's directory cannot be created.
    #[error("cannot create {}: {error}", dir.display())]
    CreateDir { dir: PathBuf, error: io::Error },
    /// The state file cannot be written.
    #[error("cannot write the tune state file {}: {error}", path.display())]
    WriteState { path: PathBuf, error: io::Error },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_messages_name_the_file_and_why() {
        let path = PathBuf::from("/x/state.json");
        let e = TuneError::BadState {
            path: path.clone(),
            reason: "format is `a`, not `b`".into(),
        };
        assert_eq!(e.to_string(), "/x/state.json: format is `a`, not `b`");
        let e = TuneError::WriteState {
            path,
            error: io::Error::from(io::ErrorKind::PermissionDenied),
        };
        assert_eq!(
            e.to_string(),
            "cannot write the tune state file /x/state.json: permission denied"
        );
        let e = TuneError::CreateDir {
            dir: PathBuf::from("/proc/nope"),
            error: io::Error::from(io::ErrorKind::NotFound),
        };
        assert_eq!(e.to_string(), "cannot create /proc/nope: entity not found");
    }

    #[test]
    fn a_state_file_that_cannot_be_read_says_which() {
        let e = crate::revert(std::path::Path::new("/nonexistent/misura-state.json"), None)
            .unwrap_err();
        assert!(matches!(e, TuneError::ReadState { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "cannot read the tune state file /nonexistent/misura-state.json"
        );
    }
}
