#!/usr/bin/env bash
# Regenerates the committed reference reports (reports/reference/<manifest>/*.snap) after
# an intended change to the catalog, the reference or the report formats. Review the diff
# with `git diff reports/reference` before committing it.
set -euo pipefail
cd "$(dirname "$0")/.."
INSTA_UPDATE=always INSTA_FORCE_UPDATE=1 cargo test -p swp-conform --test reports -- --exact reference_inproc reference_tls reference_stdio reference_tcp reference_relay reference_lenient
