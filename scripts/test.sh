#!/usr/bin/env bash
# Runs every test in the workspace: unit, table, property and (as later
# issues add them) end-to-end tests that start the real binaries on loopback.
# cargo-nextest ships with the project's machines; plain cargo test is the
# fallback. Extra arguments go to the runner (e.g. a test name filter).
set -euo pipefail
cd "$(dirname "$0")/.."
# Prerequisites first: the end-to-end tests drive dig, kdig, knotd, unbound,
# nft and more (scripts/packages.sh). As root they are installed; otherwise
# the one command that installs them is printed.
source scripts/packages.sh
missing="$(gslb_missing_tools | tr '\n' ' ')"
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "test.sh: installing the test tools ($missing)" >&2
    gslb_install_packages
  else
    echo "test.sh: missing $missing; install them with:" >&2
    echo "  sudo apt-get install -y --no-install-recommends ${GSLB_PACKAGES[*]}" >&2
    echo "  python3 -m pip install ${GSLB_PIP[*]}" >&2
    echo "  npm install --prefix $GSLB_NPM_DIR ${GSLB_NPM[*]}" >&2
    exit 2
  fi
fi
if cargo nextest --version >/dev/null 2>&1; then
  exec cargo nextest run --workspace --locked --no-fail-fast "$@"
fi
exec cargo test --workspace --all-targets --locked --no-fail-fast "$@"
