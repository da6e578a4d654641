//! `misura reflect`: the STAMP Session-Reflector (UDP) and the raw-probe reflector.

use crate::cli::ReflectArgs;
use anyhow::Result;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

pub fn run(_args: &ReflectArgs, _stop: &Arc<AtomicUsize>) -> Result<()> {
    anyhow::bail!("misura reflect is not built yet")
}
