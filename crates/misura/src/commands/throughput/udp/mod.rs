//! `misura udp`: paced UDP against `misura serve` (seed 001's UDP and
//! don't-fragment studies, seed 004's iperf figures): received rate, loss,
//! duplicates, out-of-order, RFC 3550 jitter and one-way delay variation.

use crate::commands::throughput::client;
use crate::shared::output::Finished;
use crate::shared::warnings::Warn;
use anyhow::Result;
use misura_report::throughput::{
    write_udp_csv, write_udp_text, UdpClientResult, UdpConfig, UdpReport,
};
use misura_report::Warning;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

mod datagram;
mod flow;
mod plan;
mod session;

pub use plan::{UdpArgs, UdpKnobs, UdpPlan, UdpShape, DEFAULT_MSG_SIZE};

/// Long help for the subcommand (shown by `--help`).
pub const LONG_ABOUT: &str = "Paced UDP against `misura serve` (seed 001's UDP studies, seed 004's iperf figures).

The sender (the client; the server with --reverse) sends --msg-size datagrams (UDP payload, at \
least 24 bytes) at --rate for --duration, each carrying the test id, a sequence number and its send \
time (CLOCK_REALTIME). The receiver counts them: received rate (`throughput_bps` in the JSON, as the \
receiver measured it), loss = sent − received, duplicates, out-of-order arrivals, RFC 3550 \
interarrival jitter, and the one-way delay's extremes and their difference (its variation; the \
delays themselves include the two clocks' offset unless both ends share a clock). The rate counts \
UDP payload bytes.

Pacing (both ends, the same code): datagram k is due at start + k·msg-size·8/rate, exactly and \
open-loop. The sender sleeps (absolute clock_nanosleep on CLOCK_MONOTONIC, timer slack 1 ns) until \
a margin before the next send, the margin being the p99 of how late its recent wake-ups were \
(measured as it runs), and spins only that remainder. When datagrams are closer than a sleep can \
resolve (about 8 margins; at 1 Gbit/s they are 12 µs apart), those due together go back to back, \
one wake-up per burst, at most 1 ms apart. A sender that falls behind catches up for at most 10 ms, \
then drops the backlog (counted as skipped). The result's `pacing` says how it went: bursts, \
wake-ups, the margin, time spun, the gap between sends (p50/p99 against the target) and how far \
behind schedule datagrams left; `cpu_local` is the client's CPU time (user + system) over the test. \
SO_TXTIME is not used. --pacing spin instead sends every datagram at its own time, spinning up to a \
whole CPU, for the most even spacing.

--df sets don't-fragment (IP_MTU_DISCOVER = IP_PMTUDISC_DO): a datagram above the path MTU then \
cannot leave (EMSGSIZE) or is dropped on the way, so nothing arrives (seed 001, Fig. 16). misura \
says so plainly and reports the path MTU the kernel holds (IP_MTU).

Exit codes: 0 done, 1 server unreachable / refused (its reason is printed) / lost during the test \
(partial result written) / nothing arrived because --df datagrams exceed the path MTU, 2 usage, 5 above the server's limits or a datagram below 24 bytes, 6 \
output file, 130/143 interrupted.

Examples:
  misura udp 198.18.0.2 --rate 100M
  misura udp 198.18.0.2 --rate 1G --msg-size 1472 --duration 10s --json
  misura udp 198.18.0.2 --rate 10M --msg-size 2000 --df
  misura udp 198.18.0.2 --rate 50M --reverse --clients 2";

/// `misura udp`: the report, exit code 1 when a client did not complete.
pub fn run(args: &UdpArgs, stop: &Arc<AtomicUsize>) -> Result<Finished> {
    let r = measure(&UdpPlan::from_args(args)?, stop)?;
    let (text, csv) = (write_udp_text, write_udp_csv);
    let blocked = blocked_by_df(&r);
    if let Some(why) = &blocked {
        eprintln!("misura: error: {why}");
    }
    Ok(client::finished(
        r.complete && blocked.is_none(),
        r,
        "udp",
        &args.c.host,
        text,
        csv,
    ))
}

/// Run the test (in the current network namespace) and build the result.
pub fn measure(p: &UdpPlan, stop: &Arc<AtomicUsize>) -> Result<UdpReport> {
    let ran = client::run_all(p, &p.client, stop, session::one_client)?;
    let mut o = ran.outcome;
    let clients = &o.clients;
    let dropped: Vec<Warning> = clients
        .iter()
        .filter_map(|c| nothing_arrived(p, c))
        .collect();
    o.warnings.extend(dropped);
    let sent: u64 = o.clients.iter().map(|c| c.sent_packets).sum();
    let lost: u64 = o.clients.iter().map(|c| c.lost).sum();
    Ok(UdpReport {
        meta: crate::shared::meta::meta("misura.udp", ran.started_at),
        complete: o.complete,
        stop_reason: o.stop_reason,
        throughput_bps: o.clients.iter().map(|c| c.throughput_bps).sum(),
        lost,
        loss_ratio: if sent > 0 {
            lost as f64 / sent as f64
        } else {
            0.0
        },
        host: p.client.fingerprint(),
        config: UdpConfig {
            endpoint: p.client.endpoint(&ran.server),
            direction: p.direction().as_str().into(),
            rate_bps: p.rate_bps(),
            msg_size: p.msg_size(),
            duration_ns: p.duration_ns(),
            df: p.df,
            pacing: p.pacing.as_str().into(),
        },
        clients: o.clients,
        warnings: o.warnings,
    })
}

/// With don't-fragment, datagrams above the path MTU never leave (every
/// send fails with EMSGSIZE) or are dropped on the way: the test measured
/// nothing, which is an error (exit 1), not a result of 0 bit/s.
fn blocked_by_df(r: &UdpReport) -> Option<String> {
    let c = &r.config;
    let ran: Vec<_> = r.clients.iter().filter(|c| c.test_id.is_some()).collect();
    if !c.df || ran.is_empty() || ran.iter().any(|c| c.received_packets > 0) {
        return None;
    }
    let failed: u64 = ran.iter().map(|c| c.emsgsize_errors).sum();
    let mtu = ran.iter().find_map(|c| c.path_mtu);
    let packet = c.msg_size + 28;
    if failed == 0 && mtu.is_none_or(|m| packet <= m as u64) {
        return None;
    }
    let mtu_text = mtu.map_or("unknown".into(), |m| format!("{m} bytes"));
    let fits = mtu.map_or("smaller".into(), |m| {
        format!("{} or less", (m as u64).saturating_sub(28))
    });
    Some(format!(
        "--msg-size {} with --df: nothing arrived ({failed} sends failed with EMSGSIZE): a {}-byte \
         datagram is a {packet}-byte IPv4 packet, above the path MTU of {mtu_text}, and \
         don't-fragment forbids splitting it. Use --msg-size {fits}, or leave out --df to let it \
         be fragmented",
        c.msg_size, c.msg_size
    ))
}

/// A warning for a client whose datagrams all went missing, saying why
/// when don't-fragment explains it (seed 001, Fig. 16).
fn nothing_arrived(p: &UdpPlan, c: &UdpClientResult) -> Option<Warning> {
    if c.test_id.is_none() || c.received_packets != 0 || c.sent_packets + c.send_errors == 0 {
        return None;
    }
    let size = p.msg_size();
    let w = if p.df && size + 28 > c.path_mtu.unwrap_or(u32::MAX) as u64 {
        Warn::AboveMtuWithDf {
            mtu: c.path_mtu.unwrap_or(0),
            msg_size: size,
            emsgsize: c.emsgsize_errors,
        }
    } else if p.df {
        Warn::NothingArrivedWithDf {
            client: c.client,
            mtu: c.path_mtu,
        }
    } else {
        Warn::NothingArrived { client: c.client }
    };
    Some(w.into())
}

/// The row of a client that could not run its test.
fn not_run(i: u32, e: &anyhow::Error) -> UdpClientResult {
    UdpClientResult {
        client: i,
        stop_reason: format!("{e:#}"),
        ..session::not_run_row()
    }
}

client::client_result!(UdpClientResult, not_run);
