#!/usr/bin/env bash
# Install what the tests need (Debian), then run the whole test suite.
# The lab tests need root (network namespaces, raw sockets); as another user
# they are skipped with a message.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v ip >/dev/null || need+=(iproute2)
command -v kill >/dev/null || need+=(procps)
command -v cc >/dev/null || need+=(build-essential)
command -v c++ >/dev/null || need+=(g++)
if ((${#need[@]})); then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
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

# Peers for the interoperability tests (each test skips, saying why, if its
# peer is missing): tshark from Debian, scapy (with its STAMP layer) in a
# venv, stamp-suite from crates.io. All land in .tools/ or the system.
peers=()
command -v tshark >/dev/null || peers+=(tshark)
command -v ping >/dev/null || peers+=(iputils-ping)
[ -x /usr/sbin/chronyd ] || peers+=(chrony)
command -v cyclictest >/dev/null || peers+=(rt-tests)
[ -x /usr/bin/chromium ] || peers+=(chromium)
[ -x /usr/bin/prometheus ] || peers+=(prometheus)
command -v curl >/dev/null || peers+=(curl)
if ((${#peers[@]})) && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${peers[@]}" >/dev/null \
        || echo "could not install ${peers[*]}: the tests that need them will be skipped" >&2
    # The chrony and prometheus packages start system daemons; the tests run their own.
    systemctl stop chrony prometheus prometheus-node-exporter 2>/dev/null || true
fi
if [ ! -x .tools/venv/bin/python ] || ! .tools/venv/bin/python -c "import scapy.contrib.stamp" 2>/dev/null; then
    python3 -m venv .tools/venv && .tools/venv/bin/pip install -q scapy || echo "scapy not installed: its test will be skipped" >&2
fi
if [ ! -x .tools/bin/stamp-suite ]; then
    cargo install -q --locked --root .tools stamp-suite || echo "stamp-suite not installed: its test will be skipped" >&2
fi
export PATH="$PWD/.tools/bin:$PATH"

cargo build --workspace --all-targets --locked
# The fuzz target must keep building (it is a separate crate).
cargo build --locked --manifest-path fuzz/Cargo.toml --bins
cargo test --workspace --locked -- --test-threads=2
