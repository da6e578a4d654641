#!/usr/bin/env bash
# Fetch QEMU 10 from Debian bookworm-backports into .tools/qemu/ for the NIC
# lab's igb ports (scripts/nic-lab.sh --nic igb needs QEMU 8 or later; Debian
# 12 has 7.2), without touching the machine's apt sources or installing
# anything: a private sources list and package lists under .tools/qemu-apt/,
# `apt-get download` of qemu-system-x86 and qemu-system-data, `dpkg -x`.
#
#   scripts/nic-lab/get-qemu.sh [--force]
#
# Prints the path of qemu-system-x86_64 on its last line. Does nothing when
# .tools/qemu/ already has a QEMU that runs (--force fetches again). The
# firmware (SeaBIOS, iPXE) comes from the system's seabios and ipxe-qemu, as
# Debian 12's qemu-system-x86 installs them; nic-lab.sh passes
# -L .tools/qemu/usr/share/qemu before them. Needs apt-get, dpkg and network
# access to the Debian mirror this machine's apt sources name (the first deb
# line or stanza of a Debian release, not security; deb.debian.org if none),
# through apt's own proxy settings; MISURA_QEMU_MIRROR overrides it.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
prog=get-qemu
dest="$repo/.tools/qemu"
apt_dir="$repo/.tools/qemu-apt"
bin="$dest/usr/bin/qemu-system-x86_64"
# The Debian mirror this machine's apt is configured with (a site's local
# mirror or caching proxy), from a deb line or stanza of a Debian suite that is
# not the security archive; deb.debian.org when none is found.
system_mirror() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -r "$f" ] || continue
        awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while (i <= NF && $i !~ /\]$/) i++; if ($2 ~ /^\[/) i++;
                           if ($(i+1) ~ /^(bookworm|trixie|forky|sid|stable|testing|unstable)(-updates)?$/ && $i !~ /security/) print $i }' "$f"
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -r "$f" ] || continue
        # deb822: one stanza per paragraph; its URIs if its Suites name a release.
        awk 'BEGIN { RS = ""; FS = "\n" }
             { u = ""; s = 0
               for (i = 1; i <= NF; i++) {
                   if ($i ~ /^URIs:/) { u = $i; sub(/^URIs:[ \t]*/, "", u) }
                   if ($i ~ /^Suites:.*(bookworm|trixie|forky|sid|stable|testing|unstable)([ \t]|-updates|$)/ && $i !~ /-security/) s = 1
               }
               if (s && u != "" && u !~ /security/) { split(u, a, /[ \t]+/); print a[1] } }' "$f"
    done
}
mirror=${MISURA_QEMU_MIRROR:-$(system_mirror | grep -m1 -E '^(https?|file|ftp)://' || true)}
mirror=${mirror:-http://deb.debian.org/debian}
mirror=${mirror%/}
force=false
case "${1:-}" in
--force) force=true ;;
"") ;;
-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
*) echo "$prog: unknown argument \`$1' (see --help)" >&2; exit 2 ;;
esac

if ! $force && [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
    echo "$prog: already there: $("$bin" --version | head -n 1)" >&2
    echo "$bin"
    exit 0
fi
command -v apt-get >/dev/null && command -v dpkg >/dev/null \
    || { echo "$prog: needs apt-get and dpkg (Debian or Ubuntu)" >&2; exit 1; }
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || { echo "$prog: $keyring is missing: apt-get install debian-archive-keyring" >&2; exit 1; }

mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs"
cat > "$apt_dir/backports.sources" <<SOURCES
Types: deb
URIs: $mirror
Suites: bookworm-backports
Components: main
Signed-By: $keyring
SOURCES
# Private lists, cache and sources; the system's dpkg status only for
# architectures. _apt (apt's download user) must write there.
apt_opts=(-o "Dir::Etc::sourcelist=$apt_dir/backports.sources" -o Dir::Etc::sourceparts=-
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
    -o APT::Sandbox::User=root -qq)
echo "$prog: reading bookworm-backports' package list ($mirror)" >&2
apt-get "${apt_opts[@]}" update >&2 \
    || { echo "$prog: apt-get update of bookworm-backports failed (network? mirror: MISURA_QEMU_MIRROR)" >&2; exit 1; }
pkgs=(qemu-system-x86 qemu-system-data)
rm -f "$apt_dir/debs"/*.deb
(cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" download "${pkgs[@]/%//bookworm-backports}" >&2) \
    || { echo "$prog: apt-get download ${pkgs[*]} from bookworm-backports failed" >&2; exit 1; }
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
for d in "$apt_dir/debs"/*.deb; do dpkg -x "$d" "$dest.tmp"; done
"$dest.tmp/usr/bin/qemu-system-x86_64" --version >/dev/null 2>&1 || {
    echo "$prog: the fetched QEMU does not run; missing libraries:" >&2
    ldd "$dest.tmp/usr/bin/qemu-system-x86_64" | grep 'not found' >&2 || true
    exit 1
}
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "$prog: $("$bin" --version | head -n 1) in $dest" >&2
echo "$bin"
