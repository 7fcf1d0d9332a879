#!/usr/bin/env bash
# Installs the two real MCP servers the `mcpnative` vectors run against, at pinned versions:
#   target/mcp-servers/  npm prefix with @modelcontextprotocol/server-everything
#   target/mcp-venv/     python venv with the PyPI `mcp` SDK (scripts/mcp_python_server.py uses it)
# Idempotent: a stamp file per install records the pinned version; it reinstalls only when
# the pin changes. Exits non-zero with the reason when anything fails.
set -euo pipefail

EVERYTHING_VERSION="2026.8.31"
MCP_PY_VERSION="2.3.0"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
npm_prefix="$root/target/mcp-servers"
venv="$root/target/mcp-venv"

need() { command -v "$1" >/dev/null 2>&1 || { echo "install-mcp-servers: '$1' not found on PATH" >&2; exit 1; }; }
need npm
need node
need python3

stamp="$npm_prefix/.installed-server-everything"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$EVERYTHING_VERSION" ]; then
  mkdir -p "$npm_prefix"
  npm install --prefix "$npm_prefix" --no-audit --no-fund --save-exact \
    "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" >&2
  echo "$EVERYTHING_VERSION" >"$stamp"
fi
test -f "$npm_prefix/node_modules/@modelcontextprotocol/server-everything/package.json" || {
  echo "install-mcp-servers: server-everything is missing after install" >&2; exit 1; }

stamp="$venv/.installed-mcp"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$MCP_PY_VERSION" ]; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --disable-pip-version-check -q "mcp==$MCP_PY_VERSION" >&2
  echo "$MCP_PY_VERSION" >"$stamp"
fi
"$venv/bin/python" -c 'import mcp' || { echo "install-mcp-servers: the mcp package does not import" >&2; exit 1; }
echo "server-everything $EVERYTHING_VERSION, mcp (PyPI) $MCP_PY_VERSION"
