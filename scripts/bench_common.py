"""What the benchmark reports share (scripts/bench_report.py,
bench_rtt_report.py, bench_throughput_report.py and the pinned tables they
use): their arguments, reading a raw output and a key=value file, the median
of the figures present, ratios, the notes under a table, and the JSON result
written at the end.
Standard library only; imported, not run.
"""

import argparse
import json
import os
import statistics
import textwrap


def parse_args(doc, script, out):
    """The report's --work (the work directory `script` left) and --out
    (default `out`), the script's params.txt there as a dict, and the
    commands it ran (commands.txt), one a line."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", required=True, help=f"work directory of {script}")
    ap.add_argument("--out", default=out, help="JSON file to write")
    a = ap.parse_args()
    params = read_kv(os.path.join(a.work, "params.txt"))
    commands = read(os.path.join(a.work, "commands.txt")).splitlines()
    return a, params, commands


def read(path):
    """The text of `path` (undecodable bytes replaced)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def read_kv(path):
    """The key=value lines of `path` (the scripts' params.txt) as a dict;
    an empty one when there is no such file."""
    out = {}
    if os.path.exists(path):
        for line in read(path).splitlines():
            if "=" in line:
                k, v = line.split("=", 1)
                out[k.strip()] = v.strip()
    return out


def med(xs):
    """The median of the values that are not None, or None."""
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ratio(a, b):
    """a / b, or None where either is missing or b is 0."""
    return a / b if a is not None and b not in (None, 0) else None


def fx(x, digits=2):
    """A ratio as "1.23x", "-" for none."""
    return "-" if x is None else f"{x:.{digits}f}x"


def print_notes(notes, width=118):
    """Each note as a paragraph under the table, after "note: "."""
    for n in notes:
        print(textwrap.fill(n, width=width, initial_indent="note: ", subsequent_indent="      "))


def write_result(out, result, work):
    """`result` as indented JSON to `out`, and where it and the raw outputs are."""
    with open(out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print(f"numbers written to {out}; raw outputs in {work}")
