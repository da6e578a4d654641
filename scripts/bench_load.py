#!/usr/bin/env python3
"""Latency under load, misura beside the peers (issue 12), in one run on the
routed lab with a bottleneck on the router:

  1. misura load: --up N --down N TCP streams for D s between idle phases.
  2. irtt (10 ms interval) idle for I s, then irtt again while iperf3 runs N
     streams up and N down (-R) for D s: the same load, the same duration.
  Both give the idle and loaded median RTT and the inflation; the ratio is
  misura's inflation over irtt's.
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


def irtt(seconds, out):
    r = sh(["ip", "netns", "exec", H1, "irtt", "client", "-i", "10ms", "-d", f"{seconds}s",
            "-Q", "-o", out, ADDR])
    if r.returncode != 0:
        sys.exit(f"irtt failed: {r.stderr}")
    with open(out) as f:
        s = json.load(f)["stats"]
    return s["rtt"]["median"] / 1e6, s["rtt"]["n"]


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
        # 1. misura load
        r = sh([m, "--no-store", "load", ADDR, "--netns", H1, "--up", str(a.streams), "--down", str(a.streams),
                "--duration", f"{a.duration}s", "--idle", f"{a.idle}s", "--period", "10ms", "--json"], env=env)
        v = json.loads(r.stdout)
        ph = {p["name"]: p for p in v["phases"]}
        mi_idle = ph["idle"]["network_rtt"]["median_ns"] / 1e6
        mi_load = ph["loaded"]["network_rtt"]["median_ns"] / 1e6
        mu_idle = ph["idle"]["user_rtt"]["median_ns"] / 1e6
        mu_load = ph["loaded"]["user_rtt"]["median_ns"] / 1e6
        mi_bps = ph["loaded"]["total_bps"] / 1e6
        # 2. irtt idle, then under iperf3 up + down
        ir_idle, n_idle = irtt(a.idle, os.path.join(tmp, "idle.json"))
        loads = [bg(H1, ["iperf3", "-c", ADDR, "-P", str(a.streams), "-t", str(a.duration), "-p", "5201", "--json", "--logfile", os.path.join(tmp, "up.json")]),
                 bg(H1, ["iperf3", "-c", ADDR, "-P", str(a.streams), "-t", str(a.duration), "-R", "-p", "5202", "--json", "--logfile", os.path.join(tmp, "down.json")])]
        time.sleep(1)
        ir_load, n_load = irtt(max(a.duration - 2, 1), os.path.join(tmp, "load.json"))
        for p in loads:
            p.wait(timeout=a.duration + 30)
        bps = 0.0
        for f in ("up.json", "down.json"):
            try:
                with open(os.path.join(tmp, f)) as fh:
                    bps += json.load(fh)["end"]["sum_received"]["bits_per_second"] / 1e6
            except (OSError, ValueError, KeyError):
                pass
        print(f"\nlatency under load on the routed lab ({a.shape}), {a.streams} TCP streams up + {a.streams} down, {a.duration} s")
        print(f"{'tool':<34} {'idle ms':>9} {'loaded ms':>10} {'inflation ms':>13} {'load Mbit/s':>12}")
        print(f"{'misura load, network RTT p50':<34} {mi_idle:>9.3f} {mi_load:>10.3f} {mi_load - mi_idle:>13.3f} {mi_bps:>12.2f}")
        print(f"{'misura load, user RTT p50':<34} {mu_idle:>9.3f} {mu_load:>10.3f} {mu_load - mu_idle:>13.3f}")
        print(f"{'irtt RTT p50 under iperf3':<34} {ir_idle:>9.3f} {ir_load:>10.3f} {ir_load - ir_idle:>13.3f} {bps:>12.2f}")
        print(f"ratio misura (user) / irtt inflation: {(mu_load - mu_idle) / max(ir_load - ir_idle, 1e-9):.3f}; "
              f"irtt probes {n_idle} idle, {n_load} loaded")
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
