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
    // The server's time may differ from this client's a little (it counts
    // from its first byte), never by more than the test's own length again
    // and 10 s; a time of 1 ns made the 1.48e29 bit/s.
    let room = elapsed_ns.saturating_mul(2).saturating_add(10_000_000_000);
    v.elapsed_ns = sv.elapsed_ns.filter(|e| *e > 0).filter(|e| {
        let rate = v.bytes.unwrap_or(0) as f64 * 8e9 / *e as f64;
        let ok = rate <= MAX_RATE_BPS && *e <= room;
        if !ok {
            v.why.push(format!(
                "elapsed {e} ns: {:.3e} bit/s over it, against this client's {elapsed_ns} ns (at most 1.6e12 bit/s, at most {room} ns)",
                rate
            ));
        }
        ok
    });
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
}
