//! `misura serve`: the control connection of an accepted test — ACCEPT,
//! the test's UDP threads, waiting for the client's DONE, draining what is
//! still in flight, then RESULT with the receiver's figures.

use super::figures::{figures_of, result_message};
use super::state::{DeadlineReader, Shared};
use super::test::*;
use super::udp::{udp_receiver, udp_sender};
use crate::proto::{self, Fields};
use misura_wire::control::{Message, Value};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// After DONE, UDP datagrams still in flight are read until this much quiet.
const UDP_DRAIN_QUIET: Duration = Duration::from_millis(100);
const UDP_DRAIN_MAX: Duration = Duration::from_secs(1);

/// The control connection of an accepted test: ACCEPT, wait for DONE, RESULT.
pub fn run_control(shared: &Shared, t: &Arc<Test>, stream: TcpStream) {
    let cpu0 = misura_sys::rusage::process_cpu();
    if !accept(shared, t, &stream) {
        t.end("the client left before ACCEPT");
        return;
    }
    let figures = Mutex::new(UdpFigures::default());
    let done = std::thread::scope(|sc| {
        let spec = &t.spec;
        let mut threads = Vec::new();
        if t.udp.is_some() {
            threads.push(sc.spawn(|| udp_receiver(t, &figures)));
            if spec.kind == "udp" && spec.server_sends() {
                threads.push(sc.spawn(|| udp_sender(shared, t, &figures)));
            }
        }
        let done = await_done(shared, t, &stream);
        if done.is_some() {
            drain(shared, t);
        }
        t.close_data();
        for h in threads.into_iter().rev() {
            let _ = h.join();
        }
        done
    });
    // Wait for the data threads to record their figures.
    let w = Instant::now();
    while t.data_active.load(Ordering::Relaxed) > 0 && w.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let cpu1 = misura_sys::rusage::process_cpu();
    let cpu = (cpu1.0.saturating_sub(cpu0.0), cpu1.1.saturating_sub(cpu0.1));
    let f = figures.into_inner().unwrap();
    let done = done.unwrap_or_else(|| Message::new(proto::DONE));
    let record = figures_of(t, &f, &done, cpu);
    let _ = proto::write_message(&mut &stream, &result_message(t, &f, &record));
    let _ = stream.shutdown(Shutdown::Write);
    if !shared.quiet {
        log::info!("{}", misura_report::serve::test_line(&record));
    }
    shared.results.lock().unwrap().push(record);
}

/// Send ACCEPT with the test id and the port of its data; false when the
/// client has gone.
fn accept(shared: &Shared, t: &Test, stream: &TcpStream) -> bool {
    let data_port = match &t.udp {
        Some(u) => u.local_addr().map(|a| a.port()).unwrap_or(0),
        None => stream.local_addr().map(|a| a.port()).unwrap_or(0),
    };
    let _ = stream.set_write_timeout(Some(shared.limits.idle_timeout));
    let accept = Message::new(proto::ACCEPT)
        .with(proto::F_TEST_ID, Value::U64(t.id))
        .with(proto::F_DATA_PORT, Value::U64(data_port as u64));
    proto::write_message(&mut &*stream, &accept).is_ok()
}

/// The client's DONE; anything else makes the test partial, saying why.
/// The client has the test's duration, then the idle timeout, to send it.
fn await_done(shared: &Shared, t: &Test, stream: &TcpStream) -> Option<Message> {
    let until = t.start + t.spec.duration + shared.limits.idle_timeout + Duration::from_secs(1);
    if let Err(why) = await_control(shared, t, stream, until) {
        t.set_partial(why);
        return None;
    }
    match proto::read_message(&mut DeadlineReader { stream, until }) {
        Ok(m) if m.typ == proto::DONE => {
            if m.opt_bool(proto::F_PARTIAL) == Some(true) {
                t.set_partial("the client ended early (its DONE says partial)");
            }
            Some(m)
        }
        Ok(m) if m.typ == proto::ERROR => {
            t.set_partial(format!(
                "client error: {}",
                m.str(proto::F_REASON).unwrap_or("(no reason)")
            ));
            None
        }
        Ok(m) => {
            t.set_partial(format!(
                "unexpected control message type {} instead of DONE",
                m.typ
            ));
            None
        }
        Err(e) => {
            t.set_partial(if super::state::timed_out(&e) {
                "no DONE from the client within the duration plus the idle timeout"
            } else {
                "the client's control connection closed before DONE"
            });
            None
        }
    }
}

/// After DONE, take in what is still in flight towards the server.
fn drain(shared: &Shared, t: &Test) {
    let spec = &t.spec;
    // Forward and bidir TCP: the client closed its data connections
    // before DONE; read them to the end (bounded by the idle timeout).
    if spec.kind == "tcp" && spec.server_receives() {
        let w = Instant::now();
        while t.data_active.load(Ordering::Relaxed) > 0
            && w.elapsed() < shared.limits.idle_timeout
            && !t.stopped()
        {
            std::thread::sleep(Duration::from_millis(2));
        }
        if t.data_active.load(Ordering::Relaxed) > 0 {
            t.set_partial("data connections still open after DONE");
        }
    }
    // UDP: until the datagrams have stopped coming for a moment.
    if spec.kind == "udp" && spec.server_receives() {
        let w = Instant::now();
        while w.elapsed() < UDP_DRAIN_MAX && !t.stopped() {
            let last = t.last_rx.load(Ordering::Relaxed);
            if t.now() - last.max(0) >= UDP_DRAIN_QUIET.as_nanos() as i64 {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Wait until the control connection has something to read (DONE, ERROR,
/// or its end) or `until` passes. An accepted test whose client neither
/// opens a data connection nor sends a datagram within the idle timeout, or
/// whose data connections have all gone (closed, or ended by the idle
/// timeout) without a DONE for the idle timeout, is ended then: a silent or
/// stopped client cannot hold a slot that real clients need for the test's
/// whole duration. The reason is returned.
fn await_control(
    shared: &Shared,
    t: &Test,
    stream: &TcpStream,
    until: Instant,
) -> Result<(), &'static str> {
    let idle = shared.limits.idle_timeout;
    let started = || {
        t.data_seen.load(Ordering::Relaxed) > 0
            || t.first_rx.load(Ordering::Relaxed) != i64::MAX
            || t.udp_peer.lock().map(|p| p.is_some()).unwrap_or(true)
    };
    let mut quiet_since: Option<Instant> = None;
    let mut one = [0u8; 1];
    loop {
        let now = Instant::now();
        if now >= until || t.stopped() {
            return Ok(());
        }
        let begun = started();
        if !begun && now >= t.start + idle {
            return Err("no data from the client within the server's idle timeout: the test was ended and its slot freed");
        }
        if begun && t.udp.is_some() && t.spec.server_receives() {
            let quiet_ns = t.now() - t.last_rx.load(Ordering::Relaxed).max(0);
            if quiet_ns >= idle.as_nanos() as i64 {
                return Err("the client stopped: no datagram and no DONE within the server's idle timeout; the test was ended and its slot freed");
            }
        }
        let streams_gone = begun && t.udp.is_none() && t.data_active.load(Ordering::Relaxed) == 0;
        if streams_gone {
            let since = *quiet_since.get_or_insert(now);
            let last_data = t
                .last_rx
                .load(Ordering::Relaxed)
                .max(t.last_tx.load(Ordering::Relaxed))
                .max(0);
            let data_quiet = t.now() - last_data >= idle.as_nanos() as i64;
            if now - since >= idle || data_quiet {
                return Err("the client stopped: its data connections ended and no DONE came within the server's idle timeout; the test was ended and its slot freed");
            }
        } else {
            quiet_since = None;
        }
        // A control message waiting counts as activity; peek leaves it for
        // the reader.
        let wait = (until - now).min(Duration::from_millis(50));
        let _ = stream.set_read_timeout(Some(wait.max(Duration::from_millis(1))));
        match stream.peek(&mut one) {
            Ok(_) => return Ok(()),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return Ok(()),
        }
    }
}
