//! What both benchmarks do before their first trial: the ports and the
//! engine asked for ([`Ports`]) checked (two distinct ports, neither the
//! loopback, each up with an Ethernet address; `cpu` and the cores after
//! it online), and what their results record of the host and the ports.

use crate::error::{BenchError, Result, Role};
use misura_engine::{EngineArgs, EngineChoice, FrameFormat};
use misura_report::{HostFingerprint, PortInfo};
use misura_sys::iface::InterfaceInfo;

/// The ports and the frame engine a benchmark is asked to use.
#[derive(Clone, Debug, PartialEq)]
pub struct Ports {
    /// The port that sends the test frames.
    pub tx: String,
    /// The port that receives them.
    pub rx: String,
    /// The transmit path.
    pub choice: EngineChoice,
    /// Cores and qdisc bypass.
    pub args: EngineArgs,
    /// The CPU of the engine's core 0 (the others on the next ones).
    pub cpu: Option<usize>,
    /// The test frames' Ethertype.
    pub ethertype: u16,
    /// misura's own frames or PTP-wrapped ones.
    pub frame_format: FrameFormat,
    /// Repeats of a trial the tester itself spoiled.
    pub tester_retries: u32,
}

/// The ports looked up and checked, and each engine core's CPU.
pub(crate) struct Checked {
    pub tx: InterfaceInfo,
    pub rx: InterfaceInfo,
    pub cpus: Vec<usize>,
}

/// Refuse ports no frame can cross (one port for both, the loopback), a
/// CPU the host has not, a port that is down or has no Ethernet address
/// (the frames are addressed to the RX port's MAC).
pub(crate) fn check(p: &Ports) -> Result<Checked> {
    if p.tx == p.rx {
        return Err(BenchError::SamePort { port: p.tx.clone() });
    }
    for (role, name) in [(Role::Tx, &p.tx), (Role::Rx, &p.rx)] {
        if name == "lo" {
            return Err(BenchError::Loopback { role });
        }
    }
    let cpus = cpus(
        p.cpu,
        p.args.cores as usize,
        misura_sys::sched::online_cpus(),
    )?;
    let tx = misura_oneway::plan::interface(&p.tx)?;
    let rx = misura_oneway::plan::interface(&p.rx)?;
    for (role, i) in [(Role::Tx, &tx), (Role::Rx, &rx)] {
        if i.mac == [0; 6] {
            return Err(BenchError::NoMac {
                role,
                port: i.name.clone(),
            });
        }
    }
    Ok(Checked { tx, rx, cpus })
}

/// Each core's CPU: `cpu` and the ones after it, wrapping round the
/// `online` ones; none without `cpu`.
fn cpus(cpu: Option<usize>, cores: usize, online: usize) -> Result<Vec<usize>> {
    let online = online.max(1);
    let Some(c) = cpu else {
        return Ok(Vec::new());
    };
    if c >= online {
        return Err(BenchError::CpuOffline { cpu: c, online });
    }
    Ok((0..cores).map(|i| (c + i) % online).collect())
}

impl Checked {
    /// The two ports as the result records them.
    pub(crate) fn infos(&self) -> Vec<PortInfo> {
        vec![
            misura_oneway::ports::port_info("tx", &self.tx),
            misura_oneway::ports::port_info("rx", &self.rx),
        ]
    }
}

/// The host as the result records it, with the two ports.
pub(crate) fn host(p: &Ports) -> HostFingerprint {
    misura_run::host::fingerprint_with_interfaces(Default::default(), &[&p.tx, &p.rx])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_take_the_cpus_after_the_first_wrapping_round() {
        assert_eq!(cpus(None, 4, 8).unwrap(), Vec::<usize>::new());
        assert_eq!(cpus(Some(6), 4, 8).unwrap(), vec![6, 7, 0, 1]);
        assert!(matches!(
            cpus(Some(8), 1, 8),
            Err(BenchError::CpuOffline { cpu: 8, online: 8 })
        ));
    }

    #[test]
    fn one_port_for_both_and_the_loopback_are_refused_before_any_lookup() {
        let mut p = Ports {
            tx: "p1".into(),
            rx: "p1".into(),
            choice: EngineChoice::Auto,
            args: EngineArgs::default(),
            cpu: None,
            ethertype: 0x88b5,
            frame_format: FrameFormat::Auto,
            tester_retries: 2,
        };
        assert!(matches!(check(&p), Err(BenchError::SamePort { port }) if port == "p1"));
        p.rx = "lo".into();
        assert!(matches!(
            check(&p),
            Err(BenchError::Loopback { role: Role::Rx })
        ));
    }
}
