#!/usr/bin/env bash
# Where a round trip's time goes at each end: system calls (by name and
# outcome), their mean duration, wake-ups and context switches per round
# trip, for misura rtt + misura reflect and for sockperf ping-pong + server,
# traced with bpftrace on the lab's hosts topology, same pinning for both.
#
#   sudo scripts/trace-rtt.sh [--cpu C] [--server-cpu S] [--misura PATH]
#                             [--seconds N] [--busy-poll]
#                             [--rtt-args 'FLAGS'] [--reflect-args 'FLAGS']
#                             [--prefix misura-NAME-]
#
# Defaults: both ends on CPU 1 (--server-cpu 1: same CPU), 3 s of tracing
# in the middle of a 1000/s run, misura from target/release/misura. With
# --busy-poll both misura ends spin (sockperf: --nonblocked). --rtt-args
# and --reflect-args add flags to misura's client and reflector (e.g.
# '--timestamps user' on one end, to see what its stamps cost). Prints one
# table per tool: per round trip (divided by the client's sends), each
# system call at each end with how often it ran and its mean time in µs
# (tracing adds about 1 µs to each), the wake-ups and switches of each
# end. Then the round trip step by step on one time axis for both tools
# (scripts/trace_rtt_timeline.py): each client send followed through the
# veth driver, the reflector's socket, its wake-up, receive, send and TX
# stamp, back to the client's receive, with the median µs of each step.
# Builds its own lab (prefix misura-trace-) and removes it on exit.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
PREFIX=misura-trace-
CPU=1; SCPU=1; SECONDS_TRACED=3; BUSY=0; RTT_ARGS=; REFLECT_ARGS=; MISURA="$REPO/target/release/misura"
while (($#)); do
    case "$1" in
        --cpu) CPU=$2; shift 2 ;;
        --server-cpu) SCPU=$2; shift 2 ;;
        --seconds) SECONDS_TRACED=$2; shift 2 ;;
        --misura) MISURA=$2; shift 2 ;;
        --busy-poll) BUSY=1; shift ;;
        --rtt-args) RTT_ARGS=$2; shift 2 ;;
        --prefix) PREFIX=$2; shift 2 ;;
        --reflect-args) REFLECT_ARGS=$2; shift 2 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done
[[ "$PREFIX" =~ ^misura-[a-z0-9-]{1,16}$ ]] || { echo "--prefix must be misura- and 1..16 of a-z, 0-9, -" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "trace-rtt: needs root (namespaces, bpftrace)" >&2; exit 1; }
[[ "$SECONDS_TRACED" =~ ^[0-9]+$ ]] && ((SECONDS_TRACED >= 1 && SECONDS_TRACED <= 60)) || { echo "--seconds must be 1..60" >&2; exit 2; }
need=()
command -v bpftrace >/dev/null || need+=(bpftrace)
command -v sockperf >/dev/null || need+=(sockperf)
if ((${#need[@]})); then DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; fi
[ -x "$MISURA" ] || (cd "$REPO" && cargo build --release --locked)
# bpftrace's tracepoints live in tracefs, which a fresh boot may not mount.
if [ ! -d /sys/kernel/tracing/events/raw_syscalls ]; then
    mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
    [ -d /sys/kernel/tracing/events/raw_syscalls ] || { echo "trace-rtt: no raw_syscalls tracepoints (tracefs not mountable at /sys/kernel/tracing)" >&2; exit 1; }
fi
WORK=$(mktemp -d /tmp/misura-trace-rtt.XXXXXX)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; done
    sleep 0.3
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    "$MISURA" lab down --prefix "$PREFIX" >/dev/null 2>&1 || true
}
trap cleanup EXIT
"$MISURA" lab up --topology hosts --prefix "$PREFIX" --no-store >/dev/null
H1=${PREFIX}h1; H2=${PREFIX}h2; ADDR=198.18.0.2
RUN_S=$((SECONDS_TRACED + 4))

# One bpftrace program counts each end's system calls, wake-ups and
# switches, and follows every probe through the kernel (trace_rtt_timeline.py
# writes it and reads its histograms back).
python3 "$REPO/scripts/trace_rtt_timeline.py" bt >"$WORK/count.bt"

# trace TOOL CLIENT_PID SERVER_PID
trace() {
    echo "-- tracing $1 for ${SECONDS_TRACED} s (client pid $2, server pid $3)"
    bpftrace "$WORK/count.bt" "$2" "$3" "$SECONDS_TRACED" >"$WORK/$1.bt" 2>"$WORK/$1.bt.err" || true
}
pid_of() { pgrep -f "$1" | head -n1; }

bp=(); nb=()
((BUSY)) && bp=(--busy-poll) && nb=(--nonblocked)
# misura
ip netns exec "$H2" taskset -c "$SCPU" "$MISURA" reflect --listen "$ADDR" --port 8620 --cpu "$SCPU" -q --no-store "${bp[@]}" $REFLECT_ARGS >/dev/null 2>&1 &
PIDS+=($!); sleep 0.5
ip netns exec "$H1" taskset -c "$CPU" "$MISURA" rtt "$ADDR:8620" --count $((RUN_S * 1000)) --period 1ms --cpu "$CPU" -q --no-store --json "${bp[@]}" $RTT_ARGS >"$WORK/misura.json" 2>&1 &
PIDS+=($!); sleep 1.5
MB=$(basename "$MISURA")
trace misura "$(pid_of "$MB rtt $ADDR")" "$(pid_of "$MB reflect --listen $ADDR")"
wait "${PIDS[1]}" || true; kill -INT "${PIDS[0]}" 2>/dev/null || true; wait "${PIDS[0]}" 2>/dev/null || true; PIDS=()
# sockperf
ip netns exec "$H2" taskset -c "$SCPU" sockperf server -i "$ADDR" -p 11111 "${nb[@]}" >/dev/null 2>&1 &
PIDS+=($!); sleep 0.5
ip netns exec "$H1" taskset -c "$CPU" sockperf ping-pong -i "$ADDR" -p 11111 -m 44 --mps 1000 -t "$RUN_S" --full-rtt "${nb[@]}" >"$WORK/sockperf.txt" 2>&1 &
PIDS+=($!); sleep 1.5
trace sockperf "$(pid_of "sockperf ping-pong")" "$(pid_of "sockperf server")"
wait "${PIDS[1]}" || true; kill "${PIDS[0]}" 2>/dev/null || true; PIDS=()

python3 - "$WORK" "$CPU" "$SCPU" "$BUSY" <<'PY'
import json, re, sys
work, cpu, scpu, busy = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
NAMES = {0: "read", 1: "write", 7: "poll", 44: "sendto", 45: "recvfrom", 46: "sendmsg", 47: "recvmsg",
         232: "epoll_wait", 270: "pselect6", 271: "ppoll", 281: "epoll_pwait", 35: "nanosleep",
         230: "clock_nanosleep", 228: "clock_gettime", 305: "clock_adjtime", 24: "sched_yield", 23: "select",
         15: "rt_sigreturn", 223: "timer_settime"}
END = {"1": "client", "2": "server"}
def parse(path):
    calls, ns, other = {}, {}, {}
    for line in open(path, encoding="utf-8", errors="replace"):
        m = re.match(r"@(\w+)\[(.*)\]: (\d+)", line.strip())
        if not m:
            continue
        kind, key, v = m.group(1), [k.strip() for k in m.group(2).split(",")], int(m.group(3))
        key[0] = END.get(key[0], key[0])
        if kind in ("calls", "call_ns"):
            (calls if kind == "calls" else ns)[(key[0], int(key[1]), int(key[2]))] = v
        elif kind == "wakes":
            other[("wake", key[0])] = v
        elif kind == "switches":
            other[("switch", key[0], "preempted" if key[1] == "1" else "slept")] = v
    return calls, ns, other
print(f"per round trip; client on CPU {cpu}, server on CPU {scpu}{', busy-polling' if busy else ''}; mean time per call in µs (traced: ~1 µs added per call)")
for tool, send in (("misura", 46), ("sockperf", 44)):
    try:
        calls, ns, other = parse(f"{work}/{tool}.bt")
    except OSError:
        print(f"{tool}: no trace"); continue
    sends = calls.get(("client", send, 0), 0)
    if not sends:
        print(f"{tool}: the client sent nothing while traced"); continue
    print(f"\n{tool}: {sends} round trips traced")
    for (who, nr, ret), n in sorted(calls.items()):
        per = n / sends
        if per < 0.01:
            continue
        outcome = "ok" if ret == 0 else ("EAGAIN" if ret == -11 else ("EINTR" if ret == -4 else f"err {ret}"))
        mean = ns.get((who, nr, ret), 0) / n / 1e3
        print(f"  {who:<7} {NAMES.get(nr, str(nr)):<13} {outcome:<7} {per:7.2f} calls  {mean:8.2f} µs each")
    for (kind, *key), n in sorted(other.items()):
        print(f"  {key[0]:<7} {kind + (' ' + key[1] if len(key) > 1 else ''):<21} {n / sends:7.2f}")
PY
python3 "$REPO/scripts/trace_rtt_timeline.py" report "$WORK" misura sockperf
echo "raw traces: $WORK"
