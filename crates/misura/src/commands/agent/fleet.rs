//! Central configuration: a fleet template fetched over HTTP(S)
//! (`--config-url`), conditionally (If-None-Match with the last ETag), on an
//! interval and on SIGHUP. Its `[[target]]` tables that select this agent
//! (`agents = [...]`, `labels = {...}`) run beside the local file's. The last
//! good copy is kept on disk beside the store, so an agent that starts while
//! the template server is down runs what it ran before. A template that
//! fails to fetch or parse leaves the running configuration in place and is
//! counted; a broken version is reported once (its ETag is remembered).

use super::config::{self, Config, ConfigError, Target};
use crate::shared::files::CONFIG_MAX;
use crate::shared::http_client::Client;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What one fetch brought.
pub enum Fetch {
    /// A new template, checked against this agent's configuration.
    New,
    NotModified,
    Failed(String),
}

pub struct Template {
    url: String,
    client: Client,
    cache: PathBuf,
    interval: Duration,
    next: Instant,
    etag: Option<String>,
    /// The template in force (fetched or from the cache).
    text: Option<String>,
}

impl Template {
    /// `cache` holds the last good copy; it is read now if present.
    pub fn new(url: &str, cache: PathBuf, interval: Duration) -> Template {
        let text = crate::shared::files::read_string_bounded(&cache, CONFIG_MAX).ok();
        if text.is_some() {
            eprintln!(
                "misura agent: fleet template: last good copy read from {}",
                cache.display()
            );
        }
        Template {
            url: url.to_string(),
            client: Client::new(Duration::from_secs(10), CONFIG_MAX),
            cache,
            interval,
            next: Instant::now(),
            etag: None,
            text,
        }
    }

    pub fn due(&self) -> bool {
        Instant::now() >= self.next
    }

    /// The targets of the template in force that select `local`'s agent,
    /// joined to the local ones (names must not clash).
    pub fn join(&self, local: Config) -> Result<Config, ConfigError> {
        match &self.text {
            None => Ok(local),
            Some(t) => {
                let more = targets_of(t, &self.url, &local)?;
                join(local, more, &self.url)
            }
        }
    }

    /// Fetch now (and schedule the next fetch). A new template is kept only
    /// when it parses and joins `local` without clashes.
    pub fn fetch(&mut self, local: &Config) -> Fetch {
        self.next = Instant::now() + self.interval;
        let reply = match self.client.get(&self.url, self.etag.as_deref()) {
            Ok(r) => r,
            Err(e) => return Fetch::Failed(format!("{}: {e}", self.url)),
        };
        match reply.status {
            304 => return Fetch::NotModified,
            200 => {}
            s => {
                return Fetch::Failed(format!(
                    "{}: the server answered {s}: {}",
                    self.url,
                    reply.reason()
                ))
            }
        }
        // Reported once: the same broken version is not parsed again.
        self.etag = reply.etag.clone();
        let text = match String::from_utf8(reply.body) {
            Ok(t) => t,
            Err(_) => {
                return Fetch::Failed(format!("{}: the template is not UTF-8 text", self.url))
            }
        };
        if let Err(e) =
            targets_of(&text, &self.url, local).and_then(|t| join(local.clone(), t, &self.url))
        {
            return Fetch::Failed(e.0);
        }
        if let Err(e) =
            crate::shared::outfile::replace(&self.cache, |w| w.write_all(text.as_bytes()))
        {
            eprintln!(
                "misura agent: fleet template: cannot keep a copy in {}: {e}",
                self.cache.display()
            );
        }
        self.text = Some(text);
        Fetch::New
    }
}

fn targets_of(text: &str, url: &str, local: &Config) -> Result<Vec<Target>, ConfigError> {
    let origin = url
        .rsplit('/')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or(url);
    config::parse_template(text, origin, &local.name, &local.labels)
}

fn join(mut local: Config, more: Vec<Target>, url: &str) -> Result<Config, ConfigError> {
    for t in more {
        if local.targets.iter().any(|l| l.name == t.name) {
            return Err(ConfigError(format!(
                "{url}: target `{}` is also in the local configuration: names must be unique",
                t.name
            )));
        }
        local.targets.push(t);
    }
    if local.targets.len() > config::MAX_TARGETS {
        return Err(ConfigError(format!(
            "{url}: {} targets with the local ones: at most {}",
            local.targets.len(),
            config::MAX_TARGETS
        )));
    }
    Ok(local)
}
