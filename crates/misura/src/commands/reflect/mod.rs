//! `misura reflect`: the STAMP Session-Reflector (UDP) and the raw-probe reflector.
//!
//! The decisions (checks, limits, the reply's bytes, follow-ups, HMACs) are
//! all in `misura_measure::reflector`; this file is the I/O loop around it:
//! receive with the kernel's RX stamp, read the user clock, let the core
//! decide, send, then read the reply's TX stamp back from the error queue
//! and hand it to the core for the next reply's Follow-Up Telemetry TLV.
//!
//! Nothing a peer sends can stop the loop: every receive, send and
//! error-queue failure is counted and the loop goes on. Only setting the
//! socket up can fail.

pub mod args;
pub use args::ReflectArgs;

use crate::shared::exit::Failure;
use crate::shared::output::{Finished, Report};
use crate::shared::stamping::Timestamps;
use anyhow::{Context, Result};
use misura_measure::auth::StampKey;
use misura_measure::reflector::{
    ClockState, Decision, Peer, Reflector, ReflectorConfig, RequestMeta, Stamp,
};
use misura_measure::TimestampSource;
use misura_report::reflect::{write_summary, IoCounters, Summary};
use misura_report::BusyPoll;
use misura_sys::clock::realtime_ns;
use misura_sys::packet::{PacketSocket, TimestampingGranted};
use misura_sys::udp::UdpTsSocket;
use misura_wire::stamp::sync_source;
use misura_wire::{EthernetFrame, MacAddr};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Most sources `--max-sources` may ask the reflector to track (its tables
/// grow on demand up to this; issue 13, finding 5).
pub const MAX_SOURCES: usize = 1_000_000;

/// Receive buffer: a jumbo frame. A longer datagram is cut short and
/// dropped as malformed (its reply could not be as long as it).
const BUF_LEN: usize = 9216;
/// Replies whose TX stamp may still be pending, matched by OPT_ID.
const TX_RING: usize = 256;
/// Datagrams handled between two looks at the stop flag.
const BATCH: usize = 256;
/// A blocking receive gives up this often to look at the stop flag.
const STOP_CHECK: Duration = Duration::from_millis(100);
/// How often the kernel's clock synchronisation state is read again.
const CLOCK_REFRESH: Duration = Duration::from_secs(1);

struct Setup {
    config: ReflectorConfig,
    deadline: Option<Instant>,
}

fn setup(args: &ReflectArgs) -> Result<Setup> {
    let key = match &args.key_file {
        None => None,
        Some(path) => {
            let bytes =
                crate::shared::files::read_bounded(path, crate::shared::files::KEY_FILE_MAX)
                    .map_err(|e| {
                        Failure::Usage(format!(
                    "cannot read the key file {}: {e}; create one with `openssl rand -hex 32 > {}`",
                    path.display(),
                    path.display()
                ))
                    })?;
            Some(
                StampKey::from_file_contents(&bytes)
                    .map_err(|e| Failure::Usage(format!("key file {}: {e}", path.display())))?,
            )
        }
    };
    if args.rate_limit == 0 {
        return Err(
            Failure::Usage("--rate-limit must be at least 1 reply per second".into()).into(),
        );
    }
    if args.l2.is_some() && args.timestamps == Timestamps::User {
        return Err(Failure::Usage(
            "--timestamps user is for STAMP over UDP; the raw-probe reflector (--l2) always takes kernel stamps".into(),
        )
        .into());
    }
    if args.max_sources == 0 {
        return Err(Failure::Usage("--max-sources must be at least 1".into()).into());
    }
    if args.max_sources > MAX_SOURCES {
        return Err(Failure::Params(format!(
            "--max-sources {} is over the limit of {MAX_SOURCES} sources tracked at once: use at most {MAX_SOURCES}",
            args.max_sources
        ))
        .into());
    }
    let deadline = args.duration.as_ref().map(|d| Instant::now() + d.std());
    Ok(Setup {
        config: ReflectorConfig {
            key,
            stateful: args.stateful,
            rate_per_s: args.rate_limit,
            // A tenth of a second's worth back to back.
            burst: (args.rate_limit / 10).max(1),
            max_sources: args.max_sources,
            listen_port: if args.l2.is_some() {
                None
            } else {
                Some(args.port)
            },
        },
        deadline,
    })
}

/// The kernel's NTP state, as the reflector states it in its replies.
fn clock_state() -> ClockState {
    match misura_sys::timesync::time_sync() {
        Ok(t) if t.synchronized => ClockState {
            synchronized: true,
            sync_source: sync_source::NTP,
            uncertainty_ns: t.max_error_ns.max(1),
        },
        Ok(t) => ClockState {
            uncertainty_ns: t.max_error_ns.max(ClockState::FREE_RUNNING.uncertainty_ns),
            ..ClockState::FREE_RUNNING
        },
        Err(_) => ClockState::FREE_RUNNING,
    }
}

fn source_names(g: &TimestampingGranted) -> (&'static str, &'static str) {
    let rx = if g.hardware_rx {
        "NIC hardware"
    } else if g.software_rx {
        "kernel software"
    } else {
        "user clock"
    };
    let tx = if g.hardware_tx {
        "NIC hardware"
    } else if g.software_tx {
        "kernel software"
    } else {
        "user clock (no follow-up stamps)"
    };
    (rx, tx)
}

/// The loop's common state: the core, the clock, counters, the stop rule.
struct Loop<'a> {
    reflector: Reflector,
    clock: ClockState,
    clock_read: Instant,
    io: IoCounters,
    stop: &'a AtomicUsize,
    deadline: Option<Instant>,
    busy_poll: bool,
}

impl Loop<'_> {
    fn should_stop(&self) -> bool {
        self.stop.load(Ordering::Relaxed) != 0 || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    fn refresh_clock(&mut self) {
        if self.clock_read.elapsed() >= CLOCK_REFRESH {
            self.clock = clock_state();
            self.clock_read = Instant::now();
        }
    }
}

/// The kernel's RX stamp, or the user clock read right after the receive.
fn rx_stamp(software: Option<i64>, after_recv: i64) -> Stamp {
    match software {
        Some(ns) => Stamp {
            ns,
            source: TimestampSource::KernelSoftware,
        },
        None => Stamp {
            ns: after_recv,
            source: TimestampSource::UserClock,
        },
    }
}

pub fn run(args: &ReflectArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let s = setup(args)?;
    let started_at = crate::shared::meta::now_rfc3339();
    if let Some(cpu) = args.cpu {
        misura_sys::sched::pin_to_cpu(cpu)?;
    }
    let mode = if s.config.key.is_some() {
        "authenticated"
    } else {
        "unauthenticated"
    };
    let stateful = s.config.stateful;
    let mut lp = Loop {
        reflector: Reflector::new(s.config),
        clock: clock_state(),
        clock_read: Instant::now(),
        io: IoCounters::default(),
        stop,
        deadline: s.deadline,
        busy_poll: args.busy_poll,
    };
    let started = Instant::now();
    let mut busy = args.busy_poll.then(crate::shared::busy_poll::raw);
    let (transport, listen, granted) = match &args.l2 {
        Some(ifname) => {
            let ethertype = args.ethertype.value;
            let (sock, mac, granted) = open_l2(ifname, ethertype)?;
            let listen = format!("{ifname} ({mac}, ethertype 0x{ethertype:04X})");
            announce(
                args,
                "raw Ethernet",
                &listen,
                mode,
                stateful,
                &granted,
                &lp.clock,
            );
            run_l2(&mut lp, &sock, ethertype, mac);
            ("l2", listen, granted)
        }
        None => {
            let (sock, granted) = open_udp(args.listen.0, args.port, args.timestamps)?;
            busy = udp_wait_mode(&sock, args.busy_poll)?;
            let listen = sock.local_addr().to_string();
            announce(
                args,
                "STAMP over UDP",
                &listen,
                mode,
                stateful,
                &granted,
                &lp.clock,
            );
            run_udp(&mut lp, &sock, granted.any_tx());
            ("udp", listen, granted)
        }
    };
    let (rx, tx) = source_names(&granted);
    let counters = *lp.reflector.counters();
    // A reflector runs until it is stopped: a signal is its normal end.
    let (_, stop_reason) = crate::shared::output::completion(stop);
    let summary = Summary {
        meta: crate::shared::meta::meta("misura.reflect", started_at),
        complete: true,
        stop_reason,
        host: crate::shared::host::fingerprint(misura_report::LoopTuning {
            netns: args.ns.netns.clone(),
            cpu: args.cpu,
            busy_poll: busy,
            ..Default::default()
        }),
        transport: transport.into(),
        listen,
        mode: mode.into(),
        stateful,
        rx_timestamps: rx.into(),
        tx_timestamps: tx.into(),
        clock_synchronized: lp.clock.synchronized,
        duration_s: started.elapsed().as_secs_f64(),
        counters,
        dropped: counters.dropped(),
        io: lp.io,
    };
    let target = summary.listen.clone();
    Ok(Finished::ok(Report::new(
        summary,
        "reflect",
        target,
        write_summary,
    )))
}

fn announce(
    args: &ReflectArgs,
    what: &str,
    listen: &str,
    mode: &str,
    stateful: bool,
    g: &TimestampingGranted,
    clock: &ClockState,
) {
    if args.out.quiet {
        return;
    }
    let (rx, tx) = source_names(g);
    let sync = if clock.synchronized {
        format!(
            "synchronised (kernel NTP state, max error {} µs)",
            clock.uncertainty_ns / 1000
        )
    } else {
        "not known to be synchronised (free-running)".to_string()
    };
    eprintln!(
        "misura reflect: {what} on {listen}, {mode}, {}; RX stamps: {rx}, TX stamps: {tx}; clock {sync}; \
         rate limit {}/s per source, at most {} sources",
        if stateful { "stateful" } else { "stateless" },
        args.rate_limit,
        args.max_sources
    );
}

// ---------------------------------------------------------------------------
// UDP
// ---------------------------------------------------------------------------

fn open_udp(
    ip: IpAddr,
    port: u16,
    stamps: Timestamps,
) -> Result<(UdpTsSocket, TimestampingGranted)> {
    let addr = SocketAddr::new(ip, port);
    let sock = UdpTsSocket::bind(addr).with_context(|| format!("listening on UDP {addr}"))?;
    // The reflector answers from the address a request came to (pktinfo)
    // and reports its TTL.
    let granted = crate::shared::stamping::enable(&sock, stamps, true)
        .with_context(|| format!("setting up the stamps and control messages on UDP {addr}"))?;
    // A deep queue rides out a flood's bursts (and moments the loop is off
    // the CPU) instead of dropping real requests with the flood's.
    if let Err(e) = sock.set_recv_buffer(RECV_BUFFER) {
        eprintln!("misura reflect: note: {e}; the default receive queue is used");
    }
    Ok((sock, granted))
}

/// How the UDP loop waits for a request: blocking in the receive (woken
/// by the kernel, with a timeout so the stop flag is seen), or spinning on
/// non-blocking receives with `SO_BUSY_POLL` asked for when `busy_poll`.
fn udp_wait_mode(sock: &UdpTsSocket, busy_poll: bool) -> Result<Option<BusyPoll>> {
    if busy_poll {
        return Ok(Some(crate::shared::busy_poll::ask(sock)));
    }
    sock.set_nonblocking(false)?;
    sock.set_recv_timeout(STOP_CHECK)?;
    Ok(None)
}

/// The UDP socket's receive queue (SO_RCVBUF), in bytes.
const RECV_BUFFER: usize = 8 << 20;

/// Which reply a pending TX stamp belongs to, by OPT_ID.
#[derive(Copy, Clone)]
struct Pending {
    id: u32,
    peer: Peer,
    reply_seq: u32,
}

/// The UDP loop. Without `--busy-poll` it blocks in the receive itself
/// (one system call per request, no poll(2) in front of it); with it, it
/// spins on non-blocking receives. After each reply it reads that reply's
/// TX stamp and nothing more: no look at an empty queue sits between a
/// reply and the next receive.
fn run_udp(lp: &mut Loop<'_>, sock: &UdpTsSocket, tx_stamps: bool) {
    let mut buf = vec![0u8; BUF_LEN];
    let mut out = vec![0u8; BUF_LEN];
    let mut ring: Vec<Option<Pending>> = vec![None; TX_RING];
    // OPT_ID numbers datagrams from 0 in send order (timestamping was
    // enabled on this fresh socket just before).
    let mut next_id: u32 = 0;
    // Replies whose TX stamp has not been read yet.
    let mut unstamped: usize = 0;
    let wildcard = sock.local_addr().ip().is_unspecified();
    while !lp.should_stop() {
        lp.refresh_clock();
        if unstamped > 0 {
            // A stamp that came late (hardware stamps can): read it before
            // the next reply, which carries it as a follow-up.
            unstamped -= drain_udp_tx(lp, sock, &mut ring, unstamped);
        }
        let got = sock.recv_from(&mut buf);
        // The user RX stamp when the kernel gave none, and "now".
        let after_recv = realtime_ns();
        let m = match got {
            Ok(Some(m)) => m,
            Ok(None) => continue,
            Err(_) => {
                lp.io.recv_errors += 1;
                // A persistent error must not turn the loop into a spin.
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
        };
        let truncated = m.truncated(buf.len());
        let meta = RequestMeta {
            src: Peer::Udp(m.src),
            dst: m.dst,
            ttl: m.ttl_or_hoplimit,
            rx: rx_stamp(m.software_ns, after_recv),
            truncated,
        };
        let request = &buf[..m.len.min(buf.len())];
        // The reply's transmit stamp: with a kernel RX stamp, the clock
        // read above (the kernel's TX stamp follows up). Without one that
        // read is the RX stamp, so the clock is read again here, just
        // before the reply is built: else the turnaround was 0 by
        // construction (`--timestamps user`).
        let now = if m.software_ns.is_some() {
            after_recv
        } else {
            realtime_ns()
        };
        let Decision::Reply { len, reply_seq } = lp
            .reflector
            .handle(request, &meta, now, &lp.clock, &mut out)
        else {
            continue;
        };
        // The reply leaves from the address the request came to: only a
        // socket on the wildcard address needs IP_PKTINFO to say which (it
        // costs the send about a µs).
        let from = if wildcard { m.dst } else { None };
        match sock.send_to_from(&out[..len], m.src, from) {
            Ok(true) => {
                ring[next_id as usize % TX_RING] = Some(Pending {
                    id: next_id,
                    peer: meta.src,
                    reply_seq,
                });
                next_id = next_id.wrapping_add(1);
                if tx_stamps {
                    unstamped = (unstamped + 1).min(TX_RING);
                }
            }
            Ok(false) => lp.io.send_busy += 1,
            Err(_) => lp.io.send_errors += 1,
        }
        // The stamp of a software-stamped send is queued by the time send
        // returns on most paths: read it now so the very next reply to
        // this source can carry it.
        if unstamped > 0 {
            unstamped -= drain_udp_tx(lp, sock, &mut ring, unstamped);
        }
    }
    drain_udp_tx(lp, sock, &mut ring, TX_RING);
}

/// Reads up to `want` TX stamps (fewer when the queue runs dry) and
/// returns how many stamps it read.
fn drain_udp_tx(
    lp: &mut Loop<'_>,
    sock: &UdpTsSocket,
    ring: &mut [Option<Pending>],
    want: usize,
) -> usize {
    let mut read = 0;
    while read < want {
        match sock.recv_tx_timestamp() {
            Ok(Some(st)) => {
                read += 1;
                let slot = &mut ring[st.id as usize % ring.len()];
                let stamp = match (st.hardware_ns, st.software_ns) {
                    (Some(hw), _) => Some((hw, TimestampSource::NicHardware)),
                    (None, Some(sw)) => Some((sw, TimestampSource::KernelSoftware)),
                    _ => None,
                };
                match (*slot, stamp) {
                    (Some(p), Some((ns, src))) if p.id == st.id => {
                        lp.reflector.on_tx_stamp(p.peer, p.reply_seq, ns, src);
                        lp.io.tx_stamps_matched += 1;
                        *slot = None;
                    }
                    _ => lp.io.tx_stamps_unmatched += 1,
                }
            }
            Ok(None) => break,
            Err(_) => {
                lp.io.tx_stamp_errors += 1;
                break;
            }
        }
    }
    lp.io.icmp_errors += sock.take_icmp_errors();
    read
}

// ---------------------------------------------------------------------------
// Raw Ethernet (frame format: misura_measure::reflector::l2)
// ---------------------------------------------------------------------------

fn open_l2(ifname: &str, ethertype: u16) -> Result<(PacketSocket, MacAddr, TimestampingGranted)> {
    let info = misura_sys::iface::require_up(ifname)?;
    let sock = PacketSocket::open(ifname, ethertype)?;
    // Our own replies would come back to us (and be dropped as replies):
    // better not to see them at all. Older kernels flag them instead.
    let _ = sock.set_ignore_outgoing(true);
    let granted = sock
        .enable_timestamping(false)
        .with_context(|| format!("turning on kernel timestamps on `{ifname}`"))?;
    Ok((sock, MacAddr(info.mac), granted))
}

fn run_l2(lp: &mut Loop<'_>, sock: &PacketSocket, ethertype: u16, mac: MacAddr) {
    let mut buf = vec![0u8; BUF_LEN];
    let mut out = vec![0u8; BUF_LEN];
    let mut txbuf = vec![0u8; BUF_LEN];
    while !lp.should_stop() {
        lp.refresh_clock();
        let mut idle = true;
        for _ in 0..BATCH {
            let got = sock.recv(&mut buf);
            let after_recv = realtime_ns();
            let m = match got {
                Ok(Some(m)) => m,
                Ok(None) => break,
                Err(_) => {
                    lp.io.recv_errors += 1;
                    break;
                }
            };
            idle = false;
            if m.outgoing {
                lp.io.outgoing_skipped += 1;
                continue;
            }
            let meta = RequestMeta {
                // Replaced by the frame's source MAC in handle_l2_frame.
                src: Peer::L2(MacAddr::default()),
                dst: None,
                ttl: None,
                rx: rx_stamp(m.software_ns, after_recv),
                truncated: m.truncated(buf.len()),
            };
            let frame = &buf[..m.len.min(buf.len())];
            let now = realtime_ns();
            if let Decision::Reply { len, .. } = lp
                .reflector
                .handle_l2_frame(frame, ethertype, mac, &meta, now, &lp.clock, &mut out)
            {
                match sock.send(&out[..len]) {
                    Ok(true) => {}
                    Ok(false) => lp.io.send_busy += 1,
                    Err(_) => lp.io.send_errors += 1,
                }
                drain_l2_tx(lp, sock, &mut txbuf);
            }
        }
        drain_l2_tx(lp, sock, &mut txbuf);
        if idle && !lp.busy_poll {
            // The packet socket has no wait here; a short sleep keeps an idle
            // reflector off the CPU at the cost of up to ~0.1 ms before a
            // request is read. The RX stamp is the kernel's, so the measured
            // turnaround includes that wait: use --busy-poll for the lowest.
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

/// TX stamps of sent frames: the looped-back frame names its peer (the
/// destination MAC) and the reply's STAMP sequence number.
fn drain_l2_tx(lp: &mut Loop<'_>, sock: &PacketSocket, txbuf: &mut [u8]) {
    for _ in 0..BATCH {
        match sock.recv_tx_timestamp(txbuf) {
            Ok(Some(st)) => {
                let frame = &txbuf[..st.len];
                let stamp = match (st.hardware_ns, st.software_ns) {
                    (Some(hw), _) => Some((hw, TimestampSource::NicHardware)),
                    (None, Some(sw)) => Some((sw, TimestampSource::KernelSoftware)),
                    _ => None,
                };
                match (reply_of(frame), stamp) {
                    (Some((peer, seq)), Some((ns, src))) => {
                        lp.reflector.on_tx_stamp(peer, seq, ns, src);
                        lp.io.tx_stamps_matched += 1;
                    }
                    _ => lp.io.tx_stamps_unmatched += 1,
                }
            }
            Ok(None) => break,
            Err(_) => {
                lp.io.tx_stamp_errors += 1;
                break;
            }
        }
    }
}

/// (peer, reply sequence number) of a reply frame we sent.
fn reply_of(frame: &[u8]) -> Option<(Peer, u32)> {
    let f = EthernetFrame::new_checked(frame).ok()?;
    let at = misura_wire::probe::HEADER_LEN;
    let seq = f.payload().get(at..at + 4)?;
    Some((
        Peer::L2(f.dst()),
        u32::from_be_bytes([seq[0], seq[1], seq[2], seq[3]]),
    ))
}
