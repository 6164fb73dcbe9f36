#!/usr/bin/env bash
# Installs everything deskenv needs on a Debian 12 machine (run as root or
# with sudo): the Rust toolchain if missing, the headless desktop (Xvfb,
# D-Bus, AT-SPI, openbox; also what the local provider starts per machine),
# the applications the tests and the example tasks drive, and the
# baselines the benchmark compares against.
#
#   scripts/install-deps.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
sudo=""
[[ $(id -u) -ne 0 ]] && sudo="sudo"

packages=(
  xvfb x11-utils xauth dbus dbus-x11 at-spi2-core openbox
  xdotool wmctrl xdg-utils ffmpeg
  gtk-3-examples mousepad libreoffice-calc libreoffice-gtk3
  # the local provider's desktop as in the guest image (its panel and
  # background), and what the example tasks use on it: a terminal,
  # sqlite3, pandas and matplotlib, file(1) for xdg-open
  xfce4-panel x11-xserver-utils
  xterm sqlite3 file python3-pandas python3-matplotlib
  # the data-science suite (tasks/ds): its generators run on the host, and
  # the local provider's desktop runs what the guest image has
  python3-numpy python3-scipy python3-sklearn python3-seaborn
  python3-statsmodels python3-openpyxl jupyter-notebook python3-nbconvert
  chromium
  # OCR of chart images (the ds_image_text metric)
  tesseract-ocr tesseract-ocr-eng
  python3 python3-pyatspi python3-lxml python3-requests python3-venv python3-tk
  fonts-dejavu-core fonts-noto-cjk
  build-essential pkg-config curl ca-certificates
  debootstrap e2fsprogs util-linux jq binutils zstd
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# QEMU for the guest VMs. qemu-system-x86 must match qemu-utils: a host whose
# qemu-utils came from bookworm-backports (10.x) cannot take bookworm's 7.2,
# so QEMU then comes from backports too, through a private sources list.
if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
  utils=$(dpkg-query -W -f='${Version}' qemu-utils 2>/dev/null || true)
  if [[ $utils == *bpo* ]]; then
    echo "install-deps: installing qemu-system-x86 from bookworm-backports (qemu-utils is $utils)" >&2
    echo "deb http://deb.debian.org/debian bookworm-backports main" | $sudo tee /etc/apt/sources.list.d/deskenv-backports.list >/dev/null
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
      -t bookworm-backports qemu-system-x86 qemu-utils
  else
    echo "install-deps: installing qemu-system-x86" >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends qemu-system-x86 qemu-utils
  fi
fi

# Mousepad opens text files for xdg-open in the headless desktop.
mkdir -p "$HOME/.config"
xdg-mime default org.xfce.mousepad.desktop text/plain 2>/dev/null || true

if ! command -v cargo >/dev/null 2>&1; then
  if [[ -x $HOME/.cargo/bin/cargo ]]; then
    export PATH=$HOME/.cargo/bin:$PATH
  else
    echo "install-deps: installing the Rust toolchain with rustup" >&2
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c clippy,rustfmt
    export PATH=$HOME/.cargo/bin:$PATH
  fi
fi

# pyautogui from PyPI (Debian has none): the interpreter for the agent's
# --python-fallback in tests, and the baseline the click benchmark beats.
venv=$root/target/pyautogui-venv
if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -m pip show -q pyautogui >/dev/null 2>&1; then
  echo "install-deps: installing pyautogui into $venv" >&2
  /usr/bin/python3 -m venv --clear "$venv"
  "$venv/bin/python" -m pip install -q pyautogui
fi
echo "install-deps: done" >&2
