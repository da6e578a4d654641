//! Entering the network namespace a command was asked to run in
//! (`--netns`, the binary's `NetnsArgs`), before any socket is opened.

use misura_sys::SysError;

/// Enter `netns`, if one is named.
pub fn enter_netns(netns: &Option<String>) -> Result<(), SysError> {
    if let Some(ns) = netns {
        misura_sys::netns::enter(ns)?;
    }
    Ok(())
}
