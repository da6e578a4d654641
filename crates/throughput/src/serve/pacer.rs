//! The rate of the server's own sending (reverse and bidir tests); the
//! pacing itself is the client's, `throughput::pacing`.

use super::request::Spec;
use super::state::Shared;

/// The rate the server's own sending is paced at.
pub(super) fn send_rate(shared: &Shared, spec: &Spec, parts: u64) -> u64 {
    let r = if spec.rate_bps > 0 {
        spec.rate_bps.min(shared.limits.max_rate_bps)
    } else {
        shared.limits.max_rate_bps
    };
    (r / parts.max(1)).max(1)
}
