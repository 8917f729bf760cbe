#!/usr/bin/env bash
# Failover timing of the whole mesh on loopback (tests/examples/failover.rs):
# KILLS (default 50) kills of a backend with an HTTP check every
# INTERVAL_MS (default 200) with TIMEOUT_MS (default 100) from three agents; prints p50/p99/max from the kill to
# the edge no longer answering it and from the restore to answered again,
# beside the theoretical bound and Route 53's / Cloudflare's settings.
# MODE=hang freezes the backend (SIGSTOP) so checks fail by timeout;
# MEMBERS=N adds N never-probed members to the catalog (its own pool).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
cargo build --release --locked -q --workspace --bins
cargo build --release --locked -q --workspace --example failover
GSLB_BIN_DIR="$ROOT/target/release" exec "$ROOT/target/release/examples/failover"
