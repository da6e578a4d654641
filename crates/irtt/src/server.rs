//! The irtt reflector's UDP loop: receive with the kernel's RX stamp, read
//! the clocks, let [`crate::reflector`] decide, send. The kernel's TX stamp
//! of each reply comes back on the error queue after the send: too late to
//! travel in that reply (irtt's send stamp is the user clock just before
//! the send, and so is misura's), it gives the reflector's own turnaround.

use crate::reflector::{Decision, Reflector};
use misura_measure::time::Instant;
use misura_stats::Summary;
use misura_sys::clock::{monotonic_ns, realtime_ns};
use misura_sys::udp::UdpTsSocket;
use misura_wire::irtt::{Time, MAX_PACKET_LEN};
use std::io::Read;
use std::time::Duration;

/// A blocking receive gives up this often to look at the stop flag.
const STOP_CHECK: Duration = Duration::from_millis(100);
/// Replies whose TX stamp may still come, by OPT_ID.
const TX_RING: usize = 256;

/// The loop's I/O counters (the datagrams' fates are in the reflector's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Io {
    pub recv_errors: u64,
    pub send_errors: u64,
    /// Replies not sent: the socket buffer was full.
    pub send_busy: u64,
    /// Datagrams longer than the 9216-byte limit (dropped as malformed).
    pub truncated: u64,
    /// Requests without a kernel RX stamp (the user clock stood in).
    pub rx_user_clock: u64,
}

/// What the loop hands back.
pub struct Served {
    pub io: Io,
    /// Kernel TX stamp − kernel RX stamp of each reply.
    pub turnaround: Summary,
}

/// The clocks of irtt's stamps: wall is CLOCK_REALTIME, monotonic is
/// CLOCK_MONOTONIC since the reflector started (irtt's is since its
/// process started).
struct Clocks {
    mono_start: i64,
}

impl Clocks {
    /// The stamp pair of now, and now on the monotonic clock.
    fn now(&self) -> (Time, Instant) {
        let mono = monotonic_ns();
        let wall = realtime_ns();
        (
            Time {
                wall_ns: wall,
                mono_ns: (mono - self.mono_start).max(1),
            },
            Instant::from_ns(mono),
        )
    }
}

/// Fresh connection tokens from the kernel's random source.
struct Tokens(Option<std::fs::File>);

impl Tokens {
    fn next(&mut self) -> u64 {
        let mut b = [0u8; 8];
        match self.0.as_mut().map(|f| f.read_exact(&mut b)) {
            Some(Ok(())) => u64::from_le_bytes(b),
            // No /dev/urandom: the refusal path (token 0) answers opens.
            _ => 0,
        }
    }
}

/// Runs the reflector on `sock` (kernel stamps enabled by the caller) until
/// `stop()` says so.
pub fn run(sock: &UdpTsSocket, r: &mut Reflector, stop: &dyn Fn() -> bool) -> Served {
    let _ = sock.set_nonblocking(false);
    let _ = sock.set_recv_timeout(STOP_CHECK);
    let clocks = Clocks {
        mono_start: monotonic_ns(),
    };
    let mut tokens = Tokens(std::fs::File::open("/dev/urandom").ok());
    let mut buf = vec![0u8; MAX_PACKET_LEN + 1];
    let mut out = vec![0u8; MAX_PACKET_LEN];
    let mut io = Io::default();
    let mut turnaround = Summary::new();
    let mut rx_of = [0i64; TX_RING];
    let mut next_id: u32 = 0;
    while !stop() {
        let got = sock.recv_from(&mut buf);
        let (now, mono_now) = clocks.now();
        let m = match got {
            Ok(Some(m)) => m,
            Ok(None) => continue,
            Err(_) => {
                io.recv_errors += 1;
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
        };
        // The receive stamp: the kernel's, on both clocks (the monotonic
        // one shifted by the realtime−monotonic offset read just now).
        let rx = match m.software.map(Instant::as_ns) {
            Some(k) => Time {
                wall_ns: k,
                mono_ns: (now.mono_ns - (now.wall_ns - k)).max(1),
            },
            None => {
                io.rx_user_clock += 1;
                now
            }
        };
        let len = if m.len > MAX_PACKET_LEN {
            io.truncated += 1;
            // Parsed at its full claimed length it is refused as too long.
            buf.len()
        } else {
            m.len
        };
        let token = if buf.get(3).is_some_and(|f| f & 1 != 0) {
            tokens.next()
        } else {
            0
        };
        let (tx, _) = clocks.now();
        let Decision::Reply { len } =
            r.handle(&buf[..len], m.src, rx, tx, mono_now, token, &mut out)
        else {
            continue;
        };
        match sock.send_to(&out[..len], m.src) {
            Ok(true) => {
                rx_of[next_id as usize % TX_RING] = rx.wall_ns;
                next_id = next_id.wrapping_add(1);
            }
            Ok(false) => io.send_busy += 1,
            Err(_) => io.send_errors += 1,
        }
        drain(sock, &rx_of, &mut turnaround);
    }
    drain(sock, &rx_of, &mut turnaround);
    Served { io, turnaround }
}

/// Reads the TX stamps queued so far; each gives a turnaround.
fn drain(sock: &UdpTsSocket, rx_of: &[i64; TX_RING], turnaround: &mut Summary) {
    for _ in 0..TX_RING {
        match sock.recv_tx_timestamp() {
            Ok(Some(st)) => {
                if let Some(tx) = st.software.map(Instant::as_ns) {
                    let rx = rx_of[st.id as usize % TX_RING];
                    if rx > 0 && tx >= rx {
                        turnaround.record(tx - rx);
                    }
                }
            }
            _ => break,
        }
    }
}
