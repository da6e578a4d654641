//! Writing the files a user names (issue 13, findings 9–11): a whole
//! output replaces a regular file atomically (a temporary neighbour, synced,
//! renamed over it), so a kill leaves the old file or the new one, never a
//! half or an empty one; a special file (`/dev/stdout`, a FIFO, a device) or
//! a symbolic link is written in place and never replaced; every write is
//! checked. A per-row log ([`RowLog`]) reaches the file at least once a
//! second, in whole rows.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Check, before anything is measured, that `path` can be written, without
/// creating or changing it.
pub fn check_writable(path: &Path) -> io::Result<()> {
    if std::fs::symlink_metadata(path).is_ok() {
        // Opening for append neither truncates nor moves anything.
        return OpenOptions::new().append(true).open(path).map(drop);
    }
    let probe = neighbour(path, "check")?;
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map(drop)?;
    std::fs::remove_file(&probe)
}

/// Write `path` whole with `fill`: atomically for a regular file (or a new
/// one), in place for anything else, the link's target for a link.
pub fn replace(path: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => match std::fs::canonicalize(path) {
            Ok(t) => t,
            // A link to nothing yet: create its target through it.
            Err(_) => return in_place(path, fill),
        },
        _ => path.to_path_buf(),
    };
    match std::fs::metadata(&target) {
        Ok(m) if !m.is_file() => return in_place(&target, fill),
        _ => {}
    }
    let tmp = neighbour(&target, "tmp")?;
    let written = (|| {
        let file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        if let Ok(m) = std::fs::metadata(&target) {
            // The replacement keeps the old file's permissions.
            let _ = file.set_permissions(m.permissions());
        }
        let mut w = BufWriter::new(file);
        fill(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_data()?;
        std::fs::rename(&tmp, &target)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

fn in_place(path: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    let mut w = BufWriter::new(file);
    fill(&mut w)?;
    w.flush()
}

/// A hidden file beside `path` for this process.
fn neighbour(path: &Path, what: &str) -> io::Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = std::ffi::OsString::from(".");
    tmp.push(name);
    tmp.push(format!(".misura-{what}-{}", std::process::id()));
    Ok(dir.join(tmp))
}

/// A per-row log (`--frames`): rows are formatted whole and then handed to
/// a buffer, which reaches the file when full and at least once a second
/// ([`RowLog::row`] and [`RowLog::tick`]), so a kill loses at most the last
/// second and never leaves half a row. The first write error is kept and
/// later rows are dropped.
pub struct RowLog {
    path: PathBuf,
    out: BufWriter<File>,
    row: Vec<u8>,
    last_flush: Instant,
    dirty: bool,
    error: Option<String>,
}

/// How long a written row may wait in memory.
const FLUSH_EVERY: Duration = Duration::from_secs(1);

impl RowLog {
    pub fn new(path: PathBuf, file: File) -> RowLog {
        RowLog {
            path,
            out: BufWriter::with_capacity(256 * 1024, file),
            row: Vec::with_capacity(256),
            last_flush: Instant::now(),
            dirty: false,
            error: None,
        }
    }

    /// Append one row (or the header) that `fill` formats.
    pub fn row(&mut self, fill: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) {
        if self.error.is_some() {
            return;
        }
        self.row.clear();
        let res = fill(&mut self.row).and_then(|_| self.out.write_all(&self.row));
        self.dirty = true;
        self.settle(res);
        self.tick();
    }

    /// Flush if a row has waited a second; call this from the run's loop
    /// when no rows come.
    pub fn tick(&mut self) {
        if self.dirty && self.error.is_none() && self.last_flush.elapsed() >= FLUSH_EVERY {
            let res = self.out.flush();
            self.last_flush = Instant::now();
            self.dirty = false;
            self.settle(res);
        }
    }

    fn settle(&mut self, res: io::Result<()>) {
        if let Err(e) = res {
            self.error = Some(format!("{}: {e}", self.path.display()));
        }
    }

    /// Flush the rest; the first error of the whole log, if any.
    pub fn finish(&mut self) -> Option<String> {
        if self.error.is_none() {
            let res = self.out.flush();
            self.settle(res);
        }
        self.error.clone()
    }
}

/// An output file (a per-row log, a result file) that cannot be opened or
/// created: what it is for, its path, and what the host said (in the
/// message, not as a source). An output error (exit 6).
#[derive(Debug, thiserror::Error)]
#[error("cannot write the {what} to {}: {error}; choose a writable path", path.display())]
pub struct CannotWrite {
    pub what: &'static str,
    pub path: PathBuf,
    pub error: io::Error,
}

impl crate::exit::Classed for CannotWrite {
    /// An output error.
    fn class(&self) -> Option<crate::exit::Class> {
        Some(crate::exit::Class::Output)
    }
}

/// The error for an output file that cannot be opened (exit 6).
pub fn cannot_write(what: &'static str, p: &Path, error: io::Error) -> CannotWrite {
    CannotWrite {
        what,
        path: p.to_path_buf(),
        error,
    }
}

/// Open a per-row log of a command (`--frames`) before it measures
/// anything; it is written during the run, at least once a second.
pub fn open_rows(
    path: &Option<PathBuf>,
    what: &'static str,
) -> Result<Option<RowLog>, CannotWrite> {
    let Some(p) = path else { return Ok(None) };
    let f = File::create(p).map_err(|e| cannot_write(what, p, e))?;
    Ok(Some(RowLog::new(p.clone(), f)))
}

/// A result file (`--export-json`, `--export-csv`) checked writable but
/// not yet touched: a run that fails or is killed leaves an earlier file of
/// that name as it was.
pub struct Export {
    path: PathBuf,
}

impl Export {
    /// Check the path is writable; nothing is created or changed until the
    /// result is written whole at the end.
    pub fn open(path: &Option<PathBuf>, what: &'static str) -> Result<Option<Export>, CannotWrite> {
        let Some(p) = path else { return Ok(None) };
        check_writable(p).map_err(|e| cannot_write(what, p, e))?;
        Ok(Some(Export { path: p.clone() }))
    }

    /// Write the file whole (atomically for a regular file); the error
    /// names the file.
    pub fn write(self, f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), String> {
        replace(&self.path, f).map_err(|e| format!("{}: {e}", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::Classed;
    use std::os::unix::fs::symlink;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("misura-outfile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_regular_file_is_replaced_whole_and_a_link_is_kept() {
        let d = dir("replace");
        let real = d.join("real.json");
        std::fs::write(&real, "old").unwrap();
        let link = d.join("link.json");
        symlink(&real, &link).unwrap();
        replace(&link, |w| w.write_all(b"new")).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        // A failing writer leaves the old content and no temporary file.
        let e = replace(&real, |w| {
            w.write_all(b"half")?;
            Err(io::Error::other("disk gone"))
        });
        assert!(e.is_err());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 2);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_device_is_written_in_place_and_its_errors_are_reported() {
        use std::os::unix::fs::FileTypeExt;
        replace(Path::new("/dev/null"), |w| w.write_all(b"x")).unwrap();
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
        let e = replace(Path::new("/dev/full"), |w| w.write_all(&[0u8; 100_000]));
        assert!(e.is_err());
        assert!(std::fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device());
    }

    /// The words and the class an unwritable file had as a
    /// `Failure::Output`.
    #[test]
    fn an_unwritable_file_keeps_its_words_and_class() {
        let p = Some(PathBuf::from("/nonexistent/dir/x.csv"));
        let host = File::create(p.as_ref().unwrap()).unwrap_err().to_string();
        let words = format!(
            "cannot write the per-probe log to /nonexistent/dir/x.csv: {host}; choose a writable path"
        );
        let rows = open_rows(&p, "per-probe log").err().unwrap();
        let json = Export::open(&p, "JSON result").err().unwrap();
        assert_eq!(
            json.to_string(),
            words.replace("per-probe log", "JSON result")
        );
        assert_eq!(json.class(), Some(crate::exit::Class::Output));
        assert_eq!(rows.to_string(), words);
        assert_eq!(rows.class(), Some(crate::exit::Class::Output));
        assert!(std::error::Error::source(&rows).is_none());
        let f = crate::exit::Failure::from(rows);
        assert!(
            matches!(&f, crate::exit::Failure::Output(w) if *w == words),
            "{f:?}"
        );
        assert_eq!(f.class(), crate::exit::Class::Output);
    }

    #[test]
    fn checking_a_path_creates_nothing() {
        let d = dir("check");
        let p = d.join("out.json");
        check_writable(&p).unwrap();
        assert!(!p.exists());
        assert!(check_writable(&d.join("no/such/dir/out.json")).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn rows_reach_the_file_whole_within_a_second() {
        let d = dir("rows");
        let p = d.join("rows.csv");
        let mut log = RowLog::new(p.clone(), File::create(&p).unwrap());
        log.row(|w| writeln!(w, "a,b"));
        log.row(|w| writeln!(w, "1,2"));
        std::thread::sleep(FLUSH_EVERY + Duration::from_millis(50));
        log.tick();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "a,b\n1,2\n");
        assert!(log.finish().is_none());
        let mut full = RowLog::new(
            PathBuf::from("/dev/full"),
            OpenOptions::new().write(true).open("/dev/full").unwrap(),
        );
        full.row(|w| writeln!(w, "x"));
        assert!(full.finish().unwrap().contains("/dev/full"));
        let _ = std::fs::remove_dir_all(&d);
    }
}
