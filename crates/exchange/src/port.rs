//! This end of the exchange: the raw socket on the interface that faces
//! the peer, with kernel stamps (and the NIC's where the port has them),
//! and the reads of the peer's data frame and the trigger's TX stamps.

use crate::error::ExchangeError;
use crate::frames::{classify, frame, ETH, RESPONDER_DATA, TRIGGER};
use crate::plan::ExchangePlan;

type Result<T, E = ExchangeError> = std::result::Result<T, E>;
use misura_measure::time::Instant;
use misura_report::LoopTuning;
use misura_sys::clock::realtime;
use misura_sys::iface::InterfaceInfo;
use misura_sys::packet::{PacketSocket, TimestampingGranted};
use misura_wire::MacAddr;

/// This end of the exchange: the raw socket on the interface that faces
/// the peer, and what the host granted it.
pub struct Port {
    pub sock: PacketSocket,
    pub info: InterfaceInfo,
    pub mine: MacAddr,
    pub peer: MacAddr,
    pub ethertype: u16,
    pub granted: TimestampingGranted,
    /// The NIC's stamps on this port (or why not).
    pub hw: misura_run::stamping::Hardware,
    pub tuning: LoopTuning,
}

/// A frame's stamps: the kernel's and the NIC's.
pub type Stamps = (Option<Instant>, Option<Instant>);

impl Port {
    /// Check the frame sizes against the interface's MTU, open the socket
    /// with kernel stamps (and the NIC's where the port has them), pin the
    /// loop.
    pub fn open(plan: &ExchangePlan) -> Result<Port> {
        let info = misura_sys::iface::interface_info(&plan.interface)?;
        let max_frame = info.mtu as usize + ETH + misura_wire::ethernet::FCS_LEN;
        plan.check_frames(max_frame)?;
        let hw = misura_run::stamping::hardware(
            Some(&plan.interface),
            misura_run::stamping::Timestamps::Kernel,
        )?;
        let sock = PacketSocket::open(&plan.interface, plan.ethertype)?;
        let granted = sock.enable_timestamping(hw.enabled)?;
        let mut tuning = LoopTuning {
            netns: plan.netns.clone(),
            ..Default::default()
        };
        if let Some(cpu) = plan.cpu {
            misura_sys::sched::pin_to_cpu(cpu)?;
            tuning.cpu = Some(cpu);
        }
        Ok(Port {
            sock,
            mine: MacAddr(info.mac),
            info,
            peer: plan.peer,
            ethertype: plan.ethertype,
            granted,
            hw,
            tuning,
        })
    }

    /// A frame to the peer of the session's `stream`.
    pub fn frame(&self, session: u32, stream: u16, bytes: usize) -> Result<Vec<u8>> {
        frame(self.peer, self.mine, self.ethertype, session, stream, bytes)
    }

    /// Read the error queue's TX stamps; those of trigger `k` go to `tx`
    /// (the kernel's and the NIC's come in two reports).
    fn trigger_stamps(&self, k: u64, buf: &mut [u8], tx: &mut Stamps) -> Result<()> {
        while let Some(st) = self.sock.recv_tx_timestamp(buf)? {
            let n = st.len.min(buf.len());
            if let Some((TRIGGER, seq, _)) = classify(&buf[..n], self.mine, self.ethertype) {
                if seq == k {
                    tx.0 = tx.0.or(st.software);
                    tx.1 = tx.1.or(st.hardware);
                }
            }
        }
        Ok(())
    }

    /// Wait until `deadline` for the peer's data frame of cycle `k`:
    /// (user-clock receive time, its RX stamps) when it came, and the
    /// trigger's TX stamps.
    pub fn await_data(
        &self,
        k: u64,
        deadline: Instant,
        buf: &mut [u8],
    ) -> Result<(Option<(Instant, Stamps)>, Stamps)> {
        let mut trigger_tx = (None, None);
        let mut got = None;
        while got.is_none() && realtime() < deadline {
            self.trigger_stamps(k, buf, &mut trigger_tx)?;
            if let Some(m) = self.sock.recv(buf)? {
                let rx2 = realtime();
                let n = m.len.min(buf.len());
                if let Some((RESPONDER_DATA, seq, _)) =
                    classify(&buf[..n], self.peer, self.ethertype)
                {
                    if seq == k {
                        got = Some((rx2, (m.software, m.hardware)));
                    }
                }
            }
        }
        // The trigger's TX stamp may come after the reply on a real NIC
        // (the NIC's always does).
        if trigger_tx.0.is_none() || (self.granted.hardware_tx && trigger_tx.1.is_none()) {
            self.trigger_stamps(k, buf, &mut trigger_tx)?;
        }
        Ok((got, trigger_tx))
    }
}
