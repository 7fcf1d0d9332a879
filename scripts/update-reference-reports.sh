#!/usr/bin/env bash
# Regenerates the committed reference reports (reports/reference/<manifest>/*.snap) after
# an intended change to the catalog, the reference or the report formats, including
# reports/reference/published/, the spec kit's published set run as published (it needs the
# spec kit beside the checkout, ../shared, and fails without it rather than keep a stale
# report). Review the diff with `git diff reports/reference` before committing it.
set -euo pipefail
cd "$(dirname "$0")/.."
SWP_REQUIRE_SPEC_KIT=1 INSTA_UPDATE=always INSTA_FORCE_UPDATE=1 cargo test -p swp-conform --test reports -- --exact reference_inproc reference_tls reference_stdio reference_tcp reference_relay reference_lenient reference_published
# The reference matrix is built from the reports just written, so it comes after them.
INSTA_UPDATE=always INSTA_FORCE_UPDATE=1 cargo test -p swp-conform --test matrix -- --exact reference_matrix
