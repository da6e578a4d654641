//! What the clients of `misura serve` share (`tcp`, `udp`, `rr`, `setup`,
//! `sweep`): the target and its flags, the control connection (HELLO →
//! REQUEST → ACCEPT/REFUSE … DONE → RESULT, docs/control-protocol.md), data
//! connections, `--clients N`, and turning the clients' results into one.
//!
//! Exit codes of the clients (crate::shared::exit): 0 the test ran to its end;
//! 1 the server is unreachable, refused the test (busy, authentication,
//! any REFUSE — its reason is printed), or was lost during the test (the
//! partial result is still written); 2 bad command line; 5 parameters the
//! server announced it would refuse (above its HELLO limits) or that make
//! no sense (e.g. a UDP datagram below 24 bytes); 6 an output file cannot
//! be written; 130/143 interrupted (partial result written).

mod base;
mod control;
mod data;
pub(crate) mod run;

pub use base::*;
pub use control::*;
pub use data::*;
pub(crate) use run::client_result;
pub use run::*;

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
