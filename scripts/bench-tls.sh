#!/usr/bin/env bash
# What mutual TLS costs on the aggregator's gRPC listener
# (tests/examples/tls.rs): one aggregator plain text (--insecure), one with
# mutual TLS, same release build, same run: an admin read on an open
# connection (CALLS, default 5000) and a new connection per call
# (CONNECTS, default 500). Loopback only.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
cargo build --release --locked -q --workspace --bins
cargo build --release --locked -q --workspace --example tls
GSLB_BIN_DIR="$ROOT/target/release" exec "$ROOT/target/release/examples/tls"
