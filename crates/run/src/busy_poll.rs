//! `--busy-poll`, shared by `misura rtt` and `misura reflect`: the loop spins
//! on non-blocking receives instead of sleeping until a packet comes, and
//! asks the kernel for `SO_BUSY_POLL` so that a driver with NAPI busy
//! polling is polled from the socket too. The user-level figures lose the
//! wake-up of a sleeping thread (tens of µs on a VM, more from a deep idle
//! state); the price is one CPU at 100 %. Both ends spinning on one CPU
//! would take turns by the scheduler's tick: pin them apart.

use misura_report::BusyPoll;
use misura_sys::udp::UdpTsSocket;

/// `SO_BUSY_POLL` asked for: µs a receive polls the driver's queue.
pub const SO_BUSY_POLL_US: u32 = 50;

/// Asks for `SO_BUSY_POLL` on a socket that is about to be spun on. A
/// refusal (an old kernel, or no CAP_NET_ADMIN above `net.core.busy_read`)
/// is reported, not fatal: the spin goes on without it.
pub fn ask(sock: &UdpTsSocket) -> BusyPoll {
    match sock.set_busy_poll(SO_BUSY_POLL_US) {
        Ok(()) => BusyPoll {
            so_busy_poll_us: Some(SO_BUSY_POLL_US),
            so_busy_poll_error: None,
        },
        Err(e) => BusyPoll {
            so_busy_poll_us: None,
            so_busy_poll_error: Some(e.to_string()),
        },
    }
}

/// For raw probes: the packet socket is spun on, without `SO_BUSY_POLL`.
pub fn raw() -> BusyPoll {
    BusyPoll {
        so_busy_poll_us: None,
        so_busy_poll_error: Some(
            "raw probes (a packet socket) are spun on without SO_BUSY_POLL".into(),
        ),
    }
}
