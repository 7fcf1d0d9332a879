# Shared by the page checks (check-html-report.sh, check-matrix-page.sh): find Chromium, or
# install Debian's when root with apt-get (CI), and dump a page's DOM after its script ran.
#   source scripts/lib/browser.sh; dump_dom PAGE.html OUT.html LOG
# Exits 3 when no browser is available and none can be installed.

dump_dom() {
  local html=$1 out=$2 log=$3
  browser=""
  for b in chromium chromium-browser; do
    if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
  done
  if [ -z "$browser" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "page check: installing chromium (apt-get)" >&2
      export DEBIAN_FRONTEND=noninteractive
      # One retry: a mirror hiccup should not decide a CI run.
      for attempt in 1 2; do
        # Wait for the dpkg/apt locks rather than fail when another install runs beside us.
        if apt-get -o DPkg::Lock::Timeout=300 update -q >&2 &&
          apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends chromium >&2; then
          browser=chromium; break
        fi
        sleep 5
      done
      [ -n "$browser" ] || { echo "page check: installing chromium failed" >&2; exit 3; }
    else
      echo "page check: no chromium and cannot install it (not root or no apt-get)" >&2
      exit 3
    fi
  fi
  local abs tmp
  abs=$(cd "$(dirname "$html")" && pwd)/$(basename "$html")
  tmp=$(mktemp -d)
  # --no-sandbox: CI runs as root in a container, where Chromium's sandbox cannot start.
  # --virtual-time-budget lets the page's script finish before the DOM is dumped.
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
    --no-first-run --user-data-dir="$tmp/profile" --enable-logging=stderr --v=0 \
    --virtual-time-budget=5000 --dump-dom "file://$abs#selftest" >"$out" 2>"$log" || {
    echo "page check: $browser failed:" >&2; cat "$log" >&2; exit 1; }
  rm -rf "$tmp"
}
