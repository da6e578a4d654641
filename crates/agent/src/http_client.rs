//! A blocking HTTP(S) client for the agent's sinks and its fleet template
//! (ureq: no async runtime). Every request has a whole-exchange deadline and
//! every response body is read up to a bound, so a sink or template server
//! that stalls or answers without end cannot hold or fill the agent.
//!
//! Redirects are never followed: a sink's POST turned into a bodiless GET
//! by a 301/302/303 would count as delivered, and its custom headers (an
//! API key) would go to the redirect's host. A 3xx other than 304 is an
//! error that names its `Location`.

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
    timeout: Duration,
}

impl Client {
    /// A client whose requests take at most `timeout` each and whose
    /// response bodies are read up to `max_body` bytes.
    pub fn new(timeout: Duration, max_body: u64) -> Client {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .max_redirects(0)
            .build();
        Client {
            agent: config.into(),
            max_body,
            timeout,
        }
    }

    /// A transport error, with the time limit when that is what ended it
    /// (ureq alone says `timeout: global`).
    fn transport(&self, e: ureq::Error) -> String {
        match e {
            ureq::Error::Timeout(_) => format!(
                "no complete answer within {:.1} s (the request's time limit)",
                self.timeout.as_secs_f64()
            ),
            e => e.to_string(),
        }
    }

    fn reply(
        &self,
        r: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<Reply, String> {
        let mut r = r.map_err(|e| self.transport(e))?;
        let status = r.status().as_u16();
        if (300..400).contains(&status) && status != 304 {
            let to = r
                .headers()
                .get("location")
                .map(|v| {
                    String::from_utf8_lossy(v.as_bytes())
                        .chars()
                        .take(300)
                        .collect()
                })
                .unwrap_or_else(|| "no Location".to_string());
            return Err(format!(
                "the server answered {status} redirecting to {to}: redirects are not followed (nothing was delivered there); configure the final URL"
            ));
        }
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
            .map_err(|e| match e {
                ureq::Error::Timeout(_) => format!("reading the response: {}", self.transport(e)),
                e => format!(
                    "reading the response (at most {} bytes): {e}",
                    self.max_body
                ),
            })?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    /// A server that answers every request with `answer` and counts them.
    fn server(answer: &'static str) -> (String, std::sync::mpsc::Receiver<String>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", l.local_addr().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for c in l.incoming().take(4) {
                let Ok(mut c) = c else { return };
                c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                let mut b = [0u8; 4096];
                let n = c.read(&mut b).unwrap_or(0);
                let _ = tx.send(String::from_utf8_lossy(&b[..n]).into_owned());
                let _ = c.write_all(answer.as_bytes());
            }
        });
        (url, rx)
    }

    #[test]
    fn a_redirect_is_an_error_naming_its_location_and_is_not_followed() {
        let (other, other_rx) = server("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nOk.");
        for code in [301, 302, 303, 307, 308] {
            let answer: &'static str = Box::leak(
                format!("HTTP/1.1 {code} Moved\r\nLocation: {other}\r\nContent-Length: 0\r\n\r\n")
                    .into_boxed_str(),
            );
            let (url, rx) = server(answer);
            let c = Client::new(Duration::from_secs(5), 1024);
            let e = c
                .post(&url, &[("X-Api-Key", "secret")], b"INSERT")
                .unwrap_err();
            assert!(e.contains(&code.to_string()) && e.contains(&other), "{e}");
            assert!(rx
                .recv()
                .unwrap()
                .to_ascii_lowercase()
                .contains("x-api-key"));
        }
        // The redirect's host saw nothing: no request, no key.
        assert!(other_rx.recv_timeout(Duration::from_millis(300)).is_err());
    }

    #[test]
    fn a_stalled_server_is_named_with_the_time_limit() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", l.local_addr().unwrap());
        let c = Client::new(Duration::from_millis(300), 1024);
        let e = c.get(&url, None).unwrap_err();
        assert!(e.contains("within 0.3 s"), "{e}");
        drop(l);
    }
}
