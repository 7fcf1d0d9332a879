#!/usr/bin/env bash
# Installs the real MCP servers the `mcpnative` vectors run against, pinned with their whole
# dependency tree (SDKs included):
#   target/mcp-servers/  `npm ci` of scripts/mcp-servers/package.json + package-lock.json:
#                        server-everything, -filesystem, -memory, -sequential-thinking
#   target/mcp-venv/     python venv with scripts/mcp-servers/requirements.txt, installed
#                        with --no-deps: the PyPI `mcp` SDK (scripts/mcp_python_server.py),
#                        mcp-server-time, -fetch and -git
# Idempotent: a stamp per install records the digest of the lockfile it installed; it
# reinstalls only when the lockfile changes. Exits non-zero with the reason when anything
# fails. To move a pin: edit package.json and run `npm install --package-lock-only` in
# scripts/mcp-servers/, or rebuild requirements.txt from a fresh venv (see its header).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pins="$root/scripts/mcp-servers"
npm_prefix="$root/target/mcp-servers"
venv="$root/target/mcp-venv"

need() { command -v "$1" >/dev/null 2>&1 || { echo "install-mcp-servers: '$1' not found on PATH" >&2; exit 1; }; }
need npm
need node
need python3

digest() { cat "$@" | sha256sum | cut -d' ' -f1; }

want="$(digest "$pins/package.json" "$pins/package-lock.json")"
stamp="$npm_prefix/.installed-lock"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  rm -rf "$npm_prefix"
  mkdir -p "$npm_prefix"
  cp "$pins/package.json" "$pins/package-lock.json" "$npm_prefix/"
  # npm ci installs exactly the lockfile's tree and fails if package.json disagrees with it.
  (cd "$npm_prefix" && npm ci --no-audit --no-fund) >&2
  echo "$want" >"$stamp"
fi
for s in everything filesystem memory sequential-thinking; do
  test -f "$npm_prefix/node_modules/@modelcontextprotocol/server-$s/package.json" || {
    echo "install-mcp-servers: server-$s is missing after install" >&2; exit 1; }
done

want="$(digest "$pins/requirements.txt")"
stamp="$venv/.installed-lock"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --disable-pip-version-check -q --no-deps \
    -r "$pins/requirements.txt" >&2
  echo "$want" >"$stamp"
fi
"$venv/bin/python" -c 'import mcp, mcp_server_time, mcp_server_fetch, mcp_server_git' || {
  echo "install-mcp-servers: the Python servers do not import" >&2; exit 1; }
echo "npm: $(cd "$npm_prefix" && npm ls --depth=0 2>/dev/null | tail -n +2 | tr -d '\n')"
echo "PyPI: $(grep -E '^mcp' "$pins/requirements.txt" | tr '\n' ' ')"
