#!/usr/bin/env python3
"""Where each µs of a round trip goes: the per-probe timeline of
scripts/trace-rtt.sh, for misura and sockperf on one time axis.

    trace_rtt_timeline.py bt               prints the bpftrace program
    trace_rtt_timeline.py report DIR TOOL...   reads DIR/TOOL.bt, prints tables

The program follows each client send through the points of CHAIN to the
client's receive of the reply, on bpftrace's clock (CLOCK_MONOTONIC, one
clock for both ends), and adds the time between consecutive points to a
histogram per step in the kernel: printing each point to user space costs
several µs per event on a VM (a perf-buffer write and a wake-up of
bpftrace), which would swamp a 10 µs round trip. A step that did not happen
(no wake-up when an end spins) has its time counted in the next one that
did. Only tracepoints are used: this kernel has no kprobes. The kernel
points are the veth driver's start of transmit (net_dev_start_xmit; the
software TX stamp is taken in the driver right after), the peer's netif_rx
(its RX stamp is taken just before), the socket's data-ready call (the
datagram is queued on the socket) and the error report that queues a TX
stamp on a socket's error queue.

Run the program with two arguments: the client's and the server's PID, and
a third, the seconds to trace.
"""
import sys

# The round trip's chain: (end, event, what the step from the previous
# point to this one is). "*": in whichever context ran it.
CHAIN = [
    ("c", "send", "client enters send"),
    ("c", "xmit", "client's send path to the veth driver"),
    ("c", "netif", "veth hand-over (the request's RX stamp is taken here)"),
    ("*", "ready", "receive path to the reflector's socket"),
    ("s", "wake", "the reflector is woken"),
    ("s", "run", "the reflector waits for its CPU"),
    ("s", "rx", "the reflector's receive returns"),
    ("s", "send", "the reflector's own work (parse, build the reply)"),
    ("s", "xmit", "the reflector's send path to the veth driver (TX stamp)"),
    ("s", "netif", "veth hand-over back"),
    ("*", "ready", "receive path to the client's socket"),
    ("c", "wake", "the client is woken"),
    ("c", "run", "the client waits for its CPU"),
    ("c", "rx", "the client's receive returns"),
]
# Points off the chain: the first one after each client send, by its
# offset from that send.
SIDE = [
    ("c", "errrep", "client's TX stamp queued on its error queue"),
    ("c", "sent", "client's send returns"),
    ("c", "off", "client leaves the CPU"),
    ("s", "errrep", "reflector's TX stamp queued on its error queue"),
    ("s", "sent", "reflector's send returns"),
    ("s", "errq", "reflector has read its TX stamp"),
    ("s", "off", "reflector leaves the CPU"),
    ("c", "errq", "client has read its TX stamp"),
]
# Histograms: steps in 100 ns buckets up to 100 µs, offsets and round
# trips in 200 ns buckets up to 200 µs (bpftrace's lhist: at most 1000).
STEP_H = "0, 100000, 100"
OFF_H = "0, 200000, 200"
END = len(CHAIN) - 1

# Each probe: (attach point, filter, the end it belongs to, extra code).
# Syscall numbers are x86-64's: sendto 44, recvfrom 45, sendmsg 46,
# recvmsg 47; MSG_ERRQUEUE is 0x2000 (recvfrom's flags are its 4th argument).
PROBES = {
    "enter": ("tracepoint:raw_syscalls:sys_enter", "pid == $1 || pid == $2", "@who[tid]"),
    "exit": ("tracepoint:raw_syscalls:sys_exit", "(pid == $1 || pid == $2) && @t[tid]", "@who[tid]"),
    "xmit": ("tracepoint:net:net_dev_start_xmit", "@who[tid]", "@who[tid]"),
    "netif": ("tracepoint:net:netif_rx", "@who[tid]", "@who[tid]"),
    "ready": ("tracepoint:sock:sk_data_ready",
              '@who[tid] || strncmp(comm, "ksoftirqd", 9) == 0', "@who[tid]"),
    "errrep": ("tracepoint:sock:inet_sk_error_report", "@who[tid]", "@who[tid]"),
    "wake": ("tracepoint:sched:sched_wakeup", "@who[args->pid]", "@who[args->pid]"),
    "run": ("tracepoint:sched:sched_switch", "@who[args->next_pid]", "@who[args->next_pid]"),
    "off": ("tracepoint:sched:sched_switch", "@who[args->prev_pid]", "@who[args->prev_pid]"),
}
END_NO = {"c": 1, "s": 2}


def point(event, who_expr):
    """bpftrace code for one point `event` by the end `who_expr` names."""
    code = [f"$w = {who_expr};"]
    for end, no in END_NO.items():
        idx = [i for i, (e, n, _) in enumerate(CHAIN) if n == event and e in (end, "*") and i > 0]
        side = [k for k, (e, n, _) in enumerate(SIDE) if n == event and e == end]
        body = []
        if idx:
            pick = " else ".join(f"if (@step < {i}) {{ $ci = {i}; }}" for i in idx)
            body.append(f"$ci = 0; if (@on) {{ {pick} }}")
            body.append(f"if ($ci > 0) {{ @step_ns[$ci] = lhist(nsecs - @prev, {STEP_H}); "
                        f"@prev = nsecs; @step = $ci; }}")
            if END in idx:
                body.append(f"if ($ci == {END}) {{ @rtt_ns = lhist(nsecs - @t0, {OFF_H}); @on = 0; }}")
        for k in side:
            body.append(f"if (@t0 && @seen[{k}] != @gen) {{ @seen[{k}] = @gen; "
                        f"@side_ns[{k}] = lhist(nsecs - @t0, {OFF_H}); }}")
        if event == "ready" and end == "c":
            # A data-ready call in a context of neither end (ksoftirqd).
            no_test = "$w == 1 || $w == 0"
        else:
            no_test = f"$w == {no}"
        if body:
            code.append(f"if ({no_test}) {{ " + " ".join(body) + " }")
    return " ".join(code)


def program():
    send_start = "@t0 = nsecs; @prev = nsecs; @step = 0; @on = 1; @gen = @gen + 1;"
    out = [
        "tracepoint:raw_syscalls:sys_enter /pid == $1 || pid == $2/ {",
        "  @t[tid] = nsecs; @nr[tid] = args->id;",
        "  $a2 = args->args[2]; $a3 = args->args[3];",
        "  @fl[tid] = args->id == 45 ? $a3 : $a2;",
        "  @who[tid] = pid == $1 ? 1 : 2;",
        "  if (args->id == 44 || args->id == 46) {",
        f"    if (@who[tid] == 1) {{ {send_start} }}",
        "    " + point("send", "@who[tid]"),
        "  }",
        "}",
        "tracepoint:raw_syscalls:sys_exit /(pid == $1 || pid == $2) && @t[tid]/ {",
        "  $nr = @nr[tid]; $ret = args->ret < 0 ? args->ret : 0;",
        "  @calls[@who[tid], $nr, $ret] = count();",
        "  @call_ns[@who[tid], $nr, $ret] = sum(nsecs - @t[tid]);",
        # An error-queue read of a OPT_TSONLY stamp returns 0 bytes.
        "  if ($nr == 47 && args->ret >= 0 && (@fl[tid] & 0x2000)) { "
        + point("errq", "@who[tid]") + " }",
        "  if (($nr == 45 || $nr == 47) && args->ret > 0 && !(@fl[tid] & 0x2000)) { "
        + point("rx", "@who[tid]") + " }",
        "  if ($nr == 44 || $nr == 46) { " + point("sent", "@who[tid]") + " }",
        "  delete(@t[tid]);",
        "}",
    ]
    for ev in ("xmit", "netif", "ready", "errrep", "wake", "run", "off"):
        at, flt, who = PROBES[ev]
        extra = ""
        if ev == "wake":
            extra = f"@wakes[{who}] = count(); "
        if ev == "off":
            extra = f"@switches[{who}, args->prev_state == 0 ? 1 : 0] = count(); "
        out.append(f"{at} /{flt}/ {{ {extra}{point(ev, who)} }}")
    out.append("interval:s:$3 { exit(); }")
    out.append("END { clear(@t); clear(@nr); clear(@fl); clear(@who); clear(@seen); "
               "clear(@t0); clear(@prev); clear(@step); clear(@on); clear(@gen); }")
    return "\n".join(out) + "\n"


def hists(path):
    """The lhist maps bpftrace printed: {(name, key): [(lo, hi, count)]}."""
    out, cur = {}, None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            s = line.strip()
            if s.startswith("@") and s.endswith(":"):
                name, _, key = s[1:-1].partition("[")
                cur = out.setdefault((name, key.rstrip("]")), [])
            elif s.startswith("[") and cur is not None:
                rng, _, rest = s.partition(")")
                lo, _, hi = rng[1:].partition(",")
                try:
                    cnt = int(rest.split()[0])
                    lo_v = int(lo.strip().rstrip("K"))
                    hi_v = hi.strip()
                except (ValueError, IndexError):
                    continue
                hi_v = int(hi_v) if hi_v.isdigit() else lo_v
                cur.append((lo_v, hi_v, cnt))
            elif not s:
                cur = None
    return out


def median(h):
    """The median of a linear histogram, at its bucket's middle, and count."""
    n = sum(c for _, _, c in h)
    if not n:
        return None, 0
    acc = 0
    for lo, hi, c in h:
        acc += c
        if acc * 2 >= n:
            return (lo + hi) / 2, n
    return None, n


def report(work, tools):
    res = {t: hists(f"{work}/{t}.bt") for t in tools}
    rtts = {t: median(res[t].get(("rtt_ns", ""), []))[1] for t in tools}
    head = "| step | " + " | ".join(tools) + " |\n" + "|---" * (len(tools) + 1) + "|"

    def cell(t, name, key):
        m, n = median(res[t].get((name, str(key)), []))
        if m is None:
            return "-"
        share = f" ({n / rtts[t]:.0%})" if rtts[t] and n < 0.995 * rtts[t] else ""
        return f"{m / 1e3:.1f}{share}"

    print("\nA round trip step by step: median µs per step (share of round trips"
          " that had the step, when not all); 0.1 µs buckets.")
    print("Tracing adds to every point: compare the tools, not the absolute figures.\n")
    print(head)
    for ci in range(1, len(CHAIN)):
        who, ev, what = CHAIN[ci]
        print(f"| {what} | " + " | ".join(cell(t, "step_ns", ci) for t in tools) + " |")
    rtt = [f"{(median(res[t].get(('rtt_ns', ''), []))[0] or 0) / 1e3:.1f} ({rtts[t]})" for t in tools]
    print("| **send to the reply's receive, median (round trips)** | " + " | ".join(rtt) + " |")
    print("\nPoints off the chain: median µs after the client's send.\n")
    print(head)
    for k, (_, _, what) in enumerate(SIDE):
        print(f"| {what} | " + " | ".join(cell(t, "side_ns", k) for t in tools) + " |")


def main():
    if sys.argv[1:2] == ["bt"]:
        sys.stdout.write(program())
    elif sys.argv[1:2] == ["report"] and len(sys.argv) > 3:
        report(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
