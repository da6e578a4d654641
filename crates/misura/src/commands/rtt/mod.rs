//! `misura rtt`: the STAMP Session-Sender (UDP), with kernel timestamps at
//! both ends, the reflector's turnaround removed, and one-way delays from an
//! offset estimated on the minimum-RTT probes.

pub mod args;
pub use args::RttArgs;

pub mod transport;

use crate::commands::rtt::transport::Transport;
use crate::shared::exit::Failure;
use crate::shared::meta::{meta, now_rfc3339};
use crate::shared::output::{Finished, Report};
use crate::shared::units;
use anyhow::{Context, Result};
use misura_measure::rtt::{seed_ideal_rtt_ns, OffsetTracker, ProbeTimes};
use misura_measure::stamp_client::{ProbeRecord, Probes, Reply, ReplyMatch};
use misura_measure::{LinkModel, Pattern, Poll, Schedule};
use misura_report::rtt::*;
use misura_report::LoopTuning;
use misura_stats::{Rfc3550Jitter, Summary};
use misura_sys::clock::realtime_ns;
use misura_sys::udp::UdpTsSocket;
use misura_wire::stamp::{
    self, emit_tlvs, ErrorEstimate, Mode, ReflectorRepr, SenderRepr, StampSenderPacket,
    StampTimestampFormat, TimestampInfo, TlvFlags, TlvRepr, Tlvs,
};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

const WARMUP: u32 = 8;
const FU_TLV_LEN: usize = 20;
const TI_TLV_LEN: usize = 8;

/// The TLVs a request of `size` bytes carries: Follow-Up Telemetry and
/// Timestamp Information when they fit, Extra Padding for the rest.
struct RequestLayout {
    size: usize,
    follow_up: bool,
    timestamp_info: bool,
    padding: Option<usize>,
}

fn layout(size: usize, base: usize) -> Result<RequestLayout> {
    if size < base {
        return Err(Failure::Params(format!(
            "request size {size} is below the STAMP minimum of {base} bytes for this mode: use --request {base} or more"
        ))
        .into());
    }
    let mut rest = size - base;
    let follow_up = rest >= FU_TLV_LEN;
    if follow_up {
        rest -= FU_TLV_LEN;
    }
    let mut timestamp_info = rest >= TI_TLV_LEN;
    if timestamp_info {
        rest -= TI_TLV_LEN;
    }
    // A padding TLV needs its 4-byte header; 1-3 spare bytes cannot be expressed.
    if (1..4).contains(&rest) && timestamp_info {
        timestamp_info = false;
        rest += TI_TLV_LEN;
    }
    if (1..4).contains(&rest) {
        return Err(Failure::Params(format!(
            "request size {size} leaves {rest} bytes that no TLV can fill: use {} or {}",
            size - rest,
            size + 4 - rest
        ))
        .into());
    }
    Ok(RequestLayout {
        size,
        follow_up,
        timestamp_info,
        padding: (rest >= 4).then(|| rest - 4),
    })
}

fn build_request(l: &RequestLayout, mode: Mode, ssid: u16, buf: &mut Vec<u8>) -> Result<()> {
    buf.clear();
    buf.resize(l.size, 0);
    let repr = SenderRepr {
        seq: 0,
        timestamp: [0; 8],
        error_estimate: ErrorEstimate::from_ns(1_000, false, StampTimestampFormat::Ntp),
        ssid,
        hmac: (mode == Mode::Authenticated).then_some([0; 16]),
    };
    let base = repr.emit(buf).context("building the STAMP request")?;
    let pad = vec![0u8; l.padding.unwrap_or(0)];
    let mut tlvs = Vec::new();
    if l.follow_up {
        tlvs.push(TlvRepr::FollowUpTelemetry {
            flags: TlvFlags(0),
            seq: 0,
            timestamp: [0; 8],
            mode: 0,
        });
    }
    if l.timestamp_info {
        tlvs.push(TlvRepr::TimestampInformation {
            flags: TlvFlags(0),
            info: TimestampInfo {
                sync_src_in: 0,
                timestamp_in: 0,
                sync_src_out: 0,
                timestamp_out: 0,
            },
            sub_tlvs: &[],
        });
    }
    if l.padding.is_some() {
        tlvs.push(TlvRepr::ExtraPadding {
            flags: TlvFlags(0),
            padding: &pad,
        });
    }
    let n = emit_tlvs(&tlvs, &mut buf[base..]).context("building the STAMP TLVs")?;
    debug_assert_eq!(base + n, l.size);
    Ok(())
}

fn method_name(m: u8) -> String {
    match m {
        stamp::timestamp_method::HW_ASSIST => "NIC hardware".into(),
        stamp::timestamp_method::SW_LOCAL => "software".into(),
        stamp::timestamp_method::CONTROL_PLANE => "control plane".into(),
        other => format!("method {other}"),
    }
}

fn sync_name(s: u8) -> String {
    match s {
        stamp::sync_source::NTP => "NTP-synchronised".into(),
        stamp::sync_source::PTP => "PTP-synchronised".into(),
        stamp::sync_source::LOCAL_FREE_RUNNING => "free-running".into(),
        other => format!("sync source {other}"),
    }
}

/// What a reply told us beyond its timestamps.
#[derive(Default)]
struct ReplyInfo {
    ti: Option<TimestampInfo>,
    fu_supported: Option<bool>,
}

fn decode_reply(
    buf: &[u8],
    mode: Mode,
    rx2: i64,
    rx_kernel: Option<i64>,
    rx_hw: Option<i64>,
) -> Option<(Reply, ReplyInfo)> {
    let r = ReflectorRepr::parse(buf, mode).ok()?;
    let fmt = r.error_estimate.format();
    let mut info = ReplyInfo::default();
    let mut follow_up = None;
    let tlv_area = &buf[mode.base_len().min(buf.len())..];
    for t in Tlvs::new(tlv_area).flatten() {
        match t {
            // A reflector that echoes the TLV without filling it leaves zeros.
            TlvRepr::TimestampInformation {
                flags, info: ti, ..
            } if !flags.contains(TlvFlags::U)
                && (ti.timestamp_in != 0 || ti.timestamp_out != 0) =>
            {
                info.ti = Some(ti)
            }
            TlvRepr::FollowUpTelemetry {
                flags,
                seq,
                timestamp,
                mode: _,
            } => {
                let ok = !flags.contains(TlvFlags::U);
                info.fu_supported = Some(ok);
                if ok && timestamp != [0; 8] {
                    follow_up = Some((seq, stamp::from_wire(timestamp, fmt)));
                }
            }
            _ => {}
        }
    }
    let reply = Reply {
        sender_seq: r.sender_seq,
        reflector_seq: r.seq,
        reflector_rx: stamp::from_wire(r.receive_timestamp, fmt),
        reflector_tx: stamp::from_wire(r.timestamp, fmt),
        sender_ttl: r.sender_ttl,
        response_bytes: buf.len() as u16,
        follow_up,
        rx2,
        rx_kernel,
        rx_hw,
    };
    Some((reply, info))
}

/// Streaming summaries of one group of probes.
struct Group {
    sent: u64,
    lost: u64,
    user: Summary,
    kernel: Summary,
    turnaround: Summary,
    network: Summary,
    forward: Summary,
    backward: Summary,
    jitter: Rfc3550Jitter,
    response_bytes: usize,
}

impl Group {
    fn new(threshold: Option<i64>) -> Group {
        let s = || Summary::with_threshold(threshold);
        Group {
            sent: 0,
            lost: 0,
            user: s(),
            kernel: s(),
            turnaround: s(),
            network: s(),
            forward: s(),
            backward: s(),
            jitter: Rfc3550Jitter::new(),
            response_bytes: 0,
        }
    }

    fn add(&mut self, p: &ProbeRecord, t: &ProbeTimes, one_way: Option<(i64, i64)>) {
        self.sent += 1;
        if p.lost {
            self.lost += 1;
            return;
        }
        self.response_bytes = p.response_bytes as usize;
        self.user.record(t.user_rtt());
        if let Some(k) = t.kernel_rtt() {
            self.kernel.record(k);
        }
        if let Some(x) = t.turnaround() {
            self.turnaround.record(x);
        }
        if let Some(n) = t.network_rtt() {
            self.network.record(n);
            self.jitter.update(0, n);
        }
        if let Some((f, b)) = one_way {
            self.forward.record(f);
            self.backward.record(b);
        }
    }

    fn latencies(&self) -> RttLatencies {
        let snap = |s: &Summary| (s.count() > 0).then(|| s.snapshot());
        RttLatencies {
            user_rtt: self.user.snapshot(),
            kernel_rtt: snap(&self.kernel),
            turnaround: snap(&self.turnaround),
            network_rtt: snap(&self.network),
            forward: snap(&self.forward),
            backward: snap(&self.backward),
            jitter_rfc3550_ns: (self.network.count() > 1).then(|| self.jitter.jitter_ns()),
            ipdv: snap(self.jitter.ipdv()),
        }
    }
}

/// The link rate for the ideal RTT: the flag, or the speed of the
/// interface the route to the target leaves by.
fn link_rate(a: &RttArgs, target: IpAddr) -> Result<(Option<u64>, String)> {
    if let Some(s) = &a.link_speed {
        return Ok((Some(units::rate_bps(s)?), "--link-speed".into()));
    }
    let dev = std::process::Command::new("ip")
        .args(["-j", "route", "get", &target.to_string()])
        .output()
        .ok()
        .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.stdout).ok())
        .and_then(|v| v.get(0)?.get("dev")?.as_str().map(String::from));
    if let Some(dev) = dev {
        if let Ok(info) = misura_sys::iface::interface_info(&dev) {
            if let Some(mbps) = info.speed_mbps.filter(|&m| m > 0) {
                return Ok((Some(mbps * 1_000_000), format!("interface {dev}")));
            }
        }
    }
    Ok((None, "unknown".into()))
}

fn link_rate_of(a: &RttArgs, interface: &str) -> Result<(Option<u64>, String)> {
    if let Some(s) = &a.link_speed {
        return Ok((Some(units::rate_bps(s)?), "--link-speed".into()));
    }
    let info = misura_sys::iface::interface_info(interface)?;
    Ok(match info.speed_mbps.filter(|&m| m > 0) {
        Some(m) => (Some(m * 1_000_000), format!("interface {interface}")),
        None => (None, "unknown".into()),
    })
}

fn one_way_for(tracker: &OffsetTracker, t: &ProbeTimes) -> Option<(i64, i64)> {
    let est = tracker.estimate_at(t.tx_kernel?)?;
    t.one_way(est.offset_ns.round() as i64)
}

pub fn run(a: &RttArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    if a.l2 && a.target.is_some() {
        return Err(Failure::Usage(
            "give either a HOST (STAMP over UDP) or --l2 --interface IF --peer MAC, not both"
                .into(),
        )
        .into());
    }
    let key = match &a.key_file {
        Some(p) => {
            let bytes = std::fs::read(p).map_err(|e| {
                Failure::Usage(format!("cannot read the key file {}: {e}", p.display()))
            })?;
            Some(
                misura_measure::auth::StampKey::from_file_contents(&bytes)
                    .map_err(|e| Failure::Usage(format!("key file {}: {e}", p.display())))?,
            )
        }
        None => None,
    };
    let mode = if key.is_some() {
        Mode::Authenticated
    } else {
        Mode::Unauthenticated
    };
    let pattern: Pattern = a.pattern.parse().map_err(Failure::Usage)?;
    let period_ns = match (&a.period, a.rate) {
        (Some(p), _) => units::duration_ns(p)?,
        (None, Some(r)) if r > 0.0 && r.is_finite() => (1e9 / r).round() as i64,
        (None, Some(r)) => {
            return Err(Failure::Params(format!("--rate {r} must be positive")).into())
        }
        (None, None) => 100_000_000,
    };
    if period_ns <= 0 {
        return Err(Failure::Params("the period must be positive".into()).into());
    }
    let timeout_ns = units::duration_ns(&a.timeout)?;
    if timeout_ns <= 0 {
        return Err(Failure::Usage("--timeout must be positive".into()).into());
    }
    let threshold_ns = a.threshold.as_deref().map(units::duration_ns).transpose()?;
    let duration_ns = a.duration.as_deref().map(units::duration_ns).transpose()?;
    let count = match (a.count, duration_ns) {
        (Some(0), _) => return Err(Failure::Usage("--count must be at least 1".into()).into()),
        (Some(n), _) => Some(n),
        (None, Some(_)) => None,
        (None, None) => Some(100),
    };
    let interval_ns = a.interval.as_deref().map(units::duration_ns).transpose()?;
    let base = mode.base_len();
    let mut warnings = Vec::new();
    let mut sizes: Vec<usize> = if a.request.is_empty() {
        vec![base + FU_TLV_LEN + TI_TLV_LEN]
    } else {
        a.request.clone()
    };
    if let Some(resp) = a.response {
        for s in sizes.iter_mut() {
            if resp > *s {
                warnings.push(format!(
                    "request padded from {} to {resp} bytes: a reflector never answers with more than it received (RFC 8762 symmetric size), so a {resp}-byte response needs a {resp}-byte request",
                    *s
                ));
                *s = resp;
            } else if resp < *s {
                return Err(Failure::Params(format!(
                    "--response {resp} is smaller than the request ({s} bytes): STAMP reflectors answer with the request's full length; use --request {resp}"
                ))
                .into());
            }
        }
    }
    let layouts: Vec<RequestLayout> = sizes
        .iter()
        .map(|&s| layout(s, base))
        .collect::<Result<_>>()?;
    if sizes.iter().any(|&s| s > 65_507) {
        return Err(Failure::Params("a UDP payload cannot exceed 65 507 bytes".into()).into());
    }

    // Transport and timestamping.
    let ssid = (realtime_ns() as u64 ^ std::process::id() as u64) as u16 | 1;
    let (mut tr, granted) = if a.l2 {
        let iface = a.interface.as_deref().unwrap_or_default();
        let peer: misura_wire::MacAddr = a
            .peer
            .as_deref()
            .unwrap_or_default()
            .parse()
            .map_err(|e| Failure::Usage(format!("--peer: {e}")))?;
        let ethertype = units::ethertype(&a.ethertype)?;
        let session = (realtime_ns() as u64 ^ (std::process::id() as u64) << 20) as u32;
        let t = Transport::l2(iface, peer, ethertype, session)?;
        let g = match &t {
            Transport::L2(l) => l.sock.enable_timestamping(false)?,
            Transport::Udp(_) => unreachable!(),
        };
        (t, g)
    } else {
        let Some(target_s) = &a.target else {
            return Err(Failure::Usage("misura rtt needs a reflector: misura rtt HOST[:PORT], or --l2 --interface IF --peer MAC (see misura rtt --help)".into()).into());
        };
        let target = crate::shared::target::resolve(target_s, a.port)?;
        let local_bind: SocketAddr = match target {
            SocketAddr::V4(_) => "0.0.0.0:0".parse().unwrap(),
            SocketAddr::V6(_) => "[::]:0".parse().unwrap(),
        };
        let sock = UdpTsSocket::bind(local_bind)?;
        let g = sock.enable_timestamping(false)?;
        (Transport::udp(sock, target), g)
    };
    let off = tr.stamp_offset();
    let mut requests: Vec<Vec<u8>> = Vec::new();
    for l in &layouts {
        let mut b = Vec::new();
        build_request(l, mode, ssid, &mut b)?;
        requests.push(tr.frame(&b)?);
    }
    let (link_bps, link_source) = match &tr {
        Transport::Udp(u) => link_rate(a, u.target.ip())?,
        Transport::L2(l) => link_rate_of(a, &l.interface)?,
    };
    let ip_overhead = tr.payload_overhead();
    let target_name = tr.target();

    let started_at = now_rfc3339();
    let mut tuning = LoopTuning {
        netns: a.ns.netns.clone(),
        ..Default::default()
    };
    if let Some(cpu) = a.cpu {
        misura_sys::sched::pin_to_cpu(cpu)?;
        tuning.cpu = Some(cpu);
    }

    let mut rx_buf = vec![0u8; 65_536];
    let send = |tr: &mut Transport, buf: &mut [u8], seq: u32| -> Result<Option<(i64, i64)>> {
        tr.set_seq(buf, seq);
        let stamp_part = &mut buf[off..];
        StampSenderPacket::new_unchecked(&mut *stamp_part, mode).set_seq(seq);
        let stamped = realtime_ns();
        StampSenderPacket::new_unchecked(&mut *stamp_part, mode)
            .set_timestamp(stamp::to_wire(stamped, StampTimestampFormat::Ntp));
        // The HMAC covers the timestamp, so it is computed after it; TX1 is
        // read after the HMAC so the user-level RTT does not include it.
        let tx1 = match &key {
            Some(k) => {
                let mac = misura_measure::auth::hmac16(k, &[&stamp_part[..96]]);
                StampSenderPacket::new_unchecked(&mut *stamp_part, mode).set_hmac(mac);
                realtime_ns()
            }
            None => stamped,
        };
        let ok = tr.send(buf, seq)?;
        let tx2 = realtime_ns();
        Ok(ok.then_some((tx1, tx2)))
    };

    // Warm-up: the first datagrams after enabling timestamps may come back
    // unstamped, and the first replies tell what the reflector supports.
    let mut info = ReplyInfo::default();
    let mut warm_unstamped = 0u64;
    let mut warm_replies = 0u64;
    let mut warm_fu_filled = false;
    let mut icmp = 0u64;
    for w in 0..WARMUP {
        if stop.load(Ordering::Relaxed) != 0 {
            break;
        }
        let mut b = requests[0].clone();
        if send(&mut tr, &mut b, w)?.is_none() {
            continue;
        }
        let deadline = realtime_ns() + 200_000_000;
        loop {
            let now = realtime_ns();
            if now >= deadline {
                break;
            }
            tr.wait(Duration::from_nanos((deadline - now) as u64).min(Duration::from_millis(20)))?;
            tr.poll_tx(|_, _, _| {})?;
            if let (_, Some(m)) = tr.recv(&mut rx_buf)? {
                let end = (m.start + m.len).min(rx_buf.len());
                if let Some((r, i)) =
                    decode_reply(&rx_buf[m.start..end], mode, m.rx2, m.rx_kernel, m.rx_hw)
                {
                    if r.sender_seq == w {
                        warm_replies += 1;
                        if m.rx_kernel.is_none() {
                            warm_unstamped += 1;
                        }
                        info.ti = i.ti.or(info.ti);
                        info.fu_supported = i.fu_supported.or(info.fu_supported);
                        warm_fu_filled |= r.follow_up.is_some();
                        break;
                    }
                }
            }
        }
        icmp += tr.take_icmp_errors();
    }
    tr.poll_tx(|_, _, _| {})?;
    while tr.recv(&mut rx_buf)?.0 {}
    if warm_replies == 0 && stop.load(Ordering::Relaxed) == 0 {
        let why = if icmp > 0 {
            "the host answered ICMP port unreachable: nothing listens on that UDP port (start `misura reflect` or another STAMP reflector there)".to_string()
        } else {
            format!("no reply within 200 ms to {WARMUP} probes: is a reflector running at {target_name}, reachable, and using the same mode (authenticated: --key-file)?")
        };
        return Err(anyhow::anyhow!("no reply from {target_name}: {why}"));
    }
    // Two-step only when the reflector actually filled a follow-up during the
    // warm-up (one that merely echoes the TLV leaves it zero).
    let expect_fu =
        layouts.iter().all(|l| l.follow_up) && info.fu_supported == Some(true) && warm_fu_filled;

    // Measurement.
    let first_seq = WARMUP;
    let capacity =
        ((timeout_ns as f64 / period_ns as f64) * 2.0 + 16.0).min((1 << 20) as f64) as usize;
    let mut probes = Probes::new(capacity, first_seq, granted.software_tx, expect_fu);
    let start = realtime_ns() + 1_000_000;
    let mut schedule = Schedule::new(pattern, period_ns, period_ns - 1, start, a.seed);
    let end_ns = duration_ns.map(|d| start + d);
    let mut groups: Vec<Group> = sizes.iter().map(|_| Group::new(threshold_ns)).collect();
    let mut overall = Group::new(threshold_ns);
    let mut interval_group = Group::new(threshold_ns);
    let mut next_interval = interval_ns.map(|i| start + i);
    let mut tracker = OffsetTracker::new(10, 4096);
    let mut frames_out: Option<BufWriter<File>> = match &a.frames {
        Some(p) => {
            let f = File::create(p).map_err(|e| {
                Failure::Output(format!(
                    "cannot write the per-probe log {}: {e}",
                    p.display()
                ))
            })?;
            let mut w = BufWriter::new(f);
            writeln!(w, "{PROBES_HEADER}")?;
            Some(w)
        }
        None => None,
    };
    let (mut sent, mut malformed, mut tx_missing, mut rx_missing, mut auth_failed) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut sending = true;
    let mut drain_until = i64::MAX;
    let mut stop_reason = "finished".to_string();
    let mut bufs = requests.clone();
    let mut frames_error = None;
    let handle = |rec: ProbeRecord,
                  groups: &mut Vec<Group>,
                  overall: &mut Group,
                  interval_group: &mut Group,
                  tracker: &mut OffsetTracker,
                  frames_out: &mut Option<BufWriter<File>>,
                  frames_error: &mut Option<String>,
                  tx_missing: &mut u64,
                  rx_missing: &mut u64| {
        let t = rec.times();
        if !rec.lost {
            tracker.update(&t);
            if rec.tx_kernel.is_none() {
                *tx_missing += 1;
            }
            if rec.rx_kernel.is_none() {
                *rx_missing += 1;
            }
        }
        let ow = if rec.lost {
            None
        } else {
            one_way_for(tracker, &t)
        };
        groups[rec.size_index as usize].add(&rec, &t, ow);
        overall.add(&rec, &t, ow);
        interval_group.add(&rec, &t, ow);
        if let Some(w) = frames_out.as_mut() {
            if let Err(e) = write_probe_row(w, &rec, ow) {
                frames_error.get_or_insert(e.to_string());
            }
        }
    };
    let t_start = realtime_ns();
    let planned = duration_ns
        .map(|d| d as f64 / 1e9)
        .into_iter()
        .chain(count.map(|n| n as f64 * period_ns as f64 / 1e9))
        .fold(f64::INFINITY, f64::min);
    let mut progress = crate::shared::progress::Progress::new(
        a.out.quiet || a.out.json,
        planned
            .is_finite()
            .then(|| Duration::from_secs_f64(planned)),
    );
    loop {
        progress.tick(|| {
            let q = |s: &Summary, p: f64| {
                s.quantile(p)
                    .map_or("-".into(), |v| format!("{:.3}", v as f64 / 1000.0))
            };
            format!(
                "{} probes, {} lost; network RTT median {} µs p99 {} µs; user median {} µs",
                overall.sent,
                overall.lost,
                q(&overall.network, 0.5),
                q(&overall.network, 0.99),
                q(&overall.user, 0.5)
            )
        });
        let sig = stop.load(Ordering::Relaxed);
        if sig != 0 && sending {
            sending = false;
            stop_reason = format!("interrupted by signal {sig}; partial results");
            drain_until = realtime_ns() + timeout_ns.min(1_000_000_000);
        }
        let now = realtime_ns();
        if sending {
            if count.is_some_and(|n| sent >= n) || end_ns.is_some_and(|e| now >= e) {
                sending = false;
                drain_until = now + timeout_ns;
            } else if !probes.is_full() {
                if let Poll::Send { .. } = schedule.poll(now) {
                    let si = (sent % sizes.len() as u64) as usize;
                    let seq = probes.next_seq();
                    if let Some((tx1, tx2)) = send(&mut tr, &mut bufs[si], seq)? {
                        probes.on_sent(si as u16, sizes[si] as u16, tx1, tx2);
                        sent += 1;
                    }
                }
            }
        }
        tr.poll_tx(|seq, sw, hw| {
            probes.on_tx_stamp(seq, sw, hw);
        })?;
        loop {
            let (read, got) = tr.recv(&mut rx_buf)?;
            if !read {
                break;
            }
            let Some(m) = got else { continue };
            let end = (m.start + m.len).min(rx_buf.len());
            let pkt = &rx_buf[m.start..end];
            if let Some(k) = &key {
                let ok = pkt.len() >= stamp::AUTH_LEN
                    && misura_measure::auth::verify16(k, &[&pkt[..96]], &pkt[96..112]);
                if !ok {
                    auth_failed += 1;
                    continue;
                }
            }
            match decode_reply(pkt, mode, m.rx2, m.rx_kernel, m.rx_hw) {
                Some((r, i)) => {
                    if info.ti.is_none() {
                        info.ti = i.ti;
                    }
                    let _: ReplyMatch = probes.on_reply(&r);
                }
                None => malformed += 1,
            }
        }
        let now = realtime_ns();
        while let Some(rec) = probes.pop_complete(now, timeout_ns) {
            handle(
                rec,
                &mut groups,
                &mut overall,
                &mut interval_group,
                &mut tracker,
                &mut frames_out,
                &mut frames_error,
                &mut tx_missing,
                &mut rx_missing,
            );
        }
        if let (Some(ni), Some(iv)) = (next_interval, interval_ns) {
            if now >= ni {
                if !a.out.quiet {
                    let l = interval_group.latencies();
                    let med = |s: Option<&misura_stats::SummarySnapshot>| {
                        s.and_then(|s| s.median_ns)
                            .map_or("-".into(), |v| format!("{:.3}", v as f64 / 1000.0))
                    };
                    eprintln!(
                        "[{:>7.1} s] probes {} lost {}  median µs: user {} kernel {} network {}",
                        (now - t_start) as f64 / 1e9,
                        interval_group.sent,
                        interval_group.lost,
                        med(Some(&l.user_rtt)),
                        med(l.kernel_rtt.as_ref()),
                        med(l.network_rtt.as_ref())
                    );
                }
                interval_group = Group::new(threshold_ns);
                next_interval = Some(ni + iv);
            }
        }
        if !sending && (probes.outstanding() == 0 || now > drain_until) {
            break;
        }
        // Sleep in poll(2) until a reply or the next due probe; spin for the
        // last stretch so the schedule stays accurate.
        let until = if sending {
            schedule.next_due()
        } else {
            now + 1_000_000
        };
        let wait = until - realtime_ns();
        if wait > 200_000 {
            tr.wait(Duration::from_nanos((wait - 100_000) as u64).min(Duration::from_millis(50)))?;
        }
    }
    progress.done();
    while let Some(rec) = probes.pop_any() {
        handle(
            rec,
            &mut groups,
            &mut overall,
            &mut interval_group,
            &mut tracker,
            &mut frames_out,
            &mut frames_error,
            &mut tx_missing,
            &mut rx_missing,
        );
    }
    let elapsed_s = (realtime_ns() - t_start) as f64 / 1e9;
    if let Some(w) = frames_out.as_mut() {
        if let Err(e) = w.flush() {
            frames_error.get_or_insert(e.to_string());
        }
    }
    icmp += tr.take_icmp_errors();

    // Report.
    let link = link_bps.map(|r| LinkModel::new(r, false));
    let per_size: Vec<RttSizeResult> = sizes
        .iter()
        .zip(&groups)
        .map(|(&s, g)| {
            let lat = g.latencies();
            let ideal = link.map(|l| {
                let physical = 2.0 * l.wire_time_ns(s + ip_overhead);
                let err = |x: &Option<misura_stats::SummarySnapshot>| {
                    x.as_ref()
                        .and_then(|s| s.median_ns)
                        .map(|m| misura_measure::rtt::error_percent(m as f64, physical))
                };
                IdealRtt {
                    physical_ns: physical,
                    seed_convention_ns: seed_ideal_rtt_ns(s, l.rate_bps),
                    user_error_percent: err(&Some(lat.user_rtt.clone())),
                    kernel_error_percent: err(&lat.kernel_rtt),
                    network_error_percent: err(&lat.network_rtt),
                }
            });
            RttSizeResult {
                request_bytes: s,
                response_bytes: if g.response_bytes > 0 {
                    g.response_bytes
                } else {
                    s
                },
                sent: g.sent,
                received: g.sent - g.lost,
                lost: g.lost,
                histogram_network_rtt: g.network.log_histogram(10),
                histogram_user_rtt: g.user.log_histogram(10),
                latency: lat,
                ideal,
            }
        })
        .collect();
    let offset = tracker.estimate_at(realtime_ns()).map(|e| OffsetReport {
        method: "estimated from minimum-RTT probes (the clocks are not known to be synchronised): one-way delays assume the quietest probes were symmetric".into(),
        offset_ns: e.offset_ns,
        uncertainty_ns: e.uncertainty_ns,
        skew_ppm: e.skew_ppm,
        windows: e.windows,
    });
    let host = crate::shared::host::fingerprint(tuning);
    warnings.extend(
        crate::shared::host::warnings(&host)
            .into_iter()
            .filter(|w| !w.contains("not pinned") && !w.contains("memory not locked")),
    );
    if !expect_fu {
        warnings.push(if info.fu_supported == Some(false) || (info.fu_supported == Some(true) && !warm_fu_filled) {
            "the reflector does not fill Follow-Up Telemetry: its transmit time is the reply's own Timestamp field, taken before sending, so the turnaround misses its send path and the network RTT still contains it (slightly high)".into()
        } else {
            "requests carry no Follow-Up Telemetry TLV (too small): the reflector's transmit time is its reply Timestamp field, taken before sending".into()
        });
    }
    if let Some(e) = frames_error {
        warnings.push(format!("writing the per-probe log failed: {e}"));
    }
    if icmp > 0 {
        warnings.push(format!(
            "{icmp} ICMP errors (unreachable) were received for the probes"
        ));
    }
    let ti = info.ti;
    let report = RttReport {
        meta: meta("misura.rtt", started_at),
        complete: stop_reason == "finished",
        stop_reason,
        host,
        config: RttConfig {
            transport: tr.name().into(),
            target: target_name.clone(),
            local: tr.local(),
            interface: match &tr {
                Transport::L2(l) => Some(l.interface.clone()),
                Transport::Udp(_) => None,
            },
            netns: a.ns.netns.clone(),
            authenticated: key.is_some(),
            pattern,
            period_ns,
            count,
            duration_s: duration_ns.map(|d| d as f64 / 1e9),
            request_sizes: sizes.clone(),
            response_size: a.response,
            timeout_ns,
            threshold_ns,
            link_rate_bps: link_bps,
            link_speed_source: link_source,
            ssid,
            seed: a.seed,
        },
        timestamps: RttTimestamps {
            timescale: "CLOCK_REALTIME, integer ns (client and reflector each on their own clock)"
                .into(),
            client_tx: if granted.software_tx {
                "kernel software".into()
            } else {
                "user clock".into()
            },
            client_rx: if granted.software_rx {
                "kernel software".into()
            } else {
                "user clock".into()
            },
            reflector_rx: ti.map(|t| method_name(t.timestamp_in)),
            reflector_tx: ti.map(|t| method_name(t.timestamp_out)),
            reflector_sync: ti.map(|t| sync_name(t.sync_src_out)),
            reflector_two_step: probes.follow_ups() > 0,
            warmup_probes: WARMUP as u64,
            warmup_unstamped: warm_unstamped,
        },
        clock_offset: offset,
        totals: RttTotals {
            sent,
            received: overall.sent - overall.lost,
            lost: overall.lost,
            duplicates: probes.duplicates(),
            late: probes.late(),
            reordered: probes.reordered(),
            unknown: probes.unknown(),
            malformed_replies: malformed,
            auth_failed,
            follow_ups: probes.follow_ups(),
            tx_stamp_missing: tx_missing,
            rx_stamp_missing: rx_missing,
            icmp_errors: icmp,
        },
        overall: overall.latencies(),
        per_size,
        elapsed_s,
        frames_file: a.frames.as_ref().map(|p| p.display().to_string()),
        warnings,
    };
    let no_reply = report.totals.received == 0 && sent > 0;
    let target = report.config.target.clone();
    let report = Report::new(report, "rtt", target, write_text).with_csv(write_csv);
    if no_reply {
        eprintln!("misura: no reply to any of {sent} probes from {target_name}");
        return Ok(Finished::with_code(report, crate::shared::exit::ERROR));
    }
    Ok(Finished::ok(report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_layouts() {
        let l = layout(44, 44).unwrap();
        assert!(!l.follow_up && !l.timestamp_info && l.padding.is_none());
        let l = layout(72, 44).unwrap();
        assert!(l.follow_up && l.timestamp_info && l.padding.is_none());
        let l = layout(1500, 44).unwrap();
        assert_eq!(l.padding, Some(1500 - 72 - 4));
        // 66 = 44 + 20 + 2: the 2 spare bytes cannot be a TLV, so Timestamp
        // Information goes... there is none to drop: an error naming 64 or 68.
        assert!(layout(66, 44).is_err());
        let l = layout(74, 44).unwrap(); // 44 + 20 + 10: TI dropped, padding 6
        assert!(l.follow_up && !l.timestamp_info && l.padding == Some(6));
        assert!(layout(40, 44).is_err());
        for size in [44usize, 64, 68, 72, 76, 100, 512, 1472] {
            let l = layout(size, 44).unwrap();
            let mut b = Vec::new();
            build_request(&l, Mode::Unauthenticated, 7, &mut b).unwrap();
            assert_eq!(b.len(), size);
            assert!(Tlvs::new(&b[44..]).all(|t| t.is_ok()), "size {size}");
        }
    }
}
