//! Whether the ports can carry the services at all, checked before the
//! engine opens: each service's CIR+EIR, and every CIR at once in the
//! performance test, within the link once each frame's preamble and gap
//! (20 bytes) are counted; each frame within the ports' MTU; and, in PTP
//! framing, room for misura's header inside the Sync message. A refusal
//! keeps the figures; the binary words it with its flags.

use misura_report::y1564::ServiceConfig;

/// Preamble, start delimiter and inter-frame gap: what a frame costs on
/// the wire beyond its own bytes.
const WIRE_OVERHEAD: f64 = 20.0;

/// Why the ports cannot carry the services (exit 5).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    /// One service's CIR+EIR is over what the link carries in its frames.
    #[error(
        "service {service}: CIR+EIR {:.3} Mb/s is more than the link carries in {frame}-byte frames ({:.3} Mb/s of frames on a {} Mb/s link)",
        need_bps / 1e6, capacity_bps / 1e6, link_bps / 1_000_000
    )]
    OverLink {
        service: String,
        need_bps: f64,
        frame: usize,
        capacity_bps: f64,
        link_bps: u64,
    },
    /// The services' CIRs together, as the performance test sends them.
    #[error(
        "the services' CIRs together need {:.3} Mb/s of the {} Mb/s link in the performance test",
        need_bps / 1e6, link_bps / 1_000_000
    )]
    CirsOverLink { need_bps: f64, link_bps: u64 },
    /// A service's frame is over the ports' MTU.
    #[error("service {service}: a {frame}-byte frame is over the ports' MTU ({mtu})")]
    OverMtu {
        service: String,
        frame: usize,
        mtu: usize,
    },
    /// In PTP framing, a service's frame has no room for misura's header
    /// inside the Sync message; `min_frame` has.
    #[error("service {service}: a {frame}-byte frame cannot carry misura's header inside a PTP Sync message (at least {min_frame} bytes can)")]
    NoRoomInPtp {
        service: String,
        frame: usize,
        min_frame: usize,
    },
}

/// Refuse services the link cannot carry: a service's CIR+EIR, or every
/// CIR at once when the performance test runs, over `link_bps` on the wire.
pub fn check_link(
    services: &[ServiceConfig],
    link_bps: u64,
    performance: bool,
) -> Result<(), FitError> {
    let wire = |s: &ServiceConfig, bps: f64| {
        bps * (s.frame_bytes as f64 + WIRE_OVERHEAD) / s.frame_bytes as f64
    };
    let link = link_bps as f64;
    for s in services {
        if wire(s, s.cir_bps + s.eir_bps) > link * (1.0 + 1e-9) {
            return Err(FitError::OverLink {
                service: s.name.clone(),
                need_bps: s.cir_bps + s.eir_bps,
                frame: s.frame_bytes,
                capacity_bps: link * s.frame_bytes as f64 / (s.frame_bytes as f64 + WIRE_OVERHEAD),
                link_bps,
            });
        }
    }
    let all: f64 = services.iter().map(|s| wire(s, s.cir_bps)).sum();
    if performance && all > link * (1.0 + 1e-9) {
        return Err(FitError::CirsOverLink {
            need_bps: all,
            link_bps,
        });
    }
    Ok(())
}

/// Refuse services the ports cannot carry: over the link when its speed
/// is known (`link_bps`), over the ports' `mtu` (a VLAN tag adds 4 bytes
/// to what fits).
pub fn check_ports(
    services: &[ServiceConfig],
    link_bps: Option<u64>,
    mtu: usize,
    performance: bool,
) -> Result<(), FitError> {
    if let Some(bps) = link_bps {
        check_link(services, bps, performance)?;
    }
    for s in services {
        if s.frame_bytes > mtu + 18 + usize::from(s.vlan.is_some()) * 4 {
            return Err(FitError::OverMtu {
                service: s.name.clone(),
                frame: s.frame_bytes,
                mtu,
            });
        }
    }
    Ok(())
}

/// In PTP framing, refuse a service whose payload (`payloads`, one per
/// service) leaves no room for misura's header after the Sync message.
pub fn check_ptp_room(services: &[ServiceConfig], payloads: &[usize]) -> Result<(), FitError> {
    let min = misura_engine::flows::PTP_MIN_PAYLOAD;
    match services.iter().zip(payloads).find(|(_, &p)| p < min) {
        Some((s, &p)) => Err(FitError::NoRoomInPtp {
            service: s.name.clone(),
            frame: s.frame_bytes,
            min_frame: s.frame_bytes + min - p,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(name: &str, frame: usize, cir_bps: f64) -> ServiceConfig {
        ServiceConfig {
            name: name.into(),
            vlan: None,
            pcp: None,
            frame_bytes: frame,
            cir_bps,
            eir_bps: 0.0,
            fd_ns: 1_000_000,
            fdv_ns: 1_000_000,
            flr: 1e-3,
            availability: 0.999,
        }
    }

    const TEN_G: u64 = 10_000_000_000;

    #[test]
    fn services_over_the_link_are_refused_with_their_figures() {
        // 64-byte frames fill a 10G link at 7.62 Gb/s of frames.
        assert!(check_link(&[service("a", 64, 7e9)], TEN_G, true).is_ok());
        let e = check_link(&[service("a", 64, 8e9)], TEN_G, true).unwrap_err();
        let FitError::OverLink { capacity_bps, .. } = e else {
            panic!("{e}")
        };
        assert!(
            (capacity_bps / 1e6 - 7619.048).abs() < 1e-3,
            "{capacity_bps}"
        );
        assert!(e.to_string().contains("7619.048 Mb/s"), "{e}");
        let two = [service("a", 1518, 6e9), service("b", 1518, 6e9)];
        assert!(check_link(&two, TEN_G, false).is_ok());
        let e = check_link(&two, TEN_G, true).unwrap_err();
        assert!(matches!(e, FitError::CirsOverLink { .. }), "{e}");
    }

    #[test]
    fn a_frame_over_the_mtu_is_refused_and_a_vlan_tag_has_room() {
        let mut s = service("a", 1518, 1e6);
        assert!(check_ports(&[s.clone()], None, 1500, true).is_ok());
        s.frame_bytes = 1522;
        assert!(matches!(
            check_ports(&[s.clone()], None, 1500, true),
            Err(FitError::OverMtu {
                mtu: 1500,
                frame: 1522,
                ..
            })
        ));
        s.vlan = Some(100);
        assert!(check_ports(&[s], None, 1500, true).is_ok());
    }

    #[test]
    fn ptp_framing_needs_room_for_the_header() {
        let min = misura_engine::flows::PTP_MIN_PAYLOAD;
        let s = [service("a", 64, 1e6)];
        assert!(check_ptp_room(&s, &[min]).is_ok());
        assert_eq!(
            check_ptp_room(&s, &[min - 10]),
            Err(FitError::NoRoomInPtp {
                service: "a".into(),
                frame: 64,
                min_frame: 74
            })
        );
    }
}
