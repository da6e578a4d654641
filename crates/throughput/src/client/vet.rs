//! A misura server's figures are a claim (issue 33, item 9: a server's
//! RESULT made 1.48e29 bit/s, and `--bidir` bytes wrapped past 2^64). Each
//! is checked against what this client counted itself, or against physics,
//! before it becomes a headline; what fails is named and left out.

use misura_report::throughput::ServerFigures;

/// No Ethernet port carries more: 1.6 Tbit/s.
pub const MAX_RATE_BPS: f64 = 1.6e12;

/// What of a server's count of the bytes it received may be used.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Vetted {
    /// The server's count of bytes received, when it passed.
    pub bytes: Option<u64>,
    /// The server's time over them, when it passed.
    pub elapsed_ns: Option<u64>,
    /// Per stream, the server's count, when it passed.
    pub stream_bytes: Vec<Option<u64>>,
    /// Each figure that failed, named with why.
    pub why: Vec<String>,
}

/// Check the bytes a server says it received from this client against the
/// bytes this client sent (`sent`, per stream `stream_sent`) and the rate
/// against [`MAX_RATE_BPS`] over this client's own time (`elapsed_ns`).
pub fn received_by_server(
    sv: &ServerFigures,
    sent: u64,
    stream_sent: &[u64],
    elapsed_ns: u64,
) -> Vetted {
    let mut v = Vetted::default();
    v.bytes = sv.bytes.filter(|b| {
        let ok = *b <= sent;
        if !ok {
            v.why.push(format!(
                "bytes received {b}: more than the {sent} this client sent"
            ));
        }
        ok
    });
    v.elapsed_ns = server_time(sv, v.bytes, elapsed_ns, &mut v.why);
    let mut total: Option<u64> = Some(0);
    v.stream_bytes = stream_sent
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let b = sv.stream_bytes.get(k).copied()?;
            total = total.and_then(|t| t.checked_add(b));
            if b > *s {
                v.why.push(format!(
                    "stream {k} bytes {b}: more than the {s} this client sent on it"
                ));
                return None;
            }
            Some(b)
        })
        .collect();
    if total.is_none() {
        v.why
            .push("stream bytes: their sum passes 2^64".to_string());
    }
    v
}

/// What of a server's account of a UDP test may be used.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VettedUdp {
    /// Datagrams and bytes it received of this client's (forward).
    pub packets: Option<u64>,
    pub bytes: Option<u64>,
    /// Datagrams it sent to this client (reverse).
    pub packets_sent: Option<u64>,
    pub elapsed_ns: Option<u64>,
    pub why: Vec<String>,
}

/// Check a server's UDP figures: what it received against what this client
/// sent (`forward`: datagrams and bytes), what it says it sent (reverse)
/// against the line rate over this client's time (`elapsed_ns`).
pub fn udp_server_figures(
    sv: &ServerFigures,
    forward: Option<(u64, u64)>,
    elapsed_ns: u64,
) -> VettedUdp {
    let mut v = VettedUdp::default();
    let mut at_most = |what: &str, claim: Option<u64>, most: u64, why: &str| {
        claim.filter(|c| {
            let ok = *c <= most;
            if !ok {
                v.why.push(format!("{what} {c}: more than {why} {most}"));
            }
            ok
        })
    };
    // The fewest bytes a datagram takes on Ethernet (84-byte slot) at 1.6
    // Tbit/s, over this client's time plus 10 s.
    let slots = (MAX_RATE_BPS / 8.0 / 84.0 * (elapsed_ns as f64 / 1e9 + 10.0)) as u64;
    let (packets, bytes, sent) = match forward {
        Some((p, b)) => (
            at_most(
                "datagrams received",
                sv.packets,
                p,
                "the datagrams this client sent,",
            ),
            at_most("bytes received", sv.bytes, b, "the bytes this client sent,"),
            None,
        ),
        None => (
            None,
            None,
            at_most(
                "datagrams sent",
                sv.packets_sent,
                slots,
                "the line rate allows in this test's time,",
            ),
        ),
    };
    (v.packets, v.bytes, v.packets_sent) = (packets, bytes, sent);
    v.elapsed_ns = server_time(sv, v.bytes, elapsed_ns, &mut v.why);
    v
}

/// The server's time over `bytes`, when it passes: it may differ from this
/// client's a little (it counts from its first byte), never by more than
/// the test's own length again and 10 s, nor make a rate above
/// [`MAX_RATE_BPS`] (a time of 1 ns made the 1.48e29 bit/s).
fn server_time(
    sv: &ServerFigures,
    bytes: Option<u64>,
    elapsed_ns: u64,
    why: &mut Vec<String>,
) -> Option<u64> {
    let room = elapsed_ns.saturating_mul(2).saturating_add(10_000_000_000);
    sv.elapsed_ns.filter(|e| *e > 0).filter(|e| {
        let rate = bytes.unwrap_or(0) as f64 * 8e9 / *e as f64;
        let ok = rate <= MAX_RATE_BPS && *e <= room;
        if !ok {
            why.push(format!(
                "elapsed {e} ns: {rate:.3e} bit/s over it, against this client's {elapsed_ns} ns (at most 1.6e12 bit/s, at most {room} ns)"
            ));
        }
        ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_beyond_what_was_sent_or_physics_are_named_and_left_out() {
        let honest = ServerFigures {
            bytes: Some(900),
            elapsed_ns: Some(1_000_000_000),
            stream_bytes: vec![400, 500],
            ..ServerFigures::default()
        };
        let v = received_by_server(&honest, 1000, &[450, 550], 1_000_000_000);
        assert_eq!(
            (v.bytes, v.elapsed_ns, v.why.len()),
            (Some(900), Some(1_000_000_000), 0)
        );
        assert_eq!(v.stream_bytes, vec![Some(400), Some(500)]);

        let liar = ServerFigures {
            bytes: Some(u64::MAX),
            elapsed_ns: Some(1),
            stream_bytes: vec![u64::MAX, 1],
            ..ServerFigures::default()
        };
        let v = received_by_server(&liar, 1000, &[450, 550], 1_000_000_000);
        assert_eq!((v.bytes, v.elapsed_ns), (None, Some(1)), "{:?}", v.why);
        assert_eq!(v.stream_bytes, vec![None, Some(1)]);
        assert!(v.why.iter().any(|w| w.starts_with("bytes received")));
        assert!(v.why.iter().any(|w| w.contains("2^64")));
        // Honest bytes over a 1-ns time: physics says no.
        let fast = ServerFigures {
            bytes: Some(1000),
            elapsed_ns: Some(1),
            ..ServerFigures::default()
        };
        let v = received_by_server(&fast, 1000, &[], 1_000_000_000);
        assert_eq!(v.elapsed_ns, None);
        assert!(v.why[0].starts_with("elapsed 1 ns"), "{:?}", v.why);
    }

    #[test]
    fn udp_claims_are_checked_against_what_was_sent_and_the_line_rate() {
        let liar = ServerFigures {
            packets: Some(1 << 62),
            bytes: Some(u64::MAX),
            packets_sent: Some(u64::MAX),
            elapsed_ns: Some(1),
            ..ServerFigures::default()
        };
        let v = udp_server_figures(&liar, Some((1000, 1_472_000)), 1_000_000_000);
        assert_eq!((v.packets, v.bytes, v.elapsed_ns), (None, None, Some(1)));
        assert_eq!(v.why.len(), 2, "{:?}", v.why);
        let v = udp_server_figures(&liar, None, 1_000_000_000);
        assert_eq!(v.packets_sent, None);
        assert!(v.why[0].starts_with("datagrams sent"), "{:?}", v.why);
        let honest = ServerFigures {
            packets: Some(990),
            bytes: Some(990 * 1472),
            packets_sent: Some(5000),
            elapsed_ns: Some(1_000_000_000),
            ..ServerFigures::default()
        };
        let v = udp_server_figures(&honest, Some((1000, 1_472_000)), 1_000_000_000);
        assert_eq!(
            (v.packets, v.bytes, v.why.len()),
            (Some(990), Some(990 * 1472), 0)
        );
        let v = udp_server_figures(&honest, None, 1_000_000_000);
        assert_eq!((v.packets_sent, v.why.len()), (Some(5000), 0));
    }
}
