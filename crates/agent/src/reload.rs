//! Reloading while the agent runs: the local file again on SIGHUP, the
//! fleet template on SIGHUP and every --template-interval. A
//! configuration with errors is refused and the running one kept.

use super::config::{self, Config};
use super::fleet;
use super::schedule::{reconcile, slots_for, Agent};
use crate::load_local;

impl Agent<'_> {
    /// SIGHUP: read the configuration again; one with errors is refused and
    /// the running one kept.
    pub(super) fn reload(&mut self) {
        match load_local(self.options).and_then(|c| self.with_template(c)) {
            Ok(c) => {
                log::info!("misura agent: reloaded: {} targets", c.targets.len());
                if c.sinks != self.config.sinks || c.name != self.config.name {
                    log::warn!("misura agent: changes to [[sink]] or [agent] name take effect when the agent restarts");
                }
                let mut g = self.shared.lock().unwrap_or_else(|p| p.into_inner());
                reconcile(&mut g.0, &c);
                g.1.reloads_ok += 1;
                drop(g);
                self.slots = slots_for(&c, &mut self.slots);
                self.config = c;
            }
            Err(e) => {
                log::error!("misura agent: reload refused, keeping the running configuration: {e}");
                self.shared
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .1
                    .reloads_failed += 1;
            }
        }
    }

    /// The fleet template's targets joined to the local ones.
    fn with_template(&mut self, c: Config) -> Result<Config, config::ConfigError> {
        match &self.template {
            Some(t) => t.join(c),
            None => Ok(c),
        }
    }

    /// Start a request for the fleet template (when one is configured);
    /// `template_done` applies what it brings.
    pub(super) fn fetch_template(&mut self) {
        if let Some(t) = &mut self.template {
            t.start();
        }
    }

    /// Apply what the template request brought, when it has ended; a
    /// failure keeps the running configuration and is counted.
    pub(super) fn template_done(&mut self) {
        let options = self.options;
        let Some(t) = &mut self.template else { return };
        let Some(outcome) = t.poll(|| load_local(options)) else {
            return;
        };
        let applied = match outcome {
            fleet::Fetch::New(c) => Ok(c),
            fleet::Fetch::NotModified => {
                self.shared
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .1
                    .template_not_modified += 1;
                return;
            }
            fleet::Fetch::Failed(e) => Err(config::ConfigError(e)),
        };
        let mut g = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        match applied {
            Ok(c) => {
                g.1.template_ok += 1;
                log::info!(
                    "misura agent: fleet template applied: {} targets",
                    c.targets.len()
                );
                reconcile(&mut g.0, &c);
                drop(g);
                self.slots = slots_for(&c, &mut self.slots);
                self.config = c;
            }
            Err(e) => {
                g.1.template_failed += 1;
                log::error!(
                    "misura agent: fleet template refused, keeping the running configuration: {e}"
                );
            }
        }
    }
}
