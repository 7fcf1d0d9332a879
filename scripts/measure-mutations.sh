#!/usr/bin/env bash
# Measures how independent the harness is of swp-core (issue 14, item 6): applies each
# symmetric mutation of swp-core (scripts/mutations/*.patch: the reference still agrees with
# itself, only the octets on the wire leave the spec) to the working tree, builds, runs the
# whole catalog against the mutated reference in process, through the testee and over TCP,
# prints how many vectors fail (all, and at MUST level), and restores swp-core, also when a
# step fails or on Ctrl-C. The harness is never mutated: it encodes and decodes with its own
# codec (harness/src/frames/). The counts are recorded in docs/mutation.md.
#
#   scripts/measure-mutations.sh            # the clean reference ("none"), then every patch
#   scripts/measure-mutations.sh PATCH...   # only these patches
#
# Reports: $OUT (default target/mutations)/<mutation>/<manifest>/report.json, with the run's
# output beside them (<manifest>.log) and the ids of the failing vectors (<manifest>.failing).
# It refuses to start when implementations/swp-core/ has uncommitted changes, so it never
# reverts work in progress; a run killed outright (SIGKILL) cannot restore, and the next run
# says which `git apply -R` undoes it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-target/mutations}
core=implementations/swp-core

if [ $# -gt 0 ]; then
    runs=("$@")
else
    runs=(none scripts/mutations/*.patch)
fi

if ! git diff --quiet -- "$core" || ! git diff --cached --quiet -- "$core"; then
    echo "measure-mutations: $core has uncommitted changes; commit or stash them first" >&2
    for p in scripts/mutations/*.patch; do
        if git apply -R --check "$p" 2>/dev/null; then
            echo "measure-mutations: $p is still applied (an earlier run was killed); undo it with: git apply -R $p" >&2
        fi
    done
    exit 2
fi

applied=""
restore() {
    if [ -n "$applied" ]; then
        git apply -R "$applied"
        echo "measure-mutations: restored $core (undid $applied)" >&2
        applied=""
    fi
}
trap restore EXIT
trap 'exit 130' INT TERM

# label|arguments of `swp-conform run`
manifests=(
    "inproc|"
    "testee|--sut implementations/manifests/reference-testee.yaml"
    "tcp|--sut implementations/manifests/reference-tcp.yaml"
)

count() { # mutation manifest report.json failing-list
    python3 - "$@" <<'PY'
import collections, json, sys
name, label, path, failing = sys.argv[1:]
try:
    with open(path) as f:
        res = json.load(f)["results"]
except (OSError, ValueError, KeyError) as e:
    print(f"{name}\t{label}\tno report ({e})")
    sys.exit()
# The verdicts that fail a requirement (docs/report-format.md); reject-code-not-observable
# does not.
bad = [r for r in res if r["verdict"] in ("fail", "timeout", "crash", "harness-error")]
with open(failing, "w") as f:
    for r in bad:
        print(r["vector_id"], r["verdict"], "MUST" if r["absolute"] else "-", file=f)
must = sum(1 for r in bad if r["absolute"])
by = collections.Counter(r["verdict"] for r in res if r["verdict"] != "pass")
by = " ".join(f"{k}={v}" for k, v in sorted(by.items()))
print(f"{name}\t{label}\t{len(res)}\t{len(bad)}\t{must}\t{by}")
PY
}

summary=$(mktemp)
for run in "${runs[@]}"; do
    name=$(basename "$run" .patch)
    if [ "$run" != none ]; then
        git apply "$run"
        applied=$run
    fi
    # Both binaries: the testee and TCP manifests start target/debug/swp-ref (${SWP_REF}).
    cargo build -q -p swp-conform -p swp-ref
    mkdir -p "$out/$name"
    for m in "${manifests[@]}"; do
        label=${m%%|*}
        args=${m#*|}
        dir="$out/$name/$label"
        rm -rf "$dir"
        echo "measure-mutations: $name against $label" >&2
        # A failing run exits non-zero; that is what is being measured.
        # shellcheck disable=SC2086 # $args is split into words on purpose
        cargo run -q -p swp-conform -- run $args --out "$dir" >"$dir.log" 2>&1 || true
        count "$name" "$label" "$dir/report.json" "$dir.failing" >>"$summary"
    done
    restore
done

echo
{
    printf 'mutation\tmanifest\texecuted\tfailing\tMUST-level\tnon-pass verdicts\n'
    cat "$summary"
} | column -t -s "$(printf '\t')"
rm -f "$summary"
echo
echo "reports: $out/<mutation>/<manifest>/report.json; failing ids: $out/<mutation>/<manifest>.failing"
