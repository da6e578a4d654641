//! `misura setup`: the set-up delay of a path (seed 001's SVC set-up
//! method, generalised): after an idle gap, the RTT of the first packet
//! minus the RTT of the next one; plus the TCP handshake time.

use crate::client::{self, ClientPlan, Server};
use crate::error::{Result, ThroughputError};
use crate::proto;
use misura_cli::exit::one_line;
use misura_cli::warnings::Warn;
use misura_measure::time::Span;
use misura_report::throughput::{SetupConfig, SetupFigures, SetupGap, SetupReport, SetupSample};
use misura_report::StopReason;
use misura_wire::control::Value;
use std::net::{TcpStream, UdpSocket};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One `misura setup` run, checked.
#[derive(Clone, Debug)]
pub struct SetupPlan {
    pub client: ClientPlan,
    /// The idle gaps, ns, in the order given.
    pub gaps: Vec<u64>,
    pub count: u32,
}

/// A set-up test with nothing to measure: no idle gap, or no sample per
/// gap.
#[derive(Debug, thiserror::Error)]
#[error("a set-up test needs at least one idle gap and one sample per gap")]
pub struct NothingToMeasure;

impl SetupPlan {
    /// The gaps and the samples per gap, checked before the rest of the plan
    /// is made.
    pub fn check_samples(gaps: &[u64], count: u32) -> Result<(), NothingToMeasure> {
        if gaps.is_empty() || count == 0 {
            return Err(NothingToMeasure);
        }
        Ok(())
    }
}

const METHOD: &str = "rr-udp: after the idle gap, RTT of the first 16-byte UDP transaction minus the RTT of the next; then the connect() time to the serve port";
const REPLY_TIMEOUT: Duration = Duration::from_secs(2);

fn transaction(sock: &UdpSocket, test_id: u64, seq: u64) -> Result<u64> {
    let mut req = [0u8; 16];
    req[0..8].copy_from_slice(&test_id.to_be_bytes());
    req[8..16].copy_from_slice(&seq.to_be_bytes());
    let mut buf = [0u8; 2048];
    let t0 = Instant::now();
    sock.send(&req)
        .map_err(ThroughputError::step("sending a probe"))?;
    loop {
        let left = REPLY_TIMEOUT.saturating_sub(t0.elapsed());
        if left.is_zero() {
            return Err(ThroughputError::NoReply {
                secs: REPLY_TIMEOUT.as_secs(),
            });
        }
        sock.set_read_timeout(Some(left)).ok();
        match sock.recv(&mut buf) {
            Ok(n) if n >= 16 && buf[..16] == req => return Ok(t0.elapsed().as_nanos() as u64),
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(ThroughputError::NoReply {
                    secs: REPLY_TIMEOUT.as_secs(),
                })
            }
            Err(e) => return Err(ThroughputError::Receive { error: e }),
        }
    }
}

fn sleep_unless_stopped(d: Duration, stop: &AtomicUsize) -> bool {
    let end = Instant::now() + d;
    while Instant::now() < end {
        if client::interrupted(stop) {
            return false;
        }
        std::thread::sleep((end - Instant::now()).min(Duration::from_millis(50)));
    }
    true
}

/// One sample: ask for a test, wait out the gap, time two transactions,
/// then the handshake.
fn sample(server: &Server, idle: Duration, stop: &AtomicUsize) -> Result<SetupSample> {
    let addr = server.addr;
    let duration_ns = (idle + Duration::from_secs(5)).as_nanos() as u64;
    let req = client::request("rr-udp", duration_ns, 0)
        .with(proto::F_STREAMS, Value::U64(1))
        .with(proto::F_REQUEST_SIZE, Value::U64(16))
        .with(proto::F_RESPONSE_SIZE, Value::U64(16))
        .with(proto::F_BURST, Value::U64(1));
    let client::Opened {
        mut ctl,
        test_id,
        data,
    } = client::open_test(server, req, duration_ns, 1, 0)?;
    let sock = client::connected_udp(data)?;
    let mut s = SetupSample {
        first_rtt_ns: None,
        second_rtt_ns: None,
        setup_ns: None,
        handshake_ns: None,
        error: None,
    };
    if !sleep_unless_stopped(idle, stop) {
        s.error = Some("interrupted".into());
        ctl.error("interrupted");
        return Ok(s);
    }
    let r = (|| -> Result<(u64, u64)> {
        Ok((
            transaction(&sock, test_id, 0)?,
            transaction(&sock, test_id, 1)?,
        ))
    })();
    match r {
        Ok((a, b)) => {
            s.first_rtt_ns = Some(a);
            s.second_rtt_ns = Some(b);
            s.setup_ns = Some(a as i64 - b as i64);
        }
        Err(e) => {
            s.error = Some(format!(
                "{} (a gap longer than the server's idle timeout ends the test)",
                one_line(&e)
            ));
        }
    }
    let done = client::DoneFigures {
        transactions: if s.setup_ns.is_some() { 2 } else { 0 },
        ..Default::default()
    };
    let _ = ctl.done(&client::done_message(&done), proto::MESSAGE_TIMEOUT);
    // The handshake, right after (the path is warm now).
    let t0 = Instant::now();
    match TcpStream::connect_timeout(&addr, client::CONNECT_TIMEOUT) {
        Ok(c) => {
            s.handshake_ns = Some(t0.elapsed().as_nanos() as u64);
            drop(c);
        }
        Err(e) => {
            s.error = s
                .error
                .take()
                .or(Some(format!("connect() to the serve port: {e}")))
        }
    }
    Ok(s)
}

pub fn measure(p: &SetupPlan, stop: &Arc<AtomicUsize>) -> Result<SetupReport> {
    let server = p.client.resolve()?;
    let started_at = misura_cli::meta::now_rfc3339();
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    'gaps: for &g in &p.gaps {
        let mut samples = Vec::new();
        for _ in 0..p.count {
            if client::interrupted(stop) {
                break 'gaps;
            }
            match sample(&server, Duration::from_nanos(g), stop) {
                Ok(s) => samples.push(s),
                // The first sample's failure to reach the server is the run's.
                Err(e) if out.is_empty() && samples.is_empty() => return Err(e),
                Err(e) => samples.push(SetupSample {
                    first_rtt_ns: None,
                    second_rtt_ns: None,
                    setup_ns: None,
                    handshake_ns: None,
                    error: Some(one_line(&e)),
                }),
            }
        }
        let gap = summarise(g, samples);
        let failed = gap.samples.iter().filter(|s| s.setup_ns.is_none()).count();
        if failed > 0 {
            warnings.push(
                Warn::SetupSamplesFailed {
                    idle: Span::from_ns(g as i64),
                    failed,
                    total: gap.samples.len(),
                }
                .into(),
            );
        }
        out.push(gap);
    }
    let complete = !client::interrupted(stop)
        && out
            .iter()
            .all(|g| g.samples.iter().all(|s| s.error.is_none()));
    Ok(SetupReport {
        meta: misura_cli::meta::meta("misura.setup", started_at),
        complete,
        stop_reason: client::run_reason(stop, complete, StopReason::other("some samples failed")),
        host: p.client.fingerprint(),
        config: SetupConfig {
            endpoint: p.client.endpoint(&server),
            idle_ns: p.gaps.clone(),
            count: p.count,
            method: METHOD.into(),
        },
        body: SetupFigures { gaps: out },
        warnings,
    })
}

/// One gap's samples and their means and extremes.
fn summarise(idle_ns: u64, samples: Vec<SetupSample>) -> SetupGap {
    let setups = || samples.iter().filter_map(|s| s.setup_ns);
    let mean = |f: &dyn Fn(&SetupSample) -> Option<f64>| {
        let v: Vec<f64> = samples.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    SetupGap {
        idle_ns,
        setup_mean_ns: mean(&|s| s.setup_ns.map(|v| v as f64)),
        setup_min_ns: setups().min(),
        setup_max_ns: setups().max(),
        first_rtt_mean_ns: mean(&|s| s.first_rtt_ns.map(|v| v as f64)),
        second_rtt_mean_ns: mean(&|s| s.second_rtt_ns.map(|v| v as f64)),
        handshake_mean_ns: mean(&|s| s.handshake_ns.map(|v| v as f64)),
        samples,
    }
}
