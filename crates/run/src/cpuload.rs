//! The host's CPU load while a run measures (issue 12): every result's host
//! fingerprint carries the per-CPU busy share from `/proc/stat` and
//! misura's own CPU time, from the start of the run ([`mark_start`], called
//! once by `main`) to the moment the result is made; and `--cpu-load N`
//! (rtt, oneway) adds N busy threads for the run, as `misura clock
//! interference --load` does, so that RTT against CPU load (seed 003,
//! Fig. 6) can be measured and drawn from stored runs.

use misura_report::{CpuBusy, HostLoad};
use misura_sys::host::CpuTimes;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

struct Mark {
    at: Instant,
    cpus: Vec<CpuTimes>,
    process_ns: u64,
}

static MARK: Mutex<Option<Mark>> = Mutex::new(None);
/// The CPUs the process may use, read at the mark (before any pinning).
static ALLOWED: Mutex<Vec<usize>> = Mutex::new(Vec::new());
/// (threads, their CPUs) added by `--cpu-load` during this run.
static ADDED: Mutex<(u32, Vec<usize>)> = Mutex::new((0, Vec::new()));

fn process_ns() -> u64 {
    let (u, s) = misura_sys::rusage::process_cpu();
    u + s
}

/// Start the window a result's load covers.
pub fn mark_start() {
    let m = Mark {
        at: Instant::now(),
        cpus: misura_sys::host::cpu_times(),
        process_ns: process_ns(),
    };
    *MARK.lock().unwrap_or_else(|p| p.into_inner()) = Some(m);
    *ALLOWED.lock().unwrap_or_else(|p| p.into_inner()) =
        misura_sys::sched::current_affinity().unwrap_or_default();
}

/// The load from the mark to now; `None` without a mark or `/proc/stat`.
pub fn load_now() -> Option<HostLoad> {
    let guard = MARK.lock().unwrap_or_else(|p| p.into_inner());
    let m = guard.as_ref()?;
    let now = misura_sys::host::cpu_times();
    let window_s = m.at.elapsed().as_secs_f64();
    let (threads, cpus) = ADDED.lock().unwrap_or_else(|p| p.into_inner()).clone();
    Some(load_between(
        &m.cpus,
        &now,
        window_s,
        (process_ns().saturating_sub(m.process_ns)) as f64 / 1e9,
        threads,
        cpus,
    ))
}

/// The load from two `/proc/stat` readings (pure).
fn load_between(
    before: &[CpuTimes],
    after: &[CpuTimes],
    window_s: f64,
    process_s: f64,
    busy_threads: u32,
    busy_thread_cpus: Vec<usize>,
) -> HostLoad {
    let cpu_busy: Vec<CpuBusy> = after
        .iter()
        .filter_map(|a| {
            let b = before.iter().find(|b| b.cpu == a.cpu)?;
            let total = a.total.saturating_sub(b.total);
            (total > 0).then(|| CpuBusy {
                cpu: a.cpu,
                busy: a.busy.saturating_sub(b.busy) as f64 / total as f64,
            })
        })
        .collect();
    let mean_busy = if cpu_busy.is_empty() {
        0.0
    } else {
        cpu_busy.iter().map(|c| c.busy).sum::<f64>() / cpu_busy.len() as f64
    };
    HostLoad {
        window_s,
        cpu_busy,
        mean_busy,
        process_cpus: if window_s > 0.0 {
            process_s / window_s
        } else {
            0.0
        },
        busy_threads,
        busy_thread_cpus,
    }
}

/// N busy threads added for a run (`--cpu-load N`,
/// the binary's `CpuLoadArgs`; 0: none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuLoad {
    pub threads: u32,
}

/// Busy threads `--cpu-load` / `--load` may ask for: four per online CPU.
pub fn max_busy_threads() -> u32 {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cpus * 4).min(4096) as u32
}

/// More busy threads asked for than the host runs usefully (a parameter
/// to change, exit 5); it names no flag (the binary words it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{threads} busy threads are more than this host can run usefully: at most {max} busy threads (4 per online CPU)")]
pub struct TooManyThreads {
    pub threads: u32,
    pub max: u32,
}

impl CpuLoad {
    /// Check N against its bound (before anything is measured).
    pub fn check(&self) -> Result<(), TooManyThreads> {
        let max = max_busy_threads();
        if self.threads > max {
            return Err(TooManyThreads {
                threads: self.threads,
                max,
            });
        }
        Ok(())
    }

    /// Start the threads (none for 0); they stop when the guard drops.
    pub fn start(&self, measuring_cpu: Option<usize>) -> Option<BusyThreads> {
        // The CPUs allowed before the run pinned its loop (--cpu).
        let mut online = ALLOWED.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if online.is_empty() {
            online = misura_sys::sched::current_affinity().unwrap_or_default();
        }
        if online.is_empty() {
            online = (0..misura_sys::sched::online_cpus()).collect();
        }
        (self.threads > 0).then(|| BusyThreads::start(self.threads, measuring_cpu, &online))
    }
}

/// Busy threads pinned round-robin; stopped and joined on drop.
pub struct BusyThreads {
    flag: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
    pub cpus: Vec<usize>,
    /// Threads that could not be pinned, and why.
    pub pin_errors: Vec<String>,
}

impl BusyThreads {
    /// `n` threads; `online`: the CPUs the process may use. The first goes
    /// to the CPU after `measuring_cpu`, so that CPU is the last to get one.
    pub fn start(n: u32, measuring_cpu: Option<usize>, online: &[usize]) -> BusyThreads {
        let first = measuring_cpu
            .and_then(|c| online.iter().position(|&x| x == c))
            .map_or(0, |i| i + 1);
        let cpus: Vec<usize> = (0..n as usize)
            .map(|i| online[(first + i) % online.len().max(1)])
            .collect();
        let flag = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let threads = cpus
            .iter()
            .map(|&cpu| {
                let (flag, tx) = (flag.clone(), tx.clone());
                std::thread::spawn(move || {
                    let _ = tx.send(
                        misura_sys::sched::pin_to_cpu(cpu)
                            .err()
                            .map(|e| e.to_string()),
                    );
                    let mut x = 0x9e37_79b9_7f4a_7c15u64;
                    while !flag.load(Ordering::Relaxed) {
                        for _ in 0..1000 {
                            x = std::hint::black_box(
                                x.rotate_left(5) ^ x.wrapping_mul(0x2545_f491_4f6c_dd1d),
                            );
                        }
                    }
                })
            })
            .collect::<Vec<_>>();
        drop(tx);
        // Each thread reports once (its sender lives as long as it spins).
        let pin_errors = rx.iter().take(cpus.len()).flatten().collect();
        {
            let mut added = ADDED.lock().unwrap_or_else(|p| p.into_inner());
            added.0 += n;
            added.1.extend(&cpus);
        }
        // Let them reach full speed before the measurement starts.
        std::thread::sleep(std::time::Duration::from_millis(50));
        BusyThreads {
            flag,
            threads,
            cpus,
            pin_errors,
        }
    }
}

impl Drop for BusyThreads {
    fn drop(&mut self) {
        self.flag.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(cpu: usize, busy: u64, total: u64) -> CpuTimes {
        CpuTimes { cpu, busy, total }
    }

    #[test]
    fn a_refused_thread_count_names_no_flag() {
        let e = CpuLoad { threads: u32::MAX }.check().unwrap_err();
        assert_eq!(e.threads, u32::MAX);
        assert_eq!(e.max, max_busy_threads());
        assert!(!e.to_string().contains("--"), "{e}");
        let hw = crate::stamping::HardwareRequired {
            why: "no PHC".into(),
        };
        assert_eq!(hw.to_string(), "hardware stamps required: no PHC");
    }

    #[test]
    fn busy_shares_come_from_the_differences() {
        let l = load_between(
            &[t(0, 100, 1000), t(1, 50, 1000)],
            &[t(0, 190, 1100), t(1, 60, 1100), t(2, 5, 10)],
            2.0,
            1.0,
            1,
            vec![0],
        );
        assert_eq!(
            l.cpu_busy.len(),
            2,
            "a CPU without a first reading is left out"
        );
        assert!((l.cpu_busy[0].busy - 0.9).abs() < 1e-9);
        assert!((l.cpu_busy[1].busy - 0.1).abs() < 1e-9);
        assert!((l.mean_busy - 0.5).abs() < 1e-9);
        assert!((l.process_cpus - 0.5).abs() < 1e-9);
    }

    #[test]
    fn a_busy_thread_shows_in_the_load() {
        mark_start();
        let online: Vec<usize> = (0..misura_sys::sched::online_cpus()).collect();
        let busy = BusyThreads::start(1, None, &online);
        std::thread::sleep(std::time::Duration::from_millis(300));
        let l = load_now().unwrap();
        drop(busy);
        assert!(l.busy_threads >= 1);
        assert!(l.process_cpus > 0.5, "{l:?}");
        let max = l.cpu_busy.iter().map(|c| c.busy).fold(0.0, f64::max);
        assert!(max > 0.5, "{l:?}");
    }
}
