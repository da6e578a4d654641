//! `--sizes`: frame sizes as RFC 2544 names them (Ethernet frames with
//! FCS), and IMIX, checked against the ports' MTU.

use crate::shared::exit::Failure;
use misura_wire::probe::HEADER_LEN;

pub use misura_bench::rfc2544::{SizeSpec, FRAME_OVERHEAD};

/// Largest frame accepted: a 9000-byte jumbo payload.
pub const MAX_FRAME: usize = 9018;
/// IMIX: 7 × 64, 4 × 570, 1 × 1518 (the classic "simple IMIX").
pub const IMIX: [(usize, usize); 3] = [(64, 7), (570, 4), (1518, 1)];

/// Parse `--sizes` against the ports' MTU.
pub fn parse(items: &[String], mtu: usize) -> Result<Vec<SizeSpec>, Failure> {
    if items.is_empty() {
        return Err(Failure::Usage(
            "--sizes needs at least one frame size".into(),
        ));
    }
    if items.len() > 64 {
        return Err(Failure::Usage(format!(
            "--sizes: {} sizes given, at most 64",
            items.len()
        )));
    }
    let min = HEADER_LEN + FRAME_OVERHEAD;
    let max = (mtu + FRAME_OVERHEAD).min(MAX_FRAME);
    let mut out = Vec::new();
    for item in items {
        let item = item.trim();
        if item.eq_ignore_ascii_case("imix") {
            let frames: Vec<usize> = IMIX
                .iter()
                .flat_map(|&(f, n)| std::iter::repeat_n(f, n))
                .collect();
            if let Some(&big) = frames.iter().find(|&&f| f > max) {
                return Err(Failure::Params(format!(
                    "imix has {big}-byte frames, over the ports' MTU ({mtu}): raise the MTU or leave imix out"
                )));
            }
            out.push(SizeSpec {
                label: "imix".into(),
                frames,
            });
            continue;
        }
        let f: usize = item.parse().map_err(|_| {
            Failure::Usage(format!(
                "--sizes: `{item}` is not a frame size in bytes (e.g. 64,512,1518 or imix)"
            ))
        })?;
        if f < min || f > max {
            let by_mtu = if max < MAX_FRAME {
                format!("; the ports' MTU is {mtu}")
            } else {
                String::new()
            };
            return Err(Failure::Params(format!(
                "--sizes: a {f}-byte frame is outside {min}..={max} bytes (misura's {HEADER_LEN}-byte header plus Ethernet header and FCS{by_mtu})"
            )));
        }
        out.push(SizeSpec {
            label: f.to_string(),
            frames: vec![f],
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use misura_measure::wire_time::LinkModel;

    #[test]
    fn sizes_and_imix_parse_and_carry_their_line_rate() {
        let s = parse(&["64".into(), "imix".into()], 1500).unwrap();
        assert_eq!(s[0].payloads(), vec![46]);
        let gig = LinkModel::new(1_000_000_000, false);
        assert!((s[0].line_rate_fps(&gig) - 1_488_095.2).abs() < 1.0);
        assert_eq!(s[1].frames.len(), 12);
        // IMIX's mean slot: (7·84 + 4·590 + 1538) / 12 bytes.
        let want = 1e9 / 8.0 / ((7.0 * 84.0 + 4.0 * 590.0 + 1538.0) / 12.0);
        assert!((s[1].line_rate_fps(&gig) - want).abs() / want < 1e-6);
    }

    #[test]
    fn bad_sizes_name_the_bound() {
        for (v, says) in [
            ("57", "outside 58..=1518"),
            ("1519", "outside"),
            ("x", "not a frame size"),
        ] {
            let e = parse(&[v.into()], 1500).unwrap_err().to_string();
            assert!(e.contains(says), "{v}: {e}");
        }
        assert!(parse(&["imix".into()], 1000)
            .unwrap_err()
            .to_string()
            .contains("MTU"));
    }
}
