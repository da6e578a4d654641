//! `--sizes`: frame sizes as RFC 2544 names them (Ethernet frames with
//! FCS), and IMIX, in the flag's syntax; a size the ports' MTU refuses
//! (`misura_bench`'s `SizeOverMtu`) in the flag's words.

use crate::shared::exit::Failure;
use misura_wire::probe::HEADER_LEN;

pub use misura_bench::rfc2544::{SizeSpec, FRAME_OVERHEAD, MAX_FRAME};

/// IMIX: 7 × 64, 4 × 570, 1 × 1518 (the classic "simple IMIX").
pub const IMIX: [(usize, usize); 3] = [(64, 7), (570, 4), (1518, 1)];

/// Parse `--sizes`, each frame within misura's smallest and
/// [`MAX_FRAME`] (the ports' MTU is the run's to check).
pub fn parse(items: &[String]) -> Result<Vec<SizeSpec>, Failure> {
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
    let mut out = Vec::new();
    for item in items {
        let item = item.trim();
        if item.eq_ignore_ascii_case("imix") {
            let frames: Vec<usize> = IMIX
                .iter()
                .flat_map(|&(f, n)| std::iter::repeat_n(f, n))
                .collect();
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
        if f < min || f > MAX_FRAME {
            return Err(outside(f, MAX_FRAME, MAX_FRAME - FRAME_OVERHEAD));
        }
        out.push(SizeSpec {
            label: f.to_string(),
            frames: vec![f],
        });
    }
    Ok(out)
}

/// A size whose `frame` is over what the ports' `mtu` lets through
/// (`max` bytes on the wire), in the flag's words (exit 5).
pub fn over_mtu(size: &str, frame: usize, max: usize, mtu: usize) -> Failure {
    if size == "imix" {
        return Failure::Params(format!(
            "imix has {frame}-byte frames, over the ports' MTU ({mtu}): raise the MTU or leave imix out"
        ));
    }
    outside(frame, max, mtu)
}

/// A frame outside misura's smallest and `max`, naming the ports' MTU when
/// it is the bound.
fn outside(f: usize, max: usize, mtu: usize) -> Failure {
    let min = HEADER_LEN + FRAME_OVERHEAD;
    let by_mtu = if max < MAX_FRAME {
        format!("; the ports' MTU is {mtu}")
    } else {
        String::new()
    };
    Failure::Params(format!(
        "--sizes: a {f}-byte frame is outside {min}..={max} bytes (misura's {HEADER_LEN}-byte header plus Ethernet header and FCS{by_mtu})"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use misura_measure::wire_time::LinkModel;

    #[test]
    fn sizes_and_imix_parse_and_carry_their_line_rate() {
        let s = parse(&["64".into(), "imix".into()]).unwrap();
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
            ("57", "outside 58..=9018"),
            ("9019", "outside"),
            ("x", "not a frame size"),
        ] {
            let e = parse(&[v.into()]).unwrap_err().to_string();
            assert!(e.contains(says), "{v}: {e}");
        }
        // Over the ports' MTU: the bound and the MTU named.
        let e = over_mtu("1519", 1519, 1518, 1500).to_string();
        assert!(
            e.contains("outside 58..=1518") && e.contains("MTU is 1500"),
            "{e}"
        );
        assert!(over_mtu("imix", 1518, 1018, 1000)
            .to_string()
            .contains("MTU"));
    }
}
