#!/usr/bin/env bash
# Runs every test in the workspace: unit, table, property and (as later
# issues add them) end-to-end tests that start the real binaries on loopback.
# cargo-nextest ships with the project's machines; plain cargo test is the
# fallback. Extra arguments go to the runner (e.g. a test name filter).
set -euo pipefail
cd "$(dirname "$0")/.."
if cargo nextest --version >/dev/null 2>&1; then
  exec cargo nextest run --workspace --locked --no-fail-fast "$@"
fi
exec cargo test --workspace --all-targets --locked --no-fail-fast "$@"
