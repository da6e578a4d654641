//! The responder: answer each trigger from the peer with a data frame,
//! until a signal or the plan's duration, and count what came.

use crate::error::ExchangeError;
use crate::frames::{classify, send_all, set_seq, INITIATOR_DATA, RESPONDER_DATA, TRIGGER};
use crate::plan::ExchangePlan;
use crate::port::Port;

type Result<T, E = ExchangeError> = std::result::Result<T, E>;
use misura_cli::meta::{meta, now_rfc3339};
use misura_measure::time::Span;
use misura_report::exchange::ResponderReport;
use misura_sys::clock::realtime;
use misura_wire::MacAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What the responder is about to do, for the binary to announce.
pub struct Ready<'a> {
    pub interface: &'a str,
    pub peer: MacAddr,
    pub data_bytes: usize,
}

/// Open the port and answer each trigger from the peer with a data frame
/// until a signal or the plan's duration; `ready` hears of the responder
/// once it listens.
pub fn respond(
    a: &ExchangePlan,
    stop: &AtomicUsize,
    ready: &mut dyn FnMut(&Ready<'_>),
) -> Result<ResponderReport> {
    a.check()?;
    let port = &Port::open(a)?;
    let end = a.duration.map(|d| realtime() + d);
    let started_at = now_rfc3339();
    let mut buf = vec![0u8; 16 * 1024];
    let mut data: Option<(u32, Vec<u8>)> = None;
    let (mut triggers, mut answered, mut peer_data, mut other) = (0u64, 0u64, 0u64, 0u64);
    ready(&Ready {
        interface: &a.interface,
        peer: port.peer,
        data_bytes: a.data,
    });
    while stop.load(Ordering::Relaxed) == 0 && end.is_none_or(|e| realtime() < e) {
        while port.sock.recv_tx_timestamp(&mut buf)?.is_some() {}
        let Some(m) = port.sock.recv(&mut buf)? else {
            // Sleep in the kernel until a frame comes (as the seed's blocking
            // recvfrom did), unless asked to busy-poll.
            if !a.busy_poll {
                port.sock
                    .wait_readable(std::time::Duration::from_millis(100))?;
            }
            continue;
        };
        let n = m.len.min(buf.len());
        match classify(&buf[..n], port.peer, port.ethertype) {
            Some((TRIGGER, seq, session)) => {
                triggers += 1;
                if data.as_ref().is_none_or(|(s, _)| *s != session) {
                    data = Some((session, port.frame(session, RESPONDER_DATA, a.data)?));
                }
                let d = &mut data.as_mut().unwrap().1;
                set_seq(d, seq);
                if send_all(&port.sock, d, realtime() + Span::from_millis(1))? {
                    answered += 1;
                }
            }
            Some((INITIATOR_DATA, _, _)) => peer_data += 1,
            _ => other += 1,
        }
    }
    let stop_reason = misura_cli::exit::stop_reason(stop.load(Ordering::Relaxed));
    Ok(ResponderReport {
        meta: meta("misura.exchange-responder", started_at),
        complete: stop_reason.is_finished(),
        stop_reason,
        host: misura_run::host::fingerprint(port.tuning.clone()),
        interface: a.interface.clone(),
        peer: port.peer.to_string(),
        data_bytes: a.data,
        triggers,
        answered,
        peer_data_frames: peer_data,
        other_frames: other,
    })
}
