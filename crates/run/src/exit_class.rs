//! The exit class of this crate's errors (`misura_cli::exit::Classed`):
//! busy threads or NIC stamps that the host cannot give are parameters to
//! change.

use crate::cpuload::TooManyThreads;
use crate::stamping::HardwareRequired;
use misura_cli::exit::{Class, Classed};

impl Classed for TooManyThreads {
    fn class(&self) -> Option<Class> {
        Some(Class::Params)
    }
}

impl Classed for HardwareRequired {
    fn class(&self) -> Option<Class> {
        Some(Class::Params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_host_cannot_give_is_a_parameter_to_change() {
        let threads = TooManyThreads { threads: 9, max: 8 };
        assert_eq!(threads.class(), Some(Class::Params));
        let stamps = HardwareRequired { why: "no".into() };
        assert_eq!(stamps.class(), Some(Class::Params));
    }
}
