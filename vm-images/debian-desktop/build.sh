#!/usr/bin/env bash
# Builds the deskenv guest image: Debian (bookworm) minbase + X11 desktop
# (Xorg/modesetting on virtio-vga at 1920x1080, openbox, AT-SPI) + the
# data-science packages in packages.txt + the deskenv guest agent as a
# systemd service. Output: base.qcow2 (compressed), vmlinuz, initrd.img
# (direct boot, no bootloader) and manifest.json. Run as root.
#
#   build.sh [--out DIR] [--mirror URL] [--suite bookworm] [--agent PATH] [--force]
#   build.sh --print-hash [--suite S] [--agent PATH]   # the recipe hash, then exit
#
# Without --agent, the guest agent is built here, always the same way:
# `cargo build --release --locked --workspace --bin deskenv-agent` into
# target/release/. --workspace unifies features over every member, exactly
# as `cargo build --release --workspace` does, so the two share one build
# and a release build of the workspace leaves the agent (and the recipe
# hash) as it is; a no-op when it is up to date.
# Default DIR: $DESKENV_IMAGES/debian-desktop-<recipehash12>/, where
# DESKENV_IMAGES defaults to ~/.cache/deskenv/images (`deskenv image build`
# sets it to its cache).
# If DIR already holds a complete manifest for the same recipe hash, prints
# "cached" and exits 0.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

out=""
mirror=http://deb.debian.org/debian
suite=bookworm
agent=""
force=0
print_hash=0
disk_size=8G

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while (($#)); do
  case $1 in
    --out) out=$2; shift 2 ;;
    --mirror) mirror=$2; shift 2 ;;
    --suite) suite=$2; shift 2 ;;
    --agent) agent=$2; shift 2 ;;
    --force) force=1; shift ;;
    --print-hash) print_hash=1; shift ;;
    -h|--help) usage 0 ;;
    *) echo "build.sh: unknown argument $1" >&2; usage ;;
  esac
done

log() { echo "build.sh [$(date -u +%H:%M:%S)]: $*" >&2; }
die() { log "error: $*"; exit 1; }

# --- the guest agent ----------------------------------------------------------
# Built by the user who ran sudo, if any, so target/ stays theirs. RUSTFLAGS
# and friends are dropped: the binary depends on the sources, Cargo.lock, the
# toolchain and the release profile only.
build_agent() {
  local user=${SUDO_USER:-root} home cargo
  [[ $(id -u) -eq 0 ]] || user=$(id -un)
  home=$(getent passwd "$user" | cut -d: -f6)
  [[ -f $repo/Cargo.toml && -f $repo/Cargo.lock ]] \
    || die "no Cargo.toml/Cargo.lock in $repo to build the guest agent from: pass --agent PATH"
  cargo=$(command -v cargo || true)
  [[ -n $cargo ]] || cargo=$home/.cargo/bin/cargo
  [[ -x $cargo ]] || die "cargo not found (on PATH or $home/.cargo/bin) to build the guest agent: install Rust or pass --agent PATH"
  local cmd=(env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS -u CARGO_BUILD_RUSTFLAGS -u CARGO_TARGET_DIR
    -u CARGO_BUILD_TARGET -u CARGO_PROFILE_RELEASE_DEBUG -u CARGO_PROFILE_RELEASE_OPT_LEVEL
    HOME="$home" PATH="$(dirname "$cargo"):$PATH"
    "$cargo" build --release --locked --workspace --bin deskenv-agent
    --manifest-path "$repo/Cargo.toml" --target-dir "$repo/target")
  if [[ $(id -u) -eq 0 && $user != root ]]; then
    runuser -u "$user" -- "${cmd[@]}" >&2 || die "building the guest agent failed: ${cmd[*]}"
  else
    "${cmd[@]}" >&2 || die "building the guest agent failed: ${cmd[*]}"
  fi
  agent=$repo/target/release/deskenv-agent
  log "guest agent: $agent"
}
if [[ -z $agent ]]; then
  build_agent
fi
[[ -x $agent ]] || die "agent binary $agent not found or not executable (--agent)"

# --- recipe hash: the recipe files, the agent binary, the suite -----------
recipe_hash=$(
  cd "$here"
  {
    echo "suite=$suite"
    find build.sh packages.txt overlay -type f | LC_ALL=C sort | while read -r f; do
      echo "$f $(stat -c %a "$f") $(sha256sum < "$f" | cut -d' ' -f1)"
    done
    echo "agent $(sha256sum < "$agent" | cut -d' ' -f1)"
  } | sha256sum | cut -d' ' -f1
)
if ((print_hash)); then
  echo "$recipe_hash"
  exit 0
fi
[[ $(id -u) -eq 0 ]] || die "run as root (debootstrap, loop mounts, chroot)"
for t in debootstrap qemu-img mkfs.ext4 losetup fstrim sha256sum jq strip; do
  command -v "$t" >/dev/null || die "missing $t (apt-get install debootstrap qemu-utils e2fsprogs util-linux jq binutils)"
done
[[ -n $out ]] || out=${DESKENV_IMAGES:-${XDG_CACHE_HOME:-$HOME/.cache}/deskenv/images}/debian-desktop-${recipe_hash:0:12}
mkdir -p "$out"
out=$(cd "$out" && pwd)

if ((!force)) && [[ -f $out/manifest.json && -f $out/base.qcow2 && -f $out/vmlinuz && -f $out/initrd.img ]] \
  && [[ $(jq -r '.recipe_hash // ""' "$out/manifest.json" 2>/dev/null) == "$recipe_hash" ]] \
  && [[ $(jq -r '.complete // false' "$out/manifest.json") == true ]]; then
  echo "cached"
  echo "$out"
  exit 0
fi
log "recipe hash $recipe_hash; building into $out"

work=$out/.build
mnt=$work/mnt
raw=$work/disk.raw
rm -f "$out/manifest.json"

# Processes left running inside the chroot would keep the root file system
# busy: killed, so that it really unmounts (a second mount of the same raw
# file on another loop device, as the fstrim step makes, would corrupt it).
kill_chroot_processes() {
  local p
  for p in /proc/[0-9]*; do
    [[ $(readlink "$p/root" 2>/dev/null) == "$mnt" ]] && kill -9 "${p#/proc/}" 2>/dev/null
  done
  sleep 0.5
}
cleanup() {
  set +e
  kill_chroot_processes
  for m in dev/pts dev proc sys run; do
    mountpoint -q "$mnt/$m" 2>/dev/null && umount -l "$mnt/$m"
  done
  mountpoint -q "$mnt" 2>/dev/null && umount "$mnt"
  [[ -n ${loopdev:-} ]] && losetup -d "$loopdev" 2>/dev/null
}
trap cleanup EXIT

declare -A phase
t_all=$SECONDS
t=$SECONDS
stamp() { phase[$1]=$((SECONDS - t)); log "phase $1: ${phase[$1]}s"; t=$SECONDS; }

# --- disk ------------------------------------------------------------------
rm -rf "$work"
mkdir -p "$mnt"
truncate -s "$disk_size" "$raw"
mkfs.ext4 -q -F -L root "$raw"
loopdev=$(losetup --find --show "$raw")
mount "$loopdev" "$mnt"

# --- debootstrap (minbase) --------------------------------------------------
debootstrap --variant=minbase --components=main "$suite" "$mnt" "$mirror" > "$work/debootstrap.log" 2>&1 \
  || { tail -30 "$work/debootstrap.log" >&2; die "debootstrap failed (log: $work/debootstrap.log)"; }
stamp debootstrap

# --- packages ----------------------------------------------------------------
cp -a "$here/overlay/etc/dpkg/." "$mnt/etc/dpkg/"
cp -a "$here/overlay/etc/initramfs-tools" "$mnt/etc/"
mount -t proc proc "$mnt/proc"
mount -t sysfs sysfs "$mnt/sys"
mount --bind /dev "$mnt/dev"
mount --bind /dev/pts "$mnt/dev/pts"
mount -t tmpfs tmpfs "$mnt/run"
cp -L /etc/resolv.conf "$mnt/etc/resolv.conf"
cat > "$mnt/etc/apt/sources.list" <<SRC
deb $mirror $suite main
deb $mirror $suite-updates main
SRC
if [[ $suite == bookworm ]]; then
  echo "deb ${mirror%/debian}/debian-security $suite-security main" >> "$mnt/etc/apt/sources.list"
fi
printf '#!/bin/sh\nexit 101\n' > "$mnt/usr/sbin/policy-rc.d"
chmod +x "$mnt/usr/sbin/policy-rc.d"
echo 'APT::Install-Recommends "false"; APT::Install-Suggests "false"; Acquire::Retries "3"; Dpkg::Options { "--force-confdef"; "--force-confold"; };' \
  > "$mnt/etc/apt/apt.conf.d/90deskenv"

mapfile -t pkgs < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$here/packages.txt" | grep -v '^$')
in_chroot() { chroot "$mnt" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
  DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 HOME=/root "$@"; }
in_chroot apt-get update -q > "$work/apt.log" 2>&1 || { tail -30 "$work/apt.log" >&2; die "apt-get update failed"; }
in_chroot apt-get install -y -q -o DPkg::Lock::Timeout=300 "${pkgs[@]}" >> "$work/apt.log" 2>&1 \
  || { tail -40 "$work/apt.log" >&2; die "apt-get install failed (log: $work/apt.log)"; }
stamp packages

# --- configure ---------------------------------------------------------------
cp -a "$here/overlay/." "$mnt/"
strip -o "$mnt/usr/local/bin/deskenv-agent" "$agent"
chmod 755 "$mnt/usr/local/bin/deskenv-agent" "$mnt/usr/local/bin/deskenv-session" \
  "$mnt/usr/local/bin/deskenv-warmup"
# The agent sets the clock after a snapshot restore (POST /v1/clock). A file
# capability: the agent runs as "user", and its children do not inherit it.
in_chroot setcap cap_sys_time+ep /usr/local/bin/deskenv-agent
echo deskenv > "$mnt/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 deskenv\n::1 localhost ip6-localhost ip6-loopback\n' > "$mnt/etc/hosts"
echo 'LABEL=root / ext4 rw,relatime,errors=remount-ro 0 1' > "$mnt/etc/fstab"
echo 'nameserver 10.0.2.3' > "$mnt/etc/resolv.conf"
echo 'LANG=C.UTF-8' > "$mnt/etc/default/locale"
in_chroot passwd -d root > /dev/null
# The desktop user, as in OSWorld's images (password "password").
in_chroot useradd -m -u 1000 -U -s /bin/bash -G video,audio,input,sudo user
echo 'user:password' | in_chroot chpasswd
in_chroot systemctl enable systemd-networkd.service deskenv-xorg.service deskenv-session.service deskenv-marker.service deskenv-markers.service \
  serial-getty@ttyS0.service >/dev/null 2>&1
in_chroot systemctl set-default multi-user.target >/dev/null 2>&1
# Nothing here should delay the desktop or wake up later and steal the CPU.
for u in systemd-networkd-wait-online.service apt-daily.timer apt-daily-upgrade.timer \
  man-db.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer dpkg-db-backup.timer \
  systemd-timesyncd.service getty@tty1.service; do
  in_chroot systemctl mask "$u" >/dev/null 2>&1 || true
done
# text/plain opens in mousepad (xdg-open, /v1/open).
mkdir -p "$mnt/home/user/.config"
in_chroot env HOME=/home/user xdg-mime default org.xfce.mousepad.desktop text/plain
in_chroot chown -R user:user /home/user
# LibreOffice: no tip-of-the-day dialog or first-start wizard in the way.
lo=$mnt/home/user/.config/libreoffice/4/user
mkdir -p "$lo"
# (The same file seeds each desktop of the controller's local provider.)
cp "$here/overlay/etc/deskenv/libreoffice-registrymodifications.xcu" "$lo/registrymodifications.xcu"
in_chroot chown -R user:user /home/user/.config
# pyautogui for the agent's --python-fallback, pinned (PyPI is reachable
# where Debian's mirrors are).
# pip in the chroot trusts the host's CA bundle (a package-registry proxy may
# sign with its own CA, which the host trusts and Debian's bundle does not).
host_ca=${PIP_CERT:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}
cp -L "$host_ca" "$mnt/tmp/deskenv-host-ca.crt"
# (PIP_CERT reaches pip's own subprocesses, which --cert does not; the
# sdists build against Debian's setuptools and wheel, without isolation.)
in_chroot env PIP_CERT=/tmp/deskenv-host-ca.crt python3 -m pip install -q --no-cache-dir \
  --break-system-packages --no-build-isolation pyautogui==0.9.54 > "$work/pip.log" 2>&1 \
  || { tail -30 "$work/pip.log" >&2; die "pip install pyautogui failed (log: $work/pip.log)"; }
rm -f "$mnt/tmp/deskenv-host-ca.crt"
# Matplotlib draws without a display server if asked to; keep its cache warm.
in_chroot python3 -c 'import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot' >/dev/null 2>&1 || true
rm -f "$mnt/usr/sbin/policy-rc.d"
in_chroot update-initramfs -u -k all > "$work/initramfs.log" 2>&1 || { cat "$work/initramfs.log" >&2; die "update-initramfs failed"; }
kver=$(find "$mnt/lib/modules" -mindepth 1 -maxdepth 1 -printf "%f\n" | sort -V | tail -1)
cp "$mnt/boot/vmlinuz-$kver" "$out/vmlinuz"
cp "$mnt/boot/initrd.img-$kver" "$out/initrd.img"
# shellcheck disable=SC2016 # dpkg-query's format, not a shell expansion
in_chroot dpkg-query -W -f '${Package}\t${Version}\n' | LC_ALL=C sort > "$work/packages.tsv"
in_chroot apt-get clean
rm -rf "$mnt/var/lib/apt/lists/"* "$mnt/var/cache/debconf/"*-old "$mnt/var/log/"*.log \
  "$mnt/root/.cache" "$mnt/tmp/"*
: > "$mnt/etc/machine-id"
stamp configure

# --- image -------------------------------------------------------------------
used_kb=$(df -k --output=used "$mnt" | tail -1)
cleanup
mountpoint -q "$mnt" && die "$mnt is still mounted after the build: $(fuser -vm "$mnt" 2>&1 | tr '\n' ' ')"
loopdev=""
# fstrim needs a mounted fs on a device that passes discards: loop does.
loopdev=$(losetup --find --show "$raw")
mount "$loopdev" "$mnt"
fstrim "$mnt"
umount "$mnt"
e2fsck -fy "$loopdev" > /dev/null 2>&1 || true
e2fsck -fn "$loopdev" > "$work/e2fsck.log" 2>&1 || { tail -20 "$work/e2fsck.log" >&2; die "the image's file system has errors (log: $work/e2fsck.log)"; }
losetup -d "$loopdev"
loopdev=""
stamp fstrim
qemu-img convert -c -O qcow2 "$raw" "$out/base.qcow2.tmp"
mv "$out/base.qcow2.tmp" "$out/base.qcow2"
stamp convert

image_sha=$(sha256sum "$out/base.qcow2" | cut -d' ' -f1)
kernel_sha=$(sha256sum "$out/vmlinuz" | cut -d' ' -f1)
initrd_sha=$(sha256sum "$out/initrd.img" | cut -d' ' -f1)
phases_json=$(for k in "${!phase[@]}"; do echo "$k ${phase[$k]}"; done \
  | jq -Rn '[inputs | split(" ") | {(.[0]): (.[1]|tonumber)}] | add')
jq -n \
  --arg recipe_hash "$recipe_hash" --arg suite "$suite" --arg mirror "$mirror" \
  --arg kver "$kver" --arg image_sha "$image_sha" --arg kernel_sha "$kernel_sha" \
  --arg initrd_sha "$initrd_sha" --arg agent_sha "$(sha256sum < "$agent" | cut -d' ' -f1)" \
  --arg built "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
  --argjson image_bytes "$(stat -c %s "$out/base.qcow2")" \
  --argjson used_kb "$used_kb" --argjson build_s "$((SECONDS - t_all))" \
  --argjson phases "$phases_json" \
  --rawfile pkgtsv "$work/packages.tsv" \
  '{
    name: "debian-desktop", complete: true, recipe_hash: $recipe_hash, built_at: $built,
    suite: $suite, mirror: $mirror, kernel_version: $kver,
    kernel_cmdline: "root=/dev/vda rw console=tty0 console=ttyS0,115200 net.ifnames=0 video=Virtual-1:1920x1080",
    guest: {
      agent_port: 5000, user: "user", password: "password",
      screen: {width: 1920, height: 1080},
      markers: {multiuser: "DESKENV-MULTIUSER", x_ready: "DESKENV-X-READY", agent_ready: "DESKENV-AGENT-READY", error: "DESKENV-ERROR"},
      warmup: ["/usr/local/bin/deskenv-warmup"],
      clock: "agent"
    },
    files: {
      image: {path: "base.qcow2", format: "qcow2", sha256: $image_sha, bytes: $image_bytes},
      kernel: {path: "vmlinuz", sha256: $kernel_sha},
      initrd: {path: "initrd.img", sha256: $initrd_sha}
    },
    agent_sha256: $agent_sha, fs_used_kib: $used_kb,
    build_seconds: $build_s, build_phases_seconds: $phases,
    packages: ($pkgtsv | split("\n") | map(select(length > 0) | split("\t") | {(.[0]): .[1]}) | add)
  }' > "$out/manifest.json.tmp"
mv "$out/manifest.json.tmp" "$out/manifest.json"
rm -rf "$work"
log "done in $((SECONDS - t_all))s: $out/base.qcow2 ($(du -h "$out/base.qcow2" | cut -f1)), kernel $kver"
echo "$out"
