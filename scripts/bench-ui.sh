#!/usr/bin/env bash
# Web UI figures in headless Chromium against the real aggregator (TLS):
# page load to topology drawn at 1,000 members, and transition to DOM
# update p50/p99 over 50 flips. (Ingest with 100 open UI event streams
# against none is in scripts/bench-aggregator.sh.)
# Environment: MEMBERS (1000), FLIPS (50), LOADS (5).
# Needs chromium and chromium-driver (scripts/packages.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --workspace --bins --examples
export GSLB_BIN_DIR="$PWD/target/release"
exec target/release/examples/ui
