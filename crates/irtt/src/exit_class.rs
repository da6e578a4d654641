//! The exit class of the irtt client's and reflector's errors
//! (`misura_cli::exit::Classed`): a request out of range is a usage slip
//! (the binary words it with the flags), a grant outside the request a
//! parameter, a refused target has misura-cli's class; the network's, the
//! peer's and the host's failures have none of their own (a host error
//! they carry as a source is the binary's to class).

use crate::error::Error;
use misura_cli::exit::{Class, Classed};

impl Classed for Error {
    fn class(&self) -> Option<Class> {
        match self {
            Error::PeriodOutOfRange { .. }
            | Error::DurationOutOfRange { .. }
            | Error::PacketTooLong { .. }
            | Error::KeyLength { .. }
            | Error::StampOptions
            | Error::ReflectBounds { .. } => Some(Class::Usage),
            Error::Grant { .. } => Some(Class::Params),
            Error::Target(t) => t.class(),
            Error::Refused { .. }
            | Error::NoOpenReply { .. }
            | Error::Stopped { .. }
            | Error::Unreachable { .. }
            | Error::Socket { .. }
            | Error::Listen { .. }
            | Error::Stamps { .. }
            | Error::Wire(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    #[test]
    fn a_request_out_of_range_is_a_usage_slip_and_the_network_has_no_class() {
        assert_eq!(Error::StampOptions.class(), Some(Class::Usage));
        let bounds = Error::KeyLength { len: 0, max: 1024 };
        assert_eq!(bounds.class(), Some(Class::Usage));
        let bad = misura_cli::target::split_host_port("h:p", 1).unwrap_err();
        assert_eq!(Error::Target(bad).class(), Some(Class::Usage));
        let target: SocketAddr = "127.0.0.1:2112".parse().unwrap();
        assert_eq!(Error::Stopped { target }.class(), None);
        let listen = Error::Listen {
            addr: target,
            source: misura_sys::SysError::NoSuchInterface {
                name: "nosuch0".into(),
            },
        };
        assert_eq!(listen.class(), None);
    }
}
