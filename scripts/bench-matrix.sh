#!/usr/bin/env bash
# Measures `swp-conform matrix` as its size grows: N columns of one manifest (default: the
# reference over TCP, whole catalog), JOBS column runs at once. For each N it prints the
# wall time of the matrix, the peak memory of the matrix process itself (matrix.json's
# run.peak_rss_kib), the largest peak of any process of the run (GNU time: the matrix, a
# column's `run`, or a SUT), and the time and peak memory of rebuilding the page from the
# N reports alone (`--rebuild`). docs/performance.md, "Interop matrix", records its output.
#
#   scripts/bench-matrix.sh [N ...]        (default: 5 10 20)
#
# Environment: SWP_CONFORM (default: target/release/swp-conform), MANIFEST (default:
# implementations/manifests/reference-tcp.yaml), JOBS (default: 2), OUT (default:
# target/bench-matrix).
set -euo pipefail
cd "$(dirname "$0")/.."
swp=${SWP_CONFORM:-target/release/swp-conform}
manifest=$(realpath "${MANIFEST:-implementations/manifests/reference-tcp.yaml}")
jobs=${JOBS:-2}
out=${OUT:-target/bench-matrix}
[ -x "$swp" ] || { echo "bench-matrix: $swp is not built (cargo build --release -p swp-conform -p swp-ref)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-matrix: needs GNU time (/usr/bin/time)" >&2; exit 2; }
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(5 10 20)
printf '%-4s %-5s %10s %16s %18s %12s %16s\n' N jobs "wall s" "matrix peak MiB" "largest peak MiB" "rebuild s" "rebuild peak MiB"
for n in "${sizes[@]}"; do
  dir="$out/n$n"
  rm -rf "$dir"; mkdir -p "$dir"
  {
    echo "suts:"
    for i in $(seq -w 1 "$n"); do echo "  - {label: ref-$i, manifest: $manifest}"; done
  } >"$dir/matrix.yaml"
  /usr/bin/time -f '%e %M' -o "$dir/time.txt" "$swp" matrix --quiet --matrix "$dir/matrix.yaml" \
    --jobs "$jobs" --out "$dir/out" >/dev/null
  read -r wall largest <"$dir/time.txt"
  own=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['run'].get('peak_rss_kib',0))" "$dir/out/matrix.json")
  /usr/bin/time -f '%e %M' -o "$dir/rebuild.txt" "$swp" matrix --quiet --rebuild --matrix "$dir/matrix.yaml" \
    --out "$dir/out" >/dev/null
  read -r rwall rpeak <"$dir/rebuild.txt"
  printf '%-4s %-5s %10s %16.1f %18.1f %12s %16.1f\n' "$n" "$jobs" "$wall" "$(echo "$own/1024" | bc -l)" \
    "$(echo "$largest/1024" | bc -l)" "$rwall" "$(echo "$rpeak/1024" | bc -l)"
done
