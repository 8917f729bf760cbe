#!/usr/bin/env bash
# Notification latency: a health transition to the webhook's arrival at a
# loopback receiver, p50/p99 over FLIPS (200) flips, on a single node and
# on a 3-node Raft cluster (release builds, loopback only).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --workspace --bins --examples
export GSLB_BIN_DIR="$PWD/target/release"
exec target/release/examples/notify
