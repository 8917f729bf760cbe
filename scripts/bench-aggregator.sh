#!/usr/bin/env bash
# Aggregator load benchmark: snapshot size/encode time for 100,000 members;
# ingest over gRPC from 20 simulated agents (100,000 members, one batch per
# 1 s cycle each) into the real gslb-aggregator pinned to CPU 1 (the driver
# runs on CPU 0); transition-to-edge latency p50/p99.
# Environment: MEMBERS, AGENTS, WINDOW_SECS, AGGREGATOR_CPU, DRIVER_CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p gslb-aggregator --bin gslb-aggregator
cargo bench -p gslb-aggregator --bench load --no-run
export GSLB_AGGREGATOR_BIN="$PWD/target/release/gslb-aggregator"
exec taskset -c "${DRIVER_CPU:-0}" cargo bench -q -p gslb-aggregator --bench load
