#!/usr/bin/env bash
# CI: cargo-mutants on the lines a change touches in swp-core, swp-profiles and mcp-translate,
# with the catalog as the oracle (docs/mutation.md, "The CI job").
#
# The change is the diff against the merge base with main; on main itself, or a checkout
# without a main branch, it is HEAD~1..HEAD (for a merge commit: everything it brought in).
# A change that touches none of the three crates prints "no mutants in diff" and passes.
#
# Bounded, so that .ci/run stays under 25 minutes: at most MUTANTS_CAP mutants (default 12),
# and no new mutant is started once MUTANTS_BUDGET seconds (default 420, counted from the
# start of this script, the install and builds included) have passed. Every build is limited
# by --build-timeout and every oracle run by --timeout. Whatever the bound leaves out is
# printed, mutant by mutant ("NOT TESTED"), with the command that tests it: never a silent
# skip.
#
# Fails when a tested mutant is missed (the answer is a new vector, or a recorded reason in
# .cargo/mutants.toml: docs/mutation.md) or when the catalog fails on the unmutated tree.
# Runs in place (the checkout is CI's own): each mutant is an incremental build in the
# target/ the workspace tests just filled, and cargo-mutants restores the file after each.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

cap=${MUTANTS_CAP:-12}
budget=${MUTANTS_BUDGET:-420}
crates=(swp-core swp-profiles mcp-translate)
paths=(implementations/swp-core/src implementations/swp-profiles/src implementations/mcp-translate/src)

head=$(git rev-parse HEAD)
base=
if git rev-parse --verify -q main >/dev/null; then
  base=$(git merge-base HEAD main)
fi
if [ -z "$base" ] || [ "$base" = "$head" ]; then
  if ! base=$(git rev-parse --verify -q HEAD~1); then
    # A shallow clone (depth 1) has no parent: try to fetch one before giving up.
    git fetch -q --deepen=1 2>/dev/null || true
    if ! base=$(git rev-parse --verify -q HEAD~1); then
      # Not a failure of the change, but nothing was mutation-tested: say so loudly.
      echo "ci-mutants: NOT TESTED: this checkout has no parent commit and no main branch (shallow clone?), so there is no change to diff; fetch history and run scripts/ci-mutants.sh" >&2
      exit 0
    fi
  fi
fi
range="$(git rev-parse --short "$base")..$(git rev-parse --short "$head")"
echo "ci-mutants: diff $range in ${crates[*]}"

mkdir -p target/mutants
rm -rf target/mutants/ci
mkdir -p target/mutants/ci
diff=target/mutants/ci/change.diff
git diff "$base" "$head" -- "${paths[@]}" >"$diff"
if [ ! -s "$diff" ]; then
  echo "ci-mutants: no mutants in diff (the change touches none of ${crates[*]})"
  exit 0
fi

mutants=$(scripts/install-cargo-mutants.sh)
sel=()
for c in "${crates[@]}"; do sel+=(--package "$c"); done
sel+=(--in-diff "$diff")

mapfile -t all < <("$mutants" mutants --list "${sel[@]}")
n=${#all[@]}
if [ "$n" = 0 ]; then
  echo "ci-mutants: no mutants in diff (the changed lines hold no code cargo-mutants mutates)"
  exit 0
fi
echo "ci-mutants: $n mutant(s) in the diff; cap $cap, budget ${budget}s"

# The judge: the harness without the reference linked in, built before any mutant is applied
# and copied so that no mutant reaches it (it links swp-profiles, and so swp-core, itself).
cargo build -q -p swp-conform --no-default-features
mkdir -p target/tools
cp target/debug/swp-conform target/tools/swp-conform-oracle
export SWP_CONFORM=$PWD/target/tools/swp-conform-oracle
# The oracle's own manifests (testee, TLS, lenient, proxy, gateway, relay; 8 connections
# each): the testee alone would be cheaper, but 9 of the 50 mutants caught in the first
# sample were caught only over TLS, 3 more only by the lenient endpoint or the proxy, and
# e1::decode's only caller is the gateway (docs/mutation.md); here they would fail the job as
# missed.

# The unmutated baseline, run here: cargo-mutants 27.1 builds its own baseline for the mutated
# packages, ignoring --test-package (docs/mutation.md).
echo "ci-mutants: baseline (unmutated)"
if ! cargo test -q -p swp-ref --features swp-ref/catalog-oracle --test catalog_oracle \
  >target/mutants/ci/baseline.log 2>&1; then
  cat target/mutants/ci/baseline.log
  echo "ci-mutants: the catalog fails on the unmutated tree" >&2
  exit 1
fi

# Whether a mutant's name matches an exclude_re pattern of .cargo/mutants.toml.
triaged() {
  python3 - "$1" <<'PY'
import re, sys, tomllib
with open(".cargo/mutants.toml", "rb") as f:
    pats = tomllib.load(f).get("exclude_re", [])
sys.exit(0 if any(re.search(p, sys.argv[1]) for p in pats) else 1)
PY
}

# One mutant per cargo-mutants call (shard i of n, in the --list order), so that the budget
# is checked between mutants and what it leaves out is known by name.
declare -A count=([caught]=0 [missed]=0 [timeout]=0 [unviable]=0)
missed=()
errors=0
last=0
i=0
while [ "$i" -lt "$n" ]; do
  left=$((budget - (SECONDS - start)))
  if [ "$i" -ge "$cap" ] || [ "$left" -le "$last" ]; then
    break
  fi
  t0=$SECONDS
  o=target/mutants/ci/m$i
  set +e
  "$mutants" mutants "${sel[@]}" --shard "$i/$n" --sharding round-robin \
    --in-place \
    --baseline skip \
    --test-package swp-ref \
    --features swp-ref/catalog-oracle \
    --cargo-arg=--test=catalog_oracle \
    --build-timeout "${MUTANTS_BUILD_TIMEOUT:-240}" \
    --timeout "${MUTANTS_TIMEOUT:-240}" \
    --output "$o" >"$o.log" 2>&1
  status=$?
  set -e
  last=$((SECONDS - t0))
  outcome=
  for f in caught missed timeout unviable; do
    if [ -s "$o/mutants.out/$f.txt" ]; then outcome=$f; fi
  done
  if [ -z "$outcome" ]; then
    echo "ci-mutants: ${all[$i]}: cargo-mutants failed (exit $status); $o.log:"
    tail -20 "$o.log"
    errors=$((errors + 1))
  else
    # cargo-mutants 27.1 does not apply exclude_re to "delete field" mutants (it lists
    # them whatever the pattern), so a missed one that a pattern of .cargo/mutants.toml
    # names was triaged already: it is reported as such, not as missed.
    if [ "$outcome" = missed ] && triaged "${all[$i]}"; then
      outcome=triaged
      count[triaged]=$((${count[triaged]:-0} + 1))
    else
      count[$outcome]=$((count[$outcome] + 1))
    fi
    [ "$outcome" = missed ] && missed+=("${all[$i]}")
    echo "ci-mutants: $outcome (${last}s): ${all[$i]}"
  fi
  i=$((i + 1))
done

if [ "$i" -lt "$n" ]; then
  echo "ci-mutants: the bound (cap $cap, budget ${budget}s) left $((n - i)) of $n mutant(s) NOT TESTED:"
  for ((j = i; j < n; j++)); do echo "  not tested: ${all[$j]}"; done
  echo "ci-mutants: test them with: git diff $base $head -- ${paths[*]} >change.diff && scripts/mutants.sh <crate> --in-diff change.diff"
fi
echo "ci-mutants: tested $i of $n in $((SECONDS - start))s: caught ${count[caught]}, missed ${count[missed]}, timeout ${count[timeout]}, unviable ${count[unviable]}, triaged ${count[triaged]:-0}"
if [ "${#missed[@]}" -gt 0 ]; then
  echo "ci-mutants: MISSED (no vector fails on these; add a vector, or record why in .cargo/mutants.toml; docs/mutation.md):"
  for m in "${missed[@]}"; do echo "  missed: $m"; done
fi
if [ "$errors" -gt 0 ] || [ "${#missed[@]}" -gt 0 ]; then
  exit 1
fi
