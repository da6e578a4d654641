//! Where a measurement goes: HOST, HOST:PORT, [IPV6]:PORT or a bare IPv6
//! address, resolved once. A target that cannot be parsed or resolved is a
//! usage error (exit 2) for every command: [`TargetError::class`], which
//! the binary gives it (a library carries it typed).

use crate::exit::{Class, Classed};
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};

/// Why a target cannot be measured: what was given, and the host's words
/// when it did not resolve (in the message, not as a source).
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("`{given}` is not HOST, HOST:PORT or [IPV6]:PORT")]
    NotHostPort { given: String },
    #[error("`{given}` names no host: give an IP address or a resolvable host name")]
    NoHost { given: String },
    #[error("cannot resolve `{host}`: {error}; give an IP address or a resolvable host name")]
    Resolve { host: String, error: io::Error },
    #[error("`{host}` has no address")]
    NoAddress { host: String },
}

impl Classed for TargetError {
    /// A usage error, whatever was wrong.
    fn class(&self) -> Option<Class> {
        Some(Class::Usage)
    }
}

/// HOST, HOST:PORT, [V6]:PORT or a bare IPv6 address → (host, port).
pub fn split_host_port(s: &str, default_port: u16) -> Result<(String, u16), TargetError> {
    let bad = || TargetError::NotHostPort { given: s.into() };
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
pub fn resolve(s: &str, default_port: u16) -> Result<SocketAddr, TargetError> {
    let (h, p) = split_host_port(s, default_port)?;
    if h.is_empty() {
        return Err(TargetError::NoHost { given: s.into() });
    }
    let mut addrs = match (h.as_str(), p).to_socket_addrs() {
        Ok(a) => a,
        Err(error) => return Err(TargetError::Resolve { host: h, error }),
    };
    addrs.next().ok_or(TargetError::NoAddress { host: h })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::Failure;

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
        assert!(matches!(resolve("", 862), Err(TargetError::NoHost { .. })));
        assert!(matches!(
            resolve("no.such.host.invalid", 862),
            Err(TargetError::Resolve { .. })
        ));
    }

    /// The words and the class each refusal had as a `Failure::Usage`.
    #[test]
    fn each_refusal_keeps_its_words_and_class() {
        let cases = [
            (
                split_host_port("host:port", 1).unwrap_err(),
                "`host:port` is not HOST, HOST:PORT or [IPV6]:PORT",
            ),
            (
                split_host_port("[::1", 1).unwrap_err(),
                "`[::1` is not HOST, HOST:PORT or [IPV6]:PORT",
            ),
            (
                resolve(":862", 1).unwrap_err(),
                "`:862` names no host: give an IP address or a resolvable host name",
            ),
            (
                TargetError::Resolve {
                    host: "h".into(),
                    error: io::Error::other("lookup failed"),
                },
                "cannot resolve `h`: lookup failed; give an IP address or a resolvable host name",
            ),
            (
                TargetError::NoAddress { host: "h".into() },
                "`h` has no address",
            ),
        ];
        for (e, words) in cases {
            assert_eq!(e.to_string(), words);
            assert_eq!(e.class(), Some(Class::Usage));
            assert!(std::error::Error::source(&e).is_none(), "{e}");
            let f = Failure::from(e);
            assert!(matches!(&f, Failure::Usage(w) if w == words), "{f:?}");
            assert_eq!(f.class(), crate::exit::Class::Usage);
        }
    }
}
