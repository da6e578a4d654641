//! Real tests of the high-rate paths (`misura_sys::ring`) on a veth pair
//! inside a network namespace each test creates for itself (unique names,
//! removed by a Drop guard): frames sent through the TX ring or sendmmsg on
//! `a` are received through the TPACKET_V3 ring on `b`, counted exactly and
//! checked for their kernel stamps.
//!
//! They need root and `ip`, so a plain `cargo test` lists them as ignored;
//! run with `--include-ignored` without root, they fail saying so.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use misura_sys::ring::{
    probe, Fanout, FanoutMode, MmsgTx, RingFrame, RxRing, RxRingConfig, StampSource, TxRing,
    TxRingConfig,
};
use misura_sys::{iface, netns, SysError};

const ETHERTYPE: u16 = 0x88B5;
const FRAME_LEN: usize = 60;
const MAGIC: [u8; 4] = *b"MRNG";
const BATCH: usize = 256;

mod common;
use common::{ip, Lab};

fn lab() -> Lab {
    Lab::new(
        "the ring tests need root (network namespaces, CAP_NET_RAW): run the suite as \
         root; a plain `cargo test` lists them as ignored",
        "ringtest",
        "mr",
    )
}

/// MAC addresses (destination b, source a).
fn macs(a: &str, b: &str) -> ([u8; 6], [u8; 6]) {
    (
        iface::interface_info(b).unwrap().mac,
        iface::interface_info(a).unwrap().mac,
    )
}

/// A 60-byte test frame: Ethernet header, MAGIC, the u64 sequence number.
fn write_frame(buf: &mut [u8], (dst, src): ([u8; 6], [u8; 6]), seq: u64) -> usize {
    buf[0..6].copy_from_slice(&dst);
    buf[6..12].copy_from_slice(&src);
    buf[12..14].copy_from_slice(&ETHERTYPE.to_be_bytes());
    buf[14..18].copy_from_slice(&MAGIC);
    buf[18..26].copy_from_slice(&seq.to_be_bytes());
    buf[26..FRAME_LEN].fill(0x5a);
    FRAME_LEN
}

/// What a receiver saw: every sequence number once, stamps in order.
struct Collector {
    seen: Vec<bool>,
    received: usize,
    duplicates: usize,
    foreign: usize,
    unstamped: usize,
    backwards: usize,
    last_stamp: i64,
}

impl Collector {
    fn new(n: usize) -> Collector {
        Collector {
            seen: vec![false; n],
            received: 0,
            duplicates: 0,
            foreign: 0,
            unstamped: 0,
            backwards: 0,
            last_stamp: 0,
        }
    }

    fn take(&mut self, f: &RingFrame<'_>) {
        if f.data.len() < 26 || f.data[14..18] != MAGIC || f.outgoing {
            self.foreign += 1;
            return;
        }
        let seq = u64::from_be_bytes(f.data[18..26].try_into().unwrap()) as usize;
        match self.seen.get_mut(seq) {
            Some(s) if !*s => *s = true,
            _ => {
                self.duplicates += 1;
                return;
            }
        }
        self.received += 1;
        assert_eq!(f.wire_len as usize, FRAME_LEN);
        match (f.stamp, f.stamp_at.map(|t| t.as_ns())) {
            (StampSource::Software, Some(ns)) => {
                if ns < self.last_stamp {
                    self.backwards += 1;
                }
                self.last_stamp = ns;
            }
            _ => self.unstamped += 1,
        }
    }
}

/// Sends up to `n` frames from `seq` through the TX ring and flushes;
/// returns how many were queued.
fn tx_ring_burst(tx: &mut TxRing, m: ([u8; 6], [u8; 6]), seq: u64, n: usize) -> usize {
    let mut k = 0;
    while k < n && tx.push_with(|buf| write_frame(buf, m, seq + k as u64)) {
        k += 1;
    }
    tx.flush().expect("flush");
    k
}

/// Sends up to `n` frames from `seq` with one sendmmsg; returns how many
/// the kernel took.
fn mmsg_burst(tx: &mut MmsgTx, m: ([u8; 6], [u8; 6]), seq: u64, n: usize) -> usize {
    let n = n.min(tx.batch());
    for i in 0..n {
        let len = write_frame(tx.frame_mut(i), m, seq + i as u64);
        tx.set_len(i, len);
    }
    tx.send(n).expect("sendmmsg")
}

/// Sends `n` frames with `burst` while draining `rx` (one thread, paced by
/// the receiver), then drains for at most 3 s. Returns the collector and
/// the ring's drops.
fn send_and_receive(
    rx: &mut RxRing,
    n: usize,
    mut burst: impl FnMut(u64, usize) -> usize,
) -> (Collector, u64) {
    let mut c = Collector::new(n);
    let mut sent = 0;
    let deadline = Instant::now() + Duration::from_secs(30);
    for _ in 0..10 * n {
        if sent >= n || Instant::now() > deadline {
            break;
        }
        sent += burst(sent as u64, BATCH.min(n - sent));
        rx.poll(0, |f| c.take(f)).expect("rx poll");
    }
    assert_eq!(sent, n, "the sender could not queue all frames in 30 s");
    let drain = Instant::now() + Duration::from_secs(3);
    let mut drops = 0;
    while Instant::now() < drain {
        rx.poll(10, |f| c.take(f)).expect("rx poll");
        drops = rx.stats().expect("stats").drops;
        if c.received as u64 + drops >= n as u64 {
            break;
        }
    }
    (c, drops)
}

fn check_exact(what: &str, c: &Collector, drops: u64, n: usize) {
    eprintln!(
        "{what}: sent {n}, received {}, ring drops {drops}, duplicates {}, foreign {}, \
         unstamped {}, stamps backwards {}",
        c.received, c.duplicates, c.foreign, c.unstamped, c.backwards
    );
    assert_eq!(
        c.received as u64 + drops,
        n as u64,
        "{what}: received + drops != sent"
    );
    if drops == 0 {
        assert!(c.seen.iter().all(|&s| s), "{what}: sequence set incomplete");
    }
    assert_eq!(c.duplicates, 0, "{what}: duplicates");
    assert_eq!(c.foreign, 0, "{what}: frames that are not ours");
    assert_eq!(c.unstamped, 0, "{what}: frames without a software stamp");
    assert_eq!(c.backwards, 0, "{what}: stamps went backwards");
}

#[test]
#[ignore = "needs root (network namespaces)"]
fn tx_ring_to_rx_ring_100k_frames() {
    let lab = lab();
    lab.run(|a, b, _| {
        let m = macs(a, b);
        let mut rx = RxRing::open(b, ETHERTYPE, &RxRingConfig::default()).expect("rx ring");
        assert_eq!(rx.timestamping(), StampSource::Software);
        let mut tx = TxRing::open(a, ETHERTYPE, &TxRingConfig::default()).expect("tx ring");
        assert!(tx.max_frame_len() >= 1514 && tx.capacity() >= 4096);
        let n = 100_000;
        let (c, drops) = send_and_receive(&mut rx, n, |s, k| tx_ring_burst(&mut tx, m, s, k));
        check_exact("tx ring -> rx ring", &c, drops, n);
        let tc = tx.counters();
        assert_eq!(tc.pushed, n as u64);
        assert_eq!(tc.wrong_format, 0);
        assert!(tc.bytes >= (n * FRAME_LEN - FRAME_LEN * BATCH * tc.would_block as usize) as u64);
        assert_eq!(
            rx.stats().unwrap().packets,
            n as u64,
            "the kernel's count of frames"
        );
    });
}

#[test]
#[ignore = "needs root (network namespaces)"]
fn mmsg_to_rx_ring_100k_frames() {
    let lab = lab();
    lab.run(|a, b, _| {
        let m = macs(a, b);
        let mut rx = RxRing::open(b, ETHERTYPE, &RxRingConfig::default()).expect("rx ring");
        let mut tx = MmsgTx::open(a, ETHERTYPE, BATCH, 128, false).expect("mmsg");
        let n = 100_000;
        let (c, drops) = send_and_receive(&mut rx, n, |s, k| mmsg_burst(&mut tx, m, s, k));
        check_exact("sendmmsg -> rx ring", &c, drops, n);
    });
}

#[test]
#[ignore = "needs root (network namespaces)"]
fn qdisc_bypass_on_and_off() {
    let lab = lab();
    lab.run(|a, b, _| {
        let m = macs(a, b);
        let n = 20_000;
        for bypass in [false, true] {
            let mut rx = RxRing::open(b, ETHERTYPE, &RxRingConfig::default()).expect("rx ring");
            let cfg = TxRingConfig {
                qdisc_bypass: bypass,
                frame_count: 512,
                ..Default::default()
            };
            let mut tx = TxRing::open(a, ETHERTYPE, &cfg).expect("tx ring");
            let (c, d) = send_and_receive(&mut rx, n, |s, k| tx_ring_burst(&mut tx, m, s, k));
            check_exact(&format!("tx ring, qdisc bypass {bypass}"), &c, d, n);
            drop((tx, rx));
            let mut rx = RxRing::open(b, ETHERTYPE, &RxRingConfig::default()).expect("rx ring");
            let mut tx = MmsgTx::open(a, ETHERTYPE, 64, 64, bypass).expect("mmsg");
            let (c, d) = send_and_receive(&mut rx, n, |s, k| mmsg_burst(&mut tx, m, s, k));
            check_exact(&format!("sendmmsg, qdisc bypass {bypass}"), &c, d, n);
        }
    });
}

#[test]
#[ignore = "needs root (network namespaces)"]
fn fanout_load_balance_splits_exactly() {
    let lab = lab();
    lab.run(|a, b, _| {
        let m = macs(a, b);
        let cfg = RxRingConfig {
            fanout: Some(Fanout {
                group: 4242,
                mode: FanoutMode::LoadBalance,
            }),
            block_count: 8,
            ..Default::default()
        };
        let mut r0 = RxRing::open(b, ETHERTYPE, &cfg).expect("ring 0");
        let mut r1 = RxRing::open(b, ETHERTYPE, &cfg).expect("ring 1");
        let other = RxRingConfig {
            fanout: Some(Fanout {
                group: 4242,
                mode: FanoutMode::Hash,
            }),
            ..cfg.clone()
        };
        let e = RxRing::open(b, ETHERTYPE, &other).expect_err("a group of another mode");
        assert!(e.to_string().contains("fanout group 4242"), "{e}");
        let mut tx = MmsgTx::open(a, ETHERTYPE, BATCH, 64, true).expect("mmsg");
        let n = 20_000;
        let (mut c0, mut c1) = (Collector::new(n), Collector::new(n));
        let mut sent = 0;
        for _ in 0..10 * n {
            if sent >= n {
                break;
            }
            sent += mmsg_burst(&mut tx, m, sent as u64, BATCH.min(n - sent));
            r0.poll(0, |f| c0.take(f)).unwrap();
            r1.poll(0, |f| c1.take(f)).unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        while c0.received + c1.received < n && Instant::now() < deadline {
            r0.poll(5, |f| c0.take(f)).unwrap();
            r1.poll(5, |f| c1.take(f)).unwrap();
        }
        let (d0, d1) = (r0.stats().unwrap().drops, r1.stats().unwrap().drops);
        eprintln!(
            "fanout LB: sent {sent}, ring 0 {} (+{d0} drops), ring 1 {} (+{d1} drops)",
            c0.received, c1.received
        );
        assert_eq!(sent, n);
        assert_eq!((d0, d1), (0, 0));
        assert_eq!(c0.received + c1.received, n, "sum exact");
        assert!(
            c0.received.abs_diff(c1.received) <= 1,
            "round robin splits evenly"
        );
        assert!(
            c0.seen.iter().zip(&c1.seen).all(|(x, y)| x ^ y),
            "each frame in exactly one ring"
        );
    });
}

#[test]
#[ignore = "needs root (network namespaces)"]
fn fanout_cpu_follows_the_sending_cpu() {
    let cpus = misura_sys::sched::online_cpus();
    assert!(cpus >= 2, "needs 2 online CPUs, found {cpus}");
    let lab = lab();
    lab.run(|a, b, ns| {
        let cfg = RxRingConfig {
            fanout: Some(Fanout {
                group: 7,
                mode: FanoutMode::Cpu,
            }),
            block_count: 8,
            ..Default::default()
        };
        let mut rings = [
            RxRing::open(b, ETHERTYPE, &cfg).unwrap(),
            RxRing::open(b, ETHERTYPE, &cfg).unwrap(),
        ];
        let n = 10_000;
        // Sender k, pinned to CPU k, numbers its frames k*n..(k+1)*n. veth
        // receives on the sending CPU, so fanout CPU puts them in ring k % 2.
        let senders: Vec<_> = (0..2usize)
            .map(|k| {
                let (a, b, ns) = (a.to_string(), b.to_string(), ns.to_string());
                std::thread::spawn(move || {
                    netns::enter(&ns).unwrap();
                    misura_sys::sched::pin_to_cpu(k).unwrap();
                    let m = macs(&a, &b);
                    let mut tx = MmsgTx::open(&a, ETHERTYPE, 64, 64, true).unwrap();
                    let (mut sent, deadline) = (0, Instant::now() + Duration::from_secs(10));
                    while sent < n && Instant::now() < deadline {
                        sent += mmsg_burst(&mut tx, m, (k * n + sent) as u64, 64.min(n - sent));
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    sent
                })
            })
            .collect();
        let mut got = [Collector::new(2 * n), Collector::new(2 * n)];
        let deadline = Instant::now() + Duration::from_secs(15);
        while got[0].received + got[1].received < 2 * n && Instant::now() < deadline {
            for (r, c) in rings.iter_mut().zip(got.iter_mut()) {
                r.poll(1, |f| c.take(f)).unwrap();
            }
        }
        let sent: usize = senders.into_iter().map(|t| t.join().unwrap()).sum();
        let split: Vec<(usize, usize)> = got
            .iter()
            .map(|c| {
                (
                    c.seen[..n].iter().filter(|&&s| s).count(),
                    c.seen[n..].iter().filter(|&&s| s).count(),
                )
            })
            .collect();
        eprintln!(
            "fanout CPU: sent {sent}, ring0 (cpu0, cpu1 frames) {:?}, ring1 {:?}",
            split[0], split[1]
        );
        assert_eq!(sent, 2 * n);
        assert_eq!(got[0].received + got[1].received, 2 * n, "sum exact");
        assert_eq!(
            split,
            vec![(n, 0), (0, n)],
            "each CPU's frames in its own ring"
        );
    });
}

#[test]
#[ignore = "needs root (network namespaces)"]
fn bad_input_is_named() {
    let lab = lab();
    lab.run(|a, b, _| {
        let no = "mr-nope-0";
        assert!(matches!(RxRing::open(no, ETHERTYPE, &RxRingConfig::default()), Err(SysError::NoSuchInterface { name }) if name == no));
        assert!(matches!(TxRing::open(no, ETHERTYPE, &TxRingConfig::default()), Err(SysError::NoSuchInterface { .. })));
        assert!(matches!(MmsgTx::open(no, ETHERTYPE, 8, 64, false), Err(SysError::NoSuchInterface { .. })));
        let huge = RxRingConfig { block_size: 1 << 28, block_count: 64, ..Default::default() };
        let e = RxRing::open(b, ETHERTYPE, &huge).unwrap_err().to_string();
        assert!(e.contains("1073741824") && e.contains("1 GiB"), "{e}");
        let e = RxRing::open(b, ETHERTYPE, &RxRingConfig { block_count: 0, ..Default::default() }).unwrap_err().to_string();
        assert!(e.contains("block_count = 0") && e.contains("65536"), "{e}");
        let e = TxRing::open(a, ETHERTYPE, &TxRingConfig { frame_count: 1 << 30, ..Default::default() }).unwrap_err().to_string();
        assert!(e.contains("frame_count") && e.contains("1048576"), "{e}");
        let e = MmsgTx::open(a, ETHERTYPE, 5000, 64, false).unwrap_err().to_string();
        assert!(e.contains("batch = 5000") && e.contains("1024"), "{e}");
        let e = MmsgTx::open(a, ETHERTYPE, 8, 1 << 20, false).unwrap_err().to_string();
        assert!(e.contains("max_frame") && e.contains("65536"), "{e}");
        let hw = RxRingConfig { hardware_stamps: true, ..Default::default() };
        let r = RxRing::open(b, ETHERTYPE, &hw).expect("veth refuses hardware, not the ring");
        assert_eq!(r.timestamping(), StampSource::Software, "veth has no hardware stamps");
        let caps = probe(a);
        eprintln!("probe on veth: {caps:?}");
        assert!(caps.rx_ring_v3.is_available() && caps.tx_ring.is_available());
        assert!(caps.qdisc_bypass.is_available() && caps.fanout.is_available());
        assert_eq!((caps.rx_queues, caps.tx_queues), (Some(1), Some(1)));
    });
}

/// One second of sending (and receiving, if `rx`) in one thread; returns
/// (sent/s, received/s, ring drops).
fn blast(rx: Option<&mut RxRing>, mut burst: impl FnMut(u64) -> usize) -> (f64, f64, u64) {
    let mut rx = rx;
    let before = rx
        .as_deref_mut()
        .map(|r| r.stats().unwrap().drops)
        .unwrap_or(0);
    let (mut sent, mut received) = (0u64, 0u64);
    let start = Instant::now();
    let end = start + Duration::from_secs(1);
    for _ in 0..100_000_000u64 {
        if Instant::now() >= end {
            break;
        }
        sent += burst(sent) as u64;
        if let Some(r) = rx.as_deref_mut() {
            received += r.poll(0, |_| {}).unwrap() as u64;
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let drops = rx.map(|r| r.stats().unwrap().drops - before).unwrap_or(0);
    (sent as f64 / secs, received as f64 / secs, drops)
}

#[test]
#[ignore = "needs root (network namespaces)"]
fn one_second_blast_rates() {
    let lab = lab();
    lab.run(|a, b, _| {
        let m = macs(a, b);
        misura_sys::sched::pin_to_cpu(0).unwrap();
        for bypass in [false, true] {
            for with_rx in [false, true] {
                let mut rx = with_rx.then(|| RxRing::open(b, ETHERTYPE, &RxRingConfig::default()).unwrap());
                let mut tx = TxRing::open(a, ETHERTYPE, &TxRingConfig { qdisc_bypass: bypass, ..Default::default() }).unwrap();
                let (s, r, d) = blast(rx.as_mut(), |seq| tx_ring_burst(&mut tx, m, seq, 1024));
                eprintln!("RATE tx ring    bypass={bypass:<5} rx ring={with_rx:<5}: sent {:.3} M/s, received {:.3} M/s, drops {d}", s / 1e6, r / 1e6);
                let mut tx = MmsgTx::open(a, ETHERTYPE, 1024, 64, bypass).unwrap();
                let (s, r, d) = blast(rx.as_mut(), |seq| mmsg_burst(&mut tx, m, seq, 1024));
                eprintln!("RATE sendmmsg   bypass={bypass:<5} rx ring={with_rx:<5}: sent {:.3} M/s, received {:.3} M/s, drops {d}", s / 1e6, r / 1e6);
            }
        }
    });
}

/// One second of sending on CPU 0 while another thread on CPU 1 drains the
/// ring; returns (sent/s, received/s, drops).
fn two_thread_blast(mut rx: RxRing, mut burst: impl FnMut(u64) -> usize + Send) -> (f64, f64, u64) {
    use std::sync::atomic::AtomicBool;
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let receiver = s.spawn(|| {
            misura_sys::sched::pin_to_cpu(1).unwrap();
            let mut received = 0u64;
            let hard_stop = Instant::now() + Duration::from_secs(5);
            while !stop.load(Ordering::Relaxed) && Instant::now() < hard_stop {
                received += rx.poll(1, |_| {}).unwrap() as u64;
            }
            let drain = Instant::now() + Duration::from_millis(100);
            while Instant::now() < drain {
                received += rx.poll(1, |_| {}).unwrap() as u64;
            }
            (received, rx.stats().unwrap().drops)
        });
        misura_sys::sched::pin_to_cpu(0).unwrap();
        let start = Instant::now();
        let mut sent = 0u64;
        while start.elapsed() < Duration::from_secs(1) {
            sent += burst(sent) as u64;
        }
        let secs = start.elapsed().as_secs_f64();
        stop.store(true, Ordering::Relaxed);
        let (received, drops) = receiver.join().unwrap();
        (sent as f64 / secs, received as f64 / secs, drops)
    })
}

#[test]
#[ignore = "needs root (network namespaces)"]
fn two_core_blast_rates() {
    let cpus = misura_sys::sched::online_cpus();
    assert!(cpus >= 2, "needs 2 online CPUs, found {cpus}");
    let lab = lab();
    lab.run(|a, b, ns| {
        let m = macs(a, b);
        for napi in [false, true] {
            if napi {
                // veth in NAPI mode (GRO on) with its poll in a kernel
                // thread, so the receive side can run on the other CPU.
                misura_sys::ethtool::set_offload(b, "gro", true).unwrap();
                ip(&["netns", "exec", ns, "sh", "-c", &format!("echo 1 > /sys/class/net/{b}/threaded")]).unwrap();
            }
            let rx = RxRing::open(b, ETHERTYPE, &RxRingConfig::default()).unwrap();
            let mut tx = TxRing::open(a, ETHERTYPE, &TxRingConfig { qdisc_bypass: true, ..Default::default() }).unwrap();
            let (s, r, d) = two_thread_blast(rx, |seq| tx_ring_burst(&mut tx, m, seq, 1024));
            eprintln!("RATE2 tx ring  threaded-napi={napi:<5}: sent {:.3} M/s, received {:.3} M/s, drops {d}", s / 1e6, r / 1e6);
            let rx = RxRing::open(b, ETHERTYPE, &RxRingConfig::default()).unwrap();
            let mut tx = MmsgTx::open(a, ETHERTYPE, 1024, 64, true).unwrap();
            let (s, r, d) = two_thread_blast(rx, |seq| mmsg_burst(&mut tx, m, seq, 1024));
            eprintln!("RATE2 sendmmsg threaded-napi={napi:<5}: sent {:.3} M/s, received {:.3} M/s, drops {d}", s / 1e6, r / 1e6);
        }
    });
}

/// AF_XDP transmit (copy mode on veth) into the TPACKET_V3 ring: every
/// frame arrives once and stamped; the counters agree.
#[test]
#[ignore = "needs root (network namespaces)"]
fn xdp_to_rx_ring_100k_frames() {
    use misura_sys::xdp::{XdpConfig, XdpSocket};
    let lab = lab();
    lab.run(|a, b, _| {
        let m = macs(a, b);
        let mut rx = RxRing::open(b, ETHERTYPE, &RxRingConfig::default()).expect("rx ring");
        let mut tx = XdpSocket::open(a, &XdpConfig::default()).expect("AF_XDP socket on veth");
        assert!(!tx.mode().zero_copy, "veth has no zero-copy AF_XDP");
        let n = 100_000;
        let (c, drops) = send_and_receive(&mut rx, n, |s, k| {
            let mut i = 0;
            while i < k && tx.tx_push_with(|buf| write_frame(buf, m, s + i as u64)) {
                i += 1;
            }
            tx.tx_flush().expect("AF_XDP flush");
            i
        });
        check_exact("AF_XDP -> rx ring", &c, drops, n);
        let k = tx.counters();
        assert_eq!((k.pushed, k.tx_invalid), (n as u64, 0), "{k:?}");
        // A frame size the UMEM cannot hold is refused naming the bound.
        let bad = XdpConfig {
            frame_size: 1000,
            ..XdpConfig::default()
        };
        let e = XdpSocket::open(a, &bad).err().expect("refused").to_string();
        assert!(e.contains("2048 or 4096"), "{e}");
    });
}
