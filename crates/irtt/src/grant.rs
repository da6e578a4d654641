//! What an irtt server may grant: never more than the client asked for
//! (issue 33 item 8). irtt's server may restrict a request (a shorter
//! duration, a longer interval, a shorter packet, fewer stamps or
//! statistics, no DSCP); anything past the request, and an interval past
//! irtt's own 15 s maximum, ends the session before a probe is sent. A
//! restriction that means fewer probes than asked is allowed, and said:
//! the session is then not "finished".

use crate::error::Error;
use misura_measure::time::Span;
use misura_wire::irtt_params::{Clock, Params, ReceivedStats, StampAt};
use std::net::SocketAddr;

/// Longest interval a grant may have: a quarter of irtt's 60 s server
/// timeout, as irtt's client checks.
pub const MAX_INTERVAL: Span = Span::from_secs(15);

fn ns(v: i64) -> String {
    format!("{:?}", Span::from_ns(v).to_std())
}

/// Checks `g`, granted by `target`, against the request `r`; Ok when
/// every granted value is within the request.
pub fn check(target: SocketAddr, r: &Params, g: &Params) -> Result<(), Error> {
    let out = |param, requested: String, granted: String, why| {
        Err(Error::Grant {
            target,
            param,
            requested,
            granted,
            why,
        })
    };
    if g.protocol_version != r.protocol_version {
        return out(
            "protocol version",
            r.protocol_version.to_string(),
            g.protocol_version.to_string(),
            "another version",
        );
    }
    if g.duration_ns <= 0 || g.duration_ns > r.duration_ns {
        return out(
            "duration",
            ns(r.duration_ns),
            ns(g.duration_ns),
            "a session longer than asked",
        );
    }
    if g.interval_ns < r.interval_ns {
        return out(
            "interval",
            ns(r.interval_ns),
            ns(g.interval_ns),
            "probes faster than asked",
        );
    }
    if g.interval_ns > MAX_INTERVAL.as_ns() {
        return out(
            "interval",
            ns(r.interval_ns),
            ns(g.interval_ns),
            "over irtt's 15 s maximum",
        );
    }
    if g.length > r.length {
        return out(
            "length",
            format!("{} bytes", r.length),
            format!("{} bytes", g.length),
            "longer packets than asked",
        );
    }
    let stats = |s: ReceivedStats| s.code();
    if stats(g.received_stats) & !stats(r.received_stats) != 0 {
        return out(
            "received stats",
            r.received_stats.name().into(),
            g.received_stats.name().into(),
            "fields not asked for",
        );
    }
    if !stamps_within(r.stamp_at, g.stamp_at) {
        return out(
            "stamps at",
            r.stamp_at.name().into(),
            g.stamp_at.name().into(),
            "stamps not asked for",
        );
    }
    let clock = |c: Clock| c.code();
    if clock(g.clock) & !clock(r.clock) != 0 {
        return out(
            "clock",
            r.clock.name().into(),
            g.clock.name().into(),
            "a clock not asked for",
        );
    }
    if g.dscp != r.dscp && g.dscp != 0 {
        return out(
            "DSCP",
            r.dscp.to_string(),
            g.dscp.to_string(),
            "another traffic class",
        );
    }
    if g.server_fill != r.server_fill && !g.server_fill.is_empty() {
        return out(
            "server fill",
            format!("{:?}", r.server_fill),
            format!("{:?}", g.server_fill),
            "another fill",
        );
    }
    Ok(())
}

/// A granted stamp set within the requested one: the same, none, or, for
/// both stamps asked, any of send, receive or the midpoint (one stamp
/// where two were asked).
fn stamps_within(r: StampAt, g: StampAt) -> bool {
    g == r || g == StampAt::None || (r == StampAt::Both && g != StampAt::None)
}

/// Probes a session of `p` sends: one per interval within the duration,
/// at most `count`.
pub fn planned(p: &Params, count: Option<u64>) -> u64 {
    let d = p.duration_ns.max(0) as u64;
    let i = p.interval_ns.max(1) as u64;
    let by_time = d.div_ceil(i);
    count.map_or(by_time, |c| c.min(by_time))
}

/// When the grant `g` means fewer probes than the request `r`: why, in
/// words, for the result's stop reason.
pub fn shortfall(r: &Params, g: &Params, count: Option<u64>) -> Option<String> {
    let (asked, granted) = (planned(r, count), planned(g, count));
    (granted < asked).then(|| {
        format!(
            "the irtt server restricted the session (interval {} for {} asked, duration {} for {}): {granted} of the {asked} probes asked for",
            ns(g.interval_ns),
            ns(r.interval_ns),
            ns(g.duration_ns),
            ns(r.duration_ns)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked() -> Params {
        Params {
            protocol_version: 1,
            duration_ns: 2_000_000_000,
            interval_ns: 10_000_000,
            length: 0,
            received_stats: ReceivedStats::Both,
            stamp_at: StampAt::Both,
            clock: Clock::Both,
            dscp: 0,
            server_fill: String::new(),
        }
    }

    fn at() -> SocketAddr {
        SocketAddr::from(([192, 0, 2, 1], 2112))
    }

    #[test]
    fn a_grant_past_the_request_names_both_values() {
        type Change = fn(&mut Params);
        let cases: [(Change, &str); 7] = [
            (|g| g.duration_ns = 1_000_000_000_000_000_000, "duration"),
            (|g| g.interval_ns = 1, "interval"),
            (|g| g.interval_ns = 3_600_000_000_000, "interval"),
            (|g| g.length = 1400, "length"),
            (|g| g.dscp = 46, "DSCP"),
            (|g| g.protocol_version = 2, "protocol version"),
            (|g| g.server_fill = "rand".into(), "server fill"),
        ];
        for (change, param) in cases {
            let mut g = asked();
            change(&mut g);
            let e = check(at(), &asked(), &g).unwrap_err();
            let text = e.to_string();
            assert_eq!(
                misura_cli::exit::Classed::class(&e),
                Some(misura_cli::exit::Class::Params),
                "{text}"
            );
            assert!(text.contains(param), "{text}");
            if param == "duration" {
                assert!(
                    text.contains("2s") && text.contains("1000000000s"),
                    "{text}"
                );
            }
            if text.contains("1ns") {
                assert!(text.contains("10ms"), "{text}");
            }
        }
        let mut wider = asked();
        wider.stamp_at = StampAt::Send;
        let mut g = wider.clone();
        g.stamp_at = StampAt::Both;
        assert!(check(at(), &wider, &g).is_err());
    }

    #[test]
    fn a_restriction_is_allowed_but_a_shorter_session_is_said() {
        let mut g = asked();
        g.interval_ns = 1_000_000_000;
        g.length = 0;
        g.stamp_at = StampAt::Midpoint;
        g.clock = Clock::Wall;
        g.received_stats = ReceivedStats::Count;
        check(at(), &asked(), &g).unwrap();
        // 5 probes at 10 ms asked (50 ms), 1 s granted: 1 of 5.
        let mut r5 = asked();
        r5.duration_ns = 50_000_000;
        let mut g5 = g.clone();
        g5.duration_ns = 50_000_000;
        let why = shortfall(&r5, &g5, Some(5)).unwrap();
        assert!(why.contains("1 of the 5"), "{why}");
        assert_eq!(shortfall(&asked(), &asked(), Some(200)), None);
        g.interval_ns = 10_000_000;
        g.duration_ns = 1_000_000_000;
        assert!(shortfall(&asked(), &g, None)
            .unwrap()
            .contains("100 of the 200"));
    }
}
