//! Shared secrets for authenticated STAMP and the control protocol.

use crate::exit::{Class, Classed};
use misura_measure::auth::{AuthError, StampKey};
use std::io;
use std::path::PathBuf;

/// Why a key file cannot be used: its path, and what reading it met or
/// why its contents are no key (in the message, not as a source).
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("cannot read the key file {}: {error}", path.display())]
    Read { path: PathBuf, error: io::Error },
    #[error("key file {}: {why}", path.display())]
    Invalid { path: PathBuf, why: AuthError },
}

impl Classed for KeyError {
    /// A usage error (the file given is the wrong one).
    fn class(&self) -> Option<Class> {
        Some(Class::Usage)
    }
}

pub fn read_key(path: &Option<PathBuf>) -> Result<Option<StampKey>, KeyError> {
    let Some(p) = path else { return Ok(None) };
    let bytes = crate::files::read_bounded(p, crate::files::KEY_FILE_MAX).map_err(|error| {
        KeyError::Read {
            path: p.clone(),
            error,
        }
    })?;
    let key = StampKey::from_file_contents(&bytes).map_err(|why| KeyError::Invalid {
        path: p.clone(),
        why,
    })?;
    Ok(Some(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::Failure;

    /// The words and the class each refusal had as a `Failure::Usage`.
    #[test]
    fn each_refusal_keeps_its_words_and_class() {
        let dir = std::env::temp_dir().join(format!("misura-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.key");
        std::fs::write(&empty, " \n").unwrap();
        let missing = dir.join("missing.key");
        let read = read_key(&Some(missing.clone())).unwrap_err();
        assert!(matches!(read, KeyError::Read { .. }), "{read:?}");
        let invalid = read_key(&Some(empty.clone())).unwrap_err();
        let cases = [
            (
                read,
                format!(
                    "cannot read the key file {}: {}",
                    missing.display(),
                    std::fs::metadata(&missing).unwrap_err()
                ),
            ),
            (
                invalid,
                format!("key file {}: {}", empty.display(), AuthError::Empty),
            ),
        ];
        for (e, words) in cases {
            assert_eq!(e.to_string(), words);
            assert_eq!(e.class(), Some(Class::Usage));
            assert!(std::error::Error::source(&e).is_none(), "{e}");
            let f = Failure::from(e);
            assert!(matches!(&f, Failure::Usage(w) if *w == words), "{f:?}");
            assert_eq!(f.class(), crate::exit::Class::Usage);
        }
        assert!(read_key(&None).unwrap().is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
