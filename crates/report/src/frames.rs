//! The per-frame log (`--frames FILE.csv`): one row per frame, streamed.
//!
//! Columns (timestamps are integer nanoseconds on CLOCK_REALTIME, the single
//! timescale of a run; an empty cell means the value does not exist):
//!
//! | column | meaning |
//! |---|---|
//! | `seq` | the frame's sequence number |
//! | `payload_bytes` | `P`: Ethernet payload including misura's 40-byte header |
//! | `frame_bytes` | destination address through FCS, `max(64, 14 + P + 4)` |
//! | `tx1_ns`, `tx2_ns` | user clock just before / just after `send()` |
//! | `rx1_ns` | user clock before the last empty receive poll before the frame |
//! | `rx2_ns` | user clock just after the receive that returned the frame |
//! | `tx_kernel_ns`, `rx_kernel_ns` | kernel software stamps (`SO_TIMESTAMPING`) |
//! | `tx_hw_ns`, `rx_hw_ns` | NIC hardware stamps (the NIC's clock) |
//! | `lost` | 1 if not received within the timeout, else 0 |
//! | `reordered` | 1 if it arrived after a frame with a higher `seq` |
//! | `bul_ns`, `wul_ns`, `mul_ns` | max(RX1, TX1) − TX2, RX2 − TX1, their mean (rounded down) |
//! | `kernel_ns` | rx_kernel − tx_kernel |
//! | `msl_ns` | SUT latency `Mul − Amil(P) − C`, when a calibration is applied |
//! | `hw_ns` | NIC hardware one-way latency: rx_hw − tx_hw with one PTP clock; with two, rx_hw converted into the TX port's clock first |
//! | `hw_u95_ns` | ≈95 % uncertainty of `hw_ns` from the two clocks' fit (empty with one clock) |
//! | `hsl_ns` | SUT latency from the hardware stamps, when a calibration with a hardware line is applied |

use misura_measure::time::{Instant, Span};
use misura_measure::FrameRecord;
use std::io::{self, Write};

pub const FRAMES_HEADER: &str = "seq,payload_bytes,frame_bytes,tx1_ns,tx2_ns,rx1_ns,rx2_ns,tx_kernel_ns,rx_kernel_ns,tx_hw_ns,rx_hw_ns,lost,reordered,bul_ns,wul_ns,mul_ns,kernel_ns,msl_ns,hw_ns,hw_u95_ns,hsl_ns";

pub fn write_header(out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{FRAMES_HEADER}")
}

/// A CSV cell of a figure that may be missing: the number, or nothing.
pub(crate) struct Cell(pub(crate) Option<i64>);

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(v) => write!(f, "{v}"),
            None => Ok(()),
        }
    }
}

/// The hardware columns of a row.
#[derive(Copy, Clone, Debug, Default)]
pub struct HardwareCells {
    pub hw_ns: Option<i64>,
    pub hw_u95_ns: Option<i64>,
    pub hsl_ns: Option<i64>,
}

/// One row; `msl_ns` is the SUT latency when a calibration is applied.
pub fn write_row(
    out: &mut dyn Write,
    f: &FrameRecord,
    msl_ns: Option<i64>,
    hw: HardwareCells,
) -> io::Result<()> {
    let rx = |t: Instant| Cell((!f.lost).then_some(t.as_ns()));
    let at = |t: Option<Instant>| Cell(t.map(Instant::as_ns));
    let rx_at = |t: Option<Instant>| at(if f.lost { None } else { t });
    writeln!(
        out,
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
        f.seq,
        f.payload_bytes,
        f.frame_bytes,
        f.tx1.as_ns(),
        f.tx2.as_ns(),
        rx(f.rx1),
        rx(f.rx2),
        at(f.tx_kernel),
        rx_at(f.rx_kernel),
        at(f.tx_hw),
        rx_at(f.rx_hw),
        u8::from(f.lost),
        u8::from(f.reordered),
        Cell(f.bul().map(Span::as_ns)),
        Cell(f.wul().map(Span::as_ns)),
        Cell(f.mul().map(Span::as_ns)),
        Cell(f.kernel_latency().map(Span::as_ns)),
        Cell(msl_ns),
        Cell(hw.hw_ns),
        Cell(hw.hw_u95_ns),
        Cell(hw.hsl_ns)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_have_the_header_columns_and_empty_cells_for_absent_values() {
        let mut out = Vec::new();
        write_header(&mut out).unwrap();
        let f = FrameRecord {
            seq: 7,
            payload_bytes: 46,
            frame_bytes: 64,
            tx1: Instant::from_ns(100),
            tx2: Instant::from_ns(150),
            rx1: Instant::from_ns(90),
            rx2: Instant::from_ns(400),
            tx_kernel: Some(Instant::from_ns(120)),
            rx_kernel: Some(Instant::from_ns(130)),
            ..Default::default()
        };
        write_row(&mut out, &f, None, HardwareCells::default()).unwrap();
        let stamped = FrameRecord {
            seq: 9,
            tx_hw: Some(Instant::from_ns(1_000)),
            rx_hw: Some(Instant::from_ns(3_500)),
            ..f
        };
        let hw = HardwareCells {
            hw_ns: Some(2_400),
            hw_u95_ns: Some(35),
            hsl_ns: None,
        };
        write_row(&mut out, &stamped, Some(7), hw).unwrap();
        let lost = FrameRecord {
            seq: 8,
            payload_bytes: 46,
            frame_bytes: 64,
            tx1: Instant::from_ns(1),
            tx2: Instant::from_ns(2),
            lost: true,
            ..Default::default()
        };
        write_row(&mut out, &lost, None, HardwareCells::default()).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let ncol = lines[0].split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == ncol));
        assert_eq!(
            lines[1],
            "7,46,64,100,150,90,400,120,130,,,0,0,-50,300,125,10,,,,"
        );
        assert_eq!(
            lines[2],
            "9,46,64,100,150,90,400,120,130,1000,3500,0,0,-50,300,125,10,7,2400,35,"
        );
        assert_eq!(lines[3], "8,46,64,1,2,,,,,,,1,0,,,,,,,,");
    }
}
