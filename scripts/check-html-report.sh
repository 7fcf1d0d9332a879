#!/usr/bin/env bash
# Renders a report.html in headless Chromium and checks that its script ran without errors
# and counted the same requirement and vector verdicts as the harness rendered; the page's
# self-test (#selftest) also filters to one verdict and opens a vector's transcript.
#
#   scripts/check-html-report.sh out/report.html
#
# Installs Debian's `chromium` with apt-get when it is missing and this runs as root (CI);
# exits 3 when no browser is available and none can be installed.
# (The test treats 3 as a skip, or as a failure when SWP_REQUIRE_BROWSER=1, as in CI.) On success prints the
# page's #check element as the browser left it (the test in harness/tests/reports.rs
# compares it with the report).
set -euo pipefail
html=${1:?usage: check-html-report.sh REPORT.html}
[ -f "$html" ] || { echo "no such file: $html" >&2; exit 2; }
# shellcheck source=lib/browser.sh
source "$(dirname "$0")/lib/browser.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dump_dom "$html" "$tmp/dom.html" "$tmp/log"
check=$(grep -o '<div id="check"[^>]*>' "$tmp/dom.html" || true)
fail() { echo "check-html-report: $*" >&2; echo "$check" >&2; exit 1; }
[ -n "$check" ] || fail "no #check element in the rendered page"
# Console errors (uncaught exceptions, syntax errors) as Chromium logs them.
if grep -E 'CONSOLE.*(Uncaught|Error)' "$tmp/log" >&2; then
  fail "the page logged script errors"
fi
attr() { sed -n "s/.* $1=\"\([^\"]*\)\".*/\1/p" <<<"$check"; }
[ "$(attr data-status)" = ok ] || fail "the page's script did not finish (data-status=$(attr data-status))"
[ -z "$(attr data-errors)" ] || fail "script errors: $(attr data-last-error)"
[ "$(attr data-js-filter)" = ok ] || fail "filtering to one verdict: $(attr data-js-filter)"
[ "$(attr data-js-transcript)" = ok ] || fail "a vector's transcript did not render on demand"
for kind in req vec; do
  [ "$(attr data-js-$kind-total)" = "$(attr data-$kind-total)" ] ||
    fail "$kind total: rendered $(attr data-$kind-total), browser counted $(attr data-js-$kind-total)"
  [ "$(attr data-js-$kind-shown)" = "$(attr data-$kind-total)" ] ||
    fail "$kind rows shown with no filter: $(attr data-js-$kind-shown) of $(attr data-$kind-total)"
  for a in $(grep -o " data-$kind-[a-z-]*=\"[0-9]*\"" <<<"$check" | sed 's/^ //;s/=.*//'); do
    [ "$a" = "data-$kind-total" ] && continue
    want=$(attr "$a"); got=$(attr "data-js-${a#data-}")
    [ "$want" = "${got:-0}" ] || fail "$a: rendered $want, browser counted ${got:-0}"
  done
done
echo "$check"
