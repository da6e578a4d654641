//! Where a measurement goes: HOST, HOST:PORT, [IPV6]:PORT or a bare IPv6
//! address, resolved once. A target that cannot be parsed or resolved is a
//! usage error (exit 2) for every command.

use crate::exit::Failure;
use std::net::{SocketAddr, ToSocketAddrs};

/// HOST, HOST:PORT, [V6]:PORT or a bare IPv6 address → (host, port).
pub fn split_host_port(s: &str, default_port: u16) -> Result<(String, u16), Failure> {
    let bad = || Failure::Usage(format!("`{s}` is not HOST, HOST:PORT or [IPV6]:PORT"));
    if let Some(rest) = s.strip_prefix('[') {
        let (h, tail) = rest.split_once(']').ok_or_else(bad)?;
        let port = match tail.strip_prefix(':') {
            Some(p) => p.parse().map_err(|_| bad())?,
            None if tail.is_empty() => default_port,
            None => return Err(bad()),
        };
        return Ok((h.to_string(), port));
    }
    match s.matches(':').count() {
        0 => Ok((s.to_string(), default_port)),
        1 => {
            let (h, p) = s.split_once(':').unwrap_or((s, ""));
            Ok((h.to_string(), p.parse().map_err(|_| bad())?))
        }
        _ => Ok((s.to_string(), default_port)), // a bare IPv6 address
    }
}

/// Parse and resolve a target to its first address.
pub fn resolve(s: &str, default_port: u16) -> Result<SocketAddr, Failure> {
    let (h, p) = split_host_port(s, default_port)?;
    if h.is_empty() {
        return Err(Failure::Usage(format!(
            "`{s}` names no host: give an IP address or a resolvable host name"
        )));
    }
    (h.as_str(), p)
        .to_socket_addrs()
        .map_err(|e| {
            Failure::Usage(format!(
                "cannot resolve `{h}`: {e}; give an IP address or a resolvable host name"
            ))
        })?
        .next()
        .ok_or_else(|| Failure::Usage(format!("`{h}` has no address")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_port() {
        let d = 5862;
        let sp = |s| split_host_port(s, d).unwrap();
        assert_eq!(sp("198.18.0.2"), ("198.18.0.2".into(), 5862));
        assert_eq!(sp("198.18.0.2:6000"), ("198.18.0.2".into(), 6000));
        assert_eq!(sp("[2001:2::2]:6000"), ("2001:2::2".into(), 6000));
        assert_eq!(sp("[2001:2::2]"), ("2001:2::2".into(), 5862));
        assert_eq!(sp("2001:2::2"), ("2001:2::2".into(), 5862));
        assert!(split_host_port("host:port", d).is_err());
    }

    #[test]
    fn targets() {
        let r = |s| resolve(s, 862).unwrap();
        assert_eq!(r("198.18.0.2"), "198.18.0.2:862".parse().unwrap());
        assert_eq!(r("198.18.0.2:9"), "198.18.0.2:9".parse().unwrap());
        assert_eq!(r("[2001:2::2]:9"), "[2001:2::2]:9".parse().unwrap());
        assert_eq!(r("2001:2::2"), "[2001:2::2]:862".parse().unwrap());
        assert_eq!(r("localhost:5").port(), 5);
        assert!(matches!(resolve("", 862), Err(Failure::Usage(_))));
        assert!(matches!(
            resolve("no.such.host.invalid", 862),
            Err(Failure::Usage(_))
        ));
    }
}
