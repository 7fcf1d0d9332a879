#!/usr/bin/env bash
# CI: cargo-mutants on the lines a change touches in swp-core, swp-profiles and mcp-translate,
# with the catalog as the oracle (docs/mutation.md, "The CI job").
#
# The change is the diff against the merge base with main; on main itself, or a checkout
# without a main branch, it is HEAD~1..HEAD (for a merge commit: everything it brought in).
# A change that touches none of the three crates prints "no mutants in diff" and passes.
#
# Bounded: at most MUTANTS_CAP mutants (default 8) are tested, each build limited by
# --build-timeout and each oracle run by --timeout. Above the cap the mutants are split into
# shards of at most MUTANTS_CAP and only the first shard is tested; every mutant that was not
# tested is printed by name, with the command that tests the rest. Never a silent skip.
#
# Fails when a tested mutant is missed (a new vector, or a recorded reason in
# .cargo/mutants.toml, is the answer: docs/mutation.md) or when the unmutated baseline fails.
# Runs in place (the checkout is CI's own): the mutants are built in the target/ that the
# workspace tests just built, and cargo-mutants restores every file after each mutant.
set -euo pipefail
cd "$(dirname "$0")/.."

cap=${MUTANTS_CAP:-8}
crates=(swp-core swp-profiles mcp-translate)
paths=(implementations/swp-core/src implementations/swp-profiles/src implementations/mcp-translate/src)

head=$(git rev-parse HEAD)
base=
if git rev-parse --verify -q main >/dev/null; then
  base=$(git merge-base HEAD main)
fi
if [ -z "$base" ] || [ "$base" = "$head" ]; then
  if ! base=$(git rev-parse --verify -q HEAD~1); then
    echo "ci-mutants: HEAD has no parent and no merge base with main: no change to diff" >&2
    exit 1
  fi
fi
echo "ci-mutants: diff $(git rev-parse --short "$base")..$(git rev-parse --short "$head") in ${crates[*]}"

mkdir -p target/mutants
diff=target/mutants/ci.diff
git diff "$base" "$head" -- "${paths[@]}" >"$diff"
if [ ! -s "$diff" ]; then
  echo "ci-mutants: no mutants in diff (the change touches none of ${crates[*]})"
  exit 0
fi

mutants=$(scripts/install-cargo-mutants.sh)
pkgs=()
for c in "${crates[@]}"; do pkgs+=(--package "$c"); done
sel=("${pkgs[@]}" --in-diff "$diff")

mapfile -t all < <("$mutants" mutants --list "${sel[@]}")
n=${#all[@]}
if [ "$n" = 0 ]; then
  echo "ci-mutants: no mutants in diff (the changed lines hold no mutable code)"
  exit 0
fi
echo "ci-mutants: $n mutant(s) in the diff, cap $cap"

shard=()
if [ "$n" -gt "$cap" ]; then
  k=$(((n + cap - 1) / cap))
  shard=(--shard "0/$k")
  echo "ci-mutants: above the cap: testing shard 0/$k only. NOT TESTED here:"
  for i in $(seq 1 $((k - 1))); do
    "$mutants" mutants --list "${sel[@]}" --shard "$i/$k" | sed 's/^/  not tested: /'
  done
  echo "ci-mutants: to test them all: git diff $base $head -- ${paths[*]} > d.diff && scripts/mutants.sh <crate> --in-diff d.diff"
fi

# The judge: the harness without the reference linked in, so no mutant reaches it.
cargo build -q -p swp-conform --no-default-features
mkdir -p target/tools
cp target/debug/swp-conform target/tools/swp-conform-oracle
export SWP_CONFORM=$PWD/target/tools/swp-conform-oracle
# The testee only: the codec and translate methods reach every vector's octets through the
# three crates at a fraction of the TLS run's cost (docs/mutation.md gives both figures).
export SWP_ORACLE_MANIFESTS=${SWP_ORACLE_MANIFESTS:-reference-testee.yaml}

set +e
"$mutants" mutants "${sel[@]}" "${shard[@]}" \
  --in-place \
  --test-package swp-ref \
  --jobs 1 \
  --build-timeout "${MUTANTS_BUILD_TIMEOUT:-300}" \
  --timeout "${MUTANTS_TIMEOUT:-120}" \
  --output target/mutants/ci \
  --features swp-ref/catalog-oracle \
  --cargo-arg=--test=catalog_oracle
status=$?
set -e
out=target/mutants/ci/mutants.out
for f in caught missed timeout unviable; do
  printf 'ci-mutants: %-8s %s\n' "$f" "$(wc -l <"$out/$f.txt" 2>/dev/null || echo 0)"
done
if [ -s "$out/missed.txt" ]; then
  echo "ci-mutants: MISSED (no vector fails on these; add a vector or record why in .cargo/mutants.toml):"
  sed 's/^/  missed: /' "$out/missed.txt"
fi
# 0: all caught; 3: timeouts (a hang is a detection); 2: missed; anything else: an error.
case $status in
  0 | 3) exit 0 ;;
  *) exit "$status" ;;
esac
