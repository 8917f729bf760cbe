#!/usr/bin/env bash
# Reads against a large catalog (tests/examples/reads.rs): pool status of
# BIG members (default 100,000), gslbctl status, members list of a MID
# (default 10,000) pool, and the apply that creates them, each with the
# /livez latency measured while it runs. Release build, loopback only.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
cargo build --release --locked -q --workspace --bins --examples
GSLB_BIN_DIR="$ROOT/target/release" exec "$ROOT/target/release/examples/reads"
