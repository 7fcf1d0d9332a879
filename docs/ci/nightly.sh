#!/usr/bin/env bash
# Nightly conformance run (docs/certify.md, "Run it every night"): the harness against your
# SUT, one report directory per night, and a failing exit when the SUT regressed against
# its baseline, the failures you accepted. The first night writes the baseline. Each night
# also writes history/ (history.json, history.html) across every night kept in SWP_REPORTS.
#
# Inputs (environment):
#   SWP_CONFORM   the harness binary                         (default: swp-conform)
#   SWP_SUT       your SUT manifest; empty: the built-in reference
#   SWP_BASELINE  the baseline file, committed with your code (default: swp-baseline.yaml)
#   SWP_REPORTS   where each night's reports go, one directory per night (default: reports)
#   SWP_NIGHT     the night's directory name (default: the UTC time, 20261203T020000Z)
#   SWP_ARGS      more arguments for `run`, e.g. "--class C1 --jobs 2"
#
# Exit: 0 no regression; 1 a regression (the run's report.md says which vectors);
# 2 the harness could not run (a manifest error, a SUT that does not start).
set -euo pipefail

swp=${SWP_CONFORM:-swp-conform}
baseline=${SWP_BASELINE:-swp-baseline.yaml}
reports=${SWP_REPORTS:-reports}
night=${SWP_NIGHT:-$(date -u +%Y%m%dT%H%M%SZ)}
out="$reports/$night"
mkdir -p "$out"

# Which harness and catalog judged this night: kept with the reports.
"$swp" --version >"$out/harness-version.txt"

args=(run --out "$out" --quiet)
if [ -n "${SWP_SUT:-}" ]; then args+=(--sut "$SWP_SUT"); fi
# shellcheck disable=SC2206 # SWP_ARGS is split on purpose
if [ -n "${SWP_ARGS:-}" ]; then args+=(${SWP_ARGS}); fi

if [ ! -f "$baseline" ]; then
  # First night: what fails now is the accepted state; review and commit the file.
  status=0
  "$swp" "${args[@]}" --baseline "$baseline" --update-baseline || status=$?
  if [ "$status" -ge 2 ]; then exit "$status"; fi
  echo "nightly: wrote the baseline $baseline from this night's failures; review and commit it"
  exit 0
fi

status=0
"$swp" "${args[@]}" --baseline "$baseline" || status=$?

# The night before, for the record: what changed since, regressions first.
prev=$(find "$reports" -mindepth 1 -maxdepth 1 -type d ! -name "$night" | sort | tail -n 1)
if [ -n "$prev" ] && [ -f "$prev/report.json" ]; then
  "$swp" diff "$prev/report.json" "$out/report.json" >"$out/since-last-night.txt" || true
fi

# Every night so far, as `history` reads them (one directory per night, keyed by each
# report's run time): when each verdict last changed, regressions with their first failing
# night, and flips with no change of SUT, harness or catalog (flaky). It informs; the
# baseline above decides the exit status.
mapfile -t nights < <(find "$reports" -mindepth 1 -maxdepth 1 -type d -exec test -f '{}/report.json' ';' -print | sort)
if [ "${#nights[@]}" -gt 0 ]; then
  "$swp" history "${nights[@]}" --out "$out/history" >"$out/history.txt" || true
fi

case "$status" in
  0) echo "nightly: no regression against $baseline ($out)" ;;
  1) echo "nightly: REGRESSION against $baseline: see $out/report.md" >&2 ;;
  *) echo "nightly: the harness could not run (exit $status): see $out" >&2 ;;
esac
exit "$status"
