//! Linux edge.
