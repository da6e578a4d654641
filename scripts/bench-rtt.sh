#!/usr/bin/env bash
# Round-trip benchmark: misura rtt beside independent peer tools, idle and
# with the measuring host's CPUs loaded, side by side in one run.
#
#   sudo scripts/bench-rtt.sh [--count N] [--period-ms P] [--out FILE]
#                             [--cpu C] [--server-cpu S] [--hog-cpus LIST]
#                             [--misura PATH] [--rows all|pinned|phases]
#                             [--repeats R] [--prefix misura-NAME-]
#
# --rows pinned runs only the pinned rows below, --rows phases only the
# idle/loaded phases; all (the default) runs both.
#
# Pinned rows (misura's own cost, issue 10): misura rtt beside sockperf
# ping-pong with the same pinning, the same message size (44-byte UDP
# payload, STAMP's minimum) and 1000 round trips per second for N/1000 s:
#   same        client and server on CPU C (both ends share one CPU)
#   same-spin   same, misura rtt --busy-poll (the reflector sleeps): the
#               like-for-like row, since sockperf's client spins between
#               probes (it never sleeps; scripts/trace-rtt.sh shows it)
#   split       client on C, server on S
#   split-spin  split, misura rtt --busy-poll (the reflector sleeps)
#   busy        split, both ends spinning: misura rtt/reflect --busy-poll
#               beside sockperf --nonblocked on both ends
#   same-user, split-user
#               same / split, both misura ends --timestamps user: no kernel
#               stamps, as sockperf takes none (misura's default takes them:
#               they make the kernel and network RTT, and cost each end a
#               TX-stamp clone and a control message per datagram)
#   same-spin-user
#               same CPU, misura rtt --busy-poll, both misura ends
#               --timestamps user: sockperf's client as it runs (it keeps
#               its CPU busy between probes, 100 % of a CPU, and stamps with
#               the user clock only). On a VM a sleeping client pays a
#               timer interrupt before each probe (docs/own-cost.md).
# each --repeats times (default 3), misura and sockperf back to back in
# alternating order; the table gives the median of each figure and the
# median of the paired ratios misura/sockperf (user RTT p50), with misura's
# kernel RTT, reflector turnaround and network RTT beside it.
#
# Defaults: --count 500 round trips per tool and phase, --period-ms 10,
# --out bench-rtt.json, --cpu 1 (clients), --server-cpu: the other CPU (0),
# --hog-cpus: every online CPU, misura from target/release/misura.
#
# Builds its own lab (misura lab up --topology hosts --prefix misura-bench-,
# or --prefix's: namespaces misura-bench-h1 198.18.0.1 and misura-bench-h2 198.18.0.2, never
# the user's misura-* lab) and measures the round trip h1 -> h2 -> h1 with,
# one tool at a time, each server started just before its client and stopped
# after it:
#   1. ping -c N -i P       ICMP echo; RX stamp from the kernel (SO_TIMESTAMP)
#   2. ping -U -c N -i P    ICMP echo, user-to-user (gettimeofday both ends)
#   3. sockperf ping-pong   UDP, --mps 1000/P, --full-rtt --full-log (first N)
#   4. irtt client          UDP, -i P -d N*P, JSON (RTT minus server time)
#   5. misura rtt           STAMP over UDP to misura reflect: user, kernel and
#                           network RTT (kernel RTT minus the reflector's
#                           turnaround) per probe
# in two phases: "idle", then "loaded", where one CPU hog (stress-ng --cpu 1,
# or a shell busy loop without stress-ng) runs pinned to each CPU of
# --hog-cpus in the root namespace for the whole phase (seed 003 Fig. 6:
# misura's network RTT should stay flat while the user-level figures grow).
# Clients are pinned to --cpu (taskset; misura also gets --cpu), servers to
# --server-cpu. CPU time per CPU (/proc/stat, incl. steal) is recorded for
# each phase and around each client run (a client or server that spins
# shows up there).
#
# Prints every command it runs, then one table (min / median / p99 in us for
# each tool and figure, idle and loaded; each median / misura's network
# median; loaded / idle) and writes the numbers as JSON to --out. Raw outputs
# stay in a /tmp/misura-bench-rtt.* dir. If misura reflect or misura rtt does
# not work (e.g. "not built yet") the peer tools are still measured, misura's
# rows say why they are missing, and the exit status is 3.
#
# Needs root (namespaces). Installs iputils-ping, sockperf, irtt, stress-ng,
# iproute2, util-linux and python3 with apt-get when they are missing. Builds
# target/release/misura with cargo if it is not there. Servers, hogs and the
# lab are removed on exit, error or interrupt (misura lab down --prefix
# misura-bench-).
set -euo pipefail

NAME=bench-rtt
# shellcheck source=scripts/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
SOCKPERF_PORT=11111
IRTT_PORT=2112
STAMP_PORT=8620

COUNT=500
PERIOD_MS=10
OUT=bench-rtt.json
CPU=1
SERVER_CPU=""
HOG_CPUS=""
MISURA=""
ROWS=all
REPEATS=3

while (($#)); do
    case "$1" in
        --count) COUNT=${2:?--count needs a value}; shift 2 ;;
        --period-ms) PERIOD_MS=${2:?--period-ms needs a value}; shift 2 ;;
        --out) OUT=${2:?--out needs a value}; shift 2 ;;
        --cpu) CPU=${2:?--cpu needs a value}; shift 2 ;;
        --server-cpu) SERVER_CPU=${2:?--server-cpu needs a value}; shift 2 ;;
        --hog-cpus) HOG_CPUS=${2:?--hog-cpus needs a list, e.g. 0,1}; shift 2 ;;
        --misura) MISURA=${2:?--misura needs a path}; shift 2 ;;
        --rows) ROWS=${2:?--rows needs all, pinned or phases}; shift 2 ;;
        --repeats) REPEATS=${2:?--repeats needs a number}; shift 2 ;;
        --prefix) PREFIX=${2:?--prefix needs a value, e.g. misura-bench-}; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done

isnum "$COUNT" && ((COUNT > 0 && COUNT <= 100000)) || die "--count must be 1..100000"
isnum "$PERIOD_MS" && ((PERIOD_MS >= 2 && PERIOD_MS <= 1000)) || die "--period-ms must be 2..1000"
((COUNT * PERIOD_MS <= 3600000)) || die "--count x --period-ms must stay within one hour per tool"
isnum "$CPU" || die "--cpu must be a CPU number"
case "$ROWS" in all|pinned|phases) ;; *) die "--rows must be all, pinned or phases" ;; esac
isnum "$REPEATS" && ((REPEATS >= 1 && REPEATS <= 20)) || die "--repeats must be 1..20"
[[ "$PREFIX" =~ ^misura-[a-z0-9-]{1,16}$ ]] || die "--prefix must be misura- and 1..16 of a-z, 0-9, - (the lab's namespaces are PREFIXh1, PREFIXh2)"
H1_NS=${PREFIX}h1
H2_NS=${PREFIX}h2
[ "$(id -u)" = 0 ] || die "needs root (network namespaces): sudo $0 $*"
check_cpus
[ -n "$HOG_CPUS" ] || HOG_CPUS=$(seq -s, 0 $((NCPU - 1)))
IFS=, read -r -a HOGS <<<"$HOG_CPUS"
for c in "${HOGS[@]}"; do isnum "$c" && ((c < NCPU)) || die "--hog-cpus: $c is not an online CPU"; done
PERIOD_S=$(printf '%d.%03d' $((PERIOD_MS / 1000)) $((PERIOD_MS % 1000)))
MPS=$((1000 / PERIOD_MS))
SPAN_MS=$((COUNT * PERIOD_MS))
SPAN_S=$(((SPAN_MS + 999) / 1000))

# ---------------------------------------------------------------- packages
need=()
command -v ip >/dev/null || need+=(iproute2)
command -v ss >/dev/null || need+=(iproute2)
command -v ping >/dev/null || need+=(iputils-ping)
command -v sockperf >/dev/null || need+=(sockperf)
command -v irtt >/dev/null || need+=(irtt)
command -v stress-ng >/dev/null || need+=(stress-ng)
command -v python3 >/dev/null || need+=(python3)
command -v taskset >/dev/null || need+=(util-linux)
if ((${#need[@]})); then
    install_packages "${need[@]}" ||
        command -v stress-ng >/dev/null || warn "apt-get failed; CPU hogs fall back to shell busy loops"
fi
for t in ip ss ping sockperf irtt taskset python3; do
    command -v "$t" >/dev/null || die "$t is missing"
done
PY=$(command -v python3)

# ---------------------------------------------------------------- misura
find_misura

WORK=$(mktemp -d /tmp/misura-bench-rtt.XXXXXX)
CMDLOG=$WORK/commands.txt
: >"$CMDLOG"
BGPID=""        # the foreground client (run in the background for the traps)
SRVPID=""       # the server of the tool being measured
HOGPIDS=()      # CPU hogs of the loaded phase
MISURA_FAILED=0

stop_hogs() {
    local p
    ((${#HOGPIDS[@]})) || return 0
    for p in "${HOGPIDS[@]}"; do stop_pid "$p" TERM; done
    HOGPIDS=()
}
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    stop_pid "$BGPID" INT; BGPID=""
    stop_pid "$SRVPID" TERM; SRVPID=""
    stop_hogs
    echo "+ $MISURA lab down --prefix $PREFIX"
    "$MISURA" lab down --prefix "$PREFIX" >/dev/null 2>&1 || warn "lab down --prefix $PREFIX failed"
    exit "$rc"
}
trap_cleanup

# cpu_snapshot FILE: the per-CPU lines of /proc/stat (user nice system idle
# iowait irq softirq steal ...), to compute how busy each CPU was.
cpu_snapshot() { grep '^cpu[0-9]' /proc/stat >"$1"; }

{
    echo "count=$COUNT"; echo "period_ms=$PERIOD_MS"; echo "cpu=$CPU"; echo "server_cpu=$SERVER_CPU"
    echo "hog_cpus=$HOG_CPUS"; echo "ncpu=$NCPU"; echo "misura=$MISURA"; echo "prefix=$PREFIX"
    echo "h2_addr=$H2_ADDR"; echo "sockperf_mps=$MPS"; echo "sockperf_seconds=$((SPAN_S + 1))"
    echo "misura_version=$("$MISURA" --version 2>&1 | head -n1)"
    echo "ping_version=$(ping -V 2>&1 | head -n1)"
    echo "sockperf_version=$(sockperf --version 2>&1 | head -n1 | sed 's/^sockperf, //')"
    echo "irtt_version=$(irtt version 2>&1 | head -n1)"
    if command -v stress-ng >/dev/null; then
        echo "hog=stress-ng"; echo "stress_ng_version=$(stress-ng --version 2>&1 | head -n1)"
    else
        echo "hog=shell busy loop"
    fi
    host_params
    echo "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown)"
} >"$WORK/params.txt"

echo "== misura rtt benchmark: raw outputs in $WORK"

# ---------------------------------------------------------------- lab
lab_up_hosts

CLIENT_LIMIT=$((SPAN_S * 3 + 60))
SERVER_LIMIT=$((SPAN_S * 3 + 120))

# measure PHASE: every tool once, one after the other.
measure() {
    local ph=$1 d=$WORK/$1 rc
    mkdir -p "$d"

    echo "-- [$ph] 1. ping (kernel RX stamp)"
    cpu_snapshot "$d/ping_cpu_start.txt"
    run_ok "$CLIENT_LIMIT" "$d/ping.txt" \
        taskset -c "$CPU" ip netns exec "$H1_NS" ping -c "$COUNT" -i "$PERIOD_S" "$H2_ADDR"
    cpu_snapshot "$d/ping_cpu_end.txt"

    echo "-- [$ph] 2. ping -U (user to user)"
    cpu_snapshot "$d/ping_u_cpu_start.txt"
    run_ok "$CLIENT_LIMIT" "$d/ping_u.txt" \
        taskset -c "$CPU" ip netns exec "$H1_NS" ping -U -c "$COUNT" -i "$PERIOD_S" "$H2_ADDR"
    cpu_snapshot "$d/ping_u_cpu_end.txt"

    echo "-- [$ph] 3. sockperf ping-pong (UDP, user to user)"
    start_server "$SERVER_LIMIT" "$d/sockperf_server.txt" udp "$SOCKPERF_PORT" \
        taskset -c "$SERVER_CPU" ip netns exec "$H2_NS" sockperf server -i "$H2_ADDR" -p "$SOCKPERF_PORT" ||
        { cat "$d/sockperf_server.txt.err" >&2; die "sockperf server did not start"; }
    # sockperf runs for whole seconds and drops its warm-up: one second more
    # than N periods, the report keeps the first N round trips of the log.
    cpu_snapshot "$d/sockperf_cpu_start.txt"
    run_ok "$CLIENT_LIMIT" "$d/sockperf.txt" \
        taskset -c "$CPU" ip netns exec "$H1_NS" sockperf ping-pong -i "$H2_ADDR" -p "$SOCKPERF_PORT" \
        -t $((SPAN_S + 1)) --mps "$MPS" --full-rtt --full-log "$d/sockperf_log.csv"
    cpu_snapshot "$d/sockperf_cpu_end.txt"
    stop_server

    echo "-- [$ph] 4. irtt (UDP, RTT minus server processing time)"
    start_server "$SERVER_LIMIT" "$d/irtt_server.txt" udp "$IRTT_PORT" \
        taskset -c "$SERVER_CPU" ip netns exec "$H2_NS" irtt server -b "$H2_ADDR:$IRTT_PORT" ||
        { cat "$d/irtt_server.txt.err" >&2; die "irtt server did not start"; }
    cpu_snapshot "$d/irtt_cpu_start.txt"
    run_ok "$CLIENT_LIMIT" "$d/irtt.txt" \
        taskset -c "$CPU" ip netns exec "$H1_NS" irtt client -i "${PERIOD_MS}ms" -d "${SPAN_MS}ms" \
        -o "$d/irtt.json" "$H2_ADDR:$IRTT_PORT"
    cpu_snapshot "$d/irtt_cpu_end.txt"
    stop_server

    echo "-- [$ph] 5. misura rtt (STAMP to misura reflect)"
    if start_server "$SERVER_LIMIT" "$d/misura_reflect.json" udp "$STAMP_PORT" \
        taskset -c "$SERVER_CPU" "$MISURA" reflect --netns "$H2_NS" --listen "$H2_ADDR" \
        --port "$STAMP_PORT" --cpu "$SERVER_CPU" --json --no-store --duration "${SERVER_LIMIT}s"; then
        rc=0
        cpu_snapshot "$d/misura_cpu_start.txt"
        run "$CLIENT_LIMIT" "$d/misura_rtt.json" \
            taskset -c "$CPU" "$MISURA" rtt "$H2_ADDR:$STAMP_PORT" --netns "$H1_NS" --count "$COUNT" \
            --period "${PERIOD_MS}ms" --cpu "$CPU" --frames "$d/misura_probes.csv" --json -q --no-store || rc=$?
        cpu_snapshot "$d/misura_cpu_end.txt"
        echo "$rc" >"$d/misura_rtt.rc"
        if ((rc != 0)); then
            MISURA_FAILED=1
            warn "misura rtt failed with status $rc: $(head -c 400 "$d/misura_rtt.json.err")"
        fi
        stop_server
    else
        MISURA_FAILED=1
        echo "reflect" >"$d/misura_unavailable"
        warn "misura reflect did not start: $(head -c 400 "$d/misura_reflect.json.err")"
    fi
}

# ---------------------------------------------------------------- pinned rows
# pinned_pair ROW REP CCPU SCPU CLIENT_SPIN SERVER_SPIN [USER_TS]: sockperf and misura
# once each (order alternating with REP), same pinning, 1000 round trips
# per second. CLIENT_SPIN=1: misura rtt --busy-poll; SERVER_SPIN=1: misura
# reflect --busy-poll and sockperf --nonblocked on both ends; USER_TS=1:
# both misura ends --timestamps user.
PINNED_SECONDS=$(((COUNT + 999) / 1000))
pinned_pair() {
    local row=$1 rep=$2 c=$3 s=$4 cspin=$5 busy=$6 userts=${7:-0} d=$WORK/pinned/$1/$2 first second tool
    mkdir -p "$d"
    if ((rep % 2)); then first=misura; second=sockperf; else first=sockperf; second=misura; fi
    for tool in $first $second; do
        if [ "$tool" = sockperf ]; then
            local nb=()
            [ "$busy" = 1 ] && nb=(--nonblocked)
            start_server "$SERVER_LIMIT" "$d/sockperf_server.txt" udp "$SOCKPERF_PORT" \
                taskset -c "$s" ip netns exec "$H2_NS" sockperf server -i "$H2_ADDR" -p "$SOCKPERF_PORT" "${nb[@]}" ||
                { cat "$d/sockperf_server.txt.err" >&2; die "sockperf server did not start"; }
            cpu_snapshot "$d/sockperf_cpu_start.txt"
            run_ok "$CLIENT_LIMIT" "$d/sockperf.txt" \
                taskset -c "$c" ip netns exec "$H1_NS" sockperf ping-pong -i "$H2_ADDR" -p "$SOCKPERF_PORT" \
                -m 44 -t "$PINNED_SECONDS" --mps 1000 --full-rtt "${nb[@]}"
            cpu_snapshot "$d/sockperf_cpu_end.txt"
            stop_server
        else
            local bp=() cbp=()
            [ "$busy" = 1 ] && bp=(--busy-poll)
            [ "$cspin" = 1 ] && cbp=(--busy-poll)
            [ "$userts" = 1 ] && { bp+=(--timestamps user); cbp+=(--timestamps user); }
            if start_server "$SERVER_LIMIT" "$d/misura_reflect.json" udp "$STAMP_PORT" \
                taskset -c "$s" "$MISURA" reflect --netns "$H2_NS" --listen "$H2_ADDR" --port "$STAMP_PORT" \
                --cpu "$s" --json --no-store --duration "${SERVER_LIMIT}s" "${bp[@]}"; then
                cpu_snapshot "$d/misura_cpu_start.txt"
                run "$CLIENT_LIMIT" "$d/misura_rtt.json" \
                    taskset -c "$c" "$MISURA" rtt "$H2_ADDR:$STAMP_PORT" --netns "$H1_NS" --count "$COUNT" \
                    --period 1ms --cpu "$c" --json -q --no-store "${cbp[@]}" || { MISURA_FAILED=1; warn "misura rtt failed ($row $rep)"; }
                cpu_snapshot "$d/misura_cpu_end.txt"
                stop_server
            else
                MISURA_FAILED=1
                warn "misura reflect did not start ($row $rep): $(head -c 400 "$d/misura_reflect.json.err")"
            fi
        fi
    done
}
pinned_rows() {
    local rep
    echo "== pinned rows: $COUNT round trips at 1000/s per tool and repeat, $REPEATS repeats; client CPU $CPU, server CPU $SERVER_CPU"
    cpu_snapshot "$WORK/pinned_cpu_start.txt"
    for ((rep = 1; rep <= REPEATS; rep++)); do
        echo "-- [same] repeat $rep"; pinned_pair same "$rep" "$CPU" "$CPU" 0 0
        echo "-- [same-spin] repeat $rep"; pinned_pair same-spin "$rep" "$CPU" "$CPU" 1 0
        echo "-- [same-user] repeat $rep"; pinned_pair same-user "$rep" "$CPU" "$CPU" 0 0 1
        echo "-- [same-spin-user] repeat $rep"; pinned_pair same-spin-user "$rep" "$CPU" "$CPU" 1 0 1
        if ((CPU != SERVER_CPU)); then
            echo "-- [split] repeat $rep"; pinned_pair split "$rep" "$CPU" "$SERVER_CPU" 0 0
            echo "-- [split-spin] repeat $rep"; pinned_pair split-spin "$rep" "$CPU" "$SERVER_CPU" 1 0
            echo "-- [busy] repeat $rep"; pinned_pair busy "$rep" "$CPU" "$SERVER_CPU" 1 1
            echo "-- [split-user] repeat $rep"; pinned_pair split-user "$rep" "$CPU" "$SERVER_CPU" 0 0 1
        fi
    done
    cpu_snapshot "$WORK/pinned_cpu_end.txt"
}
if [ "$ROWS" != phases ]; then
    pinned_rows
    echo
    "$PY" "$REPO/scripts/bench_rtt_pinned.py" --work "$WORK" --out "${OUT%.json}-pinned.json"
    if [ "$ROWS" = pinned ]; then
        ((MISURA_FAILED)) && exit 3
        exit 0
    fi
fi

# ---------------------------------------------------------------- idle
echo "== phase idle: $COUNT round trips every ${PERIOD_MS} ms per tool, clients on CPU $CPU, servers on CPU $SERVER_CPU"
cpu_snapshot "$WORK/idle_cpu_start.txt"
measure idle
cpu_snapshot "$WORK/idle_cpu_end.txt"

# ---------------------------------------------------------------- loaded
echo "== phase loaded: one CPU hog on each of CPUs $HOG_CPUS (root namespace) for the whole phase"
HOG_LIMIT=$((CLIENT_LIMIT * 5 + SERVER_LIMIT))
for c in "${HOGS[@]}"; do
    if command -v stress-ng >/dev/null; then
        hog=(taskset -c "$c" stress-ng --cpu 1 --cpu-load 100 --timeout "${HOG_LIMIT}s" --quiet)
    else
        hog=(taskset -c "$c" sh -c 'while :; do :; done')
    fi
    q=$(log_cmd "${hog[@]}")
    echo "+ $q &   [CPU hog, time limit ${HOG_LIMIT}s]"
    timeout -k 5 "$HOG_LIMIT" "${hog[@]}" >"$WORK/hog_$c.txt" 2>&1 &
    HOGPIDS+=($!)
done
sleep 2   # let the hogs spin up
for p in "${HOGPIDS[@]}"; do kill -0 "$p" 2>/dev/null || die "a CPU hog exited early (see $WORK/hog_*.txt)"; done
cpu_snapshot "$WORK/loaded_cpu_start.txt"
measure loaded
cpu_snapshot "$WORK/loaded_cpu_end.txt"
alive=0
for p in "${HOGPIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
echo "hogs_alive_at_end=$alive" >>"$WORK/params.txt"
echo "+ kill -TERM ${HOGPIDS[*]}   [stop CPU hogs]"
stop_hogs

# ---------------------------------------------------------------- report
report bench_rtt_report.py
if ((MISURA_FAILED)); then
    warn "misura could not be measured in every phase (see the table); exit status 3"
    exit 3
fi
