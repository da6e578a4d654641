//! Replies the probes did not ask for: copies of a reply, replies to
//! sequence numbers never sent, datagrams that are not STAMP replies. The
//! probes' session counts them (as `misura rtt` does: `duplicates`,
//! `unknown`); `misura load` keeps them per phase and warns, since a path
//! or a middlebox that duplicates or forges replies makes the latencies
//! suspect even when every probe was answered.

use misura_report::under_load::Phase;
use misura_report::Warning;

/// A kind of stray reply: its warning code, its count in a phase, and
/// what it means.
type Stray = (&'static str, fn(&Phase) -> u64, &'static str);

/// One warning per kind of stray reply, naming the phases and counts.
pub fn warnings(phases: &[Phase]) -> Vec<Warning> {
    let kinds: [Stray; 3] = [
        (
            "load.duplicate-replies",
            |p| p.duplicates,
            "replies came more than once (the path or a middlebox duplicates datagrams); only the first copy of each was measured",
        ),
        (
            "load.unknown-replies",
            |p| p.unknown,
            "replies to probes this run never sent (forged, or another session's on the same port); they were not measured",
        ),
        (
            "load.malformed-replies",
            |p| p.malformed,
            "datagrams on the probes' socket were not valid STAMP replies (or failed authentication); they were not measured",
        ),
    ];
    kinds
        .iter()
        .filter_map(|(code, count, what)| {
            let per: Vec<String> = phases
                .iter()
                .filter(|p| count(p) > 0)
                .map(|p| format!("{} in the {} phase", count(p), p.name))
                .collect();
            (!per.is_empty()).then(|| Warning {
                code: (*code).into(),
                text: format!("{}: {what}", per.join(", ")),
            })
        })
        .collect()
}
