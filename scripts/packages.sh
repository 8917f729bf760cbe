# The system packages the tests need, in one place: sourced by .ci/run and
# scripts/test.sh (the build itself needs none: protobuf is compiled by
# protox, in Rust; clang, below, adds the edge's XDP program). Debian/Ubuntu package names.
#
#   dig, kdig, knotd     the DNS edge's answers and the differential test
#   nsd                  a second secondary for zone transfers (with knotd)
#   kzonecheck,          zone files we export, checked by Knot and BIND
#   named-checkzone
#   unbound,             a real resolver in front of the edge, and the
#   unbound-control      origin of hostname members (its local data changed live)
#   nft, ip              network namespaces and cut links (quorum, partition)
#   zonemaster-cli,      external zone checkers (scripts/check-dns-zone.sh;
#   dnsviz, named        dnsviz runs BIND's named)
#   python3, curl        helper scripts and REST over HTTPS in e2e tests
#   chromium,            the web UI's tests and figures: headless Chromium
#   chromium-driver,     driven over WebDriver (fonts-dejavu-core gives its
#   fonts-dejavu-core    screenshots legible text)
#   libmaxmind-db-       MaxMind's own writer: the geo tests' .mmdb files
#     writer-perl        (real GeoLite2 files cannot be downloaded here)
#   prometheus           promtool: the alert rules' check and unit tests
#   systemd              systemd-analyze, -sysusers, -tmpfiles: the Debian
#                        package's check (scripts/check-deb.sh)
#   python3-pip          pip, for the one PyPI package below
#   clang                the edge's XDP program (dns-edge/xdp/bpf), built for
#                        clang's BPF target by dns-edge/xdp/build.rs; without
#                        it the edge builds without its XDP path (--xdp then
#                        logs that and answers on the kernel path)
#
# From PyPI (GSLB_PIP):
#   openapi-spec-validator   validates /api/v1/openapi.json (tests/tests/e2e/openapi.rs)
#
# From npm (GSLB_NPM, into GSLB_NPM_DIR; npm from the machine's Node.js, or
# Debian's npm where there is none):
#   axe-core                 accessibility rules run in the UI's pages
#                            (tests/src/browser.rs `Browser::axe`)
GSLB_PACKAGES=(bind9-dnsutils knot-dnsutils knot knot-dnssecutils nsd unbound python3 zonemaster-cli dnsviz bind9 bind9-utils nftables iproute2 curl ca-certificates chromium chromium-driver fonts-dejavu-core libmaxmind-db-writer-perl prometheus systemd python3-pip clang)
GSLB_PIP=(openapi-spec-validator==0.9.0)
GSLB_NPM=(axe-core@4.11.0)
GSLB_NPM_DIR=/usr/local/lib/gslb-npm
GSLB_TOOLS=(dig kdig knotd nsd kzonecheck named-checkzone unbound unbound-control python3 zonemaster-cli dnsviz named named-checkconf nft ip curl chromium chromedriver promtool systemd-analyze clang)

# gslb_missing_tools: print the tools not on PATH, one per line.
gslb_missing_tools() {
  local t
  for t in "${GSLB_TOOLS[@]}"; do
    command -v "$t" >/dev/null 2>&1 || echo "$t"
  done
  perl -MMaxMind::DB::Writer::Tree -e 1 >/dev/null 2>&1 || echo "MaxMind::DB::Writer::Tree"
  python3 -c 'import openapi_spec_validator' >/dev/null 2>&1 || echo "openapi-spec-validator"
  [ -e "$GSLB_NPM_DIR/node_modules/axe-core/axe.min.js" ] || echo "axe-core"
}

# gslb_install_packages: install GSLB_PACKAGES with apt-get (as root). No
# package may start its daemon (unbound, named and knot would listen, and a
# resolver would prime from the real root servers): the tests start their
# own, on loopback, with their own configs.
gslb_install_packages() {
  local created_policy=0
  export DEBIAN_FRONTEND=noninteractive
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    created_policy=1
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${GSLB_PACKAGES[@]}" >/dev/null
  [ "$created_policy" = 0 ] || rm -f /usr/sbin/policy-rc.d
  # A Debian python3 refuses pip installs into its own tree unless told.
  python3 -m pip install --quiet --disable-pip-version-check "${GSLB_PIP[@]}" 2>/dev/null ||
    python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "${GSLB_PIP[@]}"
  # npm usually comes with the machine's Node.js; a bare machine gets
  # Debian's (installing it beside another Node.js would conflict).
  if ! command -v npm >/dev/null; then
    apt-get install -y -qq --no-install-recommends npm >/dev/null
  fi
  npm install --silent --no-audit --no-fund --prefix "$GSLB_NPM_DIR" "${GSLB_NPM[@]}" >/dev/null
}
