//! What the clients of `misura serve` share (`tcp`, `udp`, `rr`, `setup`,
//! `sweep`): the target's plan, the control connection (HELLO →
//! REQUEST → ACCEPT/REFUSE … DONE → RESULT, docs/control-protocol.md), data
//! connections, `--clients N`, and turning the clients' results into one.

mod base;
mod control;
mod data;
pub(crate) mod run;
mod vet;

pub use base::*;
pub use control::*;
pub use data::*;
pub(crate) use run::client_result;
pub use run::*;
pub use vet::*;

/// Tests' client part: one client of `host`, no key.
#[cfg(test)]
pub(crate) fn on_host(host: &str) -> ClientPlan {
    ClientPlan {
        host: host.into(),
        key_file: None,
        netns: None,
        clients: 1,
        quiet: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions() {
        assert_eq!(Direction::of(false, false).as_str(), "forward");
        assert_eq!(Direction::of(true, false).as_str(), "reverse");
        assert_eq!(Direction::of(false, true).as_str(), "bidir");
    }
}
