#!/usr/bin/env bash
# Second pass over the mutants a run missed, judged by more of the reference's SUTs
# (docs/mutation.md, "Second pass").
#
#   scripts/mutants-recheck.sh OUTDIR [MANIFEST...]
#
# OUTDIR is a run's output (target/mutants/<tag>, as scripts/mutants.sh writes it). Each
# mutant recorded there as missed is applied again (its diff from mutants.out/diff), swp-ref
# is rebuilt and the catalog oracle runs with only MANIFEST... (file names under
# implementations/manifests/; default: the MCP gateway over HTTP, stdio and WebSocket and the
# relay, the SUTs of swp-ref that use swp-core and swp-profiles but are not in the
# per-mutant oracle). The file is restored after each. One line per mutant goes to
# OUTDIR/recheck.txt: "caught" or "missed", then the mutant's name.
#
# Same rules as scripts/mutants.sh: it edits the three crates in place, so do not edit or
# build them meanwhile; it refuses to start when they have uncommitted changes. The judge is
# the prebuilt target/tools/swp-conform-oracle that scripts/mutants.sh left.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:?usage: scripts/mutants-recheck.sh OUTDIR [MANIFEST...]}
shift
manifests=${*:-gateway-http.yaml gateway-stdio.yaml gateway-websocket.yaml reference-relay.yaml}
src=(implementations/swp-core/src implementations/swp-profiles/src implementations/mcp-translate/src)
if ! git diff --quiet HEAD -- "${src[@]}"; then
  echo "mutants-recheck.sh: ${src[*]} have uncommitted changes; commit or undo them first" >&2
  exit 1
fi
export SWP_CONFORM=$PWD/target/tools/swp-conform-oracle
[ -x "$SWP_CONFORM" ] || { echo "mutants-recheck.sh: no judge at $SWP_CONFORM: run scripts/mutants.sh first" >&2; exit 1; }
export SWP_ORACLE_MANIFESTS=$manifests

# name <TAB> file <TAB> diff, for every missed mutant of the run.
list=$(python3 - "$out/mutants.out/outcomes.json" <<'EOF'
import json, sys
for o in json.load(open(sys.argv[1]))["outcomes"]:
    m = o["scenario"]
    if o["summary"] == "MissedMutant" and isinstance(m, dict) and "Mutant" in m:
        print("\t".join([m["Mutant"]["name"], m["Mutant"]["file"], o["diff_path"]]))
EOF
)
: >"$out/recheck.txt"
trap 'git checkout -q -- "${src[@]}"' EXIT
oracle=(cargo test -q -p swp-ref --features swp-ref/catalog-oracle --test catalog_oracle)
while IFS=$'\t' read -r name file diff; do
  [ -n "$name" ] || continue
  patch --quiet --forward "$file" <"$out/mutants.out/$diff"
  if nice -n 10 "${oracle[@]}" >"$out/recheck.log" 2>&1; then
    verdict=missed
  else
    verdict=caught
  fi
  git checkout -q -- "$file"
  printf '%s\t%s\n' "$verdict" "$name" | tee -a "$out/recheck.txt"
done <<<"$list"
