#!/usr/bin/env bash
# Install what the tests need (Debian), then run the whole test suite.
#
# Tests that need root (network namespaces, raw sockets) or a peer tool are
# marked #[ignore = "needs …"]. As root this runs them all (--include-ignored),
# and one whose requirement is missing fails, saying what to install: CI runs
# it so (as root, CI=true), and nothing is skipped there. As another user it
# runs the rest and ends by saying how many were skipped, and why.
# Either way it fails if the tests touched the user's misura data directory
# (the results store, calibration profiles, tune state files).
set -euo pipefail
cd "$(dirname "$0")/.."

root=false
[ "$(id -u)" = 0 ] && root=true
if [ "${CI:-}" = true ] && ! $root; then
    echo "CI runs scripts/test.sh as root, so that no test is skipped; this is uid $(id -u)" >&2
    exit 1
fi

apt_updated=false
apt_install() {
    $apt_updated || DEBIAN_FRONTEND=noninteractive apt-get update -qq
    apt_updated=true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

need=()
command -v ip >/dev/null || need+=(iproute2)
command -v kill >/dev/null || need+=(procps)
command -v cc >/dev/null || need+=(build-essential)
command -v c++ >/dev/null || need+=(g++)
if ((${#need[@]})); then
    if $root && command -v apt-get >/dev/null; then
        apt_install "${need[@]}"
    else
        echo "missing packages: ${need[*]} (install them, or run this script as root)" >&2
        exit 1
    fi
fi
if ! command -v cargo >/dev/null; then
    if [ -x "$HOME/.cargo/bin/cargo" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    else
        echo "cargo not found: install Rust (https://rustup.rs), then run this again" >&2
        exit 1
    fi
fi

# Peers for the interoperability tests (run as root; each fails, saying what
# to install, if its peer is missing): tshark from Debian, scapy (with its
# STAMP layer) in a venv, stamp-suite from crates.io. All land in .tools/ or
# the system.
peers=()
command -v tshark >/dev/null || peers+=(tshark)
command -v ping >/dev/null || peers+=(iputils-ping)
[ -x /usr/sbin/chronyd ] || peers+=(chrony)
command -v cyclictest >/dev/null || peers+=(rt-tests)
[ -x /usr/bin/chromium ] || peers+=(chromium)
[ -x /usr/bin/prometheus ] || peers+=(prometheus)
[ -x /usr/sbin/clickhouse-server ] || peers+=(clickhouse-server)
command -v victoria-metrics >/dev/null || peers+=(victoria-metrics)
command -v curl >/dev/null || peers+=(curl)
# The package test (tests/package.rs): dpkg-shlibdeps for cargo-deb, man -w,
# getcap/setcap for the file capabilities.
command -v dpkg-shlibdeps >/dev/null || peers+=(dpkg-dev)
command -v man >/dev/null || peers+=(man-db)
command -v setcap >/dev/null || peers+=(libcap2-bin)
# The NIC lab (scripts/nic-lab.sh, tests/nic_lab.rs): a QEMU guest with
# emulated Intel NICs, built from Debian's kernel, busybox and these tools.
command -v qemu-system-x86_64 >/dev/null || peers+=(qemu-system-x86)
[ -x /bin/busybox ] || peers+=(busybox-static)
# Its kernel is the host's from /boot, or Debian's unpacked into the lab's
# cache by scripts/nic-lab/get-kernel.sh (below; depmod from kmod), never a
# kernel package installed on the host with its boot-loader triggers.
PATH="/usr/sbin:/sbin:$PATH" command -v depmod >/dev/null || peers+=(kmod)
command -v ethtool >/dev/null || peers+=(ethtool)
command -v tcpdump >/dev/null || peers+=(tcpdump)
command -v phc_ctl >/dev/null || peers+=(linuxptp)
command -v cpio >/dev/null || peers+=(cpio)
# The iperf3 peer tests (tests/iperf3.rs, issue 28).
command -v iperf3 >/dev/null || peers+=(iperf3)
# The irtt peer tests (tests/irtt.rs, issue 28).
command -v irtt >/dev/null || peers+=(irtt)
# The round-trip benchmark's and tracer's smoke (tests/bench_rtt.rs, issue 35).
command -v sockperf >/dev/null || peers+=(sockperf)
command -v bpftrace >/dev/null || peers+=(bpftrace)
# The completions' test (tests/install.rs) loads them in zsh and fish.
command -v zsh >/dev/null || peers+=(zsh)
command -v fish >/dev/null || peers+=(fish)
if ((${#peers[@]})) && $root && command -v apt-get >/dev/null; then
    echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections || true
    echo "iperf3 iperf3/start_daemon boolean false" | debconf-set-selections || true
    apt_install "${peers[@]}" >/dev/null \
        || echo "could not install ${peers[*]}: the tests that need them will fail" >&2
    # The chrony, prometheus, clickhouse-server and victoria-metrics packages
    # start system daemons; the tests run their own.
    systemctl stop chrony prometheus prometheus-node-exporter clickhouse-server victoria-metrics 2>/dev/null || true
fi
# ---- NIC lab: QEMU 10 for its igb ports --------------------------------------
# (after the peers above: the fetched QEMU runs on the libraries Debian's
# qemu-system-x86 brings, so on a machine without it the fetch failed)
# (scripts/nic-lab.sh --nic igb; Debian 12's QEMU 7.2 has no igb): fetched from
# bookworm-backports into .tools/qemu/ by scripts/nic-lab/get-qemu.sh, with a
# private sources list (the machine's apt sources are left alone); skipped
# when already there. CI boots the guests with TCG at once: KVM, nested in a
# cloud VM, hangs at boot (20 s lost per QEMU version and checkout).
if $root && command -v apt-get >/dev/null; then
    bash scripts/nic-lab/get-qemu.sh >/dev/null \
        || echo "QEMU 10 not fetched (scripts/nic-lab/get-qemu.sh): the igb NIC lab tests will fail" >&2
fi
[ "${CI:-}" = true ] && export MISURA_NIC_ACCEL="${MISURA_NIC_ACCEL:-tcg}"
# ---- end of the NIC lab's block ---------------------------------------------
# The NIC lab's guest kernel when /boot has none (after kmod, for depmod).
if $root && command -v apt-get >/dev/null && ! ls /boot/vmlinuz-* >/dev/null 2>&1; then
    bash scripts/nic-lab/get-kernel.sh >/dev/null \
        || echo "no kernel for the NIC lab's guest (scripts/nic-lab/get-kernel.sh): the NIC lab tests will fail" >&2
fi
if [ ! -x .tools/venv/bin/python ] || ! .tools/venv/bin/python -c "import scapy.contrib.stamp" 2>/dev/null; then
    python3 -m venv .tools/venv && .tools/venv/bin/pip install -q scapy || echo "scapy not installed: its test will fail" >&2
fi
if [ ! -x .tools/bin/stamp-suite ]; then
    cargo install -q --locked --root .tools stamp-suite || echo "stamp-suite not installed: its test will fail" >&2
fi
if $root && [ ! -x .tools/bin/cargo-deb ]; then
    cargo install -q --locked --version 3.8.0 --root .tools cargo-deb || echo "cargo-deb not installed: the package test will fail" >&2
fi
export PATH="$PWD/.tools/bin:$PATH"

# The user's misura data directory (dirs::data_dir: an absolute
# XDG_DATA_HOME, else ~/.local/share) is out of the tests' reach: they run
# with HOME and XDG_DATA_HOME in a scratch directory (cargo's and rustup's
# homes pinned to the real ones), and each test process runs misura with a
# scratch home of its own (tests/common: misura()). So the user may run
# misura meanwhile. What a test that bypassed its helper would write lands
# in the shared scratch home instead, and is reported below.
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
[ -d "$HOME/.rustup" ] && export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
test_home=$(mktemp -d "${TMPDIR:-/tmp}/misura-test-sh-home.XXXXXX")

cargo build --workspace --all-targets --locked
# The fuzz target must keep building (it is a separate crate).
cargo build --locked --manifest-path fuzz/Cargo.toml --bins

# The Debian package, built once for tests/package.rs (which installs it as
# root): around the debug build just made, so no release build is paid for
# here (about 6 min on 2 busy cores); `bash scripts/package.sh` makes the
# release package. Without this the test builds the release package itself.
if $root; then
    if deb=$(bash scripts/package.sh --dev | tail -n 1); then
        export MISURA_TEST_DEB="$deb"
    else
        echo "scripts/package.sh --dev failed: the package test will build the package itself" >&2
    fi
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
ignored=()
$root && ignored=(--include-ignored)
# --no-fail-fast: one failing test binary does not hide the others' results.
status=0
HOME="$test_home" XDG_DATA_HOME="$test_home/data" \
    cargo test --workspace --locked --no-fail-fast -- --test-threads=2 ${ignored[@]+"${ignored[@]}"} 2>&1 \
    | tee "$log" || status=$?

# Totals over every test binary.
read -r passed failed skipped < <(
    sed -nE 's/^test result: .* ([0-9]+) passed; ([0-9]+) failed; ([0-9]+) ignored.*/\1 \2 \3/p' "$log" \
        | awk '{p += $1; f += $2; i += $3} END {print p + 0, f + 0, i + 0}'
)
echo
echo "tests: $passed passed, $failed failed, $skipped skipped (ignored)"
if ((skipped)); then
    echo "skipped, by what they need:"
    sed -nE 's/^test .* \.\.\. ignored(, (.*))?$/\2/p' "$log" | sed 's/^$/(no reason given)/' \
        | sort | uniq -c | sort -rn | sed 's/^/  /'
    if ! $root; then
        echo "they need root (and the peer tools this script installs as root): run sudo bash scripts/test.sh"
    fi
fi

if [ -e "$test_home/data/misura" ] || [ -e "$test_home/.local/share/misura" ]; then
    echo >&2
    echo "ERROR: a test ran misura with the shared home $test_home, not its own scratch home" >&2
    echo "(run the binary through tests/common's misura(); outside this script it would reach the user's data)" >&2
    find "$test_home" -path '*misura*' >&2 || true
    exit 1
fi
rm -rf "$test_home"
exit "$status"
