//! A progress line for commands whose steps block for seconds to minutes
//! (rfc2544's trials, y1564's steps): the command says which step runs
//! (`step`), a thread redraws the line on stderr once a second with the
//! step's elapsed and remaining time and the run's. Shown only when stderr
//! is a terminal and not `--quiet`, as [`crate::progress::Progress`], and
//! drawn, as that, by the sink the binary installs ([`crate::progress::set_sink`]).

use crate::progress::{can_draw, draw};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Step {
    what: String,
    started: Instant,
    length: Duration,
    /// The run's planned time after this step, when it is known.
    after: Option<Duration>,
}

pub struct StatusLine {
    shared: Option<(Arc<Mutex<Step>>, Arc<AtomicBool>)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl StatusLine {
    pub fn new(quiet: bool) -> StatusLine {
        if !can_draw(quiet) {
            return StatusLine {
                shared: None,
                thread: None,
            };
        }
        let started = Instant::now();
        let step = Arc::new(Mutex::new(Step {
            what: "starting".into(),
            started,
            length: Duration::ZERO,
            after: None,
        }));
        let done = Arc::new(AtomicBool::new(false));
        let (s, d) = (step.clone(), done.clone());
        let thread = std::thread::Builder::new()
            .name("status".into())
            .spawn(move || {
                // Wake every 100 ms to end promptly; redraw once a second.
                let mut n = 0u32;
                while !d.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    n += 1;
                    if n % 10 == 0 {
                        if let Ok(st) = s.lock() {
                            draw(&format!("\r\x1b[2K{}", line(&st, started.elapsed())));
                        }
                    }
                }
            })
            .ok();
        StatusLine {
            shared: Some((step, done)),
            thread,
        }
    }

    /// A step begins: what it is (e.g. "64 B throughput trial 3 (final) at
    /// 208.3 k frames/s"), how long it lasts, and the run's planned time
    /// after it, if known.
    pub fn step(&self, what: String, length: Duration, after: Option<Duration>) {
        if let Some((s, _)) = &self.shared {
            if let Ok(mut st) = s.lock() {
                *st = Step {
                    what,
                    started: Instant::now(),
                    length,
                    after,
                };
            }
        }
    }
}

fn line(st: &Step, run: Duration) -> String {
    let into = st.started.elapsed().min(st.length);
    let left = st.length - into;
    let total_left = st
        .after
        .map(|a| format!(", about {:.0} s left in the run", (a + left).as_secs_f64()))
        .unwrap_or_default();
    // Tenths for steps shorter than 10 s, whole seconds above.
    let d = usize::from(st.length < Duration::from_secs(10));
    format!(
        "[{:.0} s] {}: {:.d$} of {:.d$} s{total_left}",
        run.as_secs_f64(),
        st.what,
        into.as_secs_f64(),
        st.length.as_secs_f64()
    )
}

impl Drop for StatusLine {
    fn drop(&mut self) {
        if let Some((_, done)) = &self.shared {
            done.store(true, Ordering::Relaxed);
            if let Some(t) = self.thread.take() {
                let _ = t.join();
            }
            draw("\r\x1b[2K");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_the_step_its_time_and_the_run_left() {
        let st = Step {
            what: "64 B final trial at 208.3 k frames/s".into(),
            started: Instant::now(),
            length: Duration::from_secs(10),
            after: Some(Duration::from_secs(50)),
        };
        let l = line(&st, Duration::from_secs(42));
        assert!(
            l.starts_with("[42 s] 64 B final trial at 208.3 k frames/s: 0 of 10 s"),
            "{l}"
        );
        let short = Step {
            length: Duration::from_millis(200),
            after: None,
            ..st
        };
        assert!(line(&short, Duration::ZERO).ends_with(": 0.0 of 0.2 s"));
        assert!(l.ends_with("about 60 s left in the run"), "{l}");
    }
}
