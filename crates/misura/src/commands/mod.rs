//! One folder per command family, each with its flags beside its code.

pub mod agent;
pub mod archive;
pub mod clock;
pub mod completions;
pub mod demo;
pub mod exchange;
pub mod host;
pub mod lab;
pub mod load;
pub mod man;
pub mod oneway;
pub mod reflect;
pub mod report;
pub mod rfc2544;
pub mod rtt;
pub mod store;
pub mod throughput;
pub mod y1564;
