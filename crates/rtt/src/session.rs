//! The loop of `misura rtt`: it moves bytes and instants between the
//! transport and the [`SessionSender`], which decides everything else
//! (when to send, what a reply means, when a probe is done, when to stop).

use super::collect::Collector;
use super::transport::{Received, Transport};
use crate::error::Result;
use misura_cli::progress::Progress;
use misura_measure::stamp_sender::SessionSender;
use misura_measure::time::{Instant, Span};
use misura_sys::clock::realtime;
use misura_sys::wake::WakeTimer;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Below this, the loop spins instead of sleeping: waking from poll(2)
/// takes tens of µs, and a probe must leave on time.
const SPIN_NS: i64 = 200_000;
/// With `--busy-poll`, the error queue is looked at every this many turns
/// even when no TX stamp is known to be due (a late one wakes no poll).
const BUSY_TX_EVERY: u32 = 64;
/// Wake this much before the deadline, and spin the rest.
const WAKE_EARLY_NS: i64 = 100_000;
/// Sleep at most this long, so a stop request is seen soon.
const MAX_SLEEP_NS: i64 = 50_000_000;
/// Blocking waits end after this even if the wake-up signal was missed
/// (it fired before the receive blocked): `SO_RCVTIMEO`, in jiffies.
const BACKSTOP: Duration = Duration::from_millis(60);
/// Room for the largest reply datagram or frame.
const RX_BUF: usize = 65_536;

/// What `--interval` asks for.
pub struct Intervals {
    pub every: Span,
    pub print: bool,
    /// The longest a probe's record can take to leave the session after
    /// its send (its timeout): the series' bins close that late.
    pub lag: Span,
}

pub struct Link<'t> {
    tr: &'t mut Transport,
    tx: Vec<u8>,
    rx: Vec<u8>,
    /// ICMP errors the socket reported for the probes.
    pub icmp: u64,
    /// Spin on the socket instead of sleeping in poll(2).
    busy_poll: bool,
    /// TX stamps each send gets (0: none granted, the error queue is
    /// read only for ICMP errors after a wake-up found it ready; 2: the
    /// kernel's and the NIC's).
    tx_stamps: usize,
    /// Waiting blocks in the receive itself (UDP, not busy-polling), woken
    /// by the reply or by this timer; `None`: poll(2) or spinning.
    wake: Option<Wake>,
    /// The error queue is due for a read (poll(2) found it ready, or, when
    /// stamps are read after replies, a reply or busy-polling's periodic
    /// look made it due).
    tx_due: bool,
    /// Stamps read after replies: sends whose TX stamp has not been read
    /// yet. The error queue is read once their replies are in (or a reply
    /// came), never between a send and the wait for its reply.
    unstamped: usize,
    /// A reply came since the error queue was last read (or the last send).
    replied: bool,
    /// A datagram may be queued: false only after a receive found the
    /// queue empty and nothing but a send happened since (so no receive
    /// sits between a send and the wait for its reply).
    maybe_data: bool,
    turns: u32,
}

/// The wake-up timer of blocking waits and what it was last armed for.
struct Wake {
    timer: WakeTimer,
    /// When (CLOCK_REALTIME) the timer fires, while it has not fired.
    armed_at: Option<Instant>,
    /// [`WakeTimer::fired`] when it was armed.
    fired_mark: u64,
}

impl Wake {
    /// The timer fires no later than `target`: armed anew unless an arming
    /// still pending fires at or before it (an early wake-up only costs a
    /// turn of the loop; a system call here may sit inside a round trip).
    fn ensure(&mut self, now: Instant, target: Instant) -> Result<()> {
        let pending = self
            .armed_at
            .filter(|&a| a > now && a <= target && WakeTimer::fired() == self.fired_mark);
        if pending.is_none() {
            self.fired_mark = WakeTimer::fired();
            self.timer.arm(target - now)?;
            self.armed_at = Some(target);
        }
        Ok(())
    }
}

impl<'t> Link<'t> {
    /// Checks that the largest request fits the transport's framing. A
    /// UDP session that does not busy-poll waits in a blocking receive.
    /// `tx_stamps`: TX stamps the socket reports per send (0: none is read).
    pub fn new(
        tr: &'t mut Transport,
        max_request: usize,
        busy_poll: bool,
        tx_stamps: usize,
    ) -> Result<Link<'t>> {
        let mut tx = vec![0u8; tr.stamp_offset() + max_request.max(64)];
        tr.wrap(&mut tx, max_request, 0)?;
        let wake = if !busy_poll && tr.block_in_receive(BACKSTOP)? {
            Some(Wake {
                timer: WakeTimer::new()?,
                armed_at: None,
                fired_mark: 0,
            })
        } else {
            None
        };
        Ok(Link {
            tr,
            tx,
            rx: vec![0u8; RX_BUF],
            icmp: 0,
            busy_poll,
            tx_stamps,
            wake,
            tx_due: false,
            unstamped: 0,
            replied: false,
            maybe_data: true,
            turns: 0,
        })
    }

    /// TX stamps are read after the replies (blocking waits and
    /// busy-polling), not right after each send (poll(2), which a queued
    /// stamp would wake).
    fn stamps_after_reply(&self) -> bool {
        self.wake.is_some() || self.busy_poll
    }

    /// The instant a blocking wait that starts at `now` must end: shortly
    /// before the session's next deadline, and soon enough to see a stop.
    fn wake_target(s: &SessionSender, now: Instant) -> Option<Instant> {
        let until = s.poll_timeout()?;
        (until.as_ns().saturating_sub(now.as_ns()) > SPIN_NS).then(|| {
            (until - Span::from_ns(WAKE_EARLY_NS))
                .min(now.saturating_add(Span::from_ns(MAX_SLEEP_NS)))
        })
    }

    /// One request, when the session has one due at `now`.
    fn transmit(&mut self, s: &mut SessionSender, now: Instant) -> Result<()> {
        let off = self.tr.stamp_offset();
        let Some(t) = s.poll_transmit(now, &mut self.tx[off..]) else {
            return Ok(());
        };
        let n = self.tr.wrap(&mut self.tx, t.len, t.seq)?;
        // Blocking waits: the timer for the wait that follows is armed
        // here, before TX1, so that no system call sits between the send
        // and the wait (the session's next deadline is already known).
        let mut block = false;
        if let Some(w) = self.wake.as_mut() {
            if let Some(target) = Self::wake_target(s, now) {
                w.ensure(now, target)?;
                block = true;
            }
        }
        // TX1 once the request is built (HMAC included), so that the
        // user-level RTT does not contain the building.
        let tx1 = realtime();
        let sent = self.tr.send(&self.tx[..n], t.seq)?;
        let tx2 = realtime();
        if !sent {
            return Ok(());
        }
        s.on_sent(t.seq, tx1, tx2);
        // A reply seen before this send does not make its stamp due.
        self.replied = false;
        if self.tx_stamps > 0 {
            if self.stamps_after_reply() {
                // Read once the reply is in: the blocking receive is not
                // woken by it, on a shared CPU every call made before
                // blocking delays the reflector, and spinning, a read here
                // would delay seeing the reply.
                self.unstamped += self.tx_stamps;
            } else {
                // A software-stamped send has its stamp queued by the time
                // send returns: one read takes it, and the poll that
                // follows is not woken by it. Nothing else is read between
                // the send and that wait (the reply cannot be there yet).
                // A stamp that comes later wakes the poll.
                self.tr.poll_tx(1, |seq, sw, hw| {
                    s.on_tx_stamp(seq, sw, hw);
                })?;
            }
        }
        if block {
            // Straight into the wait for the reply: the loop's bookkeeping
            // runs after it, not while a reflector on this CPU waits.
            return self.wait_in_receive(s);
        }
        Ok(())
    }

    /// Every datagram the socket holds, then the TX stamps that are due.
    /// Replies come first: the user RX instant (rx2) is read right after
    /// the receive that returns one, with no other system call before it.
    fn receive(&mut self, s: &mut SessionSender) -> Result<()> {
        while self.maybe_data || self.busy_poll {
            let (read, got) = self.tr.recv(&mut self.rx)?;
            if !read {
                self.maybe_data = false;
                break;
            }
            self.deliver(s, got);
        }
        self.turns = self.turns.wrapping_add(1);
        let periodic = self.busy_poll && self.turns % BUSY_TX_EVERY == 0;
        if self.stamps_after_reply() {
            // After the replies, never before them (and, spinning, now and
            // then for a stamp that came late).
            self.tx_due =
                periodic || self.unstamped > 0 && (self.replied || s.awaiting_reply() == 0);
        }
        if self.tx_due {
            self.tx_due = false;
            self.replied = false;
            // Read after replies, the number of stamps to expect is known:
            // reading no more spares a read of the empty queue.
            let max = if self.stamps_after_reply() && !periodic {
                self.unstamped
            } else {
                usize::MAX
            };
            let n = self.tr.poll_tx(max, |seq, sw, hw| {
                s.on_tx_stamp(seq, sw, hw);
            })?;
            // An empty queue: none is coming soon (software stamps are
            // queued during the send); a later one is read after the next.
            self.unstamped = if n == 0 {
                0
            } else {
                self.unstamped.saturating_sub(n)
            };
        }
        Ok(())
    }

    /// A received datagram, to the session when it may be a reply.
    fn deliver(&mut self, s: &mut SessionSender, got: Option<Received>) {
        self.replied |= got.is_some();
        if let Some(m) = got {
            let end = (m.start + m.len).min(self.rx.len());
            let reply = &self.rx[m.start.min(end)..end];
            s.handle_reply(reply, m.rx2, m.rx_kernel, m.rx_hw);
        }
    }

    /// One blocking receive, ended by a datagram (the reply: rx2 is read
    /// right after it), the wake-up timer's signal or the backstop.
    fn wait_in_receive(&mut self, s: &mut SessionSender) -> Result<()> {
        let (read, got) = self.tr.recv_wait(&mut self.rx)?;
        // More queued is found by the next wait, which returns at once: no
        // receive that finds nothing.
        self.maybe_data = false;
        if read {
            self.deliver(s, got);
        }
        Ok(())
    }

    /// Busy-polling with a reply due: receives in a tight loop (a receive
    /// and a clock read per turn, none of the loop's bookkeeping) until a
    /// datagram comes or the session's next deadline is near.
    fn spin_for_reply(
        &mut self,
        s: &mut SessionSender,
        now: Instant,
        until: Instant,
    ) -> Result<()> {
        if s.awaiting_reply() == 0 {
            return Ok(());
        }
        let end = until.min(now.saturating_add(Span::from_ns(MAX_SLEEP_NS)));
        loop {
            let (read, got) = self.tr.recv(&mut self.rx)?;
            if read {
                self.deliver(s, got);
                return Ok(());
            }
            if realtime() >= end {
                return Ok(());
            }
        }
    }

    /// Sleeps until a datagram or the session's next deadline (in a
    /// blocking receive, or in poll(2)); spins for the last stretch so the
    /// schedule stays accurate. `now` is the loop's own clock read of this
    /// turn (one read fewer per turn). With nothing in flight the spin
    /// reads only the clock; busy-polling, the loop never sleeps.
    fn sleep(&mut self, s: &mut SessionSender, now: Instant) -> Result<()> {
        let Some(until) = s.poll_timeout() else {
            return Ok(());
        };
        if self.busy_poll {
            return self.spin_for_reply(s, now, until);
        }
        if let Some(target) = Self::wake_target(s, now) {
            if let Some(w) = self.wake.as_mut() {
                w.ensure(now, target)?;
                return self.wait_in_receive(s);
            }
            let d = Duration::from_nanos((target - now).as_ns().max(0) as u64);
            let ready = self.tr.wait(d)?;
            self.maybe_data |= ready.data;
            self.tx_due |= ready.error_queue;
        } else if s.awaiting_reply() == 0 {
            while realtime() < until {
                std::hint::spin_loop();
            }
        } else {
            // A reply is due and the send is near: look, without sleeping.
            self.maybe_data = true;
        }
        Ok(())
    }

    /// Whether an ICMP error (port or host unreachable) came back for a
    /// probe: the error queue is read for it (TX stamps met on the way go
    /// to the session), so it is asked only while no reply has come.
    fn unreachable(&mut self) -> Result<bool> {
        if matches!(self.tr, Transport::L2(_)) {
            // Raw frames draw no ICMP error.
            return Ok(false);
        }
        // Not `s.on_tx_stamp` here: stamps read now would be the warm-up's,
        // which the session does not use, and are dropped after it anyway.
        self.tr.poll_tx(usize::MAX, |_, _, _| {})?;
        self.icmp += self.tr.take_icmp_errors();
        Ok(self.icmp > 0)
    }

    /// The warm-up, until the session has settled what the reflector does
    /// or the user stops (the measurement loop then ends the session).
    pub fn warm_up(&mut self, s: &mut SessionSender, stop: &AtomicUsize) -> Result<()> {
        while s.is_warming_up() && stop.load(Ordering::Relaxed) == 0 {
            self.transmit(s, realtime())?;
            self.receive(s)?;
            if s.warm_up().replies == 0 && self.unreachable()? {
                // Nothing listens there: the remaining warm-up probes
                // would each wait their timeout for a reply that cannot
                // come (8 s with the defaults). The caller says why.
                break;
            }
            self.sleep(s, realtime())?;
        }
        self.icmp += self.tr.take_icmp_errors();
        // Replies still on their way to warm-up requests are dropped here,
        // not counted as unknown.
        self.tr.poll_tx(usize::MAX, |_, _, _| {})?;
        self.tx_due = false;
        self.unstamped = 0;
        self.replied = false;
        while self.tr.recv(&mut self.rx)?.0 {}
        Ok(())
    }

    /// The measurement: probes released by the session go to `c`. Returns
    /// why it stopped.
    pub fn measure(
        &mut self,
        s: &mut SessionSender,
        stop: &AtomicUsize,
        c: &mut Collector,
        progress: &mut Progress,
        intervals: Option<Intervals>,
        t_start: Instant,
    ) -> Result<misura_report::StopReason> {
        let mut stop_reason = misura_report::StopReason::Finished;
        let mut next_interval = None;
        loop {
            progress.tick(|| c.progress());
            c.tick();
            let sig = stop.load(Ordering::Relaxed);
            if sig != 0 && s.stop(realtime()) {
                stop_reason = misura_cli::exit::signal_reason(sig);
            }
            self.transmit(s, realtime())?;
            self.receive(s)?;
            let now = realtime();
            while let Some(rec) = s.poll_record(now) {
                c.add(rec);
            }
            if let Some(iv) = &intervals {
                if next_interval.is_none() {
                    next_interval = s.measurement_start().map(|start| {
                        c.bin_series(start, iv.every, iv.lag);
                        start + iv.every
                    });
                }
                if let Some(next) = next_interval.filter(|&next| now >= next) {
                    c.close_interval(now - t_start, now, iv.print);
                    next_interval = Some(next + iv.every);
                }
            }
            if s.is_finished(now) {
                break;
            }
            self.sleep(s, now)?;
        }
        progress.done();
        let now = realtime();
        while let Some(rec) = s.poll_record(now) {
            c.add(rec);
        }
        self.icmp += self.tr.take_icmp_errors();
        Ok(stop_reason)
    }
}
