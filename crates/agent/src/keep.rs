//! Every result the agent produces goes first into its local store and the
//! outbox (one transaction), under a run id of its own, before any sink sees
//! it. A store that cannot take it (a full disk, a damaged file) keeps the
//! result in memory and stops new measurements, saying why, until the store
//! takes it: results are never dropped for lack of room.

use misura_store::outbox::NewResult;
use misura_store::Store;
use serde_json::Value;
use std::collections::VecDeque;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A result not yet in the store.
struct Unsaved {
    run_id: String,
    target: String,
    kind: String,
    created_ns: i64,
    value: Value,
    probes: Option<String>,
}

pub struct Keeper {
    store: Store,
    agent: String,
    unsaved: VecDeque<Unsaved>,
    last_warning: Option<Instant>,
    /// Saves that failed (counted in /metrics).
    pub errors: u64,
    /// Where runs log their probes (made at the first use).
    probes: Option<PathBuf>,
    /// The sinks whose bounds (max_waiting, max_age) each new result checks,
    /// so they hold while a sink is down or backing off.
    sinks: Vec<super::sinks::Sink>,
    last_drop_warning: Option<Instant>,
}

/// A new run id: 128 random bits in hex (from the kernel's generator;
/// the time, process and a counter if that cannot be read).
pub fn new_run_id() -> String {
    let mut b = [0u8; 16];
    let random = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b));
    if random.is_err() {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let t = super::archive::now_ns() as u64;
        b[..8].copy_from_slice(&t.to_le_bytes());
        b[8..12].copy_from_slice(&std::process::id().to_le_bytes());
        b[12..].copy_from_slice(&(N.fetch_add(1, Ordering::Relaxed) as u32).to_le_bytes());
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl Keeper {
    pub fn open(path: &Path, agent: &str) -> Result<Keeper, misura_store::StoreError> {
        Ok(Keeper {
            store: Store::open(path)?,
            agent: agent.to_string(),
            unsaved: VecDeque::new(),
            last_warning: None,
            errors: 0,
            probes: None,
            sinks: Vec::new(),
            last_drop_warning: None,
        })
    }

    /// A new per-probe log file for one run of `target`, in the private
    /// directory beside the store.
    pub fn frames_file(&mut self, target: &str) -> std::io::Result<PathBuf> {
        let dir = match &self.probes {
            Some(d) => d.clone(),
            None => {
                let d = probes_dir(self.store.path())?;
                self.probes = Some(d.clone());
                d
            }
        };
        frames_file(&dir, target)
    }

    /// The sinks whose bounds each kept result enforces.
    pub fn bound_by(&mut self, sinks: &[super::sinks::Sink]) {
        self.sinks = sinks.to_vec();
    }

    /// Room for one more result within every sink's bounds (the oldest
    /// waiting beyond `max_waiting - 1` or `max_age` dropped), so that
    /// `waiting` never exceeds `max_waiting`, not even for a moment.
    fn enforce_bounds(&mut self) {
        for s in &self.sinks {
            let room = super::sinks::Sink {
                max_waiting: (s.max_waiting - 1).max(0),
                ..s.clone()
            };
            match super::archive::enforce(&mut self.store, &room) {
                Ok(0) => {}
                Ok(n) => {
                    // Said at most once a minute: a sink down for days drops
                    // one result per run.
                    if self
                        .last_drop_warning
                        .is_none_or(|t| t.elapsed() > Duration::from_secs(60))
                    {
                        log::warn!("misura agent: sink {}: {n} results dropped, more or older than its max_waiting/max_age allow (counted in misura_sink_dropped_total)", s.name);
                        self.last_drop_warning = Some(Instant::now());
                    }
                }
                Err(e) => log::error!("misura agent: sink {}: store: {e}", s.name),
            }
        }
    }

    pub fn store(&mut self) -> &mut Store {
        &mut self.store
    }

    /// New measurements wait while a result is not in the store.
    pub fn blocked(&self) -> bool {
        !self.unsaved.is_empty()
    }

    /// Queue `value` (target `target` of kind `kind`) and save what waits.
    pub fn keep(&mut self, target: &str, kind: &str, value: Value, probes: Option<String>) {
        self.unsaved.push_back(Unsaved {
            run_id: new_run_id(),
            target: target.to_string(),
            kind: kind.to_string(),
            created_ns: super::archive::now_ns(),
            value,
            probes,
        });
        self.flush();
    }

    /// Save the waiting results in order; stop at the first failure.
    pub fn flush(&mut self) {
        while !self.unsaved.is_empty() {
            self.enforce_bounds();
            let Some(u) = self.unsaved.front() else { break };
            let facts = misura_store::facts(&u.kind, &u.target, &u.value);
            let r = NewResult {
                run_id: &u.run_id,
                agent: &self.agent,
                target: &u.target,
                kind: &u.kind,
                created_ns: u.created_ns,
                probes: u.probes.as_deref(),
            };
            match self.store.keep_for_sinks(&facts, &u.value, &r) {
                Ok(_) => {
                    self.unsaved.pop_front();
                }
                Err(e) => {
                    self.errors += 1;
                    let due = self
                        .last_warning
                        .is_none_or(|t| t.elapsed() > Duration::from_secs(60));
                    if due {
                        log::error!(
                            "misura agent: cannot keep a result in {}: {e}; new measurements wait until it can ({} results held in memory)",
                            self.store.path().display(),
                            self.unsaved.len()
                        );
                        self.last_warning = Some(Instant::now());
                    }
                    return;
                }
            }
        }
    }
}

/// The agent's private directory for per-probe logs, beside its store
/// (`results.probes/` for `results.sqlite`): made mode 0700 if missing,
/// refused if the name is anything but a directory (a symlink included),
/// and emptied of the logs a killed agent left.
pub fn probes_dir(store: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let dir = store.with_extension("probes");
    match std::fs::symlink_metadata(&dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(std::io::Error::other(format!(
                "{} exists and is not a directory: remove it",
                dir.display()
            )))
        }
        Err(_) => std::fs::DirBuilder::new().mode(0o700).create(&dir)?,
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    for e in std::fs::read_dir(&dir)?.flatten() {
        if e.file_name().to_string_lossy().ends_with(".csv") {
            let _ = std::fs::remove_file(e.path());
        }
    }
    Ok(dir)
}

/// A new per-probe log for one run of `target` in `dir`, created here
/// (O_CREAT|O_EXCL, which never follows a symlink, mode 0600) before the
/// child writes it; read back whole (bounded) and removed.
pub fn frames_file(dir: &Path, target: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let path = dir.join(format!(
        "{}-{target}-{}.csv",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    Ok(path)
}

/// Largest per-probe log read back (10 million probes of ~200 bytes would
/// not fit: such a target's probes are not archived, its run is).
const MAX_FRAMES: u64 = 256 << 20;

pub fn read_frames(path: &Path) -> Option<String> {
    let r = misura_cli::files::read_string_bounded(path, MAX_FRAMES);
    let _ = std::fs::remove_file(path);
    match r {
        Ok(s) => Some(s),
        Err(e) => {
            log::warn!(
                "misura agent: per-probe log {}: {e}; the run is archived without its probes",
                path.display()
            );
            None
        }
    }
}
