#!/usr/bin/env bash
# Installs the pinned cargo-mutants into target/tools/bin (idempotent) and prints its path.
#
# Pinned, so that a mutation score measured today and the CI job's verdict tomorrow come from
# the same mutation operators: a new cargo-mutants release adds operators, which would change
# the counts without any change to the code or the vectors.
#
# Built from crates.io with `cargo install --locked` rather than the project's prebuilt
# release binary: this project's machines reach crates.io but not release downloads, and a
# clean checkout has only cargo. `--locked` builds with the crate's own Cargo.lock, so the
# dependency versions are pinned too. The build takes a few minutes once; afterwards the
# script only checks the version.
set -euo pipefail
cd "$(dirname "$0")/.."

version=27.1.0
root=${CARGO_MUTANTS_ROOT:-$PWD/target/tools}
bin=$root/bin/cargo-mutants

if [ -x "$bin" ] && [ "$("$bin" mutants --version 2>/dev/null)" = "cargo-mutants $version" ]; then
  echo "$bin"
  exit 0
fi

echo "install-cargo-mutants: building cargo-mutants $version into $root (once)" >&2
cargo install --locked --quiet cargo-mutants --version "$version" --root "$root" >&2
got=$("$bin" mutants --version)
if [ "$got" != "cargo-mutants $version" ]; then
  echo "install-cargo-mutants: expected cargo-mutants $version, got '$got'" >&2
  exit 1
fi
echo "$bin"
