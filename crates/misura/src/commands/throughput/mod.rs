//! Throughput, request/response and set-up tests: the flags of `misura
//! serve` and its clients (tcp, udp, rr, setup) and their glue, and `misura
//! sweep`. The server and the clients are the `misura-throughput` library.

#[cfg(test)]
mod parsed;
pub mod peer;
pub mod rr;
pub mod serve;
pub mod setup;
pub mod sweep;
pub mod tcp;
pub mod udp;
