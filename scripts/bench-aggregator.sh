#!/usr/bin/env bash
# Aggregator load benchmark: snapshot size/encode time for 100,000 members;
# ingest over gRPC from 20 simulated agents (100,000 members, one batch per
# 1 s cycle each) into the real gslb-aggregator pinned to CPU 1 (the driver
# runs on CPU 0); single writes (one writer) and concurrent writes (16
# writers); transition-to-edge latency p50/p99.
# Environment: MEMBERS, AGENTS, WINDOW_SECS, AGGREGATOR_CPU, DRIVER_CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
# --workspace for both, so the bench reuses the release build's artifacts
# (a -p build unifies features differently and recompiles most crates).
cargo build --release --workspace --bins
cargo bench --workspace --bench aggregator_load --no-run
export GSLB_AGGREGATOR_BIN="${CARGO_TARGET_DIR:-$PWD/target}/release/gslb-aggregator"
exec taskset -c "${DRIVER_CPU:-0}" cargo bench -q --workspace --bench aggregator_load
