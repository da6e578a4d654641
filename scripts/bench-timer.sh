#!/usr/bin/env bash
# Timer wake-up latency benchmark: `misura clock timer` beside cyclictest
# (rt-tests), same clock, method, duration, interval, priority and CPU, one
# after the other; optionally a second pass with every CPU loaded.
#
#   sudo scripts/bench-timer.sh [--duration S] [--interval-us I] [--prio P]
#                               [--cpu C] [--max-us M] [--load] [--out FILE]
#                               [--misura PATH]
#
# Defaults: --duration 10 (s, each tool), --interval-us 1000, --prio 80,
# --cpu 1, --max-us 10000 (cyclictest's histogram range, 1 µs buckets),
# --out bench-timer.json, misura from target/release/misura.
#
# Runs
#   cyclictest -m -q -D <d>s -i <us> -p <prio> -a <cpu> -t 1 -h <maxus>
#   misura clock timer --duration <d>s --interval <us>us --rt-priority <prio> --cpu <cpu> --json
# and prints min / mean / p99 / max of both in µs with the ratios misura /
# cyclictest. cyclictest's percentiles come from its -h histogram (1 µs
# buckets, latencies truncated to whole µs; overflows beyond --max-us
# counted); misura's from its own result (ns, HDR percentiles). With --load,
# one busy loop per online CPU (shell, pinned with taskset) runs during a
# second pass of both tools. Raw outputs stay in a /tmp/misura-bench-timer.*
# directory.
#
# Needs root for SCHED_FIFO and mlockall. Installs rt-tests with apt-get when
# cyclictest is missing. Builds target/release/misura if it is not there.
set -euo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
DURATION=10
INTERVAL_US=1000
PRIO=80
CPU=1
MAX_US=10000
LOAD=0
OUT=bench-timer.json
MISURA="$REPO/target/release/misura"

while [ $# -gt 0 ]; do
    case "$1" in
        --duration) DURATION=$2; shift 2 ;;
        --interval-us) INTERVAL_US=$2; shift 2 ;;
        --prio) PRIO=$2; shift 2 ;;
        --cpu) CPU=$2; shift 2 ;;
        --max-us) MAX_US=$2; shift 2 ;;
        --load) LOAD=1; shift ;;
        --out) OUT=$2; shift 2 ;;
        --misura) MISURA=$2; shift 2 ;;
        -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
        *) echo "bench-timer: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

if [ "$(id -u)" -ne 0 ]; then
    echo "bench-timer: needs root (SCHED_FIFO, mlockall): sudo $0 $*" >&2
    exit 3
fi
if ! command -v cyclictest >/dev/null; then
    echo "+ apt-get install -y rt-tests"
    DEBIAN_FRONTEND=noninteractive apt-get install -y rt-tests >/dev/null
fi
if [ ! -x "$MISURA" ]; then
    echo "+ cargo build --release -p misura"
    (cd "$REPO" && cargo build --release -p misura)
fi
NCPU=$(nproc)
if [ "$CPU" -ge "$NCPU" ]; then
    echo "bench-timer: --cpu $CPU but only $NCPU CPU(s) online" >&2
    exit 2
fi

WORK=$(mktemp -d /tmp/misura-bench-timer.XXXXXX)
HOGS=()
cleanup() {
    for p in "${HOGS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

start_hogs() {
    for c in $(seq 0 $((NCPU - 1))); do
        taskset -c "$c" sh -c 'while :; do :; done' &
        HOGS+=($!)
    done
    sleep 0.5
}
stop_hogs() {
    for p in "${HOGS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    HOGS=()
}

run_pair() { # phase
    local phase=$1
    local ct=(cyclictest -m -q -D "${DURATION}s" -i "$INTERVAL_US" -p "$PRIO" -a "$CPU" -t 1 -h "$MAX_US")
    local mi=("$MISURA" clock timer --duration "${DURATION}s" --interval "${INTERVAL_US}us" --rt-priority "$PRIO" --cpu "$CPU" --json --quiet)
    echo "+ [$phase] ${ct[*]}"
    "${ct[@]}" >"$WORK/cyclictest-$phase.txt"
    echo "+ [$phase] ${mi[*]}"
    "${mi[@]}" >"$WORK/misura-$phase.json"
}

run_pair idle
PHASES=(idle)
if [ "$LOAD" = 1 ]; then
    echo "+ one busy loop per CPU (0..$((NCPU - 1)))"
    start_hogs
    run_pair loaded
    stop_hogs
    PHASES+=(loaded)
fi

python3 "$REPO/scripts/bench_timer_report.py" --dir "$WORK" --out "$OUT" \
    --duration "$DURATION" --interval-us "$INTERVAL_US" --prio "$PRIO" --cpu "$CPU" --max-us "$MAX_US" "${PHASES[@]}"
echo "raw outputs: $WORK"
