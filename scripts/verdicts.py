"""How often misura's RFC 2544 throughput verdict is found, inconclusive or
wrong, over a matrix of SUTs, frame sizes and host loads, repeated (issue 37;
like FD.io CSIT's repeated runs of MLRsearch).

Each cell builds the lab's switch topology in namespaces of its own
(misura-v<pid>-*), gives the bridge its SUT, runs

    misura rfc2544 --tx p1 --rx p2 --sizes L --tests throughput
                   --trial 3s --short-trial 0.5s --resolution 0.5%

N times, and classifies each run against the SUT's known limit:

* shaper: tbf at 100 Mbit/s with a 1 MB queue. tbf counts frames without
  their FCS, L - 4 bytes, so a trial of T seconds loses nothing up to
  R / (8 (L - 4)) frames/s, plus the queue's share Q / ((L - 4) T) when it
  starts empty: the truth lies between the two; the error is printed against
  the queue-corrected one.
* policer: what `misura lab up --police 50M` builds (tbf with a 3000-byte
  queue and MEF's 12176-byte bucket): the same formula with the queue and
  the bucket, a few frames.
* none: the bare bridge, whose limit is not known in advance (only found /
  inconclusive is counted; an NDR is never "wrong" there).

found: the NDR found and not resting on the tester (the run may still exit 8
when its PDR does); inconclusive: the NDR rests on the tester (exit 8);
wrong: an NDR found outside [R / (8 (L - 4)) - tol, queue-corrected truth +
tol] (tol: 2 %, four times the resolution: tbf's own timer granularity), an
NDR neither found nor said to be the tester's, or misura failing (any exit
other than 0 and 8).
The host is idle, or runs one busy loop per CPU beside the tester.

Targets (issue 37): wrong is 0 in every cell; found in at least 95 % of the
runs of every cell where the tester reached at least twice the truth.
Run as root: scripts/verdicts.sh [--quick] [--repeats N] [--json FILE].
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TRIAL_S = 3.0
TOLERANCE = 0.02
SUTS = {
    # name: (lab flags, rate bit/s, queue + bucket bytes)
    "shaper": (["--shape", "100M,queue=1M"], 100e6, 1024 * 1024),
    # what `misura lab up --police 50M` builds, written as a shape so that
    # a misura from before --police can be measured the same way
    "policer": (["--shape", "50M,queue=3000,burst=12176"], 50e6, 3000 + 12176),
    "none": (["--shape", "none"], None, 0),
}


def log(msg):
    print(f"verdicts: {msg}", file=sys.stderr, flush=True)


def truth(sut, size):
    """(no queue, queue-corrected) NDR in frames/s, or None when unknown."""
    _, rate, queue = SUTS[sut]
    if rate is None:
        return None
    base = rate / (8 * (size - 4))
    return base, base + queue / ((size - 4) * TRIAL_S)


class Matrix:
    def __init__(self, a):
        self.a = a
        self.prefix = f"misura-v{os.getpid() % 100000}-"
        self.work = tempfile.mkdtemp(prefix="misura-verdicts-")
        # --no-store on every run; a scratch home all the same, so nothing
        # of the user's is ever touched.
        self.env = dict(os.environ, HOME=self.work, XDG_DATA_HOME=os.path.join(self.work, "data"))
        self.rows = []

    def misura(self, args, timeout, binary=None):
        return subprocess.run([binary or self.a.misura, "--no-store"] + args, capture_output=True, text=True,
                              timeout=timeout, env=self.env)

    def lab(self, sut):
        r = self.misura(["lab", "up", "--topology", "switch", "--prefix", self.prefix] + SUTS[sut][0], 120)
        if r.returncode != 0:
            raise RuntimeError(f"lab up for {sut} failed: {r.stderr.strip()}")

    def down(self):
        self.misura(["lab", "down", "--prefix", self.prefix], 120)

    def busy(self, on):
        """One busy loop per CPU (none when idle)."""
        if not on:
            return []
        return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]

    def one(self, sut, size, host, binary=None, tag="misura"):
        loops = self.busy(host == "busy")
        started = time.monotonic()
        try:
            r = self.misura(["rfc2544", "--netns", self.prefix + "tester", "--tx", "p1", "--rx", "p2",
                             "--sizes", str(size), "--tests", "throughput", "--trial", f"{TRIAL_S:g}s",
                             "--short-trial", "0.5s", "--resolution", "0.5%", "--json", "--quiet"], 900, binary)
        finally:
            for p in loops:
                p.kill()
                p.wait()
        seconds = time.monotonic() - started
        row = dict(binary=tag, sut=sut, size=size, host=host, exit=r.returncode, seconds=seconds, ndr=None,
                   tester_max=None, trials=None, error=None)
        try:
            s = json.loads(r.stdout)["sizes"][0]
            t = s["throughput"]
            # Each trial, for reading a verdict back (--json).
            row["trial_rows"] = [[x["phase"], x["attempt"], round(x["offered_fps"]), round(x["achieved_fps"]),
                                  x["sent"], x["received"], x.get("catch_up_frames", 0),
                                  x["tester_limit"] is not None] for x in t["trials"]]
            ndr = t["ndr"]
            # The NDR's own verdict: found (not resting on the tester), or
            # inconclusive. The exit code may be 8 for the PDR alone.
            row.update(ndr=ndr["lower_fps"] if ndr["found"] and not ndr.get("tester_limited") else None,
                       ndr_inconclusive=bool(ndr.get("tester_limited")),
                       tester_max=max([x["achieved_fps"] for x in t["trials"]] + [0.0]),
                       trials=len(t["trials"]), stopped_by=t["stopped_by"])
        except (ValueError, KeyError, IndexError, TypeError):
            row["stderr"] = r.stderr.strip()[-400:]
        tr = truth(sut, size)
        if r.returncode not in (0, 8) or "stderr" in row:
            row["class"] = "wrong"  # misura failed: no verdict at all
        elif row["ndr"] is not None:
            row["class"] = "found"
            if tr is not None:
                lo, hi = tr
                row["error"] = row["ndr"] / hi - 1
                if not lo * (1 - TOLERANCE) <= row["ndr"] <= hi * (1 + TOLERANCE):
                    row["class"] = "wrong"
        elif row.get("ndr_inconclusive") or r.returncode == 8:
            row["class"] = "inconclusive"
        else:
            row["class"] = "wrong"  # neither found nor said to be the tester's
        log(f"{tag}: {sut} {size} B {host}: {row['class']} exit {r.returncode} NDR {row['ndr']} "
            f"(truth {'-' if tr is None else f'{tr[0]:.0f}..{tr[1]:.0f}'}) in {seconds:.0f} s")
        self.rows.append(row)

    def table(self):
        print(f"\n{'binary':<8} {'SUT':<8} {'size':>5} {'host':<5} {'runs':>4} {'found':>5} {'incon':>5} {'wrong':>5} "
              f"{'truth fps':>13} {'NDR found (min..max)':>22} {'error':>15} {'tester max':>10} {'2x':>3} {'s/run':>5}")
        ok = True
        cells = {}
        for r in self.rows:
            cells.setdefault((r["binary"], r["sut"], r["size"], r["host"]), []).append(r)
        for (tag, sut, size, host), rs in cells.items():
            n = len(rs)
            count = {c: sum(1 for r in rs if r["class"] == c) for c in ("found", "inconclusive", "wrong")}
            tr = truth(sut, size)
            ndrs = [r["ndr"] for r in rs if r["ndr"] is not None]
            errs = [r["error"] for r in rs if r["error"] is not None]
            tmax = max([r["tester_max"] or 0.0 for r in rs])
            twice = tr is not None and tmax >= 2 * tr[1]
            cell_ok = count["wrong"] == 0 and (not twice or count["found"] >= 0.95 * n)
            if tag == "misura":
                ok &= cell_ok  # the baseline is measured, not judged
            print(f"{tag:<8} {sut:<8} {size:>5} {host:<5} {n:>4} {count['found']:>5} {count['inconclusive']:>5} "
                  f"{count['wrong']:>5} {'-' if tr is None else f'{tr[0]:.0f}..{tr[1]:.0f}':>13} "
                  f"{(f'{min(ndrs):.0f}..{max(ndrs):.0f}' if ndrs else '-'):>22} "
                  f"{(f'{100 * min(errs):+.2f}..{100 * max(errs):+.2f} %' if errs else '-'):>15} "
                  f"{tmax:>10.0f} {'yes' if twice else 'no':>3} "
                  f"{sum(r['seconds'] for r in rs) / n:>5.0f}{'' if cell_ok else '  MISSED'}")
        print(f"\n{'every target met' if ok else 'a target was missed'}: wrong 0 everywhere, found in >= 95 % "
              "where the tester reached twice the truth")
        return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="the CI matrix: the shaper at 1518 and 512 B, idle, 3 repeats")
    ap.add_argument("--repeats", type=int, default=5, help="runs per cell (default 5)")
    ap.add_argument("--suts", default="shaper,policer,none")
    ap.add_argument("--sizes", default="64,512,1518")
    ap.add_argument("--hosts", default="idle,busy")
    ap.add_argument("--misura", default=os.environ.get("MISURA"), help="the binary (default: build release)")
    ap.add_argument("--json", metavar="FILE", help="also write every run as JSON")
    ap.add_argument("--baseline", metavar="BIN",
                    help="another misura (an older build) run alternately with --misura, run for run, "
                         "so both meet the same host; its cells are printed, not judged")
    a = ap.parse_args()
    if a.quick:
        a.suts, a.sizes, a.hosts, a.repeats = "shaper", "1518,512", "idle", 3
    if not 1 <= a.repeats <= 1000:
        sys.exit(f"verdicts: --repeats {a.repeats} is outside 1..1000")
    suts, hosts = a.suts.split(","), a.hosts.split(",")
    for s in suts:
        if s not in SUTS:
            sys.exit(f"verdicts: unknown SUT {s}: the SUTs are {', '.join(SUTS)}")
    for h in hosts:
        if h not in ("idle", "busy"):
            sys.exit(f"verdicts: unknown host load {h}: idle or busy")
    try:
        sizes = [int(x) for x in a.sizes.split(",")]
    except ValueError:
        sys.exit(f"verdicts: --sizes {a.sizes}: frame sizes in bytes, comma-separated")
    if any(not 64 <= s <= 1518 for s in sizes):
        sys.exit("verdicts: frame sizes are 64..1518 bytes")
    if os.geteuid() != 0:
        sys.exit("verdicts: needs root (it makes network namespaces)")
    if not a.misura:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "misura"], cwd=ROOT, check=True)
        a.misura = os.path.join(ROOT, "target", "release", "misura")
    m = Matrix(a)
    started = time.monotonic()
    try:
        for sut in suts:
            m.lab(sut)
            for size in sizes:
                for host in hosts:
                    for _ in range(a.repeats):
                        if a.baseline:
                            m.one(sut, size, host, a.baseline, "baseline")
                        m.one(sut, size, host)
    finally:
        m.down()
        shutil.rmtree(m.work, ignore_errors=True)
    ok = m.table()
    log(f"{time.monotonic() - started:.0f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(m.rows, f, indent=1)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
