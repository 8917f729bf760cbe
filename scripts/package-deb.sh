#!/usr/bin/env bash
# Build the Debian package gslb with cargo-deb: the four binaries
# (gslb-aggregator, gslb-agent, gslb-edge, gslbctl) in /usr/bin, the
# systemd units (not enabled), the system user gslb (systemd-sysusers),
# state directories (systemd-tmpfiles) and the example settings in
# /etc/gslb as conffiles. The package's metadata is in
# aggregator/Cargo.toml, [package.metadata.deb]; its maintainer scripts
# in packaging/debian/.
#
# Usage: scripts/package-deb.sh [OUTPUT_DIR]   (default target/debian)
# Prints the path of the .deb (its debug symbols: gslb-dbgsym_*.ddeb). Installs cargo-deb (pinned) with cargo when
# it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-target/debian}"
CARGO_DEB_VERSION=3.8.0
if ! cargo deb --version 2>/dev/null | grep -q " $CARGO_DEB_VERSION"; then
  cargo install --quiet --locked cargo-deb --version "$CARGO_DEB_VERSION" >&2
fi
# The whole workspace at once, as every script builds (features unify the
# same way as in the tests); cargo-deb then only packs.
cargo build --quiet --release --workspace --bins --locked >&2
mkdir -p "$OUT"
# Debug information goes to gslb-dbgsym_*.ddeb beside it (the binaries
# shrink from about 130 MB to 15 MB); only the .deb's path is printed.
cargo deb --quiet -p gslb-aggregator --no-build --dbgsym -o "$OUT" | grep '\.deb$'
