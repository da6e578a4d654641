//! Reading a file a user names with an upper bound on its size, so that
//! `/dev/zero` or a huge file is refused with the limit named instead of
//! read until memory runs out (issue 13, finding 7). The bound is applied
//! while reading (`take`), so it holds for special files whose size is
//! unknown too.
//!
//! Only regular files are read (issue 33, item 11): a FIFO given as a
//! calibration profile blocked in `open()` until a writer came, deaf to
//! SIGTERM, and a device or a directory is no file of settings either. The
//! kind is looked at before the file is opened, and again on the open
//! handle (opened without blocking), so a FIFO swapped in between cannot
//! hold the reader either.

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

/// The whole file, or an error naming `limit` if it holds more, or naming
/// its kind if it is not a regular file.
pub fn read_bounded(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    regular(&std::fs::metadata(path)?)?;
    let f = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(O_NONBLOCK)
            .open(path)?
    };
    regular(&f.metadata()?)?;
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

/// `O_NONBLOCK` on Linux (all architectures misura builds for): opening a
/// FIFO returns at once instead of waiting for a writer.
const O_NONBLOCK: i32 = 0o4000;

/// An error unless `m` is a regular file's, naming what it is instead.
fn regular(m: &std::fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    let kind = if t.is_file() {
        return Ok(());
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{kind}, not a regular file: give the path of a regular file"),
    ))
}

/// As [`read_bounded`], as UTF-8 text.
pub fn read_string_bounded(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read_bounded(path, limit)?)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("misura-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_large_file_is_refused_at_the_limit() {
        let d = scratch("large");
        let p = d.join("big");
        std::fs::write(&p, vec![b'x'; 1001]).unwrap();
        let e = read_bounded(&p, 1000).unwrap_err();
        assert!(e.to_string().contains("1000-byte limit"), "{e}");
        assert_eq!(read_bounded(&p, 1001).unwrap().len(), 1001);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn devices_fifos_and_directories_are_refused_without_blocking() {
        let d = scratch("kinds");
        let fifo = d.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        let mut cases = vec![
            (std::path::PathBuf::from("/dev/zero"), "character device"),
            (std::path::PathBuf::from("/dev/null"), "character device"),
            (d.clone(), "directory"),
        ];
        if made.is_ok_and(|s| s.success()) {
            cases.push((fifo, "FIFO"));
        }
        for (p, kind) in cases {
            let t = std::time::Instant::now();
            let e = read_bounded(&p, 1000).unwrap_err().to_string();
            assert!(
                e.contains(kind) && e.contains("not a regular file"),
                "{}: {e}",
                p.display()
            );
            assert!(t.elapsed() < std::time::Duration::from_secs(1));
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}
