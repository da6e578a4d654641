//! Reading a file a user names with an upper bound on its size, so that
//! `/dev/zero` or a huge file is refused with the limit named instead of
//! read until memory runs out (issue 13, finding 7). The bound is applied
//! while reading (`take`), so it holds for special files whose size is
//! unknown too.

use std::io::{self, Read};
use std::path::Path;

/// Key files (a few hundred bytes at most).
pub const KEY_FILE_MAX: u64 = 64 * 1024;
/// Configuration files, tune state files.
pub const CONFIG_MAX: u64 = 1024 * 1024;
/// Calibration profiles.
pub const PROFILE_MAX: u64 = 16 * 1024 * 1024;
/// Result JSON files read by `misura report`.
pub const RESULT_MAX: u64 = 256 * 1024 * 1024;

/// The whole file, or an error naming `limit` if it holds more.
pub fn read_bounded(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let f = std::fs::File::open(path)?;
    let mut v = Vec::new();
    f.take(limit + 1).read_to_end(&mut v)?;
    if v.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than the {limit}-byte limit for this kind of file"),
        ));
    }
    Ok(v)
}

/// As [`read_bounded`], as UTF-8 text.
pub fn read_string_bounded(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read_bounded(path, limit)?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_refused_at_the_limit() {
        let e = read_bounded(Path::new("/dev/zero"), 1000).unwrap_err();
        assert!(e.to_string().contains("1000-byte limit"), "{e}");
        assert_eq!(
            read_bounded(Path::new("/dev/null"), 10).unwrap(),
            Vec::<u8>::new()
        );
    }
}
