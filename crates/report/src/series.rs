//! Latency over time, from a per-frame (`oneway --frames`) or per-probe
//! (`rtt --frames`) CSV, reduced to moving percentiles for plotting.
//!
//! The stored result keeps distributions, not single frames; a time series
//! needs the CSV written during the run.

use std::io::{self, BufRead};

/// One latency quantity per frame, in send order.
#[derive(Clone, Debug, Default)]
pub struct LatencySeries {
    /// The CSV column the values came from (e.g. "msl_ns", "network_rtt_ns").
    pub quantity: String,
    /// `(send time tx1_ns, latency ns)` of every received frame.
    pub samples: Vec<(i64, i64)>,
    /// Frames marked lost.
    pub lost: u64,
}

/// The latency columns a time series prefers, best first.
const PREFERRED: [&str; 6] = [
    "msl_ns",
    "network_rtt_ns",
    "mul_ns",
    "kernel_rtt_ns",
    "user_rtt_ns",
    "kernel_ns",
];

#[derive(Debug, thiserror::Error)]
pub enum SeriesError {
    #[error("reading the frames CSV: {0}")]
    Io(#[from] io::Error),
    #[error("the frames CSV has no header line")]
    Empty,
    #[error("the frames CSV has no tx1_ns column and none of {PREFERRED:?}: is it a misura --frames file?")]
    Columns,
    #[error("the frames CSV line {line} has a bad number in column {column}: {text:?}")]
    Number {
        line: usize,
        column: String,
        text: String,
    },
}

impl LatencySeries {
    /// Read a `--frames` CSV. The latency column is the first of
    /// msl, network RTT, Mul, kernel RTT, user RTT, kernel that the file has
    /// any value in.
    pub fn read(input: &mut dyn BufRead) -> Result<LatencySeries, SeriesError> {
        let mut header = String::new();
        if input.read_line(&mut header)? == 0 {
            return Err(SeriesError::Empty);
        }
        let cols: Vec<String> = header.trim_end().split(',').map(str::to_string).collect();
        let find = |n: &str| cols.iter().position(|c| c == n);
        let t = find("tx1_ns").ok_or(SeriesError::Columns)?;
        let lost_col = find("lost");
        let cands: Vec<(usize, &str)> = PREFERRED
            .iter()
            .filter_map(|n| find(n).map(|i| (i, *n)))
            .collect();
        if cands.is_empty() {
            return Err(SeriesError::Columns);
        }
        // Keep every candidate until the end, then choose the best filled one:
        // msl_ns exists in every frames file but is empty without a calibration.
        let mut per: Vec<Vec<(i64, i64)>> = vec![Vec::new(); cands.len()];
        let mut lost = 0;
        let parse = |line: usize, col: &str, text: &str| -> Result<Option<i64>, SeriesError> {
            if text.is_empty() {
                return Ok(None);
            }
            text.parse().map(Some).map_err(|_| SeriesError::Number {
                line,
                column: col.to_string(),
                text: text.to_string(),
            })
        };
        for (n, line) in input.lines().enumerate() {
            let line = line?;
            if line.is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split(',').collect();
            let get = |i: usize| f.get(i).copied().unwrap_or("");
            if lost_col.map(|i| get(i) == "1").unwrap_or(false) {
                lost += 1;
                continue;
            }
            let Some(tx) = parse(n + 2, "tx1_ns", get(t))? else {
                continue;
            };
            for (k, (i, name)) in cands.iter().enumerate() {
                if let Some(v) = parse(n + 2, name, get(*i))? {
                    per[k].push((tx, v));
                }
            }
        }
        let best = (0..cands.len()).find(|&k| !per[k].is_empty()).unwrap_or(0);
        let mut samples = std::mem::take(&mut per[best]);
        samples.sort_by_key(|s| s.0);
        Ok(LatencySeries {
            quantity: cands[best].1.to_string(),
            samples,
            lost,
        })
    }
}

/// Percentiles of consecutive windows of frames.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    /// Mid-window send time, ns since the first frame.
    pub at_ns: i64,
    pub min_ns: i64,
    pub median_ns: i64,
    pub p99_ns: i64,
    pub max_ns: i64,
}

/// Split the series into about `windows` consecutive windows of equal frame
/// count (at least `min_frames` each) and summarise each; a million frames
/// become a few hundred points.
pub fn moving_percentiles(s: &LatencySeries, windows: usize, min_frames: usize) -> Vec<Window> {
    let n = s.samples.len();
    if n == 0 {
        return Vec::new();
    }
    let per = (n / windows.max(1)).max(min_frames).max(1);
    let t0 = s.samples[0].0;
    let mut out = Vec::new();
    let mut buf = Vec::with_capacity(per);
    for chunk in s.samples.chunks(per) {
        buf.clear();
        buf.extend(chunk.iter().map(|x| x.1));
        buf.sort_unstable();
        let q = |p: f64| buf[((buf.len() - 1) as f64 * p).round() as usize];
        let mid = chunk[chunk.len() / 2].0;
        out.push(Window {
            at_ns: mid - t0,
            min_ns: buf[0],
            median_ns: q(0.5),
            p99_ns: q(0.99),
            max_ns: buf[buf.len() - 1],
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_best_filled_column_and_skips_lost_frames() {
        let csv = "seq,payload_bytes,frame_bytes,tx1_ns,tx2_ns,rx1_ns,rx2_ns,tx_kernel_ns,rx_kernel_ns,tx_hw_ns,rx_hw_ns,lost,reordered,bul_ns,wul_ns,mul_ns,kernel_ns,msl_ns\n\
                   0,46,64,1000,1100,,,,,,,0,0,10,20,15,,\n\
                   1,46,64,2000,2100,,,,,,,1,0,,,,,\n\
                   2,46,64,3000,3100,,,,,,,0,0,10,30,20,,\n";
        let s = LatencySeries::read(&mut csv.as_bytes()).unwrap();
        assert_eq!(s.quantity, "mul_ns");
        assert_eq!(s.samples, vec![(1000, 15), (3000, 20)]);
        assert_eq!(s.lost, 1);
    }

    #[test]
    fn windows_summarise_consecutive_frames() {
        let s = LatencySeries {
            quantity: "mul_ns".into(),
            samples: (0..1000).map(|i| (i * 10, i % 100)).collect(),
            lost: 0,
        };
        let w = moving_percentiles(&s, 10, 1);
        assert_eq!(w.len(), 10);
        assert_eq!(w[0].min_ns, 0);
        assert_eq!(w[0].max_ns, 99);
        assert_eq!(w[0].median_ns, 50);
        assert_eq!(w[0].p99_ns, 98);
    }

    #[test]
    fn a_foreign_csv_is_refused_by_name() {
        let e = LatencySeries::read(&mut "a,b\n1,2\n".as_bytes()).unwrap_err();
        assert!(e.to_string().contains("tx1_ns"));
    }
}
