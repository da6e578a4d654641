//! Availability over the performance test, as ITU-T Y.1563 (and MEF 10.3)
//! count it from one-second intervals: a second is severely errored (SES)
//! when more than half of the frames sent in it were lost; an unavailable
//! period begins with ten consecutive SES (which count as unavailable) and
//! ends with ten consecutive seconds that are not (which count as
//! available again). A second in which nothing was sent is available.

/// Consecutive seconds that switch between available and unavailable.
pub const SWITCH_SECONDS: usize = 10;
/// Loss ratio above which a second is severely errored.
pub const SES_LOSS: f64 = 0.5;

/// `(available share, unavailable seconds)` of `intervals` (`[sent,
/// received of those sent]` per second).
pub fn availability(intervals: &[[u64; 2]]) -> (f64, u64) {
    if intervals.is_empty() {
        return (1.0, 0);
    }
    let ses: Vec<bool> = intervals
        .iter()
        .map(|&[sent, got]| sent > 0 && (sent - got.min(sent)) as f64 / sent as f64 > SES_LOSS)
        .collect();
    let mut unavailable = vec![false; ses.len()];
    let mut down = false;
    let mut run = 0usize;
    for (i, &bad) in ses.iter().enumerate() {
        // A run of SWITCH_SECONDS seconds that disagree with the state flips
        // it, from the run's first second on.
        if bad != down {
            run += 1;
            if run == SWITCH_SECONDS {
                down = bad;
                for u in &mut unavailable[i + 1 - SWITCH_SECONDS..=i] {
                    *u = down;
                }
                run = 0;
            }
        } else {
            run = 0;
        }
        unavailable[i] = down;
    }
    let n = unavailable.iter().filter(|&&u| u).count() as u64;
    (1.0 - n as f64 / ses.len() as f64, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(pattern: &str) -> Vec<[u64; 2]> {
        pattern
            .chars()
            .map(|c| if c == 'x' { [100, 10] } else { [100, 100] })
            .collect()
    }

    #[test]
    fn short_outages_stay_available_ten_severe_seconds_do_not() {
        assert_eq!(availability(&secs("..........")), (1.0, 0));
        // Nine SES in a row: still available.
        assert_eq!(availability(&secs(".xxxxxxxxx.")).1, 0);
        // Ten: unavailable from the first of them, available again from
        // the first of ten good seconds.
        let (a, n) = availability(&secs(".xxxxxxxxxx.........."));
        assert_eq!(n, 10);
        assert!((a - 11.0 / 21.0).abs() < 1e-9);
        // Nine good seconds are not enough to come back.
        assert_eq!(availability(&secs(".xxxxxxxxxx.........")).1, 19);
        // Back only after ten good seconds in a row: an SES inside the
        // outage restarts the count.
        let (_, n) = availability(&secs("xxxxxxxxxx..x.........."));
        assert_eq!(n, 13);
        assert_eq!(availability(&[]), (1.0, 0));
        assert_eq!(availability(&[[0, 0]; 20]), (1.0, 0));
    }
}
