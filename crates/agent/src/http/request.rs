//! Parsing one HTTP/1.x request head out of a connection's buffer, and the
//! endpoint's answer to it. Pure: no socket, no clock.
//!
//! Hand-written rather than a server crate: the endpoint answers two GET
//! paths, and the crates that fit a binary without an async runtime
//! (`tiny_http`) bound neither a whole request's time nor a client's share
//! of the connections, which is what the endpoint needs most.

/// Longest request head read; scrapers send a few hundred bytes.
pub const MAX_HEAD: usize = 8 * 1024;

/// What the buffer holds.
#[derive(Debug, PartialEq, Eq)]
pub enum Parse {
    /// Not yet a whole head: read more.
    Incomplete,
    /// `MAX_HEAD` bytes without the head's end: answer 431 and close.
    TooLarge,
    /// Not HTTP/1.x: answer 400 and close.
    Bad,
    /// A whole head, taking `used` bytes of the buffer.
    Request { head: Head, used: usize },
}

#[derive(Debug, PartialEq, Eq)]
pub struct Head {
    pub method: String,
    pub path: String,
    /// The client keeps the connection open for the next request.
    pub keep_alive: bool,
    /// The request announces a body, which the endpoint does not read: the
    /// connection is closed after the answer.
    pub has_body: bool,
}

/// Parse the request at the start of `buf`. Empty lines before a request
/// line are skipped (RFC 9112 §2.2).
pub fn parse(buf: &[u8]) -> Parse {
    let skip = buf
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .unwrap_or(buf.len());
    let rest = &buf[skip..];
    let window = &rest[..rest.len().min(MAX_HEAD)];
    let Some(end) = window.windows(4).position(|w| w == b"\r\n\r\n") else {
        if window.len() >= MAX_HEAD {
            return Parse::TooLarge;
        }
        return Parse::Incomplete;
    };
    let Ok(text) = std::str::from_utf8(&rest[..end]) else {
        return Parse::Bad;
    };
    let mut lines = text.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (first.next(), first.next(), first.next(), first.next())
    else {
        return Parse::Bad;
    };
    let http11 = match version {
        "HTTP/1.1" => true,
        "HTTP/1.0" => false,
        _ => return Parse::Bad,
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Parse::Bad;
    }
    let mut keep_alive = http11;
    let mut has_body = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Parse::Bad;
        };
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "connection" => {
                for token in value.split(',').map(|t| t.trim().to_ascii_lowercase()) {
                    match token.as_str() {
                        "close" => keep_alive = false,
                        "keep-alive" => keep_alive = true,
                        _ => {}
                    }
                }
            }
            "content-length" => has_body |= value != "0",
            "transfer-encoding" => has_body = true,
            _ => {}
        }
    }
    Parse::Request {
        head: Head {
            method: method.to_string(),
            path: target.split('?').next().unwrap_or("").to_string(),
            keep_alive,
            has_body,
        },
        used: skip + end + 4,
    }
}

/// The whole response to `head` (head and, except for HEAD, body), and
/// whether the connection stays open after it.
pub fn respond(head: &Head, metrics: &dyn Fn() -> Vec<u8>) -> (Vec<u8>, bool) {
    let get_like = head.method == "GET" || head.method == "HEAD";
    let (status, ctype, body): (&str, &str, Vec<u8>) = match (get_like, head.path.as_str()) {
        (true, "/metrics") => ("200 OK", misura_report::metrics::CONTENT_TYPE, metrics()),
        (true, "/healthz") => ("200 OK", "text/plain; charset=utf-8", b"ok\n".to_vec()),
        (true, _) => (
            "404 Not Found",
            "text/plain",
            b"not found: try /metrics or /healthz\n".to_vec(),
        ),
        (false, _) => (
            "405 Method Not Allowed",
            "text/plain",
            b"only GET and HEAD\n".to_vec(),
        ),
    };
    let keep = head.keep_alive && !head.has_body && get_like;
    let with_body = head.method != "HEAD";
    (message(status, ctype, &body, keep, with_body), keep)
}

/// A response that ends the connection (400, 431, 503).
pub fn refusal(status: &str, why: &str) -> Vec<u8> {
    message(status, "text/plain", why.as_bytes(), false, true)
}

fn message(status: &str, ctype: &str, body: &[u8], keep: bool, with_body: bool) -> Vec<u8> {
    let connection = if keep { "keep-alive" } else { "close" };
    let allow = if status.starts_with("405") {
        "Allow: GET, HEAD\r\n"
    } else {
        ""
    };
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n{allow}Connection: {connection}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if with_body {
        out.extend_from_slice(body);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(s: &str) -> Parse {
        parse(s.as_bytes())
    }

    #[test]
    fn heads_parse_with_their_connection_rules() {
        let Parse::Request { head, used } = req("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\nGET")
        else {
            panic!()
        };
        assert_eq!(
            (head.path.as_str(), head.keep_alive, used),
            ("/metrics", true, 38)
        );
        let Parse::Request { head, .. } = req("\r\nHEAD / HTTP/1.0\r\n\r\n") else {
            panic!()
        };
        assert_eq!((head.method.as_str(), head.keep_alive), ("HEAD", false));
        let Parse::Request { head, .. } =
            req("GET / HTTP/1.1\r\nConnection: Close\r\nContent-Length: 3\r\n\r\n")
        else {
            panic!()
        };
        assert!(!head.keep_alive && head.has_body);
        assert_eq!(req("GET / HTTP/1.1\r\nHost: a\r\n"), Parse::Incomplete);
        assert_eq!(req("GET / SPDY/3\r\n\r\n"), Parse::Bad);
        assert_eq!(req("GET /\r\n\r\n"), Parse::Bad);
        assert_eq!(req("GET / HTTP/1.1\r\nno colon\r\n\r\n"), Parse::Bad);
        let big = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD));
        assert_eq!(req(&big), Parse::TooLarge);
    }

    #[test]
    fn head_gets_the_length_without_the_body() {
        let head = Head {
            method: "HEAD".into(),
            path: "/metrics".into(),
            keep_alive: true,
            has_body: false,
        };
        let (out, keep) = respond(&head, &|| b"# EOF\n".to_vec());
        let text = String::from_utf8(out).unwrap();
        assert!(keep && text.contains("Content-Length: 6\r\n") && text.ends_with("\r\n\r\n"));
        let post = Head {
            method: "POST".into(),
            ..head
        };
        let (out, keep) = respond(&post, &|| Vec::new());
        let text = String::from_utf8(out).unwrap();
        assert!(!keep && text.starts_with("HTTP/1.1 405") && text.contains("Allow: GET, HEAD"));
    }
}
