//! `misura clock`: know the instrument's clocks.

pub mod interference;
pub mod sources;
pub mod timer;
pub mod tsc;
