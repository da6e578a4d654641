#!/usr/bin/env bash
# Fetch Debian's kernel for the NIC lab's guest into target/nic-lab/kernel/
# (MISURA_NIC_CACHE/kernel), for a machine with no kernel in /boot (a
# container, a CI runner): the package linux-image-amd64 points to is
# downloaded with `apt-get download` from the machine's configured apt sources
# and unpacked with `dpkg-deb -x`, then `depmod -b` writes its modules.dep.
# Nothing is installed: no boot-loader or initramfs triggers run on the host.
#
#   scripts/nic-lab/get-kernel.sh [--force]
#
# Prints the kernel version on its last line. Does nothing when the cache
# already holds a kernel with its modules.dep (--force fetches again).
# Needs apt-get, dpkg-deb and depmod (kmod). nic-lab.sh takes the newest
# kernel in /boot first, then this one.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
prog=get-kernel
dest="${MISURA_NIC_CACHE:-$repo/target/nic-lab}/kernel"
die() { echo "$prog: $1" >&2; exit "${2:-1}"; }
force=false
for arg in "$@"; do
    if [ "$arg" = --force ]; then
        force=true
    elif [ "$arg" = -h ] || [ "$arg" = --help ]; then
        sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
        exit 0
    else
        die "unknown argument \`$arg' (see --help)" 2
    fi
done

# The kernel versions under a root that have a vmlinuz and a modules.dep.
kernels() {
    local k
    for k in $(ls "$1"/boot/vmlinuz-* 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V); do
        [ -f "$1/lib/modules/$k/modules.dep" ] && echo "$k"
    done
}

if ! $force && k=$(kernels "$dest" | tail -n 1) && [ -n "$k" ]; then
    echo "$prog: already there: $k in $dest" >&2
    echo "$k"
    exit 0
fi
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null \
    || die "needs apt-get and dpkg-deb (Debian or Ubuntu)"
depmod=$(PATH="/usr/sbin:/sbin:$PATH" command -v depmod) || die "needs depmod: apt-get install kmod"
# linux-image-amd64 is a metapackage: the kernel is the package it depends on.
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
[ -n "$pkg" ] || die "apt knows no linux-image-amd64 with a kernel behind it: run apt-get update (or give a kernel in /boot)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/misura-get-kernel.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "$prog: downloading $pkg (apt's configured sources)" >&2
# _apt (apt's download user) cannot write into root's mktemp directory.
(cd "$tmp" && apt-get -qq -o APT::Sandbox::User=root download "$pkg" >&2) \
    || die "apt-get download $pkg failed (network? apt sources?)"
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
dpkg-deb -x "$tmp"/*.deb "$dest.tmp"
# Merged /usr (Debian 13): the modules live under usr/lib/modules.
if [ ! -d "$dest.tmp/lib/modules" ] && [ -d "$dest.tmp/usr/lib/modules" ]; then
    ln -s usr/lib "$dest.tmp/lib"
fi
k=$(ls "$dest.tmp"/boot/vmlinuz-* 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V | tail -n 1)
[ -n "$k" ] || die "$pkg holds no boot/vmlinuz-*"
"$depmod" -b "$dest.tmp" "$k" || die "depmod -b $dest.tmp $k failed"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "$prog: kernel $k ($pkg) in $dest" >&2
echo "$k"
