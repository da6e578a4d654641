//! `misura agent`'s flags (the `misura-agent` library takes them as `Options`).

use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(clap::Args, Debug, Clone)]
pub struct AgentArgs {
    /// TOML configuration: the agent's name and labels, its targets and
    /// sinks (see examples/agent.toml and examples/fleet-agent.toml).
    #[arg(long, value_name = "FILE", required_unless_present = "config_url")]
    pub config: Option<PathBuf>,
    /// Do not create missing ClickHouse tables (misura_runs, misura_probes):
    /// for a database whose tables someone else manages. The agent still
    /// makes its own staging tables (misura_runs_in_TAG, ENGINE = Memory;
    /// see docs/fleet.md), so its user needs CREATE TABLE there.
    #[arg(long)]
    pub no_create: bool,
    /// Fleet template URL (http:// or https://): its [[target]] tables that
    /// select this agent (by `agents = [NAME…]` or `labels = {…}`) run beside
    /// the local file's. Fetched with If-None-Match on every
    /// --template-interval and on SIGHUP; the last good copy is kept on disk.
    #[arg(long, value_name = "URL")]
    pub config_url: Option<String>,
    /// How often the fleet template is fetched.
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    pub template_interval: crate::shared::units::DurationArg,
    /// Address and port of the HTTP endpoint (/metrics, /healthz).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:9862")]
    pub listen: SocketAddr,
    /// Check the configuration, print the targets and exit.
    #[arg(long)]
    pub check: bool,
    #[command(flatten)]
    pub ns: crate::shared::common_flags::NetnsArgs,
}

impl AgentArgs {
    /// The flags as the agent library takes them, with the store the
    /// global flags chose.
    pub fn options(&self) -> misura_agent::Options {
        misura_agent::Options {
            config: self.config.clone(),
            config_url: self.config_url.clone(),
            template_interval: self.template_interval.span(),
            listen: self.listen,
            no_create: self.no_create,
            netns: self.ns.netns.clone(),
            store: crate::shared::store::config(),
        }
    }
}
