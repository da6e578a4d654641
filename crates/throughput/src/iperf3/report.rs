//! A run against an iperf3 server as misura's usual tcp/udp result, with
//! the server's own figures beside misura's (`peer`).

use super::client::{Iperf3Plan, PeerRun, StreamRow};
use crate::client::bits_per_s;
use misura_report::model::Warning;
use misura_report::throughput::{
    CpuUse, Endpoint, TcpClientResult, TcpConfig, TcpReport, TcpStreamResult, UdpClientResult,
    UdpConfig, UdpReport,
};
use misura_report::LoopTuning;
use misura_wire::iperf3::{Protocol, Results};
use serde::{Deserialize, Serialize};
use std::io::Write;

/// What the iperf3 peer reported, as it sent it (iperf3's units).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PeerFigures {
    /// "iperf3".
    pub protocol: String,
    /// The peer's part: "server" (misura was the client) or "client".
    pub role: String,
    /// What the peer said it is (`client_version`; iperf3 servers send no
    /// version); unverified.
    pub version: Option<String>,
    /// Whether its results message came (false: the figures below are
    /// missing and the run is partial).
    pub results_received: bool,
    /// Its CPU use over the test, % of one CPU (iperf3's cpu_util).
    pub cpu_util_total_pct: Option<f64>,
    pub cpu_util_user_pct: Option<f64>,
    pub cpu_util_system_pct: Option<f64>,
    pub congestion_used: Option<String>,
    /// Its streams: bytes it sent (its senders) or received (its receivers).
    pub streams: Vec<PeerStream>,
    /// Sum over its streams.
    pub bytes: u64,
    /// iperf3's `bandwidth` parameter of the test (`-b`, misura tcp|udp's
    /// --rate), bit/s per stream; absent: TCP streams not paced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_bps: Option<u64>,
    /// The peer's figures that failed the check against what this end
    /// counted or against physics, each named; they are kept here as sent
    /// but out of the headline figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub implausible: Vec<String>,
    /// Stream ids whose peer count failed the check.
    #[serde(skip)]
    pub rejected_streams: Vec<i64>,
}

/// Faster than any one host moves data today (1.6 Tbit/s): a peer's byte
/// count that would need more over the test's time is not believed.
pub const MAX_PLAUSIBLE_BPS: f64 = 1.6e12;

/// A CPU figure above this (% of one CPU: 4 096 CPUs) is not believed.
const MAX_CPU_PCT: f64 = 409_600.0;

/// One stream as this end counted it: whether this end sent on it, and
/// its bytes.
pub struct OwnCount {
    pub sent: bool,
    pub bytes: u64,
}

/// The peer's results checked against this end's counts (`own`, by stream
/// id) and physics over `elapsed_ns`: each failing figure named, the
/// streams whose count failed, whether the CPU figures failed.
pub fn vet(
    r: &Results,
    own: &dyn Fn(i64) -> Option<OwnCount>,
    elapsed_ns: u64,
    tcp: bool,
) -> (Vec<String>, Vec<i64>, bool) {
    let mut why = Vec::new();
    let mut bad = Vec::new();
    // The most bytes anything could move in the test's time (plus a
    // second of slack for the two ends' clocks).
    let most = MAX_PLAUSIBLE_BPS / 8.0 * (elapsed_ns as f64 / 1e9 + 1.0);
    for st in &r.streams {
        let b = st.bytes;
        let fail = match own(st.id) {
            None => Some(format!("stream {}: the test has no such stream", st.id)),
            Some(o) if o.sent && b > o.bytes => Some(format!(
                "stream {}: {b} bytes received, more than the {} bytes this end sent",
                st.id, o.bytes
            )),
            Some(o) if !o.sent && tcp && b < o.bytes => Some(format!(
                "stream {}: {b} bytes sent, fewer than the {} bytes this end received",
                st.id, o.bytes
            )),
            _ if b as f64 > most => Some(format!(
                "stream {}: {b} bytes in {:.3} s is above {:.1} Tbit/s",
                st.id,
                elapsed_ns as f64 / 1e9,
                MAX_PLAUSIBLE_BPS / 1e12
            )),
            _ if !tcp && (st.packets < 0 || st.errors < 0) => Some(format!(
                "stream {}: a negative datagram count ({} packets, {} lost)",
                st.id, st.packets, st.errors
            )),
            _ if !tcp && st.errors > st.packets => Some(format!(
                "stream {}: {} datagrams lost of {} sent",
                st.id, st.errors, st.packets
            )),
            _ => None,
        };
        if let Some(f) = fail {
            why.push(f);
            bad.push(st.id);
        }
    }
    let cpu = [
        ("cpu_util_total", r.cpu_util_total),
        ("cpu_util_user", r.cpu_util_user),
        ("cpu_util_system", r.cpu_util_system),
    ];
    let mut cpu_bad = false;
    for (name, v) in cpu {
        if !v.is_finite() || !(0.0..=MAX_CPU_PCT).contains(&v) {
            why.push(format!("{name} {v} % is not a CPU use"));
            cpu_bad = true;
        }
    }
    (why, bad, cpu_bad)
}

/// The warning for a peer's failing figures, also written to stderr.
pub fn implausible_warning(who: &str, why: &[String]) -> Option<Warning> {
    if why.is_empty() {
        return None;
    }
    let text = format!(
        "the {who}'s figures failed the check against this end's counts and physics, and are left out of the headline figures: {}",
        why.join("; ")
    );
    log::warn!("misura: warning: {text}");
    Some(Warning {
        code: "peer.implausible".into(),
        text,
    })
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PeerStream {
    pub id: i64,
    /// "sent" or "received": what `bytes` counts.
    pub counted: String,
    pub bytes: u64,
    /// TCP retransmits of a sending peer (null: not known).
    pub retransmits: Option<i64>,
    /// UDP receiver: jitter (ns), datagrams lost, highest sequence number.
    pub jitter_ns: Option<u64>,
    pub lost: Option<i64>,
    pub packets: Option<i64>,
    /// The stream's duration as the peer timed it, seconds.
    pub seconds: Option<f64>,
}

impl PeerFigures {
    pub fn of(
        role: &str,
        version: Option<String>,
        r: Option<&Results>,
        peer_sends: impl Fn(i64) -> bool,
        udp: bool,
    ) -> PeerFigures {
        let Some(r) = r else {
            return PeerFigures {
                protocol: "iperf3".into(),
                role: role.into(),
                version,
                ..Default::default()
            };
        };
        PeerFigures {
            protocol: "iperf3".into(),
            role: role.into(),
            version,
            results_received: true,
            implausible: vec![],
            rejected_streams: vec![],
            cpu_util_total_pct: Some(r.cpu_util_total),
            cpu_util_user_pct: Some(r.cpu_util_user),
            cpu_util_system_pct: Some(r.cpu_util_system),
            congestion_used: r.congestion_used.clone(),
            // Checked: a peer's counts may sum past 2^64.
            bytes: r
                .streams
                .iter()
                .try_fold(0u64, |a, s| a.checked_add(s.bytes))
                .unwrap_or(u64::MAX),
            streams: r
                .streams
                .iter()
                .map(|s| {
                    let sends = peer_sends(s.id);
                    PeerStream {
                        id: s.id,
                        counted: if sends { "sent" } else { "received" }.into(),
                        bytes: s.bytes,
                        retransmits: (sends && s.retransmits >= 0).then_some(s.retransmits),
                        jitter_ns: (udp && !sends).then_some((s.jitter * 1e9) as u64),
                        lost: (udp && !sends).then_some(s.errors),
                        packets: udp.then_some(s.packets),
                        seconds: s.end_time.zip(s.start_time).map(|(e, b)| e - b),
                    }
                })
                .collect(),
            rate_bps: None,
        }
    }

    /// The peer's count for a stream id.
    pub fn stream(&self, id: i64) -> Option<&PeerStream> {
        self.streams.iter().find(|s| s.id == id)
    }

    pub fn write_text(&self, w: &mut dyn Write) -> std::io::Result<()> {
        if !self.results_received {
            return writeln!(w, "iperf3 {}: no results received", self.role);
        }
        writeln!(
            w,
            "iperf3 {} reported: {} bytes over {} streams, CPU {:.1} % (user {:.1}, system {:.1})",
            self.role,
            self.bytes,
            self.streams.len(),
            self.cpu_util_total_pct.unwrap_or(0.0),
            self.cpu_util_user_pct.unwrap_or(0.0),
            self.cpu_util_system_pct.unwrap_or(0.0)
        )?;
        if let Some(r) = self.rate_bps {
            writeln!(
                w,
                "  paced at {:.1} Mbit/s a stream (iperf3's bandwidth)",
                r as f64 / 1e6
            )?;
        }
        for s in &self.streams {
            write!(w, "  stream {:>3}: {} {} bytes", s.id, s.counted, s.bytes)?;
            if let Some(r) = s.retransmits {
                write!(w, ", {r} retransmits")?;
            }
            if let (Some(j), Some(l)) = (s.jitter_ns, s.lost) {
                write!(w, ", jitter {:.3} ms, {l} lost", j as f64 / 1e6)?;
            }
            writeln!(w)?;
        }
        Ok(())
    }
}

/// `misura tcp --peer iperf3`'s result: the tcp result and the peer's.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Iperf3TcpReport {
    #[serde(flatten)]
    pub report: TcpReport,
    pub peer: PeerFigures,
}

/// `misura udp --peer iperf3`'s result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Iperf3UdpReport {
    #[serde(flatten)]
    pub report: UdpReport,
    pub peer: PeerFigures,
}

fn direction(p: &Iperf3Plan) -> &'static str {
    match (p.params.bidirectional, p.params.reverse) {
        (true, _) => "bidir",
        (false, true) => "reverse",
        _ => "forward",
    }
}

fn endpoint(p: &Iperf3Plan, r: &PeerRun, netns: &Option<String>) -> Endpoint {
    Endpoint {
        server: p.host.clone(),
        address: r.addr.to_string(),
        netns: netns.clone(),
        authenticated: false,
        clients: 1,
        found_by_probing: None,
    }
}

fn host(netns: &Option<String>) -> misura_report::HostFingerprint {
    misura_run::host::fingerprint(LoopTuning {
        netns: netns.clone(),
        ..Default::default()
    })
}

/// The receiver's count of a stream: the peer's for what misura sent, ours
/// for what it received (None when the peer's results did not come).
fn receiver_bytes(s: &StreamRow, peer: &PeerFigures) -> Option<u64> {
    if s.outcome.sender {
        if peer.rejected_streams.contains(&s.id) {
            return None;
        }
        peer.stream(s.id).map(|x| x.bytes)
    } else {
        Some(s.outcome.bytes)
    }
}

fn peer_figures(p: &Iperf3Plan, r: &PeerRun) -> PeerFigures {
    let ours_send: Vec<i64> = r
        .streams
        .iter()
        .filter(|s| s.outcome.sender)
        .map(|s| s.id)
        .collect();
    let udp = p.params.protocol == Protocol::Udp;
    let mut f = PeerFigures {
        rate_bps: p.params.bandwidth,
        ..PeerFigures::of(
            "server",
            None,
            r.peer.as_ref(),
            |id| !ours_send.contains(&id),
            udp,
        )
    };
    if let Some(res) = &r.peer {
        let own = |id: i64| {
            r.streams.iter().find(|s| s.id == id).map(|s| OwnCount {
                sent: s.outcome.sender,
                bytes: s.outcome.bytes,
            })
        };
        let (why, bad, cpu_bad) = vet(res, &own, r.elapsed_ns, !udp);
        if cpu_bad {
            f.cpu_util_total_pct = None;
            f.cpu_util_user_pct = None;
            f.cpu_util_system_pct = None;
        }
        f.implausible = why;
        f.rejected_streams = bad;
    }
    f
}

pub fn tcp_report(p: &Iperf3Plan, r: &PeerRun, netns: &Option<String>) -> Iperf3TcpReport {
    let peer = peer_figures(p, r);
    let el = r.elapsed_ns;
    let streams: Vec<TcpStreamResult> = r
        .streams
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let o = &s.outcome;
            let info = o.info.unwrap_or_default();
            let recv = receiver_bytes(s, &peer);
            TcpStreamResult {
                index: k as u32,
                local_port: s.local_port,
                sent_bytes: if o.sender { o.bytes } else { 0 },
                received_bytes: if o.sender { 0 } else { o.bytes },
                receiver_bytes: recv,
                throughput_bps: bits_per_s(recv.unwrap_or(o.bytes), el),
                sndbuf_granted: s.sndbuf,
                rcvbuf_granted: s.rcvbuf,
                retransmits: if o.sender { info.total_retrans } else { 0 },
                rtt_us: info.rtt_us,
                rttvar_us: info.rttvar_us,
                min_rtt_us: info.min_rtt_us,
                snd_cwnd: info.snd_cwnd,
                pmtu: info.pmtu,
            }
        })
        .collect();
    let sum = |f: &dyn Fn(&TcpStreamResult) -> u64| streams.iter().map(f).sum::<u64>();
    let fwd = sum(&|s| {
        if s.sent_bytes > 0 || s.received_bytes == 0 {
            s.receiver_bytes.unwrap_or(0)
        } else {
            0
        }
    });
    let rev = sum(&|s| s.received_bytes);
    let receiver = fwd + rev;
    let rtts: Vec<f64> = streams
        .iter()
        .filter(|s| s.rtt_us > 0)
        .map(|s| s.rtt_us as f64)
        .collect();
    let cpu = CpuUse::new(r.cpu_local.0, r.cpu_local.1, el.max(1));
    let bidir = p.params.bidirectional;
    let row = TcpClientResult {
        client: 0,
        test_id: None,
        complete: r.complete,
        stop_reason: r.stop_reason.clone(),
        elapsed_ns: el,
        sent_bytes: sum(&|s| s.sent_bytes),
        received_bytes: rev,
        receiver_bytes: receiver,
        throughput_bps: bits_per_s(receiver, el),
        forward_bps: bidir.then(|| bits_per_s(fwd, el)),
        reverse_bps: bidir.then(|| bits_per_s(rev, el)),
        retransmits: streams.iter().map(|s| s.retransmits as u64).sum(),
        rtt_us_mean: (!rtts.is_empty()).then(|| rtts.iter().sum::<f64>() / rtts.len() as f64),
        cpu_local: cpu,
        cpu_remote: None,
        service_demand_local_us_per_kb: cpu.us_per_kb(sum(&|s| s.sent_bytes) + rev),
        service_demand_remote_us_per_kb: None,
        server: None,
        streams,
    };
    let window = p.params.window;
    Iperf3TcpReport {
        report: TcpReport {
            meta: misura_cli::meta::meta("misura.tcp", r.started_at.clone()),
            complete: r.complete,
            stop_reason: r.stop_reason.clone(),
            throughput_bps: row.throughput_bps,
            retransmits: row.retransmits,
            host: host(netns),
            config: TcpConfig {
                endpoint: endpoint(p, r, netns),
                streams: p.params.parallel,
                direction: direction(p).into(),
                msg_size: p.params.len.unwrap_or(128 * 1024),
                sndbuf_requested: window,
                rcvbuf_requested: window,
                nodelay: p.params.nodelay,
                duration_ns: p.params.time * 1_000_000_000,
                interval_ns: None,
                threads: "per-stream".into(),
                busy_poll_ns: 0,
            },
            clients: vec![row],
            intervals: vec![],
            warnings: implausible_warning("iperf3 server", &peer.implausible)
                .into_iter()
                .collect(),
        },
        peer,
    }
}

pub fn udp_report(p: &Iperf3Plan, r: &PeerRun, netns: &Option<String>) -> Iperf3UdpReport {
    let peer = peer_figures(p, r);
    let el = r.elapsed_ns;
    let (mut sent_p, mut sent_b, mut errs) = (0, 0, 0);
    let (mut rx_p, mut rx_b, mut lost, mut reord) = (0u64, 0u64, 0u64, 0u64);
    let mut jitter: Option<u64> = None;
    for s in &r.streams {
        let o = &s.outcome;
        if o.sender {
            sent_p += o.packets;
            sent_b += o.bytes;
            errs += o.send_errors;
            let ps = peer
                .stream(s.id)
                .filter(|ps| !peer.rejected_streams.contains(&ps.id));
            if let Some(ps) = ps {
                // iperf3's receiver: highest sequence number and losses.
                let l = ps.lost.unwrap_or(0).max(0) as u64;
                rx_p =
                    rx_p.saturating_add((ps.packets.unwrap_or(0).max(0) as u64).saturating_sub(l));
                rx_b = rx_b.saturating_add(ps.bytes);
                lost = lost.saturating_add(l);
                jitter = jitter.max(ps.jitter_ns);
            }
        } else {
            rx_p += o.received_packets;
            rx_b += o.bytes;
            lost += o.lost;
            reord += o.out_of_order;
            sent_p += o.packets;
            jitter = jitter.max(Some((o.jitter_s * 1e9) as u64));
        }
    }
    let reverse = p.params.reverse && !p.params.bidirectional;
    let rate = p.params.bandwidth.unwrap_or(1_000_000);
    let len = p.params.len.unwrap_or(1460);
    let row = UdpClientResult {
        client: 0,
        test_id: None,
        complete: r.complete,
        stop_reason: r.stop_reason.clone(),
        receiver: if reverse { "client" } else { "server" }.into(),
        elapsed_ns: el,
        sent_packets: sent_p,
        sent_bytes: sent_b,
        send_errors: errs,
        emsgsize_errors: 0,
        received_packets: rx_p,
        received_bytes: rx_b,
        lost,
        loss_ratio: if sent_p > 0 {
            lost as f64 / sent_p as f64
        } else {
            0.0
        },
        duplicates: 0,
        reordered: reord,
        jitter_ns: jitter,
        owd_min_ns: None,
        owd_max_ns: None,
        owd_variation_ns: None,
        offered_bps: (rate * p.params.parallel as u64) as f64,
        throughput_bps: bits_per_s(rx_b, el),
        path_mtu: None,
        cpu_local: CpuUse::new(r.cpu_local.0, r.cpu_local.1, el.max(1)),
        cpu_remote: None,
        pacing: None,
        server: None,
    };
    Iperf3UdpReport {
        report: UdpReport {
            meta: misura_cli::meta::meta("misura.udp", r.started_at.clone()),
            complete: r.complete,
            stop_reason: r.stop_reason.clone(),
            throughput_bps: row.throughput_bps,
            lost: row.lost,
            loss_ratio: row.loss_ratio,
            host: host(netns),
            config: UdpConfig {
                endpoint: endpoint(p, r, netns),
                direction: direction(p).into(),
                rate_bps: rate,
                msg_size: len,
                duration_ns: p.params.time * 1_000_000_000,
                df: false,
                pacing: "sleep".into(),
            },
            clients: vec![row],
            warnings: implausible_warning("iperf3 server", &peer.implausible)
                .into_iter()
                .collect(),
        },
        peer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use misura_wire::iperf3::StreamResult;

    fn results(bytes: u64, cpu: f64) -> Results {
        Results {
            cpu_util_total: cpu,
            cpu_util_user: cpu,
            cpu_util_system: 0.0,
            sender_has_retransmits: -1,
            congestion_used: None,
            streams: vec![StreamResult {
                id: 1,
                bytes,
                retransmits: -1,
                jitter: 0.0,
                errors: 0,
                packets: 0,
                start_time: Some(0.0),
                end_time: Some(1.0),
            }],
        }
    }

    #[test]
    fn a_peer_count_is_checked_against_ours_and_physics() {
        let sent = |_: i64| {
            Some(OwnCount {
                sent: true,
                bytes: 1000,
            })
        };
        let recv = |_: i64| {
            Some(OwnCount {
                sent: false,
                bytes: 1000,
            })
        };
        let (why, bad, cpu) = vet(&results(1000, 5.0), &sent, 1_000_000_000, true);
        assert!(why.is_empty() && bad.is_empty() && !cpu, "{why:?}");
        let (why, bad, _) = vet(&results(1001, 5.0), &sent, 1_000_000_000, true);
        assert_eq!(bad, [1]);
        assert!(why[0].contains("more than the 1000 bytes this end sent"));
        // Sent: at least what this end received, at most 1.6 Tbit/s.
        let (_, bad, _) = vet(&results(999, 5.0), &recv, 1_000_000_000, true);
        assert_eq!(bad, [1]);
        let (why, bad, _) = vet(&results(1 << 53, 5.0), &recv, 1_000_000_000, true);
        assert_eq!(bad, [1], "{why:?}");
        let (why, _, cpu) = vet(&results(1000, -1.0), &sent, 1_000_000_000, true);
        assert!(cpu && why.iter().any(|w| w.contains("cpu_util_total -1")));
        let none = |_: i64| None;
        let (_, bad, _) = vet(&results(1, 5.0), &none, 1_000_000_000, true);
        assert_eq!(bad, [1], "a stream the test does not have");
    }
}
