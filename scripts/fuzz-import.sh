#!/usr/bin/env bash
# Fuzz the zone file import (domain's zone file parser and our reading of
# its entries, aggregator/src/core/zonefile/read.rs) for SECS seconds
# (default 60) with cargo-fuzz/libFuzzer: no panic may escape the reader,
# and what it reads stays in the apex and within the import's limits. The
# machine's toolchain is stable; cargo-fuzz needs nightly flags, which
# RUSTC_BOOTSTRAP=1 lets stable accept. Installs cargo-fuzz from crates.io
# when missing. A crash leaves its input in aggregator/fuzz/artifacts/ and
# fails the script.
set -euo pipefail
cd "$(dirname "$0")/../aggregator/fuzz"
SECS="${SECS:-60}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
# The working corpus starts from the committed seeds and is not committed.
mkdir -p corpus/zone_import
cp -n seeds/zone_import/* corpus/zone_import/
RUSTC_BOOTSTRAP=1 cargo fuzz run zone_import corpus/zone_import -- \
  -max_total_time="$SECS" -max_len=4096 -print_final_stats=1
