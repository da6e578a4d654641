//! `misura host`: what on this host affects timing precision.

pub mod check;
