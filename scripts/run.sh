#!/usr/bin/env bash
# The main job on the built-in default: installs everything, builds the
# guest agent and the controller, builds the Debian desktop guest image
# (cached after the first time), then starts VMs from it through the
# controller's pool — the first start boots once and saves the ready
# snapshot, every later one restores it — and checks each (agent health,
# a file opened in the editor, host and guest screenshots).
#
#   scripts/run.sh [--count N] [--parallel N]
#
# Screenshots go to target/run/. Run as root (the image build uses
# debootstrap and loop mounts).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
count=3
parallel=1
while (($#)); do
  case $1 in
    --count) count=$2; shift 2 ;;
    --parallel) parallel=$2; shift 2 ;;
    *) echo "usage: $0 [--count N] [--parallel N]" >&2; exit 2 ;;
  esac
done

scripts/install-deps.sh
export PATH=$HOME/.cargo/bin:$PATH
# Two builds: one would unify features across both packages and change the
# agent binary (and with it the image's recipe hash) against scripts/test.sh.
cargo build --release -p deskenv-guest-agent
cargo build --release -p deskenv-controller
deskenv=target/release/deskenv

echo "== guest image"
"$deskenv" image build --recipe vm-images/debian-desktop

echo "== VMs through the pool ($count, $parallel at a time)"
"$deskenv" vm smoke --count "$count" --parallel "$parallel" --out target/run
echo "host screenshots: target/run/vm*.png"
