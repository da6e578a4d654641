//! Time synchronisation: the daemons, the kernel's state, chrony's view.

use super::item::item;
use misura_report::host::{CheckItem, Verdict};
use misura_sys::hostinfo;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DAEMONS: [&str; 5] = ["chronyd", "ntpd", "ptp4l", "phc2sys", "systemd-timesyncd"];

pub(super) fn items() -> Vec<CheckItem> {
    let running = hostinfo::running(&DAEMONS);
    vec![
        daemons(&running),
        kernel_clock(),
        chrony_tracking(running.iter().any(|r| r == "chronyd")),
    ]
}

fn daemons(running: &[String]) -> CheckItem {
    let state = DAEMONS
        .iter()
        .map(|d| {
            let inst = hostinfo::which(d).is_some()
                || (*d == "systemd-timesyncd"
                    && hostinfo::exists("/lib/systemd/systemd-timesyncd"));
            let run = running.iter().any(|r| r == d);
            format!(
                "{d} {}",
                match (inst, run) {
                    (_, true) => "running",
                    (true, false) => "installed, stopped",
                    (false, false) => "absent",
                }
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    item(
        "time sync",
        "daemons",
        state,
        if running.is_empty() { Verdict::NotApplicable } else { Verdict::Ok },
        "stamps from two hosts (rtt, reflect) compare only when a daemon disciplines both clocks; one clock needs none",
        Some(if running.is_empty() {
            "systemctl start chrony (or ptp4l + phc2sys for PTP)".into()
        } else {
            "systemctl stop chrony (a stepping or slewing clock moves CLOCK_REALTIME stamps)".into()
        }),
    )
}

/// The kernel's synchronisation state (adjtimex).
fn kernel_clock() -> CheckItem {
    let why = "the kernel's synchronisation state (adjtimex): whether a daemon disciplines CLOCK_REALTIME, and its error bound";
    match misura_sys::timesync::time_sync() {
        Ok(s) => item(
            "time sync",
            "kernel clock",
            if s.synchronized {
                format!(
                    "synchronised, max error {:.3} ms, estimated error {:.3} ms",
                    s.max_error_ns as f64 / 1e6,
                    s.est_error_ns as f64 / 1e6
                )
            } else {
                "not synchronised (STA_UNSYNC)".into()
            },
            if s.synchronized {
                Verdict::Ok
            } else {
                Verdict::Hurts
            },
            why,
            (!s.synchronized).then(|| {
                "systemctl start chrony (or chronyd -q to set the clock once)".to_string()
            }),
        ),
        Err(e) => item(
            "time sync",
            "kernel clock",
            format!("unreadable: {e}"),
            Verdict::Unknown,
            why,
            None,
        ),
    }
}

/// `chronyc -c tracking` when chronyd runs.
fn chrony_tracking(chronyd_running: bool) -> CheckItem {
    let why = "chrony's own view: stratum, offset and frequency error of the system clock";
    let it = |state: String, verdict, command: Option<&str>| {
        item(
            "time sync",
            "chrony tracking",
            state,
            verdict,
            why,
            command.map(str::to_string),
        )
    };
    let chronyc = match (hostinfo::which("chronyc"), chronyd_running) {
        (None, _) => return it("chronyc not installed".into(), Verdict::NotApplicable, None),
        (Some(_), false) => return it("chronyd not running".into(), Verdict::NotApplicable, None),
        (Some(c), true) => c,
    };
    let out = match run_with_timeout(&chronyc, &["-n", "-c", "tracking"], Duration::from_secs(3)) {
        Ok(out) => out,
        Err(e) => return it(format!("unreadable: {e}"), Verdict::Unknown, None),
    };
    // CSV: reference id, name, stratum, ref time, offset, last offset, RMS
    // offset, frequency, …, leap status (field 13).
    let f: Vec<&str> = out.trim().split(',').collect();
    if f.len() < 14 {
        return it(
            format!("unexpected answer: {}", out.trim()),
            Verdict::Unknown,
            None,
        );
    }
    let synced = f[2] != "0" && f[13] != "Not synchronised";
    it(
        format!(
            "reference {} ({}), stratum {}, offset {} s, frequency {} ppm, leap {}",
            f[1], f[0], f[2], f[4], f[7], f[13]
        ),
        if synced { Verdict::Ok } else { Verdict::Hurts },
        Some("chronyc sources -v (to see why)"),
    )
}

/// Runs `cmd` with a deadline; stdout when it exits 0 in time.
fn run_with_timeout(cmd: &Path, args: &[&str], limit: Duration) -> Result<String, String> {
    let mut child = Command::new(cmd)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", cmd.display()))?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{} did not answer within {} s",
                    cmd.display(),
                    limit.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(e.to_string()),
        }
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}
