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
        })
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
        while let Some(u) = self.unsaved.front() {
            let facts = crate::shared::store::facts(&u.kind, &u.target, &u.value);
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
                        eprintln!(
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

/// The per-probe log of one run: a file the child writes, read back whole
/// (bounded) and removed.
pub fn frames_path(target: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "misura-agent-{}-{target}-{}.csv",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Largest per-probe log read back (10 million probes of ~200 bytes would
/// not fit: such a target's probes are not archived, its run is).
const MAX_FRAMES: u64 = 256 << 20;

pub fn read_frames(path: &Path) -> Option<String> {
    let r = crate::shared::files::read_string_bounded(path, MAX_FRAMES);
    let _ = std::fs::remove_file(path);
    match r {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!(
                "misura agent: per-probe log {}: {e}; the run is archived without its probes",
                path.display()
            );
            None
        }
    }
}
