#!/usr/bin/env bash
# Starts or stops a headless desktop for the guest agent and its tests:
# Xvfb at 1920x1080x24, a D-Bus session bus, the AT-SPI bus, and openbox
# (an EWMH window manager). Nothing here needs a real screen.
#
#   scripts/desktop.sh start [:N]   # prints the env file to source
#   scripts/desktop.sh stop  [:N]
#
# The env file (/tmp/deskenv-desktop-N/env) exports DISPLAY and
# DBUS_SESSION_BUS_ADDRESS; source it before starting applications.
set -euo pipefail

cmd=${1:-start}
disp=${2:-:99}
num=${disp#:}
dir=/tmp/deskenv-desktop-$num
env_file=$dir/env

log() { echo "desktop.sh: $*" >&2; }

wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
  local secs=$1 what=$2; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then log "timed out after ${secs}s waiting for $what"; return 1; fi
    sleep 0.1
  done
}

stop() {
  if [[ -d $dir ]]; then
    for f in "$dir"/*.pid; do
      [[ -e $f ]] || continue
      kill "$(cat "$f")" 2>/dev/null || true
    done
    sleep 0.3
    for f in "$dir"/*.pid; do
      [[ -e $f ]] || continue
      kill -9 "$(cat "$f")" 2>/dev/null || true
    done
    rm -rf "$dir"
  fi
  rm -f "/tmp/.X${num}-lock" "/tmp/.X11-unix/X${num}"
}

start() {
  if [[ -e /tmp/.X${num}-lock ]]; then
    log "display $disp is taken (/tmp/.X${num}-lock exists); stop it first or pick another"
    exit 3
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  # Xvfb runs without access control (-ac), but Xlib clients (python-xlib,
  # hence pyautogui) insist on an authority file existing.
  touch "$dir/Xauthority"
  # -noreset: without it the server resets when its last client (the
  # xdpyinfo probe) leaves, and a client connecting then is refused.
  Xvfb "$disp" -screen 0 1920x1080x24 -nolisten tcp -noreset -ac +extension XTEST +extension MIT-SHM \
    >"$dir/xvfb.log" 2>&1 &
  echo $! >"$dir/xvfb.pid"
  export DISPLAY=$disp
  wait_for 20 "Xvfb on $disp" xdpyinfo

  dbus-daemon --session --fork --nopidfile --print-address=3 --print-pid=4 \
    3>"$dir/dbus.addr" 4>"$dir/dbus.pid"
  export DBUS_SESSION_BUS_ADDRESS
  DBUS_SESSION_BUS_ADDRESS=$(head -n1 "$dir/dbus.addr")

  # The AT-SPI bus: GTK applications would activate it on demand, but the
  # agent's first walk should not pay for that.
  /usr/libexec/at-spi-bus-launcher --launch-immediately >"$dir/atspi.log" 2>&1 &
  echo $! >"$dir/atspi.pid"

  openbox --sm-disable >"$dir/openbox.log" 2>&1 &
  echo $! >"$dir/openbox.pid"
  # Clients started before the window manager can stay unmapped: wait for it.
  wait_for 20 "openbox (_NET_SUPPORTING_WM_CHECK)" \
    bash -c 'xprop -root _NET_SUPPORTING_WM_CHECK | grep -q "window id"'
  wait_for 20 "the AT-SPI bus" \
    dbus-send --session --print-reply --dest=org.a11y.Bus /org/a11y/bus org.a11y.Bus.GetAddress

  cat >"$env_file" <<ENV
export DISPLAY=$disp
export XAUTHORITY=$dir/Xauthority
export DBUS_SESSION_BUS_ADDRESS='$DBUS_SESSION_BUS_ADDRESS'
export GTK_A11Y=atspi
export NO_AT_BRIDGE=0
export QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1
export LANG=C.UTF-8
ENV
  log "desktop up on $disp; source $env_file"
  echo "$env_file"
}

case $cmd in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop [:N]" >&2; exit 2 ;;
esac
