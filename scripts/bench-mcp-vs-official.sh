#!/usr/bin/env bash
# Times the official MCP conformance suite and our MCP-native namespace side by side, on the
# same machine and the same real server, so issue 29's goal (a full MCP-native run takes no
# more than twice the official suite's wall time) is a measurement and not a guess.
#
#   scripts/bench-mcp-vs-official.sh [ROUNDS]      (ROUNDS defaults to 3)
#
# Each round runs, one after the other:
#   (a) the official suite (npm @modelcontextprotocol/conformance 0.1.16) `server` command,
#       every server scenario it ships (`--suite all`: the pending ones too), against
#       @modelcontextprotocol/server-everything over Streamable HTTP;
#   (b) `swp-conform run` (release build) of the `mcpnative_*` vectors with the manifest
#       implementations/manifests/mcp-server-everything-http.yaml (the same server, which the
#       harness starts itself).
# It prints every round's wall time, the median of each and the ratio (b)/(a).
#
# The official suite needs a running server, while our harness starts (and restarts) the
# server itself, so (a) is given two figures: the suite alone, and the suite plus the
# server's start up to its listening port and its stop. The ratio is printed against both.
#
# Environment:
#   OFFICIAL_SUITE  the official `--suite` (default: all; `active` leaves the pending out)
#   JOBS            our `run --jobs` (default: 1, like the official suite, which runs its
#                   scenarios one by one)
#   MCP_SCHEMA_DIR  passed on to the harness, which needs it (a directory of
#                   <version>/schema.json; the harness guesses no path)
#   BENCH_OUT       where the reports go (default: target/bench-mcp-vs-official)
#
# A bench, not a test: nothing here passes or fails on the figures, and .ci/run does not
# call it. Both tools exit non-zero when the server fails a check (server-everything does
# fail some), so their exit codes are recorded, not obeyed; a run that produced no report
# at all stops the script.
set -euo pipefail

rounds="${1:-3}"
case "$rounds" in '' | *[!0-9]* | 0) echo "usage: $0 [ROUNDS>0]" >&2; exit 2 ;; esac
suite="${OFFICIAL_SUITE:-all}"
jobs="${JOBS:-1}"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${BENCH_OUT:-$root/target/bench-mcp-vs-official}"
manifest="$root/implementations/manifests/mcp-server-everything-http.yaml"
everything="$root/target/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

need() { command -v "$1" >/dev/null 2>&1 || { echo "bench: '$1' not found on PATH" >&2; exit 1; }; }
: "${MCP_SCHEMA_DIR:?bench: set MCP_SCHEMA_DIR to a directory of <version>/schema.json (the official MCP schemas)}"
need npm
need node
need cargo
need python3

# --- Install -----------------------------------------------------------------------------
# The official suite and the Node 22 it needs, pinned by the committed lockfile and
# reinstalled only when it changes (scripts/install-official-conformance.sh, shared with the
# test that runs the suite against the reference gateway).
installed="$("$root/scripts/install-official-conformance.sh")"
node22="$(sed -n 1p <<<"$installed")"
conformance="$(sed -n 2p <<<"$installed")"
official_version="$("$node22" "$conformance" --version)"

# The real server, installed and pinned by the project's own script (idempotent).
"$root/scripts/install-mcp-servers.sh" >/dev/null
test -f "$everything" || { echo "bench: server-everything is missing" >&2; exit 1; }

# A release build: the debug build's speed is not what a user of the harness gets.
(cd "$root" && CARGO_INCREMENTAL=0 cargo build --release -q -p swp-conform)
harness="$root/target/release/swp-conform"

# --- Helpers -----------------------------------------------------------------------------
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# The median of the numbers given (the mean of the middle two when there are evenly many).
median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
    if (NR % 2) printf "%.2f", v[(NR + 1) / 2]; else printf "%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
# A port nobody listens on now. The official suite needs a URL, so the server gets a fixed
# port for the round; our harness picks its own.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
server_pid=""
stop_server() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
trap stop_server EXIT
# Waits until the server accepts connections on its port (at most 15 s, the manifest's
# start_ms), polling every 20 ms so the wait adds little to the measured time.
wait_listening() {
  local port="$1" i
  for i in $(seq 750); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    kill -0 "$server_pid" 2>/dev/null || { echo "bench: the server died at start" >&2; return 1; }
    sleep 0.02
  done
  echo "bench: the server did not listen on $port within 15 s" >&2
  return 1
}

rm -rf "$out"
mkdir -p "$out"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
# The machine may be shared: the load average says whether other work ran meanwhile.
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "official: @modelcontextprotocol/conformance $official_version on node $("$node22" --version)," \
  "server --suite $suite"
echo "ours: swp-conform run --filter 'mcpnative_*' --jobs $jobs ($("$harness" list --filter 'mcpnative_*' | grep -c '^mcpnative_') vectors)"
echo "server: server-everything $(node -p "require('$root/target/mcp-servers/node_modules/@modelcontextprotocol/server-everything/package.json').version") on node $(node --version), Streamable HTTP"
echo

official_all=() official_suite=() ours=()
for r in $(seq "$rounds"); do
  # (a) The official suite. The server is started afresh each round, as our harness does.
  port="$(free_port)"
  t0="$(now)"
  PORT="$port" node "$everything" streamableHttp >"$out/official-$r-server.log" 2>&1 &
  server_pid=$!
  wait_listening "$port"
  t1="$(now)"
  rc=0
  "$node22" "$conformance" server --url "http://localhost:$port/mcp" --suite "$suite" \
    -o "$out/official-$r" >"$out/official-$r.txt" 2>&1 || rc=$?
  t2="$(now)"
  stop_server
  t3="$(now)"
  grep -q '^Total: ' "$out/official-$r.txt" || {
    echo "bench: the official suite printed no summary (exit $rc); see $out/official-$r.txt" >&2
    exit 1; }
  a_suite="$(elapsed "$t1" "$t2")"
  a_all="$(elapsed "$t0" "$t3")"
  official_suite+=("$a_suite")
  official_all+=("$a_all")
  echo "round $r official: ${a_suite} s suite alone, ${a_all} s with the server's start and stop" \
    "(exit $rc; $(grep '^Total: ' "$out/official-$r.txt"))"

  # (b) Our MCP-native namespace; the harness starts the server from the manifest.
  t0="$(now)"
  rc=0
  (cd "$root" && "$harness" run --sut "$manifest" --filter 'mcpnative_*' --jobs "$jobs" \
    --out "$out/ours-$r" --quiet >"$out/ours-$r.txt" 2>&1) || rc=$?
  t1="$(now)"
  test -f "$out/ours-$r/report.json" || {
    echo "bench: swp-conform wrote no report (exit $rc); see $out/ours-$r.txt" >&2; exit 1; }
  b="$(elapsed "$t0" "$t1")"
  ours+=("$b")
  echo "round $r ours:     ${b} s (exit $rc)"
done

m_suite="$(median "${official_suite[@]}")"
m_all="$(median "${official_all[@]}")"
m_ours="$(median "${ours[@]}")"
echo
echo "median official: ${m_suite} s suite alone, ${m_all} s with the server's start and stop"
echo "median ours:     ${m_ours} s"
awk -v o="$m_ours" -v s="$m_suite" -v a="$m_all" 'BEGIN {
  printf "ratio ours/official: %.1f against the suite alone, %.1f against the suite with the server (goal: at most 2)\n", o / s, o / a }'
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "reports: $out"
