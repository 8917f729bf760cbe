#!/usr/bin/env bash
# Raft figures (aggregator/examples/raft_bench.rs): acknowledged writes per
# second of a 3-node cluster on loopback (1 and 16 writers) and the time to
# a new leader after the leader stops, over ELECTIONS (default 20) stops.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q --workspace --example raft_bench
exec target/release/examples/raft_bench
