#!/usr/bin/env python3
"""Latency under load, misura beside the peers (issue 12), in one run on the
routed lab with a bottleneck on the router. TCP over a bloated queue is
chaotic (which direction's queue fills differs from run to run and between
load generators), so each load is measured by both probe tools at once:

  1. misura load (--up N --down N TCP streams for D s between idle phases),
     with irtt (10 ms interval) probing the same path during its loaded phase.
  2. iperf3 N streams up and N down (-R) for D s, with irtt and misura rtt
     (10 ms period) probing the same path at the same time; both idle first.
  Per load: the idle and loaded median RTT of each probe tool, the loaded
  one-way split (irtt send/receive delay, misura forward/backward), the
  inflation, and misura's inflation over irtt's under the same load.
  3. --cpu-load sweep: misura rtt with 0, 1, 2 busy threads (the loop on
     CPU 0), network vs user RTT, and the --vs-load page.

  sudo scripts/bench-load.sh [--shape 20M,queue=500K] [--streams 4]
                             [--duration 10] [--idle 5] [--misura PATH]

Neither tool is pinned (both clients and servers float over the CPUs); the
lab is misura-bench-*, removed at the end."""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

PREFIX = "misura-bench-"
H1, H2 = PREFIX + "h1", PREFIX + "h2"
ADDR = "198.18.1.2"


def sh(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, **kw)


def bg(ns, argv):
    return subprocess.Popen(["ip", "netns", "exec", ns] + argv,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def irtt_start(seconds, out):
    return subprocess.Popen(["ip", "netns", "exec", H1, "irtt", "client", "-i", "10ms", "-d", f"{seconds}s",
                             "-Q", "-o", out, ADDR], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def finished(p, what, out):
    """The JSON `out` once process `p` (`what`) has ended well; its error ends the bench."""
    _, err = p.communicate(timeout=120)
    if p.returncode != 0:
        sys.exit(f"{what} failed: {err}")
    with open(out) as f:
        return json.load(f)


def irtt_result(p, out):
    """RTT p50 and the one-way split (send, receive delay p50), ms, and the count."""
    s = finished(p, "irtt", out)["stats"]
    return (s["rtt"]["median"] / 1e6, s["send_delay"]["median"] / 1e6,
            s["receive_delay"]["median"] / 1e6, s["rtt"]["n"])


def started_ns(rfc3339):
    """Unix ns of misura's started_at (RFC 3339 UTC, µs)."""
    import datetime
    d = datetime.datetime.strptime(rfc3339.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z")
    return int(d.timestamp()) * 1_000_000_000 + d.microsecond * 1000


def irtt_window(trips, t_from, t_to):
    """irtt's RTT, send and receive delay p50 (ms) of the probes sent in [t_from, t_to)."""
    import statistics
    got = [t for t in trips if t.get("lost") == "false"
           and t_from <= t["timestamps"]["client"]["send"]["wall"] < t_to]
    if not got:
        return (float("nan"),) * 3 + (0,)
    p50 = lambda k: statistics.median(t["delay"][k] for t in got) / 1e6
    return p50("rtt"), p50("send"), p50("receive"), len(got)


def irtt(seconds, out):
    return irtt_result(irtt_start(seconds, out), out)


def misura_rtt(m, env, seconds, out):
    return subprocess.Popen([m, "--no-store", "rtt", ADDR, "--netns", H1, "--period", "10ms",
                             "--duration", f"{seconds}s", "--timeout", "2s", "-q", "--export-json", out],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def misura_rtt_result(p, out):
    """User and network RTT p50 (ms) of a misura rtt run."""
    o = finished(p, "misura rtt", out)["overall"]
    return o["user_rtt"]["median_ns"] / 1e6, o["network_rtt"]["median_ns"] / 1e6


def row(name, idle, loaded, split, bps=None):
    print(f"{name:<40} {idle:>8.3f} {loaded:>10.3f} {loaded - idle:>10.3f} {split:>19} "
          + (f"{bps:>10.2f}" if bps is not None else ""))


def header(title):
    print(f"\n{title}")
    print(f"{'probe tool':<40} {'idle ms':>8} {'loaded ms':>10} {'infl. ms':>10} {'loaded split ms':>19} {'Mbit/s':>10}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", default="20M,queue=500K")
    ap.add_argument("--streams", type=int, default=4)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--idle", type=int, default=5)
    ap.add_argument("--misura", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "misura"))
    a = ap.parse_args()
    m = os.path.abspath(a.misura)
    tmp = tempfile.mkdtemp(prefix="misura-bench-load-")
    env = dict(os.environ, HOME=tmp)
    up = sh([m, "--no-store", "lab", "up", "--topology", "routed", "--prefix", PREFIX, "--shape", a.shape], env=env)
    if up.returncode:
        sys.exit(up.stderr)
    servers = [bg(H2, [m, "--no-store", "serve", "-q"]), bg(H2, [m, "--no-store", "reflect", "-q"]),
               bg(H2, ["iperf3", "-s", "-p", "5201"]), bg(H2, ["iperf3", "-s", "-p", "5202"]), bg(H2, ["irtt", "server", "-b", ADDR])]
    time.sleep(1.5)
    try:
        # 1. misura load, with irtt probing the same path through all of it;
        # irtt's probes are split by misura's phase boundaries (wall clock)
        ir_out = os.path.join(tmp, "load1.json")
        ir_side = irtt_start(2 * a.idle + a.duration + 4, ir_out)
        time.sleep(0.5)
        ml = subprocess.run([m, "--no-store", "load", ADDR, "--netns", H1, "--up", str(a.streams),
                             "--down", str(a.streams), "--duration", f"{a.duration}s", "--idle", f"{a.idle}s",
                             "--period", "10ms", "--json"], env=env, capture_output=True, text=True,
                            timeout=2 * a.idle + a.duration + 60)
        if ml.returncode != 0:
            sys.exit(f"misura load failed: {ml.stderr}")
        irtt_result(ir_side, ir_out)
        v = json.loads(ml.stdout)
        ph = {p["name"]: p for p in v["phases"]}
        t0 = started_ns(v["started_at"])
        with open(ir_out) as f:
            trips = json.load(f)["round_trips"]
        ir_ph = {n: irtt_window(trips, t0 + p["start_s"] * 1e9, t0 + (p["start_s"] + p["duration_s"]) * 1e9)
                 for n, p in ph.items()}
        med = lambda p, k: ph[p][k]["median_ns"] / 1e6
        header(f"load 1: misura load, {a.streams} TCP streams up + {a.streams} down, {a.duration} s, "
               f"routed lab {a.shape}")
        row("misura load, network RTT p50", med("idle", "network_rtt"), med("loaded", "network_rtt"),
            f"{med('loaded', 'forward'):.1f} / {med('loaded', 'backward'):.1f}", ph["loaded"]["total_bps"] / 1e6)
        row("misura load, user RTT p50", med("idle", "user_rtt"), med("loaded", "user_rtt"), "")
        ir_i, ir_l = ir_ph["idle"], ir_ph["loaded"]
        row("irtt RTT p50 (same path, same phases)", ir_i[0], ir_l[0], f"{ir_l[1]:.1f} / {ir_l[2]:.1f}")
        mu_infl = med("loaded", "user_rtt") - med("idle", "user_rtt")
        print(f"ratio of inflations, misura user RTT / irtt: {mu_infl / max(ir_l[0] - ir_i[0], 1e-9):.3f} "
              f"(irtt probes {ir_i[3]} idle, {ir_l[3]} loaded)")
        # 2. iperf3 loads the path; irtt and misura rtt probe it at the same time
        mi_p = misura_rtt(m, env, a.idle, os.path.join(tmp, "mi_idle.json"))
        ir_idle = irtt(a.idle, os.path.join(tmp, "idle2.json"))
        mi_idle = misura_rtt_result(mi_p, os.path.join(tmp, "mi_idle.json"))
        loads = [bg(H1, ["iperf3", "-c", ADDR, "-P", str(a.streams), "-t", str(a.duration), "-p", "5201", "--json", "--logfile", os.path.join(tmp, "up.json")]),
                 bg(H1, ["iperf3", "-c", ADDR, "-P", str(a.streams), "-t", str(a.duration), "-R", "-p", "5202", "--json", "--logfile", os.path.join(tmp, "down.json")])]
        time.sleep(1.5)
        probe_s = max(a.duration - 3, 1)
        mi_p = misura_rtt(m, env, probe_s, os.path.join(tmp, "mi_load.json"))
        ir_load = irtt(probe_s, os.path.join(tmp, "load2.json"))
        mi_load = misura_rtt_result(mi_p, os.path.join(tmp, "mi_load.json"))
        for p in loads:
            p.wait(timeout=a.duration + 30)
        bps = 0.0
        for f in ("up.json", "down.json"):
            try:
                with open(os.path.join(tmp, f)) as fh:
                    bps += json.load(fh)["end"]["sum_received"]["bits_per_second"] / 1e6
            except (OSError, ValueError, KeyError):
                pass
        header(f"load 2: iperf3, {a.streams} TCP streams up + {a.streams} down (-R), {a.duration} s")
        row("misura rtt, user RTT p50", mi_idle[0], mi_load[0], "", bps)
        row("misura rtt, network RTT p50", mi_idle[1], mi_load[1], "")
        row("irtt RTT p50 (same path, same time)", ir_idle[0], ir_load[0], f"{ir_load[1]:.1f} / {ir_load[2]:.1f}")
        print(f"ratio of inflations, misura user RTT / irtt: "
              f"{(mi_load[0] - mi_idle[0]) / max(ir_load[0] - ir_idle[0], 1e-9):.3f}; "
              "(misura rtt's own split is not given here: its clock offset would come from the loaded path)")
        # 3. --cpu-load sweep (shape off: the host, not the link)
        sh([m, "--no-store", "lab", "up", "--topology", "routed", "--prefix", PREFIX, "--shape", "none"], env=env)
        files = []
        print(f"\n{'--cpu-load':<11} {'mean busy %':>11} {'network RTT p50 µs':>19} {'user RTT p50 µs':>16}")
        for n in (0, 1, 2):
            out = os.path.join(tmp, f"cpu{n}.json")
            sh([m, "--no-store", "rtt", ADDR, "--netns", H1, "--cpu", "0", "--cpu-load", str(n), "--count", "2000",
                "--period", "1ms", "-q", "--export-json", out], env=env)
            with open(out) as f:
                r = json.load(f)
            files.append(out)
            print(f"{n:<11} {100 * r['host']['load']['mean_busy']:>11.1f} "
                  f"{r['overall']['network_rtt']['median_ns'] / 1000:>19.3f} {r['overall']['user_rtt']['median_ns'] / 1000:>16.3f}")
        page = os.path.abspath("bench-load-vs-load.html")
        sh([m, "--no-store", "report"] + files + ["--vs-load", "--html", page], env=env)
        print(f"RTT against CPU load: {page}")
    finally:
        for p in servers:
            p.kill()
        sh([m, "--no-store", "lab", "down", "--prefix", PREFIX], env=env)


if __name__ == "__main__":
    main()
