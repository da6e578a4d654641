//! `misura load`'s progress line on a terminal: the phase, the load it
//! offers, elapsed and remaining time (the shared one-line indicator, as
//! `misura rtt` shows it). Quiet with -q, --json or when stderr is not a
//! terminal.

use crate::plan::LoadPlan;
use misura_cli::progress::Progress;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The line's updater, a thread until dropped.
pub struct LoadProgress {
    phase: Arc<Mutex<&'static str>>,
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// The load the loaded phase offers, in a few words.
fn offered(a: &LoadPlan) -> String {
    let dir = |udp: &Option<String>, streams: u32, name: &str| match udp {
        Some(r) => Some(format!("{name} UDP {r}bit/s")),
        None if streams > 0 => Some(format!("{name} {streams} TCP stream(s)")),
        None => None,
    };
    [dir(&a.udp_up, a.up, "up"), dir(&a.udp_down, a.down, "down")]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ")
}

impl LoadProgress {
    pub fn start(a: &LoadPlan) -> LoadProgress {
        let total = Duration::from_nanos((2 * a.idle.ns + a.duration.ns) as u64);
        let mut line = Progress::new(a.quiet, Some(total));
        let phase = Arc::new(Mutex::new("idle"));
        let done = Arc::new(AtomicBool::new(false));
        let (p, d) = (phase.clone(), done.clone());
        let (load, period) = (offered(a), a.period.to_string());
        let thread = line.is_on().then(|| {
            std::thread::spawn(move || {
                while !d.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(200));
                    let now = *p.lock().unwrap_or_else(|e| e.into_inner());
                    line.tick(|| {
                        let load = if now == "loaded" {
                            load.as_str()
                        } else {
                            "none"
                        };
                        format!("{now} phase; load: {load}; a probe every {period}")
                    });
                }
                line.done();
            })
        });
        LoadProgress {
            phase,
            done,
            thread,
        }
    }

    /// The run enters phase `name` ("idle", "loaded", "idle after").
    pub fn phase(&self, name: &'static str) {
        *self.phase.lock().unwrap_or_else(|e| e.into_inner()) = name;
    }
}

impl Drop for LoadProgress {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
