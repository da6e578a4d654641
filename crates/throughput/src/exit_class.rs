//! The exit class of a throughput test's errors
//! (`misura_cli::exit::Classed`): a plan's refusal in its own class (a
//! usage slip or a parameter), misura-cli's address or key file in theirs,
//! the host's carried; a server's or a peer's failure has none.

use crate::error::{Iperf3PeerError, ThroughputError};
use crate::refusal::Class as RefusalClass;
use misura_cli::exit::{Class, Classed};
use std::error::Error;

impl From<RefusalClass> for Class {
    fn from(c: RefusalClass) -> Class {
        match c {
            RefusalClass::Usage => Class::Usage,
            RefusalClass::Params => Class::Params,
        }
    }
}

impl Classed for ThroughputError {
    /// That of the typed error it carries transparently, or boxed (an
    /// iperf3 data stream's: the chain walk sees the box, not the error in
    /// it); the others have none.
    fn class(&self) -> Option<Class> {
        match self {
            ThroughputError::Target(t) => t.class(),
            ThroughputError::Key(k) => k.class(),
            ThroughputError::Refusal(r) => Some(r.class().into()),
            ThroughputError::Iperf3(Iperf3PeerError::Stream { source, .. }) => source.class(),
            ThroughputError::Sys(_)
            | ThroughputError::Control(_)
            | ThroughputError::Iperf3(_)
            | ThroughputError::MisuraFound(_)
            | ThroughputError::Iperf3Wire(_)
            | ThroughputError::Io(_)
            | ThroughputError::Step { .. }
            | ThroughputError::ConnectUdp { .. }
            | ThroughputError::Listen { .. }
            | ThroughputError::NoReply { .. }
            | ThroughputError::Receive { .. } => None,
        }
    }

    fn carried(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            ThroughputError::Sys(s) => Some(s),
            ThroughputError::Iperf3(Iperf3PeerError::Stream { source, .. }) => {
                Some(source.as_ref())
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use misura_cli::keys::KeyError;

    #[test]
    fn a_throughput_error_has_the_class_of_what_it_carries() {
        let key = || {
            ThroughputError::Key(KeyError::Invalid {
                path: "k".into(),
                why: misura_measure::auth::AuthError::Empty,
            })
        };
        assert_eq!(key().class(), Some(Class::Usage));
        let stream = Iperf3PeerError::Stream {
            stream: 1,
            addr: ([127, 0, 0, 1], 5201).into(),
            source: Box::new(key()),
        };
        assert_eq!(ThroughputError::from(stream).class(), Some(Class::Usage));
        let target = misura_cli::target::resolve(":5201", 5201).unwrap_err();
        assert_eq!(ThroughputError::Target(target).class(), Some(Class::Usage));
        let refusal = ThroughputError::Refusal(crate::refusal::Refusal::ConnectNeedsTcp);
        assert_eq!(refusal.class(), Some(Class::Usage));
        // A server's refusal has none.
        let refused = crate::client::Refused {
            addr: ([127, 0, 0, 1], 5862).into(),
            reason: "server busy".into(),
        };
        let refused = crate::error::ControlError::from(refused);
        assert_eq!(ThroughputError::from(refused).class(), None);
        let listen = ThroughputError::Listen {
            addr: ([0, 0, 0, 0], 5862).into(),
            port: 5862,
            source: std::io::ErrorKind::AddrInUse.into(),
        };
        assert_eq!(listen.class(), None);
    }
}
