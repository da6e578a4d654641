#!/usr/bin/env bash
# Build misura and run the demo on the built-in virtual lab (needs root).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v ip >/dev/null && [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq iproute2
fi
[ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
cargo build --release --locked
exec ./target/release/misura demo "$@"
