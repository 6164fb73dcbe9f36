#!/usr/bin/env bash
# The main job on the built-in default: installs everything, builds the
# guest agent and the controller, builds the Debian desktop guest image
# (cached after the first time), then runs the example suite
# (tasks/examples) with the scripted agent (each task's oracle solution),
# each task in a fresh VM restored from the ready snapshot (the first start
# boots once and saves it), and prints the summary.
#
#   scripts/run.sh [--parallel N] [--agent scripted|noop]
#
# Results (OSWorld's layout: trajectories, screenshots, result.json) go to
# target/run/results/. Run as root (the image build uses debootstrap and
# loop mounts).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
parallel=1
agent=scripted
while (($#)); do
  case $1 in
    --parallel) parallel=$2; shift 2 ;;
    --agent) agent=$2; shift 2 ;;
    *) echo "usage: $0 [--parallel N] [--agent scripted|noop]" >&2; exit 2 ;;
  esac
done

scripts/install-deps.sh
export PATH=$HOME/.cargo/bin:$PATH
# The image build builds the guest agent itself, in a fixed way and in its
# own target dir (vm-images/debian-desktop/build.sh), so what is built here
# never changes which image is current.
cargo build --release -p deskenv-controller
deskenv=target/release/deskenv

echo "== guest image"
"$deskenv" image build --recipe vm-images/debian-desktop

echo "== the example suite with the $agent agent"
rm -rf "target/run/results/pyautogui/screenshot/$agent"
"$deskenv" run --tasks tasks/examples --agent "$agent" --parallel "$parallel" --out target/run/results
