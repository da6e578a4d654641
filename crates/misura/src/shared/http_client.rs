//! A blocking HTTP(S) client for the agent's sinks and its fleet template
//! (ureq: no async runtime). Every request has a whole-exchange deadline and
//! every response body is read up to a bound, so a sink or template server
//! that stalls or answers without end cannot hold or fill the agent.

use std::time::Duration;

/// A response: status, ETag (when the server sent one) and the body, cut
/// to the bound the caller gave.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub etag: Option<String>,
    pub body: Vec<u8>,
}

impl Reply {
    /// The first line of the body, for an error message (servers put their
    /// reason there: ClickHouse's `Code: 60, e.displayText() = …`).
    pub fn reason(&self) -> String {
        let text = String::from_utf8_lossy(&self.body);
        let line = text.trim().lines().next().unwrap_or("").to_string();
        line.chars().take(300).collect()
    }
}

/// One client per sink or template URL (it keeps its connection open).
#[derive(Clone)]
pub struct Client {
    agent: ureq::Agent,
    max_body: u64,
}

impl Client {
    /// A client whose requests take at most `timeout` each and whose
    /// response bodies are read up to `max_body` bytes.
    pub fn new(timeout: Duration, max_body: u64) -> Client {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .max_redirects(3)
            .build();
        Client {
            agent: config.into(),
            max_body,
        }
    }

    fn reply(
        &self,
        r: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<Reply, String> {
        let mut r = r.map_err(|e| e.to_string())?;
        let status = r.status().as_u16();
        let etag = r
            .headers()
            .get("etag")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = r
            .body_mut()
            .with_config()
            .limit(self.max_body)
            .read_to_vec()
            .map_err(|e| format!("reading the response: {e}"))?;
        Ok(Reply { status, etag, body })
    }

    /// POST `body` with the given headers.
    pub fn post(&self, url: &str, headers: &[(&str, &str)], body: &[u8]) -> Result<Reply, String> {
        let mut req = self.agent.post(url);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        self.reply(req.send(body))
    }

    /// GET, conditional on `etag` when given (`If-None-Match`).
    pub fn get(&self, url: &str, etag: Option<&str>) -> Result<Reply, String> {
        let mut req = self.agent.get(url);
        if let Some(e) = etag {
            req = req.header("If-None-Match", e);
        }
        self.reply(req.call())
    }
}
