#!/usr/bin/env bash
# Installs the Debian packages Stasis needs, only when some are missing.
# SDL2 (+ SDL2_image for PNG), zstd (delta sync) and xxhash (replay digests) to build; SQLite's headers for GRDB (StasisRecords,
# stasis-server), which Swift's bookworm image lists but an older or hand-made list may not; Xvfb, xdotool and ImageMagick for the
# real-window test; Python with venv for the test suite's tools (schemathesis, in a virtual
# environment that scripts/test.sh makes; never a system-wide pip install); Chromium, which the
# studio console's browser test drives with Playwright (from PyPI, in that same environment); libcurl, which
# Foundation's URLSession (StasisCloud's HTTP) loads, in case the toolchain's list left it out;
# libnotify for StasisNotify (timers' desktop notifications), and for its tests a real session bus
# (dbus-daemon) and a notification server in Debian's Python (python3-dbus, python3-gi).
set -euo pipefail
packages=(libsdl2-dev libsdl2-image-dev libzstd-dev libxxhash-dev libsqlite3-dev libcurl4 xvfb xdotool imagemagick pkg-config python3 python3-venv chromium libnotify-dev dbus-daemon python3-dbus python3-gi)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
