#!/usr/bin/env bash
# Renders a matrix.html (swp-conform matrix) in headless Chromium and checks that its script
# ran without errors, counted the rows, columns and disagreements the harness rendered, and
# that the "disagree" and "breaks" filters show exactly those rows (the page's #selftest).
#
#   scripts/check-matrix-page.sh DIR/matrix.html
#
# Exit 3 when no browser is available and none can be installed (the test treats it as a
# skip, or as a failure when SWP_REQUIRE_BROWSER=1, as in CI). On success prints the page's
# #check element as the browser left it; harness/tests/matrix.rs compares its per-verdict
# cell counts with matrix.json.
set -euo pipefail
html=${1:?usage: check-matrix-page.sh MATRIX.html}
[ -f "$html" ] || { echo "no such file: $html" >&2; exit 2; }
# shellcheck source=lib/browser.sh
source "$(dirname "$0")/lib/browser.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dump_dom "$html" "$tmp/dom.html" "$tmp/log"
check=$(grep -o '<div id="check"[^>]*>' "$tmp/dom.html" || true)
fail() { echo "check-matrix-page: $*" >&2; echo "$check" >&2; exit 1; }
[ -n "$check" ] || fail "no #check element in the rendered page"
if grep -E 'CONSOLE.*(Uncaught|Error)' "$tmp/log" >&2; then
  fail "the page logged script errors"
fi
attr() { sed -n "s/.* $1=\"\([^\"]*\)\".*/\1/p" <<<"$check"; }
[ "$(attr data-status)" = ok ] || fail "the page's script did not finish"
[ "$(attr data-js-filter)" = ok ] || fail "filters: $(attr data-js-filter)"
for k in rows disagree breaks; do
  [ "$(attr data-js-$k)" = "$(attr data-$k)" ] ||
    fail "$k: rendered $(attr data-$k), browser counted $(attr data-js-$k)"
done
[ "$(attr data-js-shown)" = "$(attr data-rows)" ] || fail "rows shown with no filter: $(attr data-js-shown)"
echo "$check"
