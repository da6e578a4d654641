//! A PTPv2 event message around misura's probe, for NICs that stamp only PTP
//! in hardware.
//!
//! Many PTP-capable NICs stamp received frames in hardware only when they
//! are PTP event messages: Intel's 82576 (QEMU's `igb`), 82599 and X710
//! offer the filter `ptpv2-event` but not `all` (`ethtool -T` lists them).
//! MoonGen meets this by sending PTP frames; misura does the same when the
//! RX port cannot stamp everything: the probe travels after a PTPv2 Sync
//! header (IEEE 1588-2008 §13.3 common header, §13.6 Sync body), Ethernet
//! type 0x88F7, sent to the RX port's own address (never the PTP multicast
//! group) in domain 127, so no PTP instance takes it for its own.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |trSpec | msgTyp|  rsvd | verPTP|        messageLength (44)     |  0
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! | domainNumber  |   reserved    |           flagField           |  4
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                  correctionField (8 bytes)                    |  8
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                       reserved (4 bytes)                      | 16
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |           sourcePortIdentity (10 bytes: clock id, port)       | 20
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |          sequenceId           | controlField  | logMsgInterval| 30
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |            originTimestamp (10 bytes, zero: two-step)         | 34
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                misura probe header and padding ...            | 44
//! ```
//!
//! messageType 0 (Sync), versionPTP 2, transportSpecific 0, flagField
//! twoStepFlag; the sequenceId carries the probe's sequence number modulo
//! 2¹⁶ (the probe header has all 64 bits).

use crate::WireError;

/// The IEEE 1588 EtherType.
pub const ETHERTYPE_PTP: u16 = 0x88F7;
/// The Sync message before the probe: common header and originTimestamp.
pub const SYNC_LEN: usize = 44;
/// The PTP domain misura's frames claim (the last of the user range).
pub const DOMAIN: u8 = 127;
/// messageType Sync.
pub const SYNC: u8 = 0;
const TWO_STEP: u16 = 0x0200;

/// Writes the Sync header for probe `seq` into `buf[..SYNC_LEN]`; `clock`
/// is the sender's port identity (its MAC in EUI-64 form is customary).
pub fn emit_sync(buf: &mut [u8], seq: u64, clock: [u8; 8]) -> Result<usize, WireError> {
    if buf.len() < SYNC_LEN {
        return Err(WireError::BufferTooSmall {
            need: SYNC_LEN,
            have: buf.len(),
        });
    }
    let b = &mut buf[..SYNC_LEN];
    b.fill(0);
    b[0] = SYNC;
    b[1] = 2;
    b[2..4].copy_from_slice(&(SYNC_LEN as u16).to_be_bytes());
    b[4] = DOMAIN;
    b[6..8].copy_from_slice(&TWO_STEP.to_be_bytes());
    b[PORT_IDENTITY..PORT_IDENTITY + 8].copy_from_slice(&clock);
    b[28..30].copy_from_slice(&1u16.to_be_bytes());
    set_sequence(b, seq);
    Ok(SYNC_LEN)
}

/// Patches the sequenceId of an emitted Sync header (the hot loop's view).
pub fn set_sequence(sync: &mut [u8], seq: u64) {
    if sync.len() >= 32 {
        sync[30..32].copy_from_slice(&((seq & 0xffff) as u16).to_be_bytes());
    }
}

/// Ethernet, the Sync header (port identity from the source MAC), then the
/// probe, padded to the minimum frame: the PTP twin of
/// [`crate::probe::emit_frame`]. Returns the frame's length.
pub fn emit_ptp_frame(
    eth: &crate::EthernetRepr,
    probe: &crate::ProbeRepr,
    buf: &mut [u8],
) -> Result<usize, WireError> {
    if eth.ethertype != ETHERTYPE_PTP {
        return Err(WireError::WrongEtherType {
            expected: ETHERTYPE_PTP,
            found: eth.ethertype,
        });
    }
    let hl = eth.header_len();
    let body = hl + SYNC_LEN + probe.buffer_len();
    let total = body.max(crate::ethernet::MIN_FRAME_LEN - crate::ethernet::FCS_LEN);
    if buf.len() < total {
        return Err(WireError::BufferTooSmall {
            need: total,
            have: buf.len(),
        });
    }
    eth.emit(buf)?;
    emit_sync(&mut buf[hl..], probe.seq, clock_identity(eth.src.0))?;
    probe.emit(&mut buf[hl + SYNC_LEN..body])?;
    buf[body..total].fill(0);
    Ok(total)
}

/// Offset of the sourcePortIdentity's clock identity in the header.
pub const PORT_IDENTITY: usize = 20;

/// What follows misura's own Sync header (messageType Sync, domain
/// [`DOMAIN`], checked as [`strip_event`] checks): another PTP instance's
/// messages (an Announce, a Sync of another domain) are refused.
pub fn strip_misura_sync(payload: &[u8]) -> Result<&[u8], WireError> {
    let rest = strip_event(payload)?;
    if payload[0] & 0x0f != SYNC {
        return Err(WireError::BadField {
            field: "messageType (misura's probes are Sync: 0)",
            value: (payload[0] & 0x0f).into(),
        });
    }
    if payload[4] != DOMAIN {
        return Err(WireError::BadField {
            field: "domainNumber (misura's probes use 127)",
            value: payload[4].into(),
        });
    }
    Ok(rest)
}

/// The EUI-64 port identity of a MAC address (IEEE 1588-2008 §7.5.2.2.2).
pub fn clock_identity(mac: [u8; 6]) -> [u8; 8] {
    [mac[0], mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]]
}

/// What follows a PTPv2 event message header in `payload`: the header is
/// checked (version 2, an event message type 0–3, a messageLength that fits)
/// and skipped; its messageLength says where the PTP message ends.
pub fn strip_event(payload: &[u8]) -> Result<&[u8], WireError> {
    if payload.len() < SYNC_LEN {
        return Err(WireError::Truncated {
            need: SYNC_LEN,
            have: payload.len(),
        });
    }
    let version = payload[1] & 0x0f;
    if version != 2 {
        return Err(WireError::BadField {
            field: "versionPTP",
            value: version.into(),
        });
    }
    let msg_type = payload[0] & 0x0f;
    if msg_type > 3 {
        return Err(WireError::BadField {
            field: "messageType (an event message: 0-3)",
            value: msg_type.into(),
        });
    }
    let len = u16::from_be_bytes([payload[2], payload[3]]) as usize;
    if !(SYNC_LEN..=payload.len()).contains(&len) {
        return Err(WireError::BadLength {
            field: "messageLength",
            value: len,
        });
    }
    Ok(&payload[len..])
}

/// The probe's bytes in an Ethernet payload of `ethertype`: after a PTP
/// event header when the frame is PTP, else the payload itself.
pub fn probe_payload(ethertype: u16, payload: &[u8]) -> Result<&[u8], WireError> {
    if ethertype == ETHERTYPE_PTP {
        strip_event(payload)
    } else {
        Ok(payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emits_a_sync_header_byte_for_byte() {
        let mut buf = [0xa5u8; 50];
        let clock = clock_identity([0x52, 0x54, 0x00, 0x6d, 0x00, 0x00]);
        assert_eq!(emit_sync(&mut buf, 0x1_0002, clock), Ok(SYNC_LEN));
        let want: [u8; SYNC_LEN] = [
            0x00, 0x02, 0x00, 0x2c, 0x7f, 0x00, 0x02,
            0x00, // type, version, length, domain, flags
            0, 0, 0, 0, 0, 0, 0, 0, // correction
            0, 0, 0, 0, // reserved
            0x52, 0x54, 0x00, 0xff, 0xfe, 0x6d, 0x00, 0x00, 0x00, 0x01, // port identity
            0x00, 0x02, 0x00, 0x00, // sequenceId 2, control 0 (Sync), interval 0
            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // originTimestamp
        ];
        assert_eq!(&buf[..SYNC_LEN], &want);
        assert_eq!(
            &buf[SYNC_LEN..],
            &[0xa5; 6],
            "nothing written past the header"
        );
        assert_eq!(
            emit_sync(&mut [0u8; 43], 0, clock),
            Err(WireError::BufferTooSmall { need: 44, have: 43 })
        );
    }

    #[test]
    fn a_ptp_frame_carries_the_probe_after_the_sync_header() {
        let eth = crate::EthernetRepr {
            dst: "02:00:00:00:00:02".parse().unwrap(),
            src: "02:00:00:00:00:01".parse().unwrap(),
            vlan: None,
            ethertype: ETHERTYPE_PTP,
        };
        let probe = crate::ProbeRepr {
            flags: crate::ProbeFlags::SENDER_TIMESTAMP,
            payload_len: 40,
            session_id: 9,
            stream: 0,
            size_index: 1,
            seq: 5,
            sender_timestamp: 0,
            aux_timestamp: 0,
        };
        let mut buf = [0xa5u8; 120];
        let n = emit_ptp_frame(&eth, &probe, &mut buf).unwrap();
        assert_eq!(n, 14 + 44 + 40);
        assert_eq!(
            &buf[12..16],
            &[0x88, 0xf7, 0x00, 0x02],
            "EtherType, Sync, v2"
        );
        assert_eq!(&buf[44..46], &[0, 5], "sequenceId");
        let f = crate::EthernetFrame::new_checked(&buf[..n]).unwrap();
        let inner = probe_payload(f.ethertype(), f.payload()).unwrap();
        assert_eq!(crate::ProbeRepr::parse(inner), Ok(probe));
        let misura = crate::EthernetRepr {
            ethertype: 0x88b5,
            ..eth
        };
        assert!(matches!(
            emit_ptp_frame(&misura, &probe, &mut buf),
            Err(WireError::WrongEtherType { .. })
        ));
    }

    #[test]
    fn strips_event_headers_and_refuses_others() {
        let mut buf = [0u8; 60];
        emit_sync(&mut buf, 7, [0; 8]).unwrap();
        buf[44] = 0x4d;
        assert_eq!(strip_event(&buf).unwrap()[0], 0x4d);
        assert_eq!(probe_payload(ETHERTYPE_PTP, &buf).unwrap().len(), 16);
        assert_eq!(probe_payload(0x88b5, &buf).unwrap().len(), 60);
        let mut announce = buf;
        announce[0] = 0x0b;
        assert!(matches!(
            strip_event(&announce),
            Err(WireError::BadField { .. })
        ));
        assert_eq!(strip_misura_sync(&buf).unwrap().len(), 16);
        for (at, v) in [(0, 0x0bu8), (0, 0x01), (4, 0)] {
            let mut other = buf;
            other[at] = v;
            assert!(
                strip_misura_sync(&other).is_err(),
                "byte {at} = {v}: not misura's Sync"
            );
        }
        let mut v1 = buf;
        v1[1] = 1;
        assert!(matches!(strip_event(&v1), Err(WireError::BadField { .. })));
        let mut long = buf;
        long[2..4].copy_from_slice(&61u16.to_be_bytes());
        assert!(matches!(
            strip_event(&long),
            Err(WireError::BadLength { .. })
        ));
        assert!(matches!(
            strip_event(&buf[..43]),
            Err(WireError::Truncated { .. })
        ));
    }
}
