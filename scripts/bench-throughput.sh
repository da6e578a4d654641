#!/usr/bin/env bash
# Throughput and request/response benchmark: misura tcp, udp and rr beside
# independent peer tools (iperf3, nuttcp, qperf, sockperf) on the same
# virtual lab, in one run (issue 5, "Measure and report").
#
#   sudo scripts/bench-throughput.sh [--duration S] [--repeat R] [--udp-rate RATE]
#                                    [--out FILE] [--cpu C] [--server-cpu S]
#                                    [--misura PATH] [--rows all|pinned]
#
# Defaults: --duration 5 seconds per run, --repeat 3 (every run of every
# tool is repeated R times, interleaved: the table shows the median over the
# repeats and their min..max), --udp-rate 1G, --out bench-throughput.json,
# --cpu 1 (clients), --server-cpu: the other CPU (0), misura from
# target/release/misura.
#
# Builds its own lab (misura lab up --topology hosts --prefix misura-bench-:
# namespaces misura-bench-h1 198.18.0.1 and misura-bench-h2 198.18.0.2, never
# the user's misura-* lab). Servers run in h2 pinned to --server-cpu, clients
# in h1 pinned to --cpu (taskset); each server is started just before its
# client and stopped after it. Tests, in every repeat:
#   tcp1, tcp4  TCP, 1 and 4 streams, S seconds, h1 -> h2:
#                 misura tcp --streams N (receiver-measured throughput_bps)
#                 iperf3 -c -P N -J (sum_received)
#                 nuttcp -T S -N N -fparse (server nuttcp -S --nofork)
#   udp         UDP at RATE, 1472-byte payloads (misura's default; iperf3 is
#               given -l 1472 to match): received rate, loss, RFC 3550 jitter:
#                 misura udp --rate RATE
#                 iperf3 -u -b RATE -l 1472 -J
#   rr_udp,     request/response, one transaction in flight, smallest
#   rr_tcp      message each tool allows (1 byte asked for everywhere):
#                 misura rr --proto udp|tcp --request 1 --response 1 (if misura
#                   refuses the size, it is rerun with the smallest it accepts,
#                   16 bytes for UDP, and the report says so)
#                 qperf udp_lat / tcp_lat (1 byte; qperf prints the ONE-WAY
#                   latency = round trip / 2, so transactions/s = 1 / (2 x it);
#                   -vvs also gives its message counts, the measured rate)
#                 sockperf ping-pong -m 14 [--tcp] (its minimum message size is
#                   14 bytes; --full-rtt so that its latencies are round trips;
#                   its rate = received messages / valid duration)
#   pinned rows (issue 10), misura beside iperf3 only, run as pairs (the two
#   back to back with the same pinning, their order alternating from repeat
#   to repeat), each client's CPU time from getrusage of the child
#   (scripts/bench_rusage.py; user + system per second of test):
#   tcp1_same, tcp4_same    TCP 1 / 4 streams, client AND server on --cpu
#   tcp1_split, tcp4_split  TCP 1 / 4 streams, client on --cpu, server on
#                           --server-cpu
#   tcp1r_same, tcp1r_split TCP 1 stream reverse (the server sends, the client
#                           reads: misura tcp --reverse, iperf3 -R), pinned
#                           as the rows above
#   udp_split   misura udp --rate RATE vs iperf3 -u -b RATE (1472-byte
#               payloads both), client on --cpu, server on --server-cpu:
#               received rate, loss, jitter and client CPU side by side,
#               and the arrival spacing both streams have at the server's
#               kernel (scripts/udp_spacing.py: gap standard deviation and
#               an RFC 3550-style jitter, computed the same way for both)
#   The table gives, per row, the median of the paired ratios misura/iperf3
#   (throughput for TCP, client CPU per second for UDP).
#   --rows pinned runs only these rows (the default, all, runs every row).
# CPU time per CPU and context switches (/proc/stat) are recorded around each
# client run, beside the CPU figures the tools report themselves.
#
# Prints every command it runs, then one table (test, tool, figure: Gbit/s or
# transactions/s with the round-trip latency in us; misura / best peer) and
# notes, and writes the numbers as JSON to --out. Raw outputs stay in a
# /tmp/misura-bench-throughput.* dir. A run that fails is recorded and the
# others go on; exit status 3 if any misura run failed, 4 if only peer runs
# failed.
#
# Needs root (namespaces). Installs iperf3, nuttcp, qperf, sockperf,
# iproute2, util-linux and python3 with apt-get when they are missing. Builds
# target/release/misura with cargo if it is not there. Servers and the lab are
# removed on exit, error or interrupt (misura lab down --prefix misura-bench-).
set -euo pipefail

NAME=bench-throughput
# shellcheck source=scripts/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"
H1_NS=${PREFIX}h1
H2_NS=${PREFIX}h2
MISURA_PORT=5862
IPERF_PORT=5201
NUTTCP_PORT=5000
QPERF_PORT=19765
SOCKPERF_PORT=11111
UDP_MSG=1472
SOCKPERF_MSG=14

DURATION=5
REPEAT=3
UDP_RATE=1G
OUT=bench-throughput.json
CPU=1
SERVER_CPU=""
MISURA=""
ROWS=all

while (($#)); do
    case "$1" in
        --duration) DURATION=${2:?--duration needs a value}; shift 2 ;;
        --repeat) REPEAT=${2:?--repeat needs a value}; shift 2 ;;
        --udp-rate) UDP_RATE=${2:?--udp-rate needs a value}; shift 2 ;;
        --out) OUT=${2:?--out needs a value}; shift 2 ;;
        --cpu) CPU=${2:?--cpu needs a value}; shift 2 ;;
        --server-cpu) SERVER_CPU=${2:?--server-cpu needs a value}; shift 2 ;;
        --misura) MISURA=${2:?--misura needs a path}; shift 2 ;;
        --rows) ROWS=${2:?--rows needs all or pinned}; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done

isnum "$DURATION" && ((DURATION >= 1 && DURATION <= 60)) || die "--duration must be 1..60 seconds"
isnum "$REPEAT" && ((REPEAT >= 1 && REPEAT <= 10)) || die "--repeat must be 1..10"
[[ "$UDP_RATE" =~ ^[0-9]+(\.[0-9]+)?[KMG]?$ ]] || die "--udp-rate must look like 1G, 500M, 100000"
isnum "$CPU" || die "--cpu must be a CPU number"
[[ "$ROWS" = all || "$ROWS" = pinned ]] || die "--rows must be all or pinned"
[ "$(id -u)" = 0 ] || die "needs root (network namespaces): sudo $0 $*"
check_cpus
((SERVER_CPU != CPU)) || warn "clients and servers share CPU $CPU: every figure includes their contention"

# ---------------------------------------------------------------- packages
need=()
command -v ip >/dev/null || need+=(iproute2)
command -v ss >/dev/null || need+=(iproute2)
command -v iperf3 >/dev/null || need+=(iperf3)
command -v nuttcp >/dev/null || need+=(nuttcp)
command -v qperf >/dev/null || need+=(qperf)
command -v sockperf >/dev/null || need+=(sockperf)
command -v python3 >/dev/null || need+=(python3)
command -v taskset >/dev/null || need+=(util-linux)
command -v timeout >/dev/null || need+=(coreutils)
if ((${#need[@]})); then
    install_packages "${need[@]}" || warn "apt-get install failed"
fi
for t in ip ss iperf3 nuttcp qperf sockperf taskset timeout python3; do
    command -v "$t" >/dev/null || die "$t is missing"
done
PY=$(command -v python3)

# ---------------------------------------------------------------- misura
find_misura
for sub in serve tcp udp rr; do
    "$MISURA" "$sub" --help >/dev/null 2>&1 ||
        die "$MISURA has no '$sub' subcommand (an old build? run cargo build --release)"
done

WORK=$(mktemp -d /tmp/misura-bench-throughput.XXXXXX)
CMDLOG=$WORK/commands.txt
RUNS=$WORK/runs.tsv
: >"$CMDLOG"
printf 'rep\ttest\ttool\trc\tfile\tnote\n' >"$RUNS"
BGPID=""        # the foreground client (run in the background for the traps)
SRVPID=""       # the server of the tool being measured
MISURA_FAILED=0
PEER_FAILED=0

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    stop_pid "$BGPID" INT; BGPID=""
    stop_pid "$SRVPID" TERM; SRVPID=""
    echo "+ $MISURA lab down --prefix $PREFIX"
    timeout 60 "$MISURA" lab down --prefix "$PREFIX" >/dev/null 2>&1 || warn "lab down --prefix $PREFIX failed"
    exit "$rc"
}
trap_cleanup

# cpu_snapshot FILE: the time, the per-CPU lines of /proc/stat (tick-sampled
# on most kernels) and the system-wide context-switch count.
cpu_snapshot() { { echo "time $(date +%s.%N)"; grep -E '^(cpu[0-9]|ctxt )' /proc/stat; } >"$1"; }

CLIENT_LIMIT=$((DURATION * 3 + 30))
SERVER_LIMIT=$((CLIENT_LIMIT + 30))

{
    echo "duration_s=$DURATION"; echo "repeat=$REPEAT"; echo "udp_rate=$UDP_RATE"; echo "udp_msg=$UDP_MSG"
    echo "sockperf_msg=$SOCKPERF_MSG"; echo "cpu=$CPU"; echo "server_cpu=$SERVER_CPU"; echo "ncpu=$NCPU"
    echo "misura=$MISURA"; echo "prefix=$PREFIX"; echo "h2_addr=$H2_ADDR"; echo "rows=$ROWS"
    echo "misura_version=$("$MISURA" --version 2>&1 | head -n1)"
    echo "iperf3_version=$(iperf3 --version 2>&1 | head -n1)"
    echo "nuttcp_version=$(nuttcp -V 2>&1 | head -n1)"
    echo "qperf_version=$(qperf --version 2>&1 | head -n1)"
    echo "sockperf_version=$(sockperf --version 2>&1 | head -n1 | sed 's/^sockperf, //')"
    host_params
    echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "tcp_congestion=$(cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null || echo unknown)"
    echo "netdev_max_backlog=$(cat /proc/sys/net/core/netdev_max_backlog 2>/dev/null || echo unknown)"
    echo "rmem_max=$(cat /proc/sys/net/core/rmem_max 2>/dev/null || echo unknown)"
    echo "wmem_max=$(cat /proc/sys/net/core/wmem_max 2>/dev/null || echo unknown)"
} >"$WORK/params.txt"

echo "== misura throughput / request-response benchmark: raw outputs in $WORK"

# ---------------------------------------------------------------- lab
lab_up_hosts
ip netns exec "$H1_NS" ip -o link show >"$WORK/h1_links.txt" 2>&1 || true
ip netns exec "$H1_NS" ethtool -k m0 >"$WORK/h1_m0_offloads.txt" 2>&1 || true

C1=(taskset -c "$CPU")
S0=(taskset -c "$SERVER_CPU")
IN_H1=(ip netns exec "$H1_NS")
IN_H2=(ip netns exec "$H2_NS")

# record REP TEST TOOL RC FILE [NOTE]
record() { printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "${6:-}" >>"$RUNS"; }

# client REP TEST TOOL FILE CMD...: one measured client run with CPU snapshots.
client() {
    local rep=$1 test=$2 tool=$3 out=$4; shift 4
    local rc=0
    cpu_snapshot "$out.cpu_start"
    run "$CLIENT_LIMIT" "$out" "$@" || rc=$?
    cpu_snapshot "$out.cpu_end"
    if ((rc != 0)); then
        warn "$tool ($test, repeat $rep) failed with status $rc: $(head -c 300 "$out.err" | tr '\n' ' ')"
        if [ "$tool" = misura ]; then MISURA_FAILED=1; else PEER_FAILED=1; fi
    fi
    return "$rc"
}
# server_or_fail REP TEST TOOL FILE tcp|udp PORT CMD...
server_or_fail() {
    local rep=$1 test=$2 tool=$3 out=$4; shift 4
    if start_server "$SERVER_LIMIT" "$out" "$@"; then return 0; fi
    warn "$tool server ($test, repeat $rep) did not start: $(head -c 300 "$out.err" | tr '\n' ' ')"
    record "$rep" "$test" "$tool" server "$out"
    if [ "$tool" = misura ]; then MISURA_FAILED=1; else PEER_FAILED=1; fi
    return 1
}
misura_server() {
    server_or_fail "$1" "$2" misura "$3" tcp "$MISURA_PORT" "${S0[@]}" "$MISURA" serve --netns "$H2_NS" \
        --listen "$H2_ADDR" --port "$MISURA_PORT" --max-rate 100G --quiet --no-store
}

# ---------------------------------------------------------------- tools
# Each runs one tool for one test in repeat REP; outputs in $WORK/rREP/.
tool_tcp_misura() {  # rep test streams
    local d=$WORK/r$1 o rc=0
    o=$d/$2_misura.json
    misura_server "$1" "$2" "$d/$2_misura_server.txt" || return 0
    client "$1" "$2" misura "$o" "${C1[@]}" "$MISURA" tcp "$H2_ADDR" --netns "$H1_NS" --streams "$3" \
        --duration "${DURATION}s" --json --no-store -q || rc=$?
    stop_server
    record "$1" "$2" misura "$rc" "$o"
}
tool_tcp_iperf3() {
    local d=$WORK/r$1 o rc=0
    o=$d/$2_iperf3.json
    server_or_fail "$1" "$2" iperf3 "$d/$2_iperf3_server.txt" tcp "$IPERF_PORT" \
        "${S0[@]}" "${IN_H2[@]}" iperf3 -s -B "$H2_ADDR" -p "$IPERF_PORT" || return 0
    client "$1" "$2" iperf3 "$o" "${C1[@]}" "${IN_H1[@]}" iperf3 -c "$H2_ADDR" -p "$IPERF_PORT" \
        -t "$DURATION" -P "$3" -J || rc=$?
    stop_server
    record "$1" "$2" iperf3 "$rc" "$o"
}
tool_tcp_nuttcp() {
    local d=$WORK/r$1 o rc=0
    o=$d/$2_nuttcp.txt
    server_or_fail "$1" "$2" nuttcp "$d/$2_nuttcp_server.txt" tcp "$NUTTCP_PORT" \
        "${S0[@]}" "${IN_H2[@]}" nuttcp -S --nofork -P "$NUTTCP_PORT" || return 0
    client "$1" "$2" nuttcp "$o" "${C1[@]}" "${IN_H1[@]}" nuttcp -P "$NUTTCP_PORT" -fparse \
        -T "$DURATION" -N "$3" "$H2_ADDR" || rc=$?
    stop_server
    record "$1" "$2" nuttcp "$rc" "$o"
}
tool_udp_misura() {
    local d=$WORK/r$1 o rc=0
    o=$d/udp_misura.json
    misura_server "$1" udp "$d/udp_misura_server.txt" || return 0
    client "$1" udp misura "$o" "${C1[@]}" "$MISURA" udp "$H2_ADDR" --netns "$H1_NS" --rate "$UDP_RATE" \
        --msg-size "$UDP_MSG" --duration "${DURATION}s" --json --no-store -q || rc=$?
    stop_server
    record "$1" udp misura "$rc" "$o"
}
tool_udp_iperf3() {
    local d=$WORK/r$1 o rc=0
    o=$d/udp_iperf3.json
    server_or_fail "$1" udp iperf3 "$d/udp_iperf3_server.txt" tcp "$IPERF_PORT" \
        "${S0[@]}" "${IN_H2[@]}" iperf3 -s -B "$H2_ADDR" -p "$IPERF_PORT" || return 0
    client "$1" udp iperf3 "$o" "${C1[@]}" "${IN_H1[@]}" iperf3 -c "$H2_ADDR" -p "$IPERF_PORT" -u \
        -b "$UDP_RATE" -l "$UDP_MSG" -t "$DURATION" -J || rc=$?
    stop_server
    record "$1" udp iperf3 "$rc" "$o"
}
tool_rr_misura() {  # rep test proto
    local d=$WORK/r$1 o rc=0 size=1 note="request 1 B, response 1 B" failed_before=$MISURA_FAILED
    o=$d/$2_misura.json
    misura_server "$1" "$2" "$d/$2_misura_server.txt" || return 0
    client "$1" "$2" misura "$o" "${C1[@]}" "$MISURA" rr "$H2_ADDR" --netns "$H1_NS" --proto "$3" \
        --request "$size" --response "$size" --duration "${DURATION}s" --json --no-store -q || rc=$?
    if ((rc == 5)) && grep -q 'out of range' "$o.err"; then
        # misura refuses 1-byte UDP transactions (its datagrams carry a 16-byte
        # test id + transaction number): rerun with the smallest it accepts.
        size=$(sed -n 's/.*out of range (\([0-9]*\) .*/\1/p' "$o.err" | head -n1)
        isnum "$size" || size=16
        note="request/response ${size} B (misura refused 1 B: $(head -n1 "$o.err"))"
        echo "misura refused 1-byte $3 transactions; rerunning with $size bytes"
        mv "$o.err" "$o.refused.err"
        rc=0
        MISURA_FAILED=$failed_before   # the refusal itself is reported, not counted as a failure
        client "$1" "$2" misura "$o" "${C1[@]}" "$MISURA" rr "$H2_ADDR" --netns "$H1_NS" --proto "$3" \
            --request "$size" --response "$size" --duration "${DURATION}s" --json --no-store -q || rc=$?
    fi
    stop_server
    record "$1" "$2" misura "$rc" "$o" "$note"
}
tool_rr_qperf() {
    local d=$WORK/r$1 o rc=0 test=udp_lat
    [ "$3" = tcp ] && test=tcp_lat
    o=$d/$2_qperf.txt
    server_or_fail "$1" "$2" qperf "$d/$2_qperf_server.txt" tcp "$QPERF_PORT" \
        "${S0[@]}" "${IN_H2[@]}" qperf --listen_port "$QPERF_PORT" || return 0
    client "$1" "$2" qperf "$o" "${C1[@]}" "${IN_H1[@]}" qperf "$H2_ADDR" --listen_port "$QPERF_PORT" \
        -t "$DURATION" -m 1 -vvs -vvu -vvt "$test" || rc=$?
    stop_server
    record "$1" "$2" qperf "$rc" "$o" "msg_size 1 B"
}
tool_rr_sockperf() {
    local d=$WORK/r$1 o rc=0 tcp=() proto=udp
    [ "$3" = tcp ] && { tcp=(--tcp); proto=tcp; }
    o=$d/$2_sockperf.txt
    server_or_fail "$1" "$2" sockperf "$d/$2_sockperf_server.txt" "$proto" "$SOCKPERF_PORT" \
        "${S0[@]}" "${IN_H2[@]}" sockperf sr -i "$H2_ADDR" -p "$SOCKPERF_PORT" "${tcp[@]}" || return 0
    client "$1" "$2" sockperf "$o" "${C1[@]}" "${IN_H1[@]}" sockperf pp -i "$H2_ADDR" -p "$SOCKPERF_PORT" \
        "${tcp[@]}" -t "$DURATION" -m "$SOCKPERF_MSG" --full-rtt || rc=$?
    stop_server
    record "$1" "$2" sockperf "$rc" "$o" "msg_size ${SOCKPERF_MSG} B (sockperf's minimum)"
}

# ---- pinned rows: misura and iperf3 with the same pinning, run as pairs.
RUSAGE=("$PY" "$REPO/scripts/bench_rusage.py")
# pinned_tcp_misura REP TEST STREAMS CLIENT_CPU SERVER_CPU [reverse]
pinned_tcp_misura() {
    local d=$WORK/r$1 o rc=0 dir=()
    [ "${6:-}" = reverse ] && dir=(--reverse)
    o=$d/$2_misura.json
    server_or_fail "$1" "$2" misura "$d/$2_misura_server.txt" tcp "$MISURA_PORT" taskset -c "$5" \
        "$MISURA" serve --netns "$H2_NS" --listen "$H2_ADDR" --port "$MISURA_PORT" --max-rate 100G \
        --quiet --no-store || return 0
    client "$1" "$2" misura "$o" "${RUSAGE[@]}" "$o.rusage" -- taskset -c "$4" "$MISURA" tcp "$H2_ADDR" \
        --netns "$H1_NS" --streams "$3" --duration "${DURATION}s" "${dir[@]}" --json --no-store -q || rc=$?
    stop_server
    record "$1" "$2" misura "$rc" "$o"
}
pinned_tcp_iperf3() {
    local d=$WORK/r$1 o rc=0 dir=()
    [ "${6:-}" = reverse ] && dir=(-R)
    o=$d/$2_iperf3.json
    server_or_fail "$1" "$2" iperf3 "$d/$2_iperf3_server.txt" tcp "$IPERF_PORT" \
        taskset -c "$5" "${IN_H2[@]}" iperf3 -s -B "$H2_ADDR" -p "$IPERF_PORT" || return 0
    client "$1" "$2" iperf3 "$o" "${RUSAGE[@]}" "$o.rusage" -- taskset -c "$4" "${IN_H1[@]}" iperf3 \
        -c "$H2_ADDR" -p "$IPERF_PORT" -t "$DURATION" -P "$3" "${dir[@]}" -J || rc=$?
    stop_server
    record "$1" "$2" iperf3 "$rc" "$o"
}
# spacing_start FILE CPU: the arrival spacing of full-size UDP datagrams at
# the server's kernel (scripts/udp_spacing.py in h2, on CPU, for the middle
# of the run: 1 s skipped, then up to 2 s) into FILE.spacing; the same
# yardstick for both tools, whose own jitter figures are computed their own
# ways. spacing_end waits for it.
SPACING_PID=
spacing_start() {
    local secs=$((DURATION > 3 ? 2 : 1))
    "${IN_H2[@]}" taskset -c "$2" "$PY" "$REPO/scripts/udp_spacing.py" --port 0 --skip 1 \
        --seconds "$secs" --out "$1.spacing" >/dev/null 2>"$1.spacing.err" &
    SPACING_PID=$!
}
spacing_end() {
    [ -n "$SPACING_PID" ] && { wait "$SPACING_PID" 2>/dev/null || true; }
    SPACING_PID=
}
# pinned_udp_misura REP TEST CLIENT_CPU SERVER_CPU
pinned_udp_misura() {
    local d=$WORK/r$1 o rc=0
    o=$d/$2_misura.json
    server_or_fail "$1" "$2" misura "$d/$2_misura_server.txt" tcp "$MISURA_PORT" taskset -c "$4" \
        "$MISURA" serve --netns "$H2_NS" --listen "$H2_ADDR" --port "$MISURA_PORT" --max-rate 100G \
        --quiet --no-store || return 0
    spacing_start "$o" "$4"
    client "$1" "$2" misura "$o" "${RUSAGE[@]}" "$o.rusage" -- taskset -c "$3" "$MISURA" udp "$H2_ADDR" \
        --netns "$H1_NS" --rate "$UDP_RATE" --msg-size "$UDP_MSG" --duration "${DURATION}s" --json \
        --no-store -q || rc=$?
    spacing_end
    stop_server
    record "$1" "$2" misura "$rc" "$o"
}
pinned_udp_iperf3() {
    local d=$WORK/r$1 o rc=0
    o=$d/$2_iperf3.json
    server_or_fail "$1" "$2" iperf3 "$d/$2_iperf3_server.txt" tcp "$IPERF_PORT" \
        taskset -c "$4" "${IN_H2[@]}" iperf3 -s -B "$H2_ADDR" -p "$IPERF_PORT" || return 0
    spacing_start "$o" "$4"
    client "$1" "$2" iperf3 "$o" "${RUSAGE[@]}" "$o.rusage" -- taskset -c "$3" "${IN_H1[@]}" iperf3 \
        -c "$H2_ADDR" -p "$IPERF_PORT" -u -b "$UDP_RATE" -l "$UDP_MSG" -t "$DURATION" -J || rc=$?
    spacing_end
    stop_server
    record "$1" "$2" iperf3 "$rc" "$o"
}
# pinned_rows REP: every pinned row once, each a pair in alternating order.
pinned_rows() {
    local rep=$1 off=$(($1 - 1)) s where t
    for where in same split; do
        local scpu=$SERVER_CPU
        [ "$where" = same ] && scpu=$CPU
        for s in 1 4; do
            echo "-- [repeat $rep/$REPEAT] tcp${s}_$where: TCP, $s stream(s), client CPU $CPU, server CPU $scpu"
            for t in $(rotate "$off" misura iperf3); do "pinned_tcp_$t" "$rep" "tcp${s}_$where" "$s" "$CPU" "$scpu"; done
        done
        echo "-- [repeat $rep/$REPEAT] tcp1r_$where: TCP reverse (the server sends), 1 stream, client CPU $CPU, server CPU $scpu"
        for t in $(rotate "$off" misura iperf3); do "pinned_tcp_$t" "$rep" "tcp1r_$where" 1 "$CPU" "$scpu" reverse; done
    done
    echo "-- [repeat $rep/$REPEAT] udp_split: UDP at $UDP_RATE, client CPU $CPU, server CPU $SERVER_CPU"
    for t in $(rotate "$off" misura iperf3); do "pinned_udp_$t" "$rep" udp_split "$CPU" "$SERVER_CPU"; done
}

# rotate N LIST...: print LIST rotated left by N (the tools' order changes
# from repeat to repeat so that none is always first or last).
rotate() {
    local n=$1; shift
    local a=("$@") k i
    k=${#a[@]}
    for ((i = 0; i < k; i++)); do echo "${a[$(((i + n) % k))]}"; done
}

# ---------------------------------------------------------------- measure
echo "== $REPEAT repeat(s) of: pinned pairs tcp1/tcp4/tcp1r (reverse) same/split, udp_split (misura/iperf3)"
[ "$ROWS" = pinned ] || echo "   and tcp1, tcp4 (misura/iperf3/nuttcp), udp $UDP_RATE (misura/iperf3),"
echo "   rr_udp, rr_tcp (misura/qperf/sockperf); ${DURATION} s per run, clients on CPU $CPU, servers on CPU $SERVER_CPU"
# quiet_probe NAME: how busy the CPUs are for 1 s with nothing of ours
# running (other work on this machine shows up here and in the report).
quiet_probe() {
    cpu_snapshot "$WORK/quiet_$1.start"; sleep 1; cpu_snapshot "$WORK/quiet_$1.end"
    echo "$1" >>"$WORK/quiet_probes.txt"
}
: >"$WORK/quiet_probes.txt"
quiet_probe before
for ((rep = 1; rep <= REPEAT; rep++)); do
    mkdir -p "$WORK/r$rep"
    off=$((rep - 1))
    pinned_rows "$rep"
    if [ "$ROWS" = pinned ]; then quiet_probe "after_r$rep"; continue; fi
    for s in 1 4; do
        echo "-- [repeat $rep/$REPEAT] tcp$s: TCP, $s stream(s), ${DURATION} s"
        for t in $(rotate "$off" misura iperf3 nuttcp); do "tool_tcp_$t" "$rep" "tcp$s" "$s"; done
    done
    echo "-- [repeat $rep/$REPEAT] udp: UDP at $UDP_RATE, ${UDP_MSG}-byte payloads, ${DURATION} s"
    for t in $(rotate "$off" misura iperf3); do "tool_udp_$t" "$rep"; done
    for p in udp tcp; do
        echo "-- [repeat $rep/$REPEAT] rr_$p: $p request/response, 1 in flight, ${DURATION} s"
        for t in $(rotate "$off" misura qperf sockperf); do "tool_rr_$t" "$rep" "rr_$p" "$p"; done
    done
    quiet_probe "after_r$rep"
done

# ---------------------------------------------------------------- report
report bench_throughput_report.py
if ((MISURA_FAILED)); then
    warn "some misura runs failed (see the table); exit status 3"
    exit 3
fi
if ((PEER_FAILED)); then
    warn "some peer-tool runs failed (see the table); exit status 4"
    exit 4
fi
