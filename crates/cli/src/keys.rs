//! Shared secrets for authenticated STAMP and the control protocol.

use crate::exit::Failure;
use misura_measure::auth::StampKey;
use std::path::PathBuf;

pub fn read_key(path: &Option<PathBuf>) -> Result<Option<StampKey>, Failure> {
    let Some(p) = path else { return Ok(None) };
    let bytes = crate::files::read_bounded(p, crate::files::KEY_FILE_MAX)
        .map_err(|e| Failure::Usage(format!("cannot read the key file {}: {e}", p.display())))?;
    Ok(Some(StampKey::from_file_contents(&bytes).map_err(|e| {
        Failure::Usage(format!("key file {}: {e}", p.display()))
    })?))
}
