//! Entering the network namespace a command was asked to run in (`--netns`),
//! before any socket is opened.

use anyhow::Result;

pub fn enter_netns(netns: &Option<String>) -> Result<()> {
    if let Some(ns) = netns {
        misura_sys::netns::enter(ns)?;
    }
    Ok(())
}
