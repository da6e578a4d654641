//! What to measure, in two steps (ripgrep's LowArgs → HiArgs): the
//! [`Request`] holds the flags as numbers (or what `misura demo` asks for),
//! and [`resolve`] checks it against the interfaces and the link into the
//! run's configuration: the payload sizes P, the link model for the wire
//! time C, the period and the offered load Γ. The configuration is what the
//! result records as `config`.

use super::tuning::Tuning;
pub use crate::error::RequestError;
use crate::error::Result;
use misura_measure::oneway_session::OnewayPlan;
use misura_measure::period::{PeriodBounds, PeriodError, HOUR};
use misura_measure::time::{Period, Span};
use misura_measure::{LinkModel, Pattern, SizeOrder};
use misura_report::OnewayConfig;
use misura_sys::iface::InterfaceInfo;
use std::path::PathBuf;

/// The seed's seven payload sizes.
pub const SEED_SIZES: [usize; 7] = [46, 64, 128, 256, 512, 1024, 1500];

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Oneway,
    Calibrate,
}

const DEFAULT_RATE: f64 = 1000.0;
const DEFAULT_COUNT: u64 = 10_000;

/// How fast frames are offered: one of `--period`, `--rate`, `--load`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Pace {
    /// A sending period.
    Period(Span),
    /// Frames per second (periods per second for bursts).
    Rate(f64),
    /// Offered load Γ as a share of the link capacity.
    Load(f64),
}

impl Default for Pace {
    fn default() -> Pace {
        Pace::Rate(DEFAULT_RATE)
    }
}

/// A measurement as asked for, before any interface is looked at.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub tx: String,
    pub rx: String,
    pub netns: Option<String>,
    pub pattern: Pattern,
    pub pace: Pace,
    pub count: Option<u64>,
    pub duration: Option<Span>,
    /// Payload sizes P; empty for the mode's default.
    pub sizes: Vec<usize>,
    pub order: SizeOrder,
    pub timeout: Span,
    /// `None`: until the frame's own period ends.
    pub late_tolerance: Option<Span>,
    pub threshold: Option<Span>,
    /// `None`: read from the interfaces.
    pub link_rate_bps: Option<u64>,
    pub vlan: bool,
    pub ethertype: u16,
    pub warmup: u64,
    pub seed: u64,
    pub tuning: Tuning,
    /// The per-frame log.
    pub frames: Option<PathBuf>,
    /// No progress on stderr.
    pub quiet: bool,
    /// Engine mode (`misura oneway` only): the load through the frame
    /// engine, the latency stream inside it.
    pub load: Option<super::mode::LoadOptions>,
    /// Cross-timestamp methods for two PTP clocks, best first.
    pub phc_cross: Vec<misura_sys::phc_cross::CrossMethod>,
    /// How the probes travel: raw, or inside PTPv2 Sync messages.
    pub frame_format: FrameFormat,
}

/// How the probes travel: the one frame format of every command that
/// sends misura's frames.
pub use misura_run::stamping::FrameFormat;

/// Smallest payload P of a PTP-wrapped probe: the Sync header and misura's.
pub const PTP_MIN_PAYLOAD: usize = misura_wire::ptp::SYNC_LEN + misura_wire::probe::HEADER_LEN;
/// The seed's sizes for PTP-wrapped probes: its seven, the two below the
/// PTP minimum raised to it and to the next round size.
pub const PTP_SEED_SIZES: [usize; 7] = [PTP_MIN_PAYLOAD, 100, 128, 256, 512, 1024, 1500];

impl Request {
    /// The defaults of `misura oneway --tx TX --rx RX`.
    pub fn new(tx: &str, rx: &str) -> Request {
        Request {
            tx: tx.into(),
            rx: rx.into(),
            netns: None,
            pattern: Pattern::Periodic,
            pace: Pace::default(),
            count: None,
            duration: None,
            sizes: Vec::new(),
            order: SizeOrder::Interleaved,
            timeout: Span::from_millis(100),
            late_tolerance: None,
            threshold: None,
            link_rate_bps: None,
            vlan: false,
            ethertype: misura_wire::ETHERTYPE_MISURA,
            warmup: 64,
            seed: 1,
            tuning: Tuning {
                cpu: None,
                rt_priority: None,
                lock_memory: true,
            },
            frames: None,
            quiet: false,
            load: None,
            phc_cross: misura_sys::phc_cross::CrossMethod::ALL.to_vec(),
            frame_format: FrameFormat::Auto,
        }
    }
}

/// Everything resolved before the ports are opened.
pub struct Resolved {
    pub config: OnewayConfig,
    pub tx: InterfaceInfo,
    pub rx: InterfaceInfo,
    pub expected_frames: Option<u64>,
    /// The sending period (`config.period_ns`), positive.
    pub period: Period,
}

/// Check the request against the interfaces and the link.
pub fn resolve(req: &Request, default_sizes: &[usize], mode: Mode) -> Result<Resolved> {
    check_alone(req)?;
    let tx = interface(&req.tx)?;
    let rx = interface(&req.rx)?;
    let sizes = payload_sizes(req, default_sizes, mode, tx.mtu.min(rx.mtu) as usize)?;
    let (rate_bps, link_speed_source) = match req.link_rate_bps {
        Some(bps) => (bps, "--link-speed"),
        None => (interface_link_rate(req, &tx, &rx)?, "interface"),
    };
    let link = LinkModel::new(rate_bps, req.vlan);
    let fpp = req.pattern.frames_per_period();
    let period = period(req.pace, &link, &sizes, fpp)?;
    let period_ns = period.as_ns();
    let offered_load = offered_load(&link, &sizes, period.span(), fpp)?;
    let rate_fps = 1e9 * fpp as f64 / period_ns as f64;
    let count = match (req.count, req.duration) {
        (Some(n), _) => Some(n),
        (None, Some(_)) => None,
        (None, None) => Some(DEFAULT_COUNT),
    };
    let expected_frames = count.or_else(|| {
        req.duration
            .map(|d| (d.as_ns() as f64 / 1e9 * rate_fps) as u64)
    });
    let session_id =
        (misura_sys::clock::realtime_ns() as u64 ^ (std::process::id() as u64) << 16) as u32;
    Ok(Resolved {
        config: OnewayConfig {
            tx: req.tx.clone(),
            rx: req.rx.clone(),
            netns: req.netns.clone(),
            ethertype: req.ethertype,
            session_id,
            pattern: req.pattern.into(),
            period_ns,
            rate_fps,
            offered_load,
            count,
            duration_s: req.duration.map(|d| d.as_ns() as f64 / 1e9),
            sizes,
            order: req.order.into(),
            timeout_ns: req.timeout.as_ns(),
            // The paper's rule: a frame that cannot leave within its own
            // period goes at the start of the next one.
            late_tolerance_ns: req.late_tolerance.map_or(period_ns - 1, Span::as_ns),
            threshold_ns: req.threshold.map(Span::as_ns),
            link: link.into(),
            link_speed_source: link_speed_source.to_string(),
            warmup: req.warmup,
            seed: req.seed,
            frame_format: Some(
                match req.frame_format {
                    FrameFormat::Ptp => "ptp",
                    _ => "misura",
                }
                .into(),
            ),
        },
        tx,
        rx,
        expected_frames,
        period,
    })
}

/// The checks that need no interface.
fn check_alone(req: &Request) -> Result<(), RequestError> {
    if req.timeout.as_ns() <= 0 {
        return Err(RequestError::TimeoutNotPositive);
    }
    if req.tx == req.rx {
        return Err(RequestError::OnePort {
            port: req.tx.clone(),
        });
    }
    if req.count == Some(0) {
        return Err(RequestError::NoFrames);
    }
    Ok(())
}

pub fn interface(name: &str) -> Result<InterfaceInfo> {
    let info = misura_sys::iface::interface_info(name)?;
    if !info.admin_up || !info.oper_up {
        return Err(misura_sys::SysError::InterfaceDown {
            name: name.to_string(),
        }
        .into());
    }
    Ok(info)
}

/// The payload sizes P, each between the probe header and the MTU.
fn payload_sizes(
    req: &Request,
    default_sizes: &[usize],
    mode: Mode,
    mtu: usize,
) -> Result<Vec<usize>, RequestError> {
    let sizes: Vec<usize> = if req.sizes.is_empty() {
        default_sizes.to_vec()
    } else {
        req.sizes.clone()
    };
    let ptp = req.frame_format == FrameFormat::Ptp;
    for &p in &sizes {
        if ptp && p < PTP_MIN_PAYLOAD {
            return Err(RequestError::PtpPayloadTooSmall {
                size: p,
                min: PTP_MIN_PAYLOAD,
            });
        }
        if p < misura_wire::probe::HEADER_LEN {
            return Err(RequestError::BelowHeader { size: p });
        }
        if p > mtu || p > misura_wire::probe::MAX_PAYLOAD {
            return Err(RequestError::OverMtu {
                size: p,
                mtu,
                tx: req.tx.clone(),
                rx: req.rx.clone(),
            });
        }
    }
    if mode == Mode::Calibrate && sizes.len() < 7 {
        return Err(RequestError::TooFewSizes { got: sizes.len() });
    }
    Ok(sizes)
}

/// The link rate the interfaces report (the RX port's first).
fn interface_link_rate(
    req: &Request,
    tx: &InterfaceInfo,
    rx: &InterfaceInfo,
) -> Result<u64, RequestError> {
    match rx.speed_mbps.or(tx.speed_mbps) {
        Some(mbps) if mbps > 0 => Ok(mbps * 1_000_000),
        _ => Err(RequestError::NoLinkSpeed { rx: req.rx.clone() }),
    }
}

/// The sending period: given, from the rate, or from the offered load Γ.
fn period(pace: Pace, link: &LinkModel, sizes: &[usize], fpp: u32) -> Result<Period, RequestError> {
    let period = match pace {
        Pace::Period(p) => p,
        Pace::Rate(r) => {
            if !(r > 0.0 && r.is_finite()) {
                return Err(RequestError::RateNotPositive { rate: r });
            }
            Span::from_ns((1e9 * fpp as f64 / r).round() as i64)
        }
        Pace::Load(gamma) => Span::from_ns(
            link.period_for_load(sizes, gamma)
                .map(|p| p * fpp as i64)
                .unwrap_or(1),
        ),
    };
    // Any positive period, up to an hour between frames.
    let bounds = PeriodBounds {
        min: Span::from_ns(1),
        max: HOUR,
    };
    Period::within(period, bounds).map_err(|e| match e {
        PeriodError::TooShort { .. } => RequestError::PeriodTooShort,
        PeriodError::TooLong { .. } => RequestError::PeriodTooLong {
            period,
            frames_per_period: fpp,
        },
    })
}

/// The offered load Γ of this period, refused over the link's capacity.
fn offered_load(
    link: &LinkModel,
    sizes: &[usize],
    period: Span,
    fpp: u32,
) -> Result<f64, RequestError> {
    let offered_load = link.load_of_period(sizes, period, fpp);
    if offered_load > 1.0 {
        let max_fps = sizes
            .iter()
            .map(|&p| link.max_frame_rate(p))
            .fold(f64::INFINITY, f64::min);
        return Err(RequestError::OverLink {
            rate_fps: 1e9 * fpp as f64 / period.as_ns() as f64,
            offered_load,
            link_bps: link.rate_bps,
            max_fps,
        });
    }
    Ok(offered_load)
}

/// The one-way session's plan for this configuration.
pub fn session_plan(r: &Resolved, expect_tx_stamp: bool) -> OnewayPlan {
    let cfg = &r.config;
    OnewayPlan {
        session_id: cfg.session_id,
        ethertype: cfg.ethertype,
        sizes: cfg.sizes.clone(),
        order: cfg.order.into(),
        vlan: cfg.link.vlan,
        pattern: cfg.pattern.into(),
        period: r.period,
        late_tolerance: Span::from_ns(cfg.late_tolerance_ns),
        seed: cfg.seed,
        start_delay: Span::from_ns(1_000_000),
        count: cfg.count,
        duration: cfg.duration_s.map(|d| Span::from_ns((d * 1e9) as i64)),
        expected_frames: r.expected_frames,
        timeout: Span::from_ns(cfg.timeout_ns),
        expect_tx_stamp,
        // Room for every frame in flight within the timeout, twice over.
        ring_capacity: ((cfg.rate_fps * cfg.timeout_ns as f64 / 1e9 * 2.0) as usize)
            .clamp(1024, 1 << 18),
        tx_stamp_messages: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIGABIT: LinkModel = LinkModel {
        rate_bps: 1_000_000_000,
        vlan: false,
    };

    /// One of each refusal, as `resolve`'s checks give them.
    fn every_refusal() -> Vec<RequestError> {
        let mut req = Request::new("p1", "p2");
        let mut out = Vec::new();
        req.timeout = Span::ZERO;
        out.push(check_alone(&req).unwrap_err());
        req.timeout = Span::from_ns(1);
        req.rx = "p1".into();
        out.push(check_alone(&req).unwrap_err());
        req.rx = "p2".into();
        req.count = Some(0);
        out.push(check_alone(&req).unwrap_err());
        req.count = None;
        for (sizes, ptp, mode) in [
            (vec![50], true, Mode::Oneway),
            (vec![10], false, Mode::Oneway),
            (vec![3000], false, Mode::Oneway),
            (vec![64, 128], false, Mode::Calibrate),
        ] {
            req.sizes = sizes;
            req.frame_format = if ptp {
                FrameFormat::Ptp
            } else {
                FrameFormat::Auto
            };
            out.push(payload_sizes(&req, &[], mode, 1500).unwrap_err());
        }
        out.push(RequestError::NoLinkSpeed { rx: "p2".into() });
        out.push(period(Pace::Rate(0.0), &GIGABIT, &[46], 1).unwrap_err());
        out.push(period(Pace::Period(Span::ZERO), &GIGABIT, &[46], 1).unwrap_err());
        out.push(period(Pace::Rate(1e-9), &GIGABIT, &[46], 1).unwrap_err());
        out.push(offered_load(&GIGABIT, &[46], Span::from_ns(500), 1).unwrap_err());
        out
    }

    #[test]
    fn a_refused_request_names_no_flag() {
        let all = every_refusal();
        assert_eq!(all.len(), 12, "one of each");
        for e in &all {
            assert!(!e.to_string().contains("--"), "{e}");
        }
        assert!(
            matches!(all[11], RequestError::OverLink { .. }),
            "{:?}",
            all[11]
        );
    }

    #[test]
    fn the_period_comes_from_the_rate_or_the_offered_load() {
        assert_eq!(
            period(Pace::Rate(2000.0), &GIGABIT, &[46], 1)
                .unwrap()
                .as_ns(),
            500_000
        );
        // A burst of 4 at 1000 periods/s: one period per 4 frames.
        assert_eq!(
            period(Pace::Rate(1000.0), &GIGABIT, &[46], 4)
                .unwrap()
                .as_ns(),
            4_000_000
        );
        assert_eq!(
            period(Pace::Period(Span::from_ns(1_000)), &GIGABIT, &[46], 1)
                .unwrap()
                .as_ns(),
            1_000
        );
        let sizes = [46, 1500];
        let p = period(Pace::Load(0.1), &GIGABIT, &sizes, 1).unwrap().span();
        let gamma = offered_load(&GIGABIT, &sizes, p, 1).unwrap();
        assert!((gamma - 0.1).abs() < 1e-3, "Γ = {gamma}");
    }

    #[test]
    fn impossible_paces_are_refused() {
        // Issue 13: --rate 1e-300 waited forever.
        for pace in [
            Pace::Rate(0.0),
            Pace::Rate(f64::NAN),
            Pace::Period(Span::ZERO),
            Pace::Rate(1e-300),
            Pace::Load(1e-300),
            Pace::Period(Span::from_secs(7_200)),
        ] {
            assert!(
                matches!(
                    period(pace, &GIGABIT, &[46], 1),
                    Err(RequestError::RateNotPositive { .. }
                        | RequestError::PeriodTooShort
                        | RequestError::PeriodTooLong { .. })
                ),
                "{pace:?}"
            );
        }
        // 64-byte frames at 1 Gb/s: at most 1 488 095 frames/s.
        let e = offered_load(&GIGABIT, &[46], Span::from_ns(500), 1)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("more than it carries") && e.contains("1488095"),
            "{e}"
        );
    }

    #[test]
    fn requests_that_contradict_themselves_are_refused() {
        let bad = |f: fn(&mut Request)| {
            let mut r = Request::new("p1", "p2");
            f(&mut r);
            check_alone(&r).unwrap_err()
        };
        assert_eq!(
            bad(|r| r.timeout = Span::ZERO),
            RequestError::TimeoutNotPositive
        );
        assert_eq!(bad(|r| r.count = Some(0)), RequestError::NoFrames);
        assert_eq!(
            bad(|r| r.rx = "p1".into()),
            RequestError::OnePort { port: "p1".into() }
        );
        assert!(check_alone(&Request::new("p1", "p2")).is_ok());
    }

    #[test]
    fn payload_sizes_fit_between_the_probe_header_and_the_mtu() {
        let req = |sizes: &[usize]| Request {
            sizes: sizes.to_vec(),
            ..Request::new("p1", "p2")
        };
        let ok = payload_sizes(&req(&[]), &[46], Mode::Oneway, 1500).unwrap();
        assert_eq!(ok, vec![46]);
        for sizes in [&[12][..], &[46, 1501]] {
            let e = payload_sizes(&req(sizes), &[46], Mode::Oneway, 1500);
            assert!(
                matches!(
                    e,
                    Err(RequestError::BelowHeader { .. } | RequestError::OverMtu { .. })
                ),
                "{sizes:?}"
            );
        }
        let few = payload_sizes(&req(&[46, 64]), &SEED_SIZES, Mode::Calibrate, 1500);
        assert_eq!(few, Err(RequestError::TooFewSizes { got: 2 }));
    }
}
