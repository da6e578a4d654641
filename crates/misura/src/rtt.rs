//! `misura rtt`: the STAMP Session-Sender.

use crate::cli::RttArgs;
use anyhow::Result;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

pub fn run(_args: &RttArgs, _stop: &Arc<AtomicUsize>) -> Result<i32> {
    anyhow::bail!("misura rtt is not built yet")
}
