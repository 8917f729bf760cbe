#!/usr/bin/env bash
# Agent load benchmark: gslb-agent with 10,000 targets (TCP, then HTTP)
# against loopback backends, and Prometheus blackbox_exporter doing the same
# probes in the same run. The probe process under test is pinned to CPU 1,
# the load driver (backends, fake aggregator, request generator) to CPU 0.
# Environment: TARGETS, WINDOW_SECS, WARMUP_SECS, TCP_INTERVAL_MS,
# HTTP_INTERVAL_MS, AGENT_CPU, BLACKBOX_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v prometheus-blackbox-exporter >/dev/null; then
  echo "installing prometheus-blackbox-exporter (Debian package)" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus-blackbox-exporter >/dev/null
fi
cargo build --release --workspace --bins
cargo bench --workspace --bench agent_load --no-run
export GSLB_AGENT_BIN="$PWD/target/release/gslb-agent"
exec taskset -c "${DRIVER_CPU:-0}" cargo bench -q --workspace --bench agent_load
