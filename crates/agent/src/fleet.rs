//! Central configuration: a fleet template fetched over HTTP(S)
//! (`--config-url`), conditionally (If-None-Match with the last ETag), on an
//! interval and on SIGHUP. Its `[[target]]` tables that select this agent
//! (`agents = [...]`, `labels = {...}`) run beside the local file's. The last
//! good copy is kept on disk beside the store, so an agent that starts while
//! the template server is down runs what it ran before. A template that
//! fails to fetch or parse leaves the running configuration in place and is
//! counted. Only the ETag of a template that applied is sent back: a
//! refused version is fetched whole again, so once the cause is fixed
//! (locally, then SIGHUP) it applies.
//!
//! The request runs on a thread of its own (at most `FETCH_TIMEOUT`), never
//! on the scheduler's: a stalled template server delays no measurement.

use super::config::{self, Config, ConfigError, Target};
use crate::http_client::Client;
use misura_cli::files::CONFIG_MAX;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The longest one template request may take, whole.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

type Reply = Result<crate::http_client::Reply, String>;

/// What one fetch brought.
pub enum Fetch {
    /// A new template, joined to this agent's local configuration.
    New(Config),
    NotModified,
    Failed(String),
}

pub struct Template {
    url: String,
    client: Client,
    cache: PathBuf,
    interval: Duration,
    next: Instant,
    /// The ETag of the template in force (never of a refused one).
    etag: Option<String>,
    /// The template in force (fetched or from the cache).
    text: Option<String>,
    /// The request under way, on its own thread.
    under_way: Option<mpsc::Receiver<Reply>>,
}

impl Template {
    /// `cache` holds the last good copy; it is read now if present.
    pub fn new(url: &str, cache: PathBuf, interval: Duration) -> Template {
        let text = misura_cli::files::read_string_bounded(&cache, CONFIG_MAX).ok();
        if text.is_some() {
            log::info!(
                "misura agent: fleet template: last good copy read from {}",
                cache.display()
            );
        }
        Template {
            url: url.to_string(),
            client: Client::new(FETCH_TIMEOUT, CONFIG_MAX),
            cache,
            interval,
            next: Instant::now(),
            etag: None,
            text,
            under_way: None,
        }
    }

    pub fn due(&self) -> bool {
        Instant::now() >= self.next && self.under_way.is_none()
    }

    /// Start a request on a thread of its own (and schedule the next one);
    /// nothing when one is under way.
    pub fn start(&mut self) {
        if self.under_way.is_some() {
            return;
        }
        self.next = Instant::now() + self.interval;
        let (tx, rx) = mpsc::channel();
        let (client, url, etag) = (self.client.clone(), self.url.clone(), self.etag.clone());
        let spawned = std::thread::Builder::new()
            .name("agent-template".into())
            .spawn(move || {
                let _ = tx.send(client.get(&url, etag.as_deref()));
            });
        match spawned {
            Ok(_) => self.under_way = Some(rx),
            Err(e) => log::error!(
                "misura agent: fleet template: cannot start a thread for the request: {e}"
            ),
        }
    }

    /// The request under way, when it has ended: what it brought, checked
    /// against `local`.
    pub fn poll(&mut self, local: impl FnOnce() -> Result<Config, ConfigError>) -> Option<Fetch> {
        let reply = match self.under_way.as_ref()?.try_recv() {
            Ok(r) => r,
            Err(mpsc::TryRecvError::Empty) => return None,
            Err(mpsc::TryRecvError::Disconnected) => {
                Err("the request's thread ended without an answer".into())
            }
        };
        self.under_way = None;
        Some(match local() {
            Ok(l) => self.accept(reply, &l),
            Err(e) => Fetch::Failed(format!("the local configuration has errors: {e}")),
        })
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

    /// What a request brought: a new template is kept only when it parses
    /// and joins `local` without clashes.
    fn accept(&mut self, reply: Reply, local: &Config) -> Fetch {
        let reply = match reply {
            Ok(r) => r,
            Err(e) => return Fetch::Failed(format!("fetching {}: {e}", self.url)),
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
        let text = match String::from_utf8(reply.body) {
            Ok(t) => t,
            Err(_) => {
                return Fetch::Failed(format!("{}: the template is not UTF-8 text", self.url))
            }
        };
        let joined = match targets_of(&text, &self.url, local)
            .and_then(|t| join(local.clone(), t, &self.url))
        {
            Ok(c) => c,
            Err(e) => return Fetch::Failed(e.0),
        };
        if let Err(e) = misura_cli::outfile::replace(&self.cache, |w| w.write_all(text.as_bytes()))
        {
            log::warn!(
                "misura agent: fleet template: cannot keep a copy in {}: {e}",
                self.cache.display()
            );
        }
        self.text = Some(text);
        self.etag = reply.etag;
        Fetch::New(joined)
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
    if let Some(e) =
        config::too_many_for_one_agent(&format!("{url} with the local file"), local.targets.len())
    {
        return Err(e);
    }
    Ok(local)
}
