//! The agent's HTTP endpoint: `GET /metrics` and `GET /healthz`, nothing
//! else. One thread serves connections one after another, so a scrape can
//! never cost more than one socket; requests are bounded in size and time.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Longest request head read; scrapers send a few hundred bytes.
const MAX_REQUEST: usize = 8 * 1024;
/// A client slower than this is dropped, so it cannot hold the endpoint.
const IO_TIMEOUT: Duration = Duration::from_secs(2);

/// Serve until `stop` is non-zero. `metrics` renders the exposition.
pub fn serve(
    listener: TcpListener,
    stop: &AtomicUsize,
    metrics: &dyn Fn() -> Vec<u8>,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    while stop.load(Ordering::Relaxed) == 0 {
        match listener.accept() {
            Ok((stream, _)) => {
                // A failing client is its own problem, never the agent's.
                let _ = handle(stream, metrics);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(50))
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            // Out of file descriptors and the like: back off rather than spin.
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
    Ok(())
}

fn handle(mut stream: TcpStream, metrics: &dyn Fn() -> Vec<u8>) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break Some(p);
        }
        if buf.len() >= MAX_REQUEST {
            break None;
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let Some(end) = head_end else {
        return respond(
            &mut stream,
            "431 Request Header Fields Too Large",
            "text/plain",
            b"request too large\n",
        );
    };
    let head = String::from_utf8_lossy(&buf[..end]);
    let mut parts = head.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    match (method, path) {
        ("GET", "/metrics") => respond(
            &mut stream,
            "200 OK",
            misura_report::metrics::CONTENT_TYPE,
            &metrics(),
        ),
        ("GET", "/healthz") => respond(&mut stream, "200 OK", "text/plain; charset=utf-8", b"ok\n"),
        ("GET", _) => respond(
            &mut stream,
            "404 Not Found",
            "text/plain",
            b"not found: try /metrics or /healthz\n",
        ),
        _ => respond(
            &mut stream,
            "405 Method Not Allowed",
            "text/plain",
            b"only GET\n",
        ),
    }
}

fn respond(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &[u8],
) -> std::io::Result<()> {
    let head = format!("HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    stream.flush()
}
