//! The store hook: keeping every run in the results store (read back by
//! `commands::store`), where the global flags say. The binary's, as the
//! global flags are: no library keeps a run.
//!
//! A run is kept after its result was printed and exported, so a store that
//! cannot be opened or written costs a warning, never the result.

use crate::shared::exit::Failure;
use anyhow::Result;
pub use misura_store::StoreConfig;
use misura_store::{facts, Store, StoreError};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::OnceLock;

static CONFIG: OnceLock<StoreConfig> = OnceLock::new();

pub fn configure(path: Option<PathBuf>, no_store: bool) {
    let path = path.unwrap_or_else(|| misura_store::default_path(dirs::data_dir()));
    let _ = CONFIG.set(StoreConfig {
        path,
        enabled: !no_store,
    });
}

/// Where runs go, as the global flags set it.
pub fn config() -> StoreConfig {
    CONFIG.get().cloned().unwrap_or(StoreConfig {
        path: misura_store::default_path(dirs::data_dir()),
        enabled: false,
    })
}

/// Keep a run's result (its JSON value). Prints "stored as run N" on stderr
/// unless quiet. A store that cannot be opened or written costs a warning.
pub fn keep_value(subcommand: &str, target: &str, v: &Value, quiet: bool) {
    let c = config();
    if !c.enabled {
        return;
    }
    match Store::open(&c.path).and_then(|s| s.save(&facts(subcommand, target, v), v)) {
        Ok(id) if !quiet => log::info!(
            "stored as run {id} in {} (misura show {id})",
            c.path.display()
        ),
        Ok(_) => {}
        Err(e) => log::warn!(
            "misura: warning: the result was not kept: {} (use --no-store to skip the store)",
            crate::shared::words::said(&e)
        ),
    }
}

pub fn open_for_reading() -> Result<Store> {
    let c = config();
    if !c.path.exists() {
        return Err(Failure::Usage(format!(
            "no results store at {} yet: measurements are kept there by default (or give --store PATH)",
            c.path.display()
        ))
        .into());
    }
    Store::open_read_only(&c.path).map_err(|e| store_failure(e).into())
}

/// A store problem as the exit code and message a user needs: a run that
/// is not there is a usage error (2); a store that cannot be used is an
/// output problem (6), and one whose contents do not read is called
/// damaged, with what to do.
pub fn store_failure(e: StoreError) -> Failure {
    match e {
        StoreError::NoSuchRun(_) => Failure::Output(e.to_string()),
        StoreError::Sql(ref s) if looks_damaged(&s.to_string()) => Failure::Output(format!(
            "the results store at {} looks damaged ({s}): move it aside (mv FILE FILE.bad) or give another --store",
            config().path.display()
        )),
        other => Failure::Output(
            crate::shared::words::said(&other),
        ),
    }
}

fn looks_damaged(msg: &str) -> bool {
    let m = msg.to_ascii_lowercase();
    ["utf-8", "utf8", "malformed", "not a database", "corrupt"]
        .iter()
        .any(|k| m.contains(k))
}

/// One stored run's result, for `misura report RUN`.
pub fn load_run(id: i64) -> Result<Value> {
    let s = open_for_reading()?;
    let (_, v) = s.get(id).map_err(store_failure)?;
    Ok(v)
}
