#!/usr/bin/env bash
# Installs everything, builds deskenv-agent, starts a headless desktop with
# two GTK applications, and serves it on 127.0.0.1:5000 until Ctrl-C.
#
#   scripts/run-local.sh [--listen ADDR] [--display :N] [--once]
#
# --once checks the agent (health, screenshot, a11y tree, an action) and
# exits, instead of serving.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
listen=127.0.0.1:5000
display=:50
once=0
while (($#)); do
  case $1 in
    --listen) listen=$2; shift 2 ;;
    --display) display=$2; shift 2 ;;
    --once) once=1; shift ;;
    *) echo "usage: $0 [--listen ADDR] [--display :N] [--once]" >&2; exit 2 ;;
  esac
done

scripts/install-deps.sh
export PATH=$HOME/.cargo/bin:$PATH
cargo build --release --bin deskenv-agent --bin deskenv-desktop

target/release/deskenv-desktop stop "$display"
env_file=$(target/release/deskenv-desktop start "$display")
# shellcheck disable=SC1090
source "$env_file"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  target/release/deskenv-desktop stop "$display"
}
trap cleanup EXIT INT TERM

gtk3-widget-factory >/dev/null 2>&1 &
pids+=($!)
echo "deskenv works" >/tmp/deskenv-notes.txt
mousepad /tmp/deskenv-notes.txt >/dev/null 2>&1 &
pids+=($!)

target/release/deskenv-agent --listen "$listen" --display "$display" &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://$listen/v1/health" >/dev/null && break; sleep 0.1; done

base=http://$listen
echo
echo "deskenv-agent serves display $display at $base"
curl -sf "$base/v1/health"; echo
sleep 2
curl -sf -o /tmp/deskenv-screenshot.png -D - "$base/v1/screenshot" | grep -i '^x-'
echo "screenshot: /tmp/deskenv-screenshot.png"
curl -sf "$base/v1/a11y?format=linear" | /usr/bin/python3 -c '
import json, sys
t = json.load(sys.stdin)
print("a11y: %d nodes in %.0f ms" % (t["nodes"], t["elapsed_ms"]))
print("\n".join(t["text"].splitlines()[:8]))'
curl -sf -H 'Content-Type: application/json' -d '{"code": "pyautogui.click(960, 540)"}' "$base/v1/pyautogui"; echo
if ((once)); then
  exit 0
fi
echo
echo "Try: curl '$base/v1/a11y?format=linear'   |   see guest-agent/openapi.yaml. Ctrl-C stops."
wait
