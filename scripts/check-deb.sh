#!/usr/bin/env bash
# Install the Debian package on this machine and check it, as CI does
# (.ci/run): dpkg -i, each binary's --version, the units through
# systemd-analyze verify, the service user, the state directories and the
# settings' owner and mode; then purge it and check it is gone. Needs root
# and a disposable machine: it installs into /usr/bin and /etc/gslb.
#
# Usage: scripts/check-deb.sh [PACKAGE.deb]   (default: build one with
# scripts/package-deb.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "check-deb: needs root (dpkg -i)" >&2; exit 2; }
if dpkg -s gslb >/dev/null 2>&1; then
  echo "check-deb: a gslb package is installed already; this check would replace it" >&2
  exit 2
fi
DEB="${1:-$(scripts/package-deb.sh)}"
fail() { echo "check-deb: FAILED: $*" >&2; exit 1; }
purge() { dpkg --purge gslb >/dev/null 2>&1 || true; }
trap purge EXIT

echo "package: $DEB"
dpkg-deb --info "$DEB" | sed -n 's/^ \(Package\|Version\|Depends\|Installed-Size\):/  \1:/p'
dpkg -i "$DEB"

VERSION="$(dpkg-query -W -f '${Version}' gslb)"
UPSTREAM="${VERSION%-*}"
for bin in gslb-aggregator gslb-agent gslb-edge gslbctl; do
  [ "$(command -v "$bin")" = "/usr/bin/$bin" ] || fail "$bin is not /usr/bin/$bin"
  out="$("/usr/bin/$bin" --version)" || fail "$bin --version exited $?"
  [ "$out" = "$bin $UPSTREAM" ] || fail "$bin --version said '$out', not '$bin $UPSTREAM'"
  echo "  $out"
done

for unit in gslb-aggregator gslb-agent gslb-edge; do
  file="/usr/lib/systemd/system/$unit.service"
  [ -f "$file" ] || fail "no $file"
  # Warnings about the machine (no running systemd) go to stderr too: the
  # exit status is the verdict, and any line naming our unit fails it.
  if ! report="$(systemd-analyze verify "$file" 2>&1)"; then
    fail "systemd-analyze verify $unit: $report"
  fi
  if echo "$report" | grep -q "^$unit"; then
    fail "systemd-analyze verify $unit: $report"
  fi
  [ "$(systemctl is-enabled "$unit.service" 2>/dev/null || true)" != enabled ] || fail "$unit is enabled on install"
  echo "  $unit.service: verified, not enabled"
done

getent passwd gslb >/dev/null || fail "no user gslb"
[ "$(getent passwd gslb | cut -d: -f7)" = /usr/sbin/nologin ] || fail "user gslb has a login shell"
for dir in /var/lib/gslb /var/lib/gslb/aggregator /var/lib/gslb-edge; do
  [ "$(stat -c '%U:%G %a' "$dir")" = "gslb:gslb 750" ] || fail "$dir is $(stat -c '%U:%G %a' "$dir")"
done
[ "$(stat -c '%U:%G %a' /etc/gslb)" = "root:gslb 750" ] || fail "/etc/gslb is $(stat -c '%U:%G %a' /etc/gslb)"
for f in aggregator.toml agent.toml edge.toml geo.txt; do
  [ "$(stat -c '%U:%G %a' "/etc/gslb/$f")" = "root:gslb 640" ] || fail "/etc/gslb/$f is $(stat -c '%U:%G %a' "/etc/gslb/$f")"
  grep -qx "/etc/gslb/$f" /var/lib/dpkg/info/gslb.conffiles || fail "/etc/gslb/$f is not a conffile"
done
echo "  user gslb, state directories and settings in place"

dpkg --purge gslb
trap - EXIT
for path in /usr/bin/gslb-aggregator /usr/lib/systemd/system/gslb-edge.service /etc/gslb /var/lib/gslb; do
  [ ! -e "$path" ] || fail "$path left after purge"
done
echo "check-deb: ok"
