"""The pinned rows of scripts/bench-throughput.sh (issue 10): misura beside
iperf3, run as pairs with the same pinning, median over the repeats.

    tcp1_same, tcp4_same     client and server on one CPU
    tcp1_split, tcp4_split   client on --cpu, server on --server-cpu
    tcp1r_same, tcp1r_split  one stream reverse: the server sends, the
                             client reads (misura tcp --reverse, iperf3 -R)
    udp_split                misura udp --rate R vs iperf3 -u -b R

For every run the client's CPU time comes from getrusage of the child
(bench_rusage.py wrote it to FILE.rusage): user + system seconds per second
of test, the same measure for both tools. A pair's ratio is misura / iperf3
within one repeat (throughput for TCP, client CPU per second for UDP); the
row's ratio is the median of its pairs' ratios, printed beside the ratio of
the medians. Imported by bench_throughput_report.py; standard library only.
"""

import json
import os

from bench_common import med

ROWS = (
    ("tcp1_same", "TCP 1 stream, same CPU"),
    ("tcp4_same", "TCP 4 streams, same CPU"),
    ("tcp1_split", "TCP 1 stream, split CPUs"),
    ("tcp4_split", "TCP 4 streams, split CPUs"),
    ("tcp1r_same", "TCP 1 reverse, same CPU"),
    ("tcp1r_split", "TCP 1 reverse, split CPUs"),
    ("udp_split", "UDP, split CPUs"),
)
TOOLS = ("misura", "iperf3")


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def rusage(path, duration_s):
    """The client's CPU seconds per second of test, from FILE.rusage."""
    p = path + ".rusage"
    if not os.path.exists(p):
        return None
    r = json.load(open(p))
    return (r["user_s"] + r["system_s"]) / duration_s if duration_s else None


def spacing(path):
    """Arrival spacing at the receiver's kernel (FILE.spacing, written by
    scripts/udp_spacing.py): the same yardstick for both tools."""
    p = path + ".spacing"
    try:
        d = json.load(open(p))
    except (OSError, ValueError):
        return {}
    return {"rx_gap_stddev_us": d.get("gap_stddev_us"), "rx_jitter_us": d.get("jitter_us")}


def summarise(runs, params):
    """Per row: each tool's medians, the pairs' ratios and their median."""
    dur = float(params.get("duration_s", "5"))
    out = {}
    for test, _ in ROWS:
        # The CPUs the two ends were pinned to (one CPU in the "same" rows).
        cpu = params.get("cpu", "1")
        scpu = cpu if test.endswith("_same") else params.get("server_cpu", "0")
        row = {"tools": {}, "pairs": []}
        by_rep = {}
        for r in runs:
            if r["test"] != test or r["tool"] not in TOOLS:
                continue
            f = dict(r.get("figures") or {})
            if f:
                f["client_cpu_per_s"] = rusage(r["file"], dur)
                f.update(spacing(r["file"]))
                busy = r.get("cpu_busy") or {}
                # Busy CPU seconds per second of test: the snapshots bracket
                # the whole client run, which can outlast the test.
                for k, c in (("busy_client_cpu", cpu), ("busy_server_cpu", scpu)):
                    b = (busy.get(f"cpu{c}") or {}).get("busy_s")
                    f[k] = b / dur if b is not None and dur > 0 else None
            by_rep.setdefault(r["repeat"], {})[r["tool"]] = (f, r.get("error"))
        for tool in TOOLS:
            fs = [v[tool][0] for v in by_rep.values() if tool in v and v[tool][0]]
            errs = [v[tool][1] for v in by_rep.values() if tool in v and v[tool][1]]
            row["tools"][tool] = {
                "runs": sum(1 for v in by_rep.values() if tool in v), "ok": len(fs), "errors": errs,
                "value": med([f.get("value") for f in fs]),
                "values": [f.get("value") for f in fs],
                "retransmits": med([f.get("retransmits") for f in fs]),
                "loss_pct": med([f.get("loss_pct") for f in fs]),
                "jitter_us": med([f.get("jitter_us") for f in fs]),
                "rx_gap_stddev_us": med([f.get("rx_gap_stddev_us") for f in fs]),
                "rx_jitter_us": med([f.get("rx_jitter_us") for f in fs]),
                "sender_bps": med([f.get("sender_bps") for f in fs]),
                "client_cpu_per_s": med([f.get("client_cpu_per_s") for f in fs]),
                "client_cpu_per_s_runs": [f.get("client_cpu_per_s") for f in fs],
                "busy_client_cpu": med([f.get("busy_client_cpu") for f in fs]),
                "busy_server_cpu": med([f.get("busy_server_cpu") for f in fs]),
            }
        key = "client_cpu_per_s" if test.startswith("udp") else "value"
        for rep in sorted(by_rep):
            m, i = by_rep[rep].get("misura", ({}, None))[0], by_rep[rep].get("iperf3", ({}, None))[0]
            if m.get(key) is not None and i.get(key):
                row["pairs"].append({"repeat": rep, "misura": m[key], "iperf3": i[key],
                                     "ratio": m[key] / i[key]})
        row["ratio_figure"] = "client CPU per second" if key != "value" else "throughput"
        row["ratio_median_of_pairs"] = med([p["ratio"] for p in row["pairs"]])
        mv, iv = row["tools"]["misura"].get(key), row["tools"]["iperf3"].get(key)
        row["ratio_of_medians"] = mv / iv if mv is not None and iv else None
        out[test] = row
    return out


def table(summary, params):
    """The pinned rows as printed lines."""
    cpu, scpu = params.get("cpu", "1"), params.get("server_cpu", "0")
    lines = [
        f"pinned pairs (misura beside iperf3, same pinning, back to back; median of {params.get('repeat')} "
        f"repeat(s); client CPU = getrusage user+system of the client per second of test): same = client and "
        f"server on CPU {cpu}; split = client on CPU {cpu}, server on CPU {scpu}",
        "CPUs busy = seconds the pinned CPUs were busy per second of test (/proc/stat; setup and teardown "
        "add a little), client's CPU / server's CPU; "
        "in a same-CPU row both ends share one CPU, so how its time splits between the client and the "
        "server is attribution, and throughput is what compares",
    ]
    hdr = (f"{'row':26} | {'tool':7} | {'figure (median)':52} | {'client CPU s/s':14} | {'CPUs busy':9} | "
           f"misura/iperf3 (median of pairs; of medians)")
    rule = "-" * (len(hdr) + 4)
    lines += [rule, hdr, rule]
    for test, label in ROWS:
        row = summary.get(test)
        if not row or not any(t["runs"] for t in row["tools"].values()):
            continue
        for tool in TOOLS:
            s = row["tools"][tool]
            if not s["ok"]:
                fig = "n/a: " + (s["errors"][0] if s["errors"] else "not run")
            elif test.startswith("udp"):
                fig = (f"{s['value'] / 1e9:.3f} Gbit/s rx, loss {fmt(s['loss_pct'], '.2f')} %, "
                       f"jitter {fmt(s['jitter_us'], '.1f')} us; at the receiver's kernel: gap sd "
                       f"{fmt(s['rx_gap_stddev_us'], '.1f')} us, jitter {fmt(s['rx_jitter_us'], '.1f')} us")
            else:
                fig = f"{s['value'] / 1e9:6.2f} Gbit/s  retrans {fmt(s['retransmits'], '.0f')}"
                vals = [v for v in s["values"] if v is not None]
                if vals:
                    fig += f"  ({min(vals) / 1e9:.2f}..{max(vals) / 1e9:.2f})"
            rt = ""
            if tool == "misura":
                rt = (f"{fmt(row['ratio_median_of_pairs'], '.2f')}x; {fmt(row['ratio_of_medians'], '.2f')}x "
                      f"({row['ratio_figure']}, {len(row['pairs'])} pairs)")
            busy = fmt(s["busy_client_cpu"], ".2f")
            if not test.endswith("_same"):
                busy += "/" + fmt(s["busy_server_cpu"], ".2f")
            lines.append(f"{label if tool == 'misura' else '':26} | {tool:7} | {fig:52} | "
                         f"{fmt(s['client_cpu_per_s'], '.3f'):14} | {busy:9} | {rt}")
        lines.append(rule)
    return lines
