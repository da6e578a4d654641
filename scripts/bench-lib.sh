# What the benchmark scripts share (scripts/bench-oneway.sh, bench-rtt.sh,
# bench-throughput.sh), sourced after each has set NAME (the name its
# messages start with):
#
#   REPO                      the checkout (the script's parent folder's parent)
#   PREFIX, H2_ADDR           the lab's namespace prefix and h2's address
#   usage                     the script's leading comment, as --help prints it
#   die MSG / warn MSG        "NAME: error: MSG" (exit 1) / "NAME: warning: MSG"
#   isnum S                   S is a whole number
#   check_cpus                NCPU; CPU, and SERVER_CPU (default: another), online
#   install_packages PKG...   apt-get update and install, bounded in time
#   find_misura               MISURA, or target/release/misura, built with
#                             cargo (as the sudo user) when it is not there
#   stop_pid PID SIG          SIG, then at most 10 s, then KILL to its group
#   trap_cleanup              cleanup (the script's) on exit, interrupt, TERM
#   log_cmd / run / run_ok    commands printed, logged to CMDLOG, run under a
#                             time limit in the background (BGPID)
#   start_server / stop_server  a server in H2_NS, waited for (SRVPID)
#   host_params               key=value lines of the host's facts (params.txt)
#   lab_up_hosts              the hosts topology up, its status kept, ARP warm
#   report SCRIPT.py          the table and the JSON (OUT) from WORK
# Not run on its own.

REPO="$(cd "$(dirname "$0")/.." && pwd)"
PREFIX=misura-bench-  # never the user's misura-* lab
H2_ADDR=198.18.0.2

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
die() { echo "$NAME: error: $*" >&2; exit 1; }
warn() { echo "$NAME: warning: $*" >&2; }
isnum() { [[ "$1" =~ ^[0-9]+$ ]]; }

# check_cpus: NCPU, the CPUs online; CPU (the clients') must be one of them,
# and SERVER_CPU too, by default the other one of the first two (or CPU on
# a one-CPU host).
check_cpus() {
    NCPU=$(nproc)
    ((CPU < NCPU)) || die "--cpu $CPU: only $NCPU CPUs online"
    if [ -z "$SERVER_CPU" ]; then
        if ((NCPU > 1)); then SERVER_CPU=$((CPU == 0 ? 1 : 0)); else SERVER_CPU=$CPU; fi
    fi
    isnum "$SERVER_CPU" && ((SERVER_CPU < NCPU)) || die "--server-cpu must be an online CPU number"
}

# install_packages PKG...: apt-get update and install them (5 and 10 minutes
# at most), without what they only recommend (netsniff-ng recommends a time
# daemon, and Debian's ntpsec would replace chrony); the status of the
# install, for the caller to judge.
install_packages() {
    command -v apt-get >/dev/null || die "missing packages: $* (and no apt-get to install them)"
    echo "+ apt-get update -qq && apt-get install -y -qq --no-install-recommends $*"
    DEBIAN_FRONTEND=noninteractive timeout 300 apt-get update -qq || warn "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq --no-install-recommends "$@"
}

# find_misura: MISURA as given (--misura), else target/release/misura, built
# with cargo (as SUDO_USER when run through sudo) if it is not there yet.
find_misura() {
    if [ -z "$MISURA" ]; then
        MISURA="$REPO/target/release/misura"
        if [ ! -x "$MISURA" ]; then
            local cargo_bin="" c
            for c in "$(command -v cargo || true)" \
                     ${SUDO_USER:+"$(getent passwd "$SUDO_USER" | cut -d: -f6)/.cargo/bin/cargo"} \
                     "$HOME/.cargo/bin/cargo"; do
                if [ -n "$c" ] && [ -x "$c" ]; then cargo_bin=$c; break; fi
            done
            [ -n "$cargo_bin" ] || die "$MISURA is missing and cargo was not found: run cargo build --release first"
            if [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ] && command -v runuser >/dev/null; then
                echo "+ runuser -u $SUDO_USER -- $cargo_bin build --release --locked   (in $REPO)"
                (cd "$REPO" && runuser -u "$SUDO_USER" -- env PATH="$(dirname "$cargo_bin"):$PATH" \
                    timeout 1800 "$cargo_bin" build --release --locked)
            else
                echo "+ $cargo_bin build --release --locked   (in $REPO)"
                (cd "$REPO" && PATH="$(dirname "$cargo_bin"):$PATH" timeout 1800 "$cargo_bin" build --release --locked)
            fi
        fi
    fi
    [ -x "$MISURA" ] || die "misura binary not executable: $MISURA"
}

# stop_pid PID SIG: send SIG to PID (a timeout(1) leading its own process
# group), wait at most 10 s, then kill its whole group.
stop_pid() {
    local pid=$1 sig=$2 n
    [ -n "$pid" ] || return 0
    kill "-$sig" "$pid" 2>/dev/null || true
    for ((n = 0; n < 100; n++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

# trap_cleanup: the script's cleanup runs on exit; an interrupt or a TERM
# says so and exits 130 or 143 through it.
trap_cleanup() {
    trap cleanup EXIT
    trap 'echo "$NAME: interrupted" >&2; exit 130' INT
    trap 'echo "$NAME: terminated" >&2; exit 143' TERM
}

# log_cmd CMD...: the command quoted, appended to CMDLOG and printed.
log_cmd() {
    local q; q=$(printf '%q ' "$@")
    printf '%s\n' "${q% }" >>"$CMDLOG"
    echo "${q% }"
}
# run LIMIT_S OUTFILE CMD...: print the exact command, log it, run it under a
# time limit with stdout to OUTFILE (stderr to OUTFILE.err). Returns its status.
run() {
    local limit=$1 out=$2; shift 2
    local q; q=$(log_cmd "$@")
    echo "+ $q > $out   [time limit ${limit}s]"
    local rc=0
    # In the background so that an interrupt reaches the trap at once (the
    # trap forwards it; timeout(1) runs in a process group of its own).
    timeout -k 5 "$limit" "$@" >"$out" 2>"$out.err" &
    BGPID=$!
    wait "$BGPID" || rc=$?
    BGPID=""
    return "$rc"
}
# run_ok: like run but any non-zero status is fatal (stderr shown).
run_ok() {
    local out=$2 rc=0
    run "$@" || rc=$?
    if ((rc != 0)); then
        cat "$out.err" >&2 || true
        die "command failed with status $rc (output in $out)"
    fi
}

# start_server LIMIT_S OUTFILE tcp|udp PORT CMD...: start a server in the
# background under a time limit and wait (at most 5 s) until it listens on
# PORT in H2_NS. Returns 1 if it exited or never bound the port.
start_server() {
    local limit=$1 out=$2 proto=$3 port=$4; shift 4
    local q; q=$(log_cmd "$@")
    echo "+ $q > $out &   [server, time limit ${limit}s]"
    timeout -k 5 "$limit" "$@" >"$out" 2>"$out.err" &
    SRVPID=$!
    local n flag=-Htln
    [ "$proto" = udp ] && flag=-Huln
    for ((n = 0; n < 50; n++)); do
        if ! kill -0 "$SRVPID" 2>/dev/null; then
            wait "$SRVPID" 2>/dev/null || echo "exit status $?" >>"$out.err"
            SRVPID=""
            return 1
        fi
        if ip netns exec "$H2_NS" ss "$flag" "sport = :$port" 2>/dev/null | grep -q .; then
            return 0
        fi
        sleep 0.1
    done
    stop_pid "$SRVPID" TERM; SRVPID=""
    echo "server did not listen on $proto port $port within 5 s" >>"$out.err"
    return 1
}
stop_server() {
    [ -n "$SRVPID" ] || return 0
    echo "+ kill -TERM $SRVPID   [stop server]"
    stop_pid "$SRVPID" TERM; SRVPID=""
}

# host_params: the host facts each benchmark keeps in its params.txt, one
# key=value line each.
host_params() {
    echo "kernel=$(uname -r)"
    echo "cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
    echo "virtualization=$(systemd-detect-virt 2>/dev/null || echo unknown)"
    # An idle vCPU that halts at once (haltpoll, guest_halt_poll_ns 0) makes
    # every wake-up across CPUs dearer: part of what the figures mean.
    echo "cpuidle_driver=$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)"
    echo "guest_halt_poll_ns=$(cat /sys/module/haltpoll/parameters/guest_halt_poll_ns 2>/dev/null || echo none)"
}

# lab_up_hosts: the lab's hosts topology (h1, h2) built under PREFIX, its
# status kept in WORK, and an ARP warm-up from H1_NS so that the first
# measured packet does not carry the neighbour resolution.
lab_up_hosts() {
    run_ok 60 "$WORK/lab_hosts.txt" "$MISURA" lab up --prefix "$PREFIX" --topology hosts
    run_ok 30 "$WORK/lab_status.json" "$MISURA" lab status --prefix "$PREFIX" --json
    run_ok 30 "$WORK/ping_warmup.txt" ip netns exec "$H1_NS" ping -c 3 -i 0.01 -q "$H2_ADDR"
}

# report SCRIPT.py: the benchmark's table and its JSON result (OUT) from the
# raw outputs in WORK, by scripts/SCRIPT.py; OUT belongs to the sudo user.
report() {
    echo
    "$PY" "$REPO/scripts/$1" --work "$WORK" --out "$OUT"
    if [ -n "${SUDO_UID:-}" ] && [ -f "$OUT" ]; then chown "$SUDO_UID:${SUDO_GID:-$SUDO_UID}" "$OUT" || true; fi
}
