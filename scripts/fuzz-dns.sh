#!/usr/bin/env bash
# Fuzz the edge's request handler (parse -> answer -> encode, with the
# reply checked by hickory-proto as an independent decoder) for SECS
# seconds (default 60) with cargo-fuzz/libFuzzer. The machine's toolchain
# is stable; cargo-fuzz needs nightly flags, which RUSTC_BOOTSTRAP=1 lets
# stable accept. Installs cargo-fuzz from crates.io when missing. A crash
# leaves its input in dns-edge/fuzz/artifacts/ and fails the script.
set -euo pipefail
cd "$(dirname "$0")/../dns-edge/fuzz"
SECS="${SECS:-60}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
# The working corpus starts from the committed seeds and is not committed.
mkdir -p corpus/request_handler
cp -n seeds/request_handler/* corpus/request_handler/
RUSTC_BOOTSTRAP=1 cargo fuzz run request_handler corpus/request_handler -- \
  -max_total_time="$SECS" -max_len=1024 -print_final_stats=1
