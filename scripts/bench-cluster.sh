#!/usr/bin/env bash
# A three-node aggregator cluster on loopback (tests/examples/cluster.rs):
# acknowledged config writes per second (1 and 16 writers), election time
# after kill -9 of the leader (KILLS, default 20), and the time from a
# health decision on the leader to an edge subscribed to a follower
# answering it (FLIPS, default 20). Release build.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
cargo build --release --locked -q --workspace --bins
cargo build --release --locked -q --workspace --example cluster
GSLB_BIN_DIR="$ROOT/target/release" exec "$ROOT/target/release/examples/cluster"
