#!/usr/bin/env bash
# The demo: a window where there is a display, a headless session where there is none.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build -c release --product stasis-demo
demo=.build/release/stasis-demo
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec "$demo" "$@"
else
  echo "no display: ten seconds of headless play with a background round trip at step 300" >&2
  exec "$demo" --headless --frames 600 --background-at 300 --foreground-at 300 --trace "$@"
fi
