//! `--netns`: the network namespace a command runs in (entered by
//! `misura_run::netns::enter_netns` before any socket is opened).

/// `--netns`, for every command that can run inside a network namespace.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct NetnsArgs {
    /// Run inside this network namespace (e.g. one `misura lab up` made).
    #[arg(long, value_name = "NS")]
    pub netns: Option<String>,
}
