#!/usr/bin/env bash
# Mutation testing of the reference's libraries with the catalog as the oracle
# (docs/mutation.md, "cargo-mutants").
#
#   scripts/mutants.sh CRATE [cargo-mutants options...]     e.g. swp-core --shard 0/4
#   scripts/mutants.sh --list CRATE                          the mutants, without running any
#
# CRATE is swp-core, swp-profiles or mcp-translate. For each mutant, cargo-mutants rebuilds
# swp-ref and runs its `catalog_oracle` test, which runs a
# prebuilt swp-conform (built here once, without the reference linked in, so the judge is
# never mutated) over the reference's testee, TLS, lenient and MCP-proxy manifests
# (tests/catalog_oracle.rs; SWP_ORACLE_MANIFESTS overrides).
# The crates' own unit tests are deliberately not run: the figure is what the vectors catch.
#
# Outcomes go to target/mutants/<crate>[-shard-K-of-N]/mutants.out (caught.txt,
# missed.txt, unviable.txt, timeout.txt, outcomes.json). Runs with one job at nice 10: the
# machine is shared.
#
# In place (--in-place, which implies one job): cargo-mutants edits the source in this
# checkout, one mutant at a time, and restores it after each, so every mutant is an
# incremental build in this
# checkout's target/ and no scratch copy of the tree (with a second full build) is made. Do
# not edit the three crates during a run; the script refuses to start when they have
# uncommitted changes, and after a run killed outright `git checkout -- implementations/`
# undoes the mutant left behind (the script names it).
set -euo pipefail
cd "$(dirname "$0")/.."

list=0
if [ "${1:-}" = "--list" ]; then
  list=1
  shift
fi
crate=${1:?usage: scripts/mutants.sh [--list] swp-core|swp-profiles|mcp-translate [cargo-mutants options]}
shift
case $crate in
  swp-core | swp-profiles | mcp-translate) ;;
  *) echo "mutants.sh: $crate is not one of swp-core, swp-profiles, mcp-translate" >&2; exit 2 ;;
esac

mutants=$(scripts/install-cargo-mutants.sh)
if [ $list = 1 ]; then
  exec "$mutants" mutants --list --package "$crate" "$@"
fi
src=(implementations/swp-core/src implementations/swp-profiles/src implementations/mcp-translate/src)
if ! git diff --quiet HEAD -- "${src[@]}"; then
  echo "mutants.sh: ${src[*]} have uncommitted changes (a mutant left by a killed run?); commit them or undo them with: git checkout -- ${src[*]}" >&2
  exit 1
fi

# The judge: built once, before any mutant is applied, and copied so that no build during the
# run replaces it. It links swp-profiles (and so swp-core) itself, so a judge rebuilt from
# mutated sources would share the mutant.
# SWP_ORACLE_PROFILE=release builds it optimised: a debug judge spends about half the
# testee manifest's CPU (5.8 s of 11 s), which on a shared 2-core machine is most of a
# mutant's cost. SWP_ORACLE_JUDGE names a judge built elsewhere (another checkout of the
# same commit, unmutated) to skip the build: a second worktree's first release build is
# minutes.
mkdir -p target/tools
if [ -n "${SWP_ORACLE_JUDGE:-}" ]; then
  cp "$SWP_ORACLE_JUDGE" target/tools/swp-conform-oracle.new
elif [ "${SWP_ORACLE_PROFILE:-debug}" = release ]; then
  nice -n 10 cargo build -q --release -p swp-conform --no-default-features
  cp target/release/swp-conform target/tools/swp-conform-oracle.new
else
  nice -n 10 cargo build -q -p swp-conform --no-default-features
  cp target/debug/swp-conform target/tools/swp-conform-oracle.new
fi
# Renamed into place, so a run still using the previous judge keeps its file.
mv -f target/tools/swp-conform-oracle.new target/tools/swp-conform-oracle
export SWP_CONFORM=$PWD/target/tools/swp-conform-oracle

# The manifests that can see a mutant of this crate. mcp-translate is called only by the
# testee's translate method and the MCP proxy (swp-ref's testee/translate.rs and
# mcpproxy.rs), so the TLS and lenient endpoints cannot observe its mutants; the proxy uses
# neither swp-core nor swp-profiles. The gateway and the relay use swp-core and swp-profiles on
# paths of their own (the gateway decodes its upstream's replies with e1::decode, which no
# other SUT calls). SWP_ORACLE_MANIFESTS, when set, wins.
if [ -z "${SWP_ORACLE_MANIFESTS:-}" ]; then
  case $crate in
    mcp-translate) SWP_ORACLE_MANIFESTS="reference-testee.yaml mcp-proxy-reference.yaml" ;;
    *) SWP_ORACLE_MANIFESTS="reference-testee.yaml reference-tls.yaml reference-lenient.yaml gateway-http.yaml reference-relay.yaml" ;;
  esac
fi
export SWP_ORACLE_MANIFESTS

tag=$crate
for a in "$@"; do
  case $a in
    */*) [[ $a =~ ^[0-9]+/[0-9]+$ ]] && tag="$crate-shard-${a%/*}-of-${a#*/}" ;;
  esac
done
out=target/mutants/$tag
rm -rf "$out"
mkdir -p "$out"

# The unmutated baseline, run here rather than by cargo-mutants: cargo-mutants 27.1 builds its
# baseline for the mutated package, ignoring --test-package, so with the oracle's feature it
# fails ("does not contain this feature"). The same command, unmutated, must pass first.
oracle=(cargo test -q -p swp-ref --features swp-ref/catalog-oracle --test catalog_oracle)
echo "mutants.sh: baseline: ${oracle[*]}"
if ! nice -n 10 "${oracle[@]}" >"$out/baseline.log" 2>&1; then
  echo "mutants.sh: the catalog fails on the unmutated tree; see $out/baseline.log" >&2
  exit 1
fi

echo "mutants.sh: $crate at $(git rev-parse --short HEAD), $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg), judge ${SWP_ORACLE_JUDGE:-${SWP_ORACLE_PROFILE:-debug} build}" | tee "$out/run-info.txt"
set +e
nice -n 10 "$mutants" mutants \
  --package "$crate" \
  --in-place \
  --baseline skip \
  --test-package swp-ref \
  --timeout "${MUTANTS_TIMEOUT:-240}" \
  --build-timeout "${MUTANTS_BUILD_TIMEOUT:-600}" \
  --output "$out" \
  "$@" \
  --features swp-ref/catalog-oracle \
  --cargo-arg=--test=catalog_oracle
status=$?
set -e
if ! git diff --quiet HEAD -- "${src[@]}"; then
  echo "mutants.sh: a mutant is still applied: git checkout -- ${src[*]}" >&2
fi
echo "mutants.sh: ended $(date -u +%FT%TZ), exit $status" | tee -a "$out/run-info.txt"
for f in caught missed unviable timeout; do
  printf '%s %s\n' "$f" "$(wc -l < "$out/mutants.out/$f.txt" 2>/dev/null || echo '?')"
done | tee -a "$out/run-info.txt"
# cargo-mutants exits 2 when mutants were missed and 3 on timeouts: a measurement, not a
# failure of this script. Anything else (1: usage, 4: the unmutated baseline failed) is.
case $status in
  0 | 2 | 3) exit 0 ;;
  *) exit "$status" ;;
esac
