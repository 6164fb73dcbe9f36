#!/usr/bin/env bash
# Cold-boots the guest image once under QEMU (TCG by default) on a
# throw-away qcow2 overlay and checks it end to end: serial markers
# (DESKENV-MULTIUSER, DESKENV-X-READY, DESKENV-AGENT-READY), then the guest
# agent's /v1/health through a slirp host forward (atspi true, screen
# 1920x1080), then (unless --no-app) opens a text file with its default
# application through the agent (/v1/open: xdg-open -> mousepad) and checks
# that the AT-SPI tree shows it, and imports the data-science stack with
# python3 (plus sqlite3, ffmpeg) through /v1/exec; then a /v1/screenshot PNG. Prints the timings, quits QEMU via
# QMP and removes the overlay.
#
#   boot-check.sh [--image-dir DIR] [--accel tcg|kvm] [--cpu MODEL] [--timeout SECS]
#                 [--screenshot FILE] [--keep-logs DIR] [--no-app]
#
# --cpu defaults to "max": with QEMU 10.0 (bookworm-backports) multi-threaded
# TCG and the default qemu64 CPU, the guest kernel stalled (RCU stall, CPU 0
# timer never fired) right after the i8042 probe; "-cpu max" or
# "-accel tcg,thread=single" both boot.
#
# DIR defaults to the newest ~/.cache/deskenv/images/debian-desktop-*/ that
# has a manifest.json. Exit status 0 only if every check passed.
set -euo pipefail

image_dir=""
accel=tcg
cpu=max
timeout=300
shot=""
keep=""
app=1
while (($#)); do
  case $1 in
    --image-dir) image_dir=$2; shift 2 ;;
    --accel) accel=$2; shift 2 ;;
    --cpu) cpu=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --screenshot) shot=$2; shift 2 ;;
    --keep-logs) keep=$2; shift 2 ;;
    --no-app) app=0; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "boot-check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
log() { echo "boot-check.sh: $*" >&2; }
die() { log "FAIL: $*"; exit 1; }

if [[ -z $image_dir ]]; then
  image_dir=$(ls -dt "${XDG_CACHE_HOME:-$HOME/.cache}"/deskenv/images/debian-desktop-*/ 2>/dev/null \
    | while read -r d; do [[ -f $d/manifest.json ]] && { echo "${d%/}"; break; }; done || true)
  [[ -n $image_dir ]] || die "no built image found; run build.sh or pass --image-dir"
fi
for f in base.qcow2 vmlinuz initrd.img manifest.json; do
  [[ -f $image_dir/$f ]] || die "$image_dir/$f missing"
done
image_dir=$(cd "$image_dir" && pwd)
cmdline=$(jq -r '.kernel_cmdline' "$image_dir/manifest.json")

tmp=$(mktemp -d /tmp/deskenv-boot-check.XXXXXX)
[[ -n $shot ]] || shot=$tmp/screenshot.png
qpid=""
finish() {
  set +e
  if [[ -n $qpid ]] && kill -0 "$qpid" 2>/dev/null; then
    qmp quit >/dev/null 2>&1
    for _ in $(seq 50); do kill -0 "$qpid" 2>/dev/null || break; sleep 0.1; done
    kill "$qpid" 2>/dev/null
  fi
  [[ -n $keep ]] && { mkdir -p "$keep"; cp "$tmp"/serial.log "$tmp"/qemu.log "$keep"/ 2>/dev/null; }
  rm -f "$tmp/overlay.qcow2"
  [[ $shot == "$tmp"/* ]] || rm -rf "$tmp"
}
trap finish EXIT

# One QMP command over the unix socket (capabilities handshake first).
qmp() {
  python3 - "$tmp/qmp.sock" "$1" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rw")
def rd():
    while True:
        m = json.loads(f.readline())
        if "event" not in m: return m
rd(); f.write(json.dumps({"execute": "qmp_capabilities"}) + "\n"); f.flush(); rd()
f.write(json.dumps({"execute": sys.argv[2]}) + "\n"); f.flush(); print(json.dumps(rd()))
PY
}

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
qemu-img create -q -f qcow2 -b "$image_dir/base.qcow2" -F qcow2 "$tmp/overlay.qcow2"

t0=$(date +%s.%N)
since() { python3 -c "import sys; print(f'{float(sys.argv[1])-float(sys.argv[2]):.1f}')" "$(date +%s.%N)" "$t0"; }
qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -m 3072 -smp 2 \
  -kernel "$image_dir/vmlinuz" -initrd "$image_dir/initrd.img" -append "$cmdline" \
  -drive file="$tmp/overlay.qcow2",if=virtio,format=qcow2 \
  -device virtio-vga,xres=1920,yres=1080 -display none \
  -netdev user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$port-:5000 -device virtio-net-pci,netdev=n0 \
  -qmp unix:"$tmp/qmp.sock",server,nowait -serial file:"$tmp/serial.log" \
  > "$tmp/qemu.log" 2>&1 &
qpid=$!
log "qemu pid $qpid, accel $accel, cpu $cpu, host port $port -> guest :5000, image $image_dir"

deadline=$((SECONDS + timeout))
declare -A seen
order=("Linux version" "Run /init" "Welcome to" DESKENV-MULTIUSER DESKENV-X-READY DESKENV-AGENT-READY)
for m in "${order[@]}"; do
  until grep -q "$m" "$tmp/serial.log" 2>/dev/null; do
    kill -0 "$qpid" 2>/dev/null || { cat "$tmp/qemu.log" >&2; die "qemu exited"; }
    if grep -q "DESKENV-ERROR" "$tmp/serial.log" 2>/dev/null; then
      grep "DESKENV-ERROR" "$tmp/serial.log" >&2; die "guest reported an error"
    fi
    ((SECONDS < deadline)) || { tail -30 "$tmp/serial.log" >&2; die "timed out waiting for '$m'"; }
    sleep 0.1
  done
  seen[$m]=$(since)
  guest=""
  [[ $m == DESKENV-* ]] && guest=$(grep -a -o "$m [0-9.]*" "$tmp/serial.log" | head -1 | awk '{print $2}' || true)
  log "$(printf '%-22s host %6ss%s' "$m" "${seen[$m]}" "${guest:+   (guest uptime ${guest}s)}")"
done

health=""
until health=$(curl -sf --max-time 5 "http://127.0.0.1:$port/v1/health") \
  && jq -e '.atspi == true and .screen.width == 1920 and .screen.height == 1080' <<<"$health" >/dev/null; do
  ((SECONDS < deadline)) || die "agent not healthy in time; last /v1/health: ${health:-none}"
  sleep 0.2
done
t_healthy=$(since)
log "agent healthy           host ${t_healthy}s: $health"

t_open=""; t_a11y=""
if ((app)); then
  base=http://127.0.0.1:$port
  printf 'deskenv boot check\nopened by xdg-open\n' \
    | curl -sf --max-time 30 -X PUT --data-binary @- "$base/v1/files?path=/tmp/boot-check.txt" >/dev/null \
    || die "PUT /v1/files failed"
  t1=$(date +%s.%N)
  opened=$(curl -sS --max-time 60 -H 'content-type: application/json' \
    -d '{"path":"/tmp/boot-check.txt","timeout_ms":45000}' "$base/v1/open") || die "/v1/open failed"
  jq -e '.window' <<<"$opened" >/dev/null || die "/v1/open: $opened"
  t_open=$(python3 -c "import sys,time; print(f'{time.time()-float(sys.argv[1]):.1f}')" "$t1")
  log "opened boot-check.txt in ${t_open}s: $(jq -c '.window' <<<"$opened")"
  t1=$(date +%s.%N)
  until tree=$(curl -sf --max-time 30 "$base/v1/a11y?format=linear&app=mousepad") \
    && jq -e '.applications >= 1 and .nodes > 20 and (.text | test("deskenv boot check|File"))' <<<"$tree" >/dev/null; do
    ((SECONDS < deadline)) || die "mousepad not in the AT-SPI tree; last: $(head -c 500 <<<"${tree:-}")"
    sleep 0.5
  done
  t_a11y=$(python3 -c "import sys,time; print(f'{time.time()-float(sys.argv[1]):.1f}')" "$t1")
  log "AT-SPI tree shows mousepad after ${t_a11y}s more ($(jq -c '{nodes, applications, elapsed_ms}' <<<"$tree"); file text in tree: $(jq '.text | test("deskenv boot check")' <<<"$tree"))"
fi

t_py=""
if ((app)); then
  # The data-science stack and tools the tasks use, run through /v1/exec.
  ran=$(curl -sS --max-time 150 -H 'content-type: application/json' -d '{"timeout_ms":140000,"command":
    "python3 -c \"import numpy, pandas, scipy, sklearn, matplotlib, seaborn; matplotlib.use(chr(65)+chr(103)+chr(103)); print(pandas.__version__, sklearn.__version__)\" && sqlite3 -version | cut -d\" \" -f1 && ffmpeg -version | head -1 | cut -d\" \" -f1-3"}' \
    "http://127.0.0.1:$port/v1/exec") || die "/v1/exec failed"
  jq -e '.exit_code == 0' <<<"$ran" >/dev/null || die "python/sqlite3/ffmpeg check: $ran"
  t_py=$(jq '.duration_ms / 1000 | . * 10 | round / 10' <<<"$ran")
  log "python3 data-science imports + sqlite3 + ffmpeg ok in ${t_py}s: $(jq -r '.stdout' <<<"$ran" | tr '\n' ' ')"
fi

curl -sf --max-time 30 -o "$shot" -D "$tmp/shot.headers" "http://127.0.0.1:$port/v1/screenshot" \
  || die "/v1/screenshot failed"
dims=$(python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print("%dx%d" % struct.unpack(">II", d[16:24]))' "$shot")
[[ $dims == 1920x1080 ]] || die "screenshot is $dims, wanted 1920x1080"
log "screenshot $dims -> $shot ($(stat -c %s "$shot") bytes)"

t_quit=$(date +%s.%N)
qmp quit >/dev/null
wait "$qpid" 2>/dev/null || true
qpid=""
log "qemu quit via QMP in $(python3 -c "import sys,time; print(f'{time.time()-float(sys.argv[1]):.2f}')" "$t_quit")s"

jq -n --arg accel "$accel" --arg image "$image_dir" --arg shot "$shot" \
  --argjson kernel "${seen["Linux version"]}" --argjson init "${seen["Run /init"]}" \
  --argjson systemd "${seen["Welcome to"]}" --argjson multiuser "${seen[DESKENV-MULTIUSER]}" \
  --argjson x "${seen[DESKENV-X-READY]}" --argjson agent "${seen[DESKENV-AGENT-READY]}" \
  --argjson healthy "$t_healthy" --arg open "$t_open" --arg a11y "$t_a11y" --arg py "$t_py" \
  --arg cpu "$cpu" '{ok: true, accel: $accel, cpu: $cpu, image_dir: $image, screenshot: $shot,
    seconds_from_qemu_start: {kernel: $kernel, initramfs: $init, systemd: $systemd,
      multi_user: $multiuser, x_ready: $x, agent_ready: $agent, agent_healthy: $healthy},
    open_text_file_seconds: (if $open == "" then null else ($open|tonumber) end),
    mousepad_in_atspi_seconds: (if $a11y == "" then null else ($a11y|tonumber) end),
    python_imports_seconds: (if $py == "" then null else ($py|tonumber) end)}'
