//! Entering the network namespace a command was asked to run in (`--netns`),
//! before any socket is opened.

use misura_sys::SysError;

/// Enter `netns`, if one is named.
pub fn enter_netns(netns: &Option<String>) -> Result<(), SysError> {
    if let Some(ns) = netns {
        misura_sys::netns::enter(ns)?;
    }
    Ok(())
}

/// `--netns`, for every command that can run inside a network namespace.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct NetnsArgs {
    /// Run inside this network namespace (e.g. one `misura lab up` made).
    #[arg(long, value_name = "NS")]
    pub netns: Option<String>,
}
