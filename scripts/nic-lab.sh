#!/usr/bin/env bash
# The NIC lab: a QEMU guest with four emulated Intel NIC ports, real NIC
# drivers that grant hardware TX/RX timestamping, with one PTP hardware clock
# per port, for trying misura's hardware path without a NIC. With igb ports
# (Intel 82576, QEMU 8 or later) the NICs deliver hardware stamps; with
# e1000e (82574L) they deliver none: see docs/guide/without-hardware.md.
#
#   scripts/nic-lab.sh --topology cable|sut [--netem ARGS] [--tbf ARGS]
#       [--accel auto|kvm|tcg] [--misura PATH] [--timeout SECS]
#       [--smp N] [--memory MiB] [--verbose] [--nic igb|e1000e] [--qemu PATH]
#       [--no-unlatch] --out DIR (-- 'SHELL SCRIPT' | --script FILE)
#
# --timeout bounds the script (default 120 s, at most 3600); --smp and
# --memory size the guest (2 vCPUs, 1024 MiB); --verbose shows the kernel's
# boot messages and copies the serial console to stderr as it goes.
# QEMU: --qemu PATH (MISURA_NIC_QEMU), else .tools/qemu/usr/bin (fetched by
# scripts/nic-lab/get-qemu.sh from bookworm-backports: QEMU 10), else
# qemu-system-x86_64 on PATH (Debian 12: 7.2).
# --nic (MISURA_NIC_MODEL): igb (Intel 82576, the default with a QEMU 8 or
# later) or e1000e (Intel 82574L, the default with an older QEMU; no stamps).
# QEMU's igb stamps only the first received PTP frame after a reset (it
# clears the latch on a register Linux never reads): the guest runs
# scripts/nic-lab/igb-rx-unlatch.c beside the script, which reads it (the
# guest boots with iomem=relaxed for that); --no-unlatch leaves it out, to
# see the emulator's own behaviour. Its log comes back as DIR/unlatch.log.
#
# Topologies (the guest's eth0..eth3 in PCI order, each port cabled through a
# QEMU hub):
#   cable  eth0 <-> eth1 (a calibration cable); eth2 <-> eth3 likewise, down.
#   sut    eth0 <-> eth2 and eth1 <-> eth3; eth2 and eth3 are bridged (br0) in
#          the guest namespace `sut`. --netem ARGS and --tbf ARGS shape the
#          bridge's port towards eth1 (eth3's egress), e.g. --netem 'delay 2ms',
#          --tbf 20mbit or --tbf 'rate 20mbit burst 32kb limit 128kb'.
# The script runs as root in the guest's root namespace, with misura, ip, tc,
# ethtool, tcpdump, phc_ctl, ptp4l, phc2sys, hwstamp_ctl and busybox on PATH, IPv6 off on
# the lab's ports, and $OUT a directory whose files come back to DIR/files on
# the host. DIR also gets: exit (the script's exit code), stdout, stderr,
# dmesg (the guest kernel's log), console.log (the serial console) and lab.txt
# (accelerator, boot and run times). DIR must be new or empty.
#
# Exit status: the script's, or 124 if it ran past --timeout (killed), or 125
# if the lab itself failed (the message says why; console.log shows the boot).
#
# Accelerator: --accel (or MISURA_NIC_ACCEL) auto tries KVM if /dev/kvm is
# usable, with a short boot timeout (MISURA_NIC_KVM_BOOT_TIMEOUT, 20 s), then
# falls back to TCG (emulation, about 10 s to boot) and says so. A KVM guest
# that did not boot, or that QEMU could not start (nested KVM refusing an MSR),
# is remembered in the cache (kvm-hangs-*, per host kernel
# and QEMU version; delete it to try KVM again), so auto pays the timeout once
# per checkout, not every boot. CI can set MISURA_NIC_ACCEL=tcg.
# A TCG guest that does not boot within MISURA_NIC_TCG_BOOT_TIMEOUT (180 s)
# boots once more (a busy host can stall its timers); lab.txt says so.
#
# Needs (Debian): qemu-system-x86, linux-image-amd64, busybox-static,
# iproute2, ethtool, tcpdump, linuxptp, cpio, binutils (strip), and for igb
# a C compiler with static libc (build-essential). The guest is
# built from the running system's files into an initramfs cached under
# target/nic-lab/ (MISURA_NIC_CACHE), keyed by the hashes of its inputs.
# Never touches the host's network: the guest's ports are wired only to QEMU
# hubs inside this QEMU process.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
self="$repo/scripts/nic-lab.sh"
prog=nic-lab

die() { # the lab itself failed
    echo "$prog: $*" >&2
    exit 125
}
usage() {
    sed -n '2,/^set -euo/p' "$self" | sed '$d; s/^# \{0,1\}//'
    exit "${1:-0}"
}

topology="" netem="" tbf="" accel="${MISURA_NIC_ACCEL:-auto}" out="" script="" script_file=""
misura_bin="${MISURA_BIN:-}" timeout_s=120 smp=2 mem=1024 verbose=false
nic=${MISURA_NIC_MODEL:-} qemu=${MISURA_NIC_QEMU:-} unlatch=true
while (($#)); do
    case "$1" in
    --topology) topology=${2:?--topology needs cable or sut}; shift 2 ;;
    --netem) netem=${2:?--netem needs tc netem arguments, e.g. "delay 2ms"}; shift 2 ;;
    --tbf) tbf=${2:?--tbf needs a rate or tc tbf arguments, e.g. 20mbit}; shift 2 ;;
    --accel) accel=${2:?--accel needs auto, kvm or tcg}; shift 2 ;;
    --misura) misura_bin=${2:?--misura needs the path of a misura binary}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --script) script_file=${2:?--script needs a file}; shift 2 ;;
    --timeout) timeout_s=${2:?--timeout needs seconds}; shift 2 ;;
    --smp) smp=${2:?--smp needs a CPU count}; shift 2 ;;
    --memory) mem=${2:?--memory needs MiB}; shift 2 ;;
    --verbose) verbose=true; shift ;;
    --nic) nic=${2:?--nic needs igb or e1000e}; shift 2 ;;
    --no-unlatch) unlatch=false; shift ;;
    --qemu) qemu=${2:?--qemu needs the path of qemu-system-x86_64}; shift 2 ;;
    -h | --help) usage 0 ;;
    --) shift; script="$*"; break ;;
    *) echo "$prog: unknown argument \`$1' (see --help)" >&2; exit 2 ;;
    esac
done

bad() { echo "$prog: $*" >&2; exit 2; }
case "$topology" in
cable | sut) ;;
"") bad "--topology is required: cable (eth0-eth1 cabled) or sut (a bridge in between)" ;;
*) bad "--topology $topology: write cable or sut" ;;
esac
case "$accel" in auto | kvm | tcg) ;; *) bad "--accel $accel: write auto, kvm or tcg" ;; esac
case "$nic" in "" | e1000e | igb) ;; *) bad "--nic $nic: write e1000e (Intel 82574L) or igb (Intel 82576)" ;; esac
[ -n "$out" ] || bad "--out DIR is required (where the results come back; new or empty)"
if [ -n "$script_file" ]; then
    [ -z "$script" ] || bad "give the guest script either after -- or with --script, not both"
    [ -r "$script_file" ] || bad "--script $script_file: cannot read it"
    script=$(cat "$script_file")
fi
[ -n "$script" ] || bad "nothing to run: give a shell script after -- or with --script FILE"
[[ "$timeout_s" =~ ^[0-9]+$ ]] && ((timeout_s >= 1 && timeout_s <= 3600)) \
    || bad "--timeout $timeout_s: write whole seconds, 1 to 3600"
[[ "$smp" =~ ^[0-9]+$ ]] && ((smp >= 1 && smp <= 8)) || bad "--smp $smp: write 1 to 8"
[[ "$mem" =~ ^[0-9]+$ ]] && ((mem >= 256 && mem <= 8192)) || bad "--memory $mem: write 256 to 8192 (MiB)"
[ "$topology" = sut ] || [ -z "$netem$tbf" ] || bad "--netem and --tbf shape the SUT: use them with --topology sut"
for v in "$netem" "$tbf"; do
    [[ "$v" =~ ^[A-Za-z0-9.%\ _-]*$ ]] || bad "shaping arguments \`$v': only letters, digits, spaces and . % _ - are allowed"
done
if [ -z "$misura_bin" ]; then
    echo "$prog: no --misura PATH (or MISURA_BIN): the guest has no misura" >&2
else
    [ -x "$misura_bin" ] || bad "--misura $misura_bin: not an executable file (build it: cargo build -p misura)"
fi
if [ -e "$out" ]; then
    [ -d "$out" ] && [ -z "$(ls -A "$out")" ] || bad "--out $out exists and is not an empty directory (nothing is overwritten)"
fi

# ---- what the guest is built from -------------------------------------------
need_pkg() { die "$1 is missing: install $2 (apt-get install $2; scripts/test.sh does as root)"; }
tools_qemu="$repo/.tools/qemu/usr/bin/qemu-system-x86_64"
if [ -n "$qemu" ]; then
    [ -x "$qemu" ] || bad "--qemu $qemu: not an executable file"
elif [ -x "$tools_qemu" ]; then
    qemu=$tools_qemu
else
    qemu=$(command -v qemu-system-x86_64) || need_pkg qemu-system-x86_64 qemu-system-x86
fi
qemu_version=$("$qemu" --version 2>/dev/null | head -n 1) || true
qemu_major=$(sed -n 's/^QEMU emulator version \([0-9]*\)\..*/\1/p' <<<"$qemu_version")
if [ -z "$nic" ]; then
    if [ -n "$qemu_major" ] && ((qemu_major >= 8)); then nic=igb; else nic=e1000e; fi
fi
# A QEMU unpacked outside /usr (get-qemu.sh) looks for its data in /usr:
# its own data directory goes first, the system's firmware after it.
qemu_data=()
qdata=$(cd "$(dirname "$qemu")/../share/qemu" 2>/dev/null && pwd) || true
[ -n "$qdata" ] && [ "$qdata" != /usr/share/qemu ] && qemu_data=(-L "$qdata")
# (A QEMU whose device list cannot be read is left to say so at start.)
devices=$("$qemu" "${qemu_data[@]}" -device help 2>/dev/null || true)
if grep -q 'name "e1000' <<<"$devices" && ! grep -q "name \"$nic\"" <<<"$devices"; then
    die "${qemu_version:-$qemu} has no $nic device (igb needs QEMU 8 or later: scripts/nic-lab/get-qemu.sh fetches QEMU 10 into .tools/qemu, or --qemu PATH)"
fi
busybox=/bin/busybox
[ -x "$busybox" ] || need_pkg /bin/busybox busybox-static
bash=$(command -v bash)
# The guest's kernel: the newest in /boot with its modules, else the one
# scripts/nic-lab/get-kernel.sh unpacked into the cache (nothing installed).
kver=${MISURA_NIC_KERNEL_VERSION:-}
kroot=""
for r in / "${MISURA_NIC_CACHE:-$repo/target/nic-lab}/kernel/"; do
    for k in $(ls "${r}boot"/vmlinuz-* 2>/dev/null | sed 's|.*/vmlinuz-||' | sort -V); do
        [ -n "${MISURA_NIC_KERNEL_VERSION:-}" ] && [ "$k" != "$MISURA_NIC_KERNEL_VERSION" ] && continue
        [ -f "${r}lib/modules/$k/modules.dep" ] && kver=$k kroot=$r
    done
    [ -n "$kroot" ] && break
done
[ -n "$kroot" ] || die "no kernel with its modules: none in /boot${MISURA_NIC_KERNEL_VERSION:+ (version $MISURA_NIC_KERNEL_VERSION)}; run scripts/nic-lab/get-kernel.sh (unpacks Debian's linux-image-amd64 into the lab's cache, installing nothing)"
kernel=${kroot}boot/vmlinuz-$kver
[ -r "$kernel" ] || die "cannot read $kernel (run as root, or make it readable)"
moddir=${kroot}lib/modules/$kver
tools=()
for t in ip:iproute2 tc:iproute2 ethtool:ethtool tcpdump:tcpdump phc_ctl:linuxptp ptp4l:linuxptp phc2sys:linuxptp hwstamp_ctl:linuxptp; do
    p=$(PATH="/usr/sbin:/sbin:$PATH" command -v "${t%%:*}") || need_pkg "${t%%:*}" "${t#*:}"
    tools+=("$p")
done
if command -v cpio >/dev/null; then cpio_out() { cpio --quiet -o -H newc -R 0:0; }; else cpio_out() { "$busybox" cpio -o -H newc -R 0:0 2>/dev/null; }; fi

# Modules, each after those it depends on (modules.dep).
want_mods=("$nic" bridge sch_netem sch_tbf 9pnet_virtio 9p virtio_pci)
mod_order=()
add_mod() { # $1: path relative to $moddir
    local m=$1 d
    for d in "${mod_order[@]}"; do [ "$d" = "$m" ] && return 0; done
    for d in $(sed -n "s|^$m: *||p" "$moddir/modules.dep"); do add_mod "$d"; done
    mod_order+=("$m")
}
for m in "${want_mods[@]}"; do
    rel=$(grep -E "(^|/)$m\.ko(\.xz|\.zst|\.gz)?:" "$moddir/modules.dep" | head -n 1 | cut -d: -f1)
    if [ -z "$rel" ]; then
        # Built into the kernel: nothing to load.
        grep -qE "/$m\.ko" "$moddir/modules.builtin" 2>/dev/null && continue
        die "kernel $kver ($kernel) has no module $m (modules.dep): give Debian's kernel (scripts/nic-lab/get-kernel.sh, or MISURA_NIC_KERNEL_VERSION)"
    fi
    add_mod "$rel"
done

cache=${MISURA_NIC_CACHE:-$repo/target/nic-lab}
mkdir -p "$cache"
work=$(mktemp -d "${TMPDIR:-/tmp}/misura-nic-lab.XXXXXX")
qpid=""
cleanup() {
    [ -n "$qpid" ] && kill -9 "$qpid" 2>/dev/null && wait "$qpid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "$prog: interrupted" >&2; exit 130' INT TERM

# Shared libraries of the given executables (ldd), with the loader.
libs_of() { { ldd "$@" 2>/dev/null || true; } | awk '/=> \//{print $3} /^\t\/[^ ]+ \(/{print $1}' | sort -u; }

# The guest's /init (busybox sh). Its inputs come from /lab (this run's cpio).
guest_init() {
    cat <<'INIT'
#!/bin/sh
export PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
ln -s /proc/self/fd /dev/fd
ln -s fd/0 /dev/stdin
ln -s fd/1 /dev/stdout
ln -s fd/2 /dev/stderr
mkdir -p /dev/pts /tmp /run /root /var/tmp
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
echo "NICLAB-BOOTED $(cut -d' ' -f1 /proc/uptime)"
fail() { echo "NICLAB-FAIL $*"; poweroff -f; sleep 5; echo o > /proc/sysrq-trigger; }
. /lab/config
# No IPv6 on the lab's ports: no router solicitations or DAD in the captures.
sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
while read -r m; do
    insmod "/lib/modules/$m" || fail "insmod $m"
done < /lab/modules
mkdir -p /results
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 results /results \
    || fail "could not mount the results share (9p)"
# eth0..eth3 in PCI order; the MACs say which is which.
i=0
for n in 0 1 2 3; do
    t=0
    until [ -e /sys/class/net/eth$n ] || [ $t -ge 100 ]; do sleep 0.1; t=$((t + 1)); done
done
for n in 0 1 2 3; do
    want=52:54:00:6d:00:0$n
    have=$(cat /sys/class/net/eth$n/address 2>/dev/null)
    [ "$have" = "$want" ] && continue
    for d in /sys/class/net/*; do
        [ "$(cat $d/address)" = "$want" ] || continue
        ip link set dev eth$n name tmp$n 2>/dev/null
        ip link set dev "${d##*/}" name eth$n || fail "renaming ${d##*/} to eth$n"
    done
done
for n in 0 1 2 3; do
    [ "$(cat /sys/class/net/eth$n/address 2>/dev/null)" = 52:54:00:6d:00:0$n ] || fail "eth$n missing"
done
must() { "$@" || fail "$*"; }
# The tester's ports first: their links negotiate while the rest is set up.
must ip link set lo up
must ip link set eth0 up
must ip link set eth1 up
ports="eth0 eth1"
if [ "$TOPOLOGY" = sut ]; then
    must ip netns add sut
    must ip netns exec sut sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    must ip link set eth2 netns sut
    must ip link set eth3 netns sut
    must ip -n sut link set lo up
    must ip -n sut link add br0 type bridge
    must ip -n sut link set eth2 master br0
    must ip -n sut link set eth3 master br0
    for d in eth2 eth3 br0; do must ip -n sut link set $d up; done
    if [ -n "$NETEM" ]; then
        must ip netns exec sut tc qdisc add dev eth3 root handle 1: netem $NETEM
        [ -z "$TBF" ] || must ip netns exec sut tc qdisc add dev eth3 parent 1: handle 2: tbf $TBF
    elif [ -n "$TBF" ]; then
        must ip netns exec sut tc qdisc add dev eth3 root handle 1: tbf $TBF
    fi
    ports="$ports sut:eth2 sut:eth3"
fi
# Every port's link up (bounded: 20 s).
for p in $ports; do
    case $p in sut:*) n="-n sut"; d=${p#sut:} ;; *) n=""; d=$p ;; esac
    t=0
    until ip $n link show dev $d | grep -q LOWER_UP; do
        [ $t -ge 200 ] && fail "no link on $d after 20 s"
        sleep 0.1; t=$((t + 1))
    done
done
mkdir -p /results/files
export OUT=/results/files
echo "NICLAB-READY $(cut -d' ' -f1 /proc/uptime)"
cd /root
# QEMU's igb latches one RX stamp until RXSATRH is read: the unlatcher reads
# it for every igb port (scripts/nic-lab/igb-rx-unlatch.c).
unlatch=""
if [ "$UNLATCH" = 1 ]; then
    # PATH@IFNAME for the ports in this namespace (released by their frames).
    bars=$(for d in /sys/bus/pci/drivers/igb/0000:*; do
        echo "$d/resource0@$(ls $d/net 2>/dev/null | head -n 1)"
    done)
    /usr/local/sbin/igb-rx-unlatch $bars 2> /results/unlatch.log &
    unlatch=$!
    echo $unlatch > /run/igb-rx-unlatch.pid
    sleep 0.3
    kill -0 $unlatch 2>/dev/null || fail "igb-rx-unlatch did not start: $(cat /results/unlatch.log)"
fi
start=$(cut -d. -f1 /proc/uptime)
timeout -s TERM -k 5 "$TIMEOUT" /bin/bash /lab/script > /results/stdout 2> /results/stderr < /dev/null
rc=$?
if [ -n "$unlatch" ]; then
    kill $unlatch 2>/dev/null
    wait $unlatch
fi
# busybox timeout leaves the killed script's status (143, 137): say 124.
if [ $(($(cut -d. -f1 /proc/uptime) - start)) -ge "$TIMEOUT" ] && [ $rc -ge 128 ]; then
    echo "nic-lab: the script ran past --timeout $TIMEOUT s and was killed (status $rc)" >> /results/stderr
    rc=124
fi
echo "$rc" > /results/exit
dmesg > /results/dmesg
sync
umount /results
echo "NICLAB-EXIT $rc $(cut -d' ' -f1 /proc/uptime)"
poweroff -f
INIT
}

# Seconds since $1 (date +%s.%N), to 0.1 s.
since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }

# ---- the base initramfs (cached) --------------------------------------------
tool_libs=$(libs_of "${tools[@]}" "$busybox" "$bash")
key=$({
    guest_init
    echo "$kver ${mod_order[*]}"
    sha256sum "$busybox" "$bash" "${tools[@]}" $tool_libs "${mod_order[@]/#/$moddir/}"
} | sha256sum | cut -c1-16)
base="$cache/base-$key.cpio.gz"
t0=$(date +%s.%N)
if [ ! -s "$base" ]; then
    echo "$prog: building the guest's base initramfs ($kver) into $base" >&2
    r="$work/base"
    mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,etc,lab,proc,sys,dev,tmp,run,root,results}
    cp "$busybox" "$r/bin/busybox"
    # bash is the guest's sh: busybox's sh would run its own ip and tc
    # applets (no netns, no netem) in place of iproute2's.
    cp "$bash" "$r/bin/bash"
    ln -s bash "$r/bin/sh"
    for a in $("$busybox" --list); do
        [ -e "$r/bin/$a" ] || ln -s busybox "$r/bin/$a"
    done
    for f in "${tools[@]}"; do cp "$f" "$r/usr/sbin/"; done
    for f in $tool_libs; do mkdir -p "$r$(dirname "$f")"; cp -L "$f" "$r$f"; done
    # The loader where binaries look for it.
    [ -e "$r/lib64/ld-linux-x86-64.so.2" ] || { mkdir -p "$r/lib64"; cp -L /lib64/ld-linux-x86-64.so.2 "$r/lib64/"; }
    printf 'root:x:0:0:root:/root:/bin/sh\ntcpdump:x:104:109::/nonexistent:/usr/sbin/nologin\n' > "$r/etc/passwd"
    printf 'root:x:0:\ntcpdump:x:109:\n' > "$r/etc/group"
    : > "$r/lab/modules"
    for m in "${mod_order[@]}"; do
        dst="$r/lib/modules/${m%.xz}"
        dst=${dst%.zst}
        mkdir -p "$(dirname "$dst")"
        case "$m" in
        *.xz) xz -dc "$moddir/$m" > "$dst" ;;
        *.zst) zstd -qdc "$moddir/$m" > "$dst" ;;
        *) cp "$moddir/$m" "$dst" ;;
        esac
        echo "${dst#"$r/lib/modules/"}" >> "$r/lab/modules"
    done
    guest_init > "$r/init"
    chmod 755 "$r/init"
    (cd "$r" && find . | LC_ALL=C sort | cpio_out) | gzip -1 > "$base.tmp.$$"
    mv "$base.tmp.$$" "$base"
    rm -rf "$r"
    # Older bases (other inputs) are dropped.
    find "$cache" -maxdepth 1 -name 'base-*.cpio.gz' ! -name "base-$key.cpio.gz" -mmin +60 -delete 2>/dev/null || true
fi

# misura, stripped of debug info, with its libraries (cached by its hash).
parts=("$base")
if [ -n "$misura_bin" ]; then
    mkey=$(sha256sum "$misura_bin" | cut -c1-16)
    mcpio="$cache/misura-$mkey.cpio"
    if [ ! -s "$mcpio" ]; then
        r="$work/misura"
        mkdir -p "$r/usr/local/bin"
        strip --strip-debug -o "$r/usr/local/bin/misura" "$misura_bin" || die "strip $misura_bin failed (binutils)"
        for f in $(libs_of "$misura_bin"); do mkdir -p "$r$(dirname "$f")"; cp -L "$f" "$r$f"; done
        (cd "$r" && find . | LC_ALL=C sort | cpio_out) > "$mcpio.tmp.$$"
        mv "$mcpio.tmp.$$" "$mcpio"
        rm -rf "$r"
        # Keep the three newest.
        ls -t "$cache"/misura-*.cpio 2>/dev/null | tail -n +4 | xargs -r rm -f
    fi
    parts+=("$mcpio")
fi

# igb's RX unlatcher, a static binary built here (cached by its source's
# hash), in the guest as /usr/local/sbin/igb-rx-unlatch even with --no-unlatch.
[ "$nic" = igb ] || unlatch=false
if [ "$nic" = igb ]; then
    src="$repo/scripts/nic-lab/igb-rx-unlatch.c"
    ukey=$(sha256sum "$src" | cut -c1-16)
    ucpio="$cache/unlatch-$ukey.cpio"
    if [ ! -s "$ucpio" ]; then
        command -v cc >/dev/null || need_pkg "cc (for scripts/nic-lab/igb-rx-unlatch.c)" "build-essential"
        r="$work/unlatch"
        mkdir -p "$r/usr/local/sbin"
        cc -O2 -static -Wall -o "$r/usr/local/sbin/igb-rx-unlatch" "$src" 2> "$work/cc.log" \
            || die "cc -static $src failed (needs build-essential, libc6-dev): $(head -c 600 "$work/cc.log")"
        (cd "$r" && find . | LC_ALL=C sort | cpio_out) > "$ucpio.tmp.$$"
        mv "$ucpio.tmp.$$" "$ucpio"
        find "$cache" -maxdepth 1 -name 'unlatch-*.cpio' ! -name "unlatch-$ukey.cpio" -delete 2>/dev/null || true
    fi
    parts+=("$ucpio")
fi

# This run: the topology and the script.
r="$work/run"
mkdir -p "$r/lab"
printf '%s\n' "$script" > "$r/lab/script"
tbf_args=$tbf
[[ -z "$tbf" || "$tbf" == *" "* ]] || tbf_args="rate $tbf burst 32kb limit 128kb"
{
    printf 'TOPOLOGY=%s\n' "$topology"
    printf "NETEM='%s'\n" "$netem"
    printf "TBF='%s'\n" "$tbf_args"
    printf 'TIMEOUT=%s\n' "$timeout_s"
    printf 'UNLATCH=%s\n' "$($unlatch && echo 1 || echo 0)"
} > "$r/lab/config"
(cd "$r" && find . | LC_ALL=C sort | cpio_out) > "$work/run.cpio"
parts+=("$work/run.cpio")
# Concatenated archives; the kernel finds an uncompressed one only at an
# offset that is a multiple of 4, so each part is padded with zeros.
for f in "${parts[@]}"; do
    cat "$f"
    head -c $(((4 - $(stat -c %s "$f") % 4) % 4)) /dev/zero
done > "$work/initrd"
build_s=$(since "$t0")

# ---- wiring and boot --------------------------------------------------------
# The ports in slots 2, 4, 6, 8 (room for igb's SR-IOV functions), in PCI
# order eth0..eth3; the results share in slot 10.
mkdir -p "$out"
out=$(cd "$out" && pwd)
case "$topology" in
cable) hubs=(0 0 1 1) ;; # eth0-eth1, eth2-eth3
sut) hubs=(0 1 0 1) ;;   # eth0-eth2, eth1-eth3
esac
net_args=()
for n in 0 1 2 3; do
    net_args+=(-netdev "hubport,id=n$n,hubid=${hubs[$n]}"
        -device "$nic,netdev=n$n,mac=52:54:00:6d:00:0$n,addr=0x$((2 + 2 * n))")
done

kvm_usable() { [ -r /dev/kvm ] && [ -w /dev/kvm ]; }
kvm_note="$cache/kvm-hangs-$(uname -r)-$(awk '{print $4}' <<<"$qemu_version")"
kvm_boot_timeout=${MISURA_NIC_KVM_BOOT_TIMEOUT:-20}
tcg_boot_timeout=${MISURA_NIC_TCG_BOOT_TIMEOUT:-180}
console="$work/console.log"

# boot ACCEL BOOT_TIMEOUT: 0 once the script ran (or was killed) and the guest
# is off, 1 if the guest did not boot in time (QEMU killed), 2 if it failed
# after booting, 3 if QEMU ended before the guest booted. Called with its
# stderr into $work/shell.log: bash reports a QEMU that aborted or was killed
# with a job line of its whole command (300 characters, issue 36) whenever
# it notices; what is meant for the user goes to fd 3, the real stderr.
boot() {
    local acc=$1 limit=$2 cpu=max
    boot_limit=$limit
    [ "$acc" = kvm ] && cpu=host
    : > "$console"
    "$qemu" "${qemu_data[@]}" -nodefaults -no-user-config -machine q35 -accel "$acc" -cpu "$cpu" \
        -smp "$smp" -m "$mem" -display none -no-reboot \
        -serial "file:$console" \
        -kernel "$kernel" -initrd "$work/initrd" \
        -append "console=ttyS0 panic=-1 rdinit=/init $([ "$nic" = igb ] && echo iomem=relaxed) $($verbose || echo quiet)" \
        -fsdev "local,id=res,path=$out,security_model=none" \
        -device "virtio-9p-pci,fsdev=res,mount_tag=results,addr=0x0a" \
        "${net_args[@]}" > "$work/qemu.log" 2>&1 &
    qpid=$!
    local start now booted="" ready="" tail_from=0
    start=$(date +%s)
    while kill -0 "$qpid" 2>/dev/null; do
        now=$(date +%s)
        if $verbose; then
            tail -c +$((tail_from + 1)) "$console" >&3
            tail_from=$(stat -c %s "$console")
        fi
        if [ -z "$booted" ]; then
            if grep -q NICLAB-BOOTED "$console"; then
                booted=$((now - start))
            elif ((now - start >= limit)); then
                kill -9 "$qpid" 2>/dev/null; wait "$qpid" 2>/dev/null; qpid=""
                return 1
            fi
        elif [ -z "$ready" ] && grep -q NICLAB-READY "$console"; then
            ready=$((now - start))
        fi
        # The whole run: boot, set-up (60 s), the script and its kill (+30 s).
        if ((now - start >= limit + 60 + timeout_s + 30)); then
            echo "$prog: the guest ran past every bound ($((now - start)) s): killed" >&3
            kill -9 "$qpid" 2>/dev/null; wait "$qpid" 2>/dev/null; qpid=""
            return 2
        fi
        sleep 0.2
    done
    wait "$qpid" 2>/dev/null || true
    qpid=""
    grep -q NICLAB-BOOTED "$console" || return 3
    grep -q NICLAB-EXIT "$console" || return 2
    return 0
}

accel_used="" accel_why=""
case "$accel" in
kvm)
    kvm_usable || die "--accel kvm: /dev/kvm is missing or not usable by uid $(id -u)"
    accel_used=kvm accel_why="asked for (--accel kvm)"
    ;;
tcg) accel_used=tcg accel_why="asked for (--accel tcg or MISURA_NIC_ACCEL=tcg)" ;;
auto)
    if ! kvm_usable; then
        accel_used=tcg accel_why="/dev/kvm missing or not usable"
    elif [ -e "$kvm_note" ]; then
        accel_used=tcg accel_why="KVM failed here before ($(cat "$kvm_note"); remembered in $kvm_note, delete it to try KVM again)"
    else
        accel_used=kvm accel_why="/dev/kvm usable (falls back to TCG if the guest does not boot in ${kvm_boot_timeout} s)"
    fi
    ;;
esac
with=""
$unlatch && with=", with the igb RX unlatch workaround"
echo "$prog: $nic ports ($qemu_version$with), topology $topology${netem:+, netem '$netem'}${tbf:+, tbf '$tbf_args'}; accelerator $accel_used: $accel_why" >&2

exec 3>&2
t0=$(date +%s.%N)
status=0
if [ "$accel_used" = kvm ]; then
    boot kvm "$kvm_boot_timeout" 2>>"$work/shell.log" || status=$?
    # KVM failed: remember why in $kvm_note (NOTE), tell the user (SAID),
    # record WHY, keep the failed boot's LOG as KEPT, and boot under TCG.
    tcg_instead() {  # note said why log kept
        echo "$(date -u +%FT%TZ): $1" > "$kvm_note"
        echo "$prog: $2: falling back to TCG (remembered in $kvm_note)" >&2
        accel_used=tcg accel_why=$3
        mv "$4" "$5"
        t0=$(date +%s.%N)
        status=0
        boot tcg "$tcg_boot_timeout" 2>>"$work/shell.log" || status=$?
    }
    if ((status == 1)) && [ "$accel" = auto ]; then
        tcg_instead "no NICLAB-BOOTED within ${kvm_boot_timeout} s" \
            "the KVM guest did not boot within ${kvm_boot_timeout} s" \
            "KVM guest did not boot within ${kvm_boot_timeout} s" \
            "$console" "$work/console-kvm.log"
    elif ((status == 3)) && [ "$accel" = auto ]; then
        # Remembered like a hang (nested KVM that refuses an MSR does so
        # every time), so later runs go straight to TCG.
        why=$(grep -v 'not connected to host network' "$work/qemu.log" | head -n 1 | cut -c1-200)
        tcg_instead "QEMU could not start a KVM guest: $why" \
            "QEMU could not start a KVM guest ($why)" \
            "QEMU could not start a KVM guest" \
            "$work/qemu.log" "$work/qemu-kvm.log"
    fi
else
    boot tcg "$tcg_boot_timeout" 2>>"$work/shell.log" || status=$?
fi
# A TCG guest on a host whose CPUs are taken by other work can stall in its
# boot (RCU stalls on its console, its timer wake-ups never come; seen once
# in a CI run with two guests and the tests beside them): that is the lab
# failing, not what a script measures, so it boots once more and says so.
retried=""
if ((status == 1)) && [ "$accel_used" = tcg ]; then
    echo "$prog: the TCG guest did not boot within ${tcg_boot_timeout} s: booting once more (its console is kept as console-stalled.log)" >&2
    cp "$console" "$out/console-stalled.log"
    retried="the first TCG guest did not boot within ${tcg_boot_timeout} s (console-stalled.log): booted once more"
    t0=$(date +%s.%N)
    status=0
    boot tcg "$tcg_boot_timeout" 2>>"$work/shell.log" || status=$?
fi
total_s=$(since "$t0")
cp "$console" "$out/console.log"

# Guest uptimes at the markers: boot (kernel to /init), ready (topology up), exit.
mark() { sed -n "s/^.*NICLAB-$1 \([^ ]*\)\( \([0-9.]*\)\)\{0,1\}.*/\1 \3/p" "$out/console.log" | head -n 1; }
booted=$(mark BOOTED | awk '{print $1}')
ready=$(mark READY | awk '{print $1}')
exited=$(mark EXIT | awk '{print $2}')
{
    echo "accelerator: $accel_used ($accel_why)"
    echo "ports: 4 x $nic; $qemu_version ($qemu)"
    if [ "$nic" != igb ]; then
        echo "igb RX unlatch workaround: not used ($nic)"
    elif $unlatch; then
        echo "igb RX unlatch workaround: ran (scripts/nic-lab/igb-rx-unlatch.c): $(grep -o '[0-9]* latch(es) released' "$out/unlatch.log" 2>/dev/null | awk '{s += $1} END {print s + 0}') latches released"
    else
        echo "igb RX unlatch workaround: off (--no-unlatch): QEMU stamps only the first received PTP frame"
    fi
    echo "kernel: $kver; initramfs: $(stat -c %s "$work/initrd") bytes (base $(stat -c %s "$base"))"
    echo "initramfs build/cache: ${build_s} s"
    echo "guest uptime at /init: ${booted:-?} s, topology ready: ${ready:-?} s, script done: ${exited:-?} s"
    echo "wall time of QEMU: $total_s s"
    [ -z "$retried" ] || echo "boot: $retried"
} > "$out/lab.txt"

case $status in
3) die "QEMU ended before the guest booted: $(grep -v 'not connected to host network' "$work/qemu.log" | head -c 600)" ;;
1) die "the guest did not boot within ${boot_limit} s ($accel_used): see $out/console.log" ;;
2)
    fail=$(sed -n 's/^.*NICLAB-FAIL //p' "$out/console.log" | head -n 1)
    die "the guest did not finish${fail:+: $fail}: see $out/console.log (and $work/qemu.log: $(head -c 300 "$work/qemu.log"))"
    ;;
esac
[ -f "$out/exit" ] || die "the guest wrote no exit code: see $out/console.log"
rc=$(cat "$out/exit")
echo "$prog: $accel_used; boot to /init ${booted:-?} s, ready ${ready:-?} s, script exit $rc at ${exited:-?} s (guest uptime); wall ${total_s} s; results in $out" >&2
cat "$out/stdout"
cat "$out/stderr" >&2
exit "$rc"
