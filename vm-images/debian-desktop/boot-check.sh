#!/usr/bin/env bash
# Cold-boots the guest image once through the controller and checks it end
# to end: `deskenv vm smoke --cold --count 1` (serial boot markers, the
# guest agent's /v1/health with AT-SPI up at 1920x1080, a text file opened
# with its default application, a guest and a host screenshot). The QEMU
# command line is the controller's (`QemuProvider::device_args`): there is
# no copy of it here.
#
#   boot-check.sh [--image-dir DIR] [--accel auto|tcg|kvm] [--memory MIB]
#                 [--screenshot FILE] [--deskenv PATH]
#
# DIR defaults to the newest built image. A failed boot's logs are kept in
# <cache>/failed/ (the controller does it). Exit status 0 only if every
# check passed.
set -euo pipefail

deskenv=${DESKENV:-}
args=()
accel=tcg
shot=""
while (($#)); do
  case $1 in
    --image-dir) args+=(--image "$2"); shift 2 ;;
    --accel) accel=$2; shift 2 ;;
    --memory) args+=(--memory "$2"); shift 2 ;;
    --screenshot) shot=$2; shift 2 ;;
    --deskenv) deskenv=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "boot-check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ -z $deskenv ]]; then
  root=$(cd "$(dirname "$0")/../.." && pwd)
  for c in "$(command -v deskenv || true)" "$root/target/release/deskenv" "$root/target/debug/deskenv"; do
    [[ -n $c && -x $c ]] && { deskenv=$c; break; }
  done
fi
[[ -n $deskenv ]] || { echo "boot-check.sh: no deskenv binary: cargo build --release -p deskenv-controller, or pass --deskenv" >&2; exit 2; }

out=$(mktemp -d /tmp/deskenv-boot-check.XXXXXX)
trap 'rm -rf "$out"' EXIT
"$deskenv" vm smoke --cold --count 1 --out "$out" --accel "$accel" "${args[@]}"
if [[ -n $shot ]]; then
  cp "$out/vm0.png" "$shot"
fi
