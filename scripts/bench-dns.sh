#!/usr/bin/env bash
# DNS benchmark: gslb-edge against NSD and Knot serving the same zone
# (../shared/bench/peer-dns/example.test.zone) in the same run, loaded by
# dnsperf through the shared harness (../shared/bench/peer-dns-bench.sh).
# The server is pinned to CPU 0 (Knot pins its own worker there), dnsperf to
# CPU 1. Prints one harness line per run; the figure that compares servers
# is qps_per_server_core (dnsperf saturates its own core first here).
#
# Runs: edge with the zone as static records; edge with every A/AAAA set
# pool-backed (selection per query); edge with every other type and a
# delegation added (the same queries; then a mix asking for every type);
# nsd; knot; then each at a fixed 20k
# qps with latency percentiles; then the edge with SCALE (default 100,000)
# pool-backed names: its resident memory, and load over all those names.
# DNSSEC (issue 20): edge-signed (the zone signed, one ECDSA CSK) against
# knot-onlinesign (Knot's mod-onlinesign on the same zone, one ECDSA CSK),
# both asked with DO set (dnsperf -D, through a wrapper first on PATH for
# those runs only); edge-signed-dynamic (pool-backed A/AAAA, signatures
# from the cache); then -nx runs of each asking 100,000 names that do not
# exist (compact denial; Knot's NSEC white lies), with DO.
# Geo (issue 22): edge-geo-cidr and edge-geo-mmdb serve the pool-backed
# zone with one geo branch per set, matched on a region of a CIDR table
# (--geo-file) or a country of a MaxMind DB file (--geo-mmdb), each holding
# GEO_NETS (default 65,536) networks; dnsperf sends an ECS option
# (198.51.100.0/24) with every query, so every answer is placed.
# Environment: DUR (s, default 15), REPS (default 1), LAT (1 = latency runs),
# EDGE_FLAGS (added to every edge's command line, e.g. --hot-key-sample 16),
# WORKERS (server threads, default 1), SERVERS (default "edge-static
# edge-dynamic edge-alltypes edge-alltypes-mix nsd knot edge-signed
# edge-signed-dynamic knot-onlinesign edge-signed-nx knot-onlinesign-nx"). Needs dnsperf, dig, nsd, knot (apt-get install
# dnsperf bind9-dnsutils nsd knot). Only loopback is used.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BENCH="${BENCH_DIR:-$ROOT/../shared/bench}"
HARNESS="$BENCH/peer-dns-bench.sh"
ZONE="$BENCH/peer-dns/example.test.zone"
DUR="${DUR:-15}" REPS="${REPS:-1}" LAT="${LAT:-1}" WORKERS="${WORKERS:-1}"
SERVERS="${SERVERS:-edge-static edge-dynamic edge-alltypes edge-alltypes-mix nsd knot edge-signed edge-signed-dynamic knot-onlinesign edge-signed-nx knot-onlinesign-nx edge-geo-cidr edge-geo-mmdb}"
GEO_NETS="${GEO_NETS:-65536}"
SCALE="${SCALE:-100000}"
for t in dnsperf dig nsd knotd; do
  command -v "$t" >/dev/null || { echo "bench-dns: $t missing (apt-get install dnsperf bind9-dnsutils nsd knot)" >&2; exit 2; }
done
cd "$ROOT"
cargo build --release -q --workspace --bins
BIN="$ROOT/target/release"
WORK="$(mktemp -d /tmp/gslb-bench-dns.XXXXXX)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

# shellcheck source=lib/prepare.sh
source "$ROOT/scripts/lib/prepare.sh"

prepare_zone "$ZONE"

# Geo: the pool-backed zone with a branch per set, and GEO_NETS /24s (from
# 11.0.0.0 up) in a CIDR table and in a MaxMind DB file written by
# MaxMind's own writer, plus the queries' subnet (eu / DE).
python3 "$ROOT/scripts/zone2gslb.py" --dynamic --geo-region eu "$ZONE" >"$WORK/geo-cidr.toml"
python3 "$ROOT/scripts/zone2gslb.py" --dynamic --geo-country DE "$ZONE" >"$WORK/geo-mmdb.toml"
prepare "$WORK/geo-cidr" "$WORK/geo-cidr.toml"
prepare "$WORK/geo-mmdb" "$WORK/geo-mmdb.toml"
python3 - "$GEO_NETS" >"$WORK/geo.txt" <<'PY'
import sys
for i in range(int(sys.argv[1])):
    n = (11 << 24) + i * 256
    print(f"{n >> 24}.{(n >> 16) & 255}.{(n >> 8) & 255}.0/24 r{i % 200}")
print("198.51.100.0/24 eu")
PY
perl - "$WORK/geo.mmdb" "$GEO_NETS" <<'PL'
use strict; use warnings;
use MaxMind::DB::Writer::Tree;
my ($file, $n) = @ARGV;
my %types = (country => 'map', continent => 'map', subdivisions => ['array', 'map'],
  iso_code => 'utf8_string', code => 'utf8_string', autonomous_system_number => 'uint32');
my $tree = MaxMind::DB::Writer::Tree->new(ip_version => 6, record_size => 28,
  database_type => 'GeoLite2-City', languages => ['en'], description => { en => 'bench' },
  remove_reserved_networks => 0, map_key_type_callback => sub { $types{ $_[0] } });
my @cc = qw(US CA BR FR GB IT ES NL PL SE JP CN IN AU ZA);
for my $i (0 .. $n - 1) {
  my $v = (11 << 24) + $i * 256;
  my $cidr = join('.', ($v >> 24) & 255, ($v >> 16) & 255, ($v >> 8) & 255, 0) . '/24';
  $tree->insert_network($cidr, { country => { iso_code => $cc[$i % @cc] }, continent => { code => 'EU' },
    subdivisions => [ { iso_code => 'X' . ($i % 50) } ], autonomous_system_number => 64512 + $i % 1000 });
}
$tree->insert_network('198.51.100.0/24', { country => { iso_code => 'DE' }, continent => { code => 'EU' },
  subdivisions => [ { iso_code => 'BE' } ], autonomous_system_number => 64500 });
open my $fh, '>:raw', $file or die; $tree->write_tree($fh); close $fh or die;
PL
# dnsperf with an ECS option for 198.51.100.0/24 (family 1, source 24).
mkdir -p "$WORK/ecs-bin"
printf '#!/bin/sh\nexec %s -E 8:00011800c63364 "$@"\n' "$(command -v dnsperf)" >"$WORK/ecs-bin/dnsperf"
chmod +x "$WORK/ecs-bin/dnsperf"

# Signed: the same configs with a signed zone (one ECDSA P-256 CSK).
for c in static dynamic; do
  { cat "$WORK/$c.toml"; printf '\n[zone.dnssec]\nalgorithm = "ecdsap256sha256"\n'; } >"$WORK/$c-signed.toml"
  prepare "$WORK/$c-signed" "$WORK/$c-signed.toml"
done
# Knot signing the same zone online, with one ECDSA P-256 key (a CSK).
cat >"$WORK/knot-sign.conf.in" <<KNOT
server:
    rundir: "{DIR}"
    listen: 127.0.0.1@{PORT}
    udp-workers: $WORKERS
    tcp-workers: 1
    background-workers: 1
database:
    storage: "{DIR}"
log:
  - target: stderr
    any: warning
policy:
  - id: csk
    algorithm: ecdsap256sha256
    single-type-signing: on
mod-onlinesign:
  - id: sign
    policy: csk
zone:
  - domain: example.test.
    file: "$ZONE"
    zonefile-sync: -1
    zonefile-load: whole
    journal-content: none
    module: mod-onlinesign/sign
KNOT
# Knot's run directory is made per run (the harness gives the port).
cat >"$WORK/knot-sign.sh" <<'SH'
#!/usr/bin/env bash
set -euo pipefail
dir=$(mktemp -d /tmp/gslb-bench-knot.XXXXXX)
sed -e "s|{DIR}|$dir|g" -e "s|{PORT}|$1|g" "$2" >"$dir/knot.conf"
exec knotd -c "$dir/knot.conf"
SH
chmod +x "$WORK/knot-sign.sh"
# 100,000 names that do not exist, each asked for A.
seq 1 100000 | sed 's/.*/nxd&.example.test A/' >"$WORK/nx-queries.txt"
# dnsperf with DO set (-D), for the DNSSEC runs.
mkdir -p "$WORK/do-bin"
printf '#!/bin/sh\nexec %s -D "$@"\n' "$(command -v dnsperf)" >"$WORK/do-bin/dnsperf"
chmod +x "$WORK/do-bin/dnsperf"

# The same zone with every other type we serve and a delegation added,
# imported as a master file (gslbctl zone import) over the static config:
# edge-alltypes answers the same queries as edge-static from it, and
# edge-alltypes-mix a mix that asks for every type and crosses the cut.
cp "$ZONE" "$WORK/alltypes.zone"
H=d2abde240d7cd3ee6b4b28c54df034b97983a1d16e8a410e4561cb106618e971
cat >>"$WORK/alltypes.zone" <<ZONE
@        IN MX  10 mail.example.test.
@        IN TXT "v=spf1 -all"
@        IN CAA 0 issue "ca.example"
mail     IN A   192.0.2.25
mail     IN SSHFP 4 2 $H
_25._tcp.mail IN TLSA 3 1 1 $H
_sip._tcp IN SRV 10 60 5060 mail.example.test.
sip      IN NAPTR 100 10 "S" "SIP+D2U" "" _sip._udp.example.test.
ptr      IN PTR mail.example.test.
svc      IN HTTPS 1 . alpn=h2,h3 port=8443
_x._tcp  IN SVCB 1 mail.example.test. alpn=h2
*.wild   IN A   192.0.2.99
odd      IN TYPE65534 \# 4 0a000001
sub      IN NS  ns1.sub.example.test.
sub      IN NS  ns2.sub.example.test.
sub      IN DS  12345 13 2 $H
ns1.sub  IN A   192.0.2.70
ns2.sub  IN A   192.0.2.71
ZONE
prepare "$WORK/alltypes" "$WORK/static.toml" "$WORK/alltypes.zone"
# Every type, a referral and a wildcard, with the usual names in between.
python3 - "$ROOT/../shared/bench/peer-dns/queries.txt" "$WORK/alltypes-queries.txt" <<'PY'
import sys
extra = ["example.test MX", "example.test TXT", "example.test CAA", "mail.example.test SSHFP",
         "_25._tcp.mail.example.test TLSA", "_sip._tcp.example.test SRV", "sip.example.test NAPTR",
         "ptr.example.test PTR", "svc.example.test HTTPS", "_x._tcp.example.test SVCB",
         "x.wild.example.test A", "odd.example.test TYPE65534", "www.sub.example.test A",
         "sub.example.test DS", "example.test NS"]
base = open(sys.argv[1]).read().split("\n")
out = []
for i, line in enumerate(l for l in base if l.strip()):
    out.append(line)
    out.append(extra[i % len(extra)])
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY

edge_cmd() {  # cache dir
  echo "$BIN/gslb-edge --cache-dir $1 --listen-dns 127.0.0.1:{PORT} --listen-status 127.0.0.1:0 --udp-workers $WORKERS${EDGE_FLAGS:+ $EDGE_FLAGS}"
}
run() {  # label, harness args...
  local label="$1"; shift
  local line; line=$("$HARNESS" "$@" 2>>"$WORK/harness.log") || { echo "$label FAILED"; tail -20 "$WORK/harness.log"; return 1; }
  echo "$label $line"
}
server_args() {  # server name -> harness args
  case "$1" in
    edge-static) echo "--cmd|$(edge_cmd "$WORK/static")|--name|edge-static";;
    edge-dynamic) echo "--cmd|$(edge_cmd "$WORK/dynamic")|--name|edge-dynamic";;
    edge-alltypes) echo "--cmd|$(edge_cmd "$WORK/alltypes")|--name|edge-alltypes";;
    edge-alltypes-mix) echo "--cmd|$(edge_cmd "$WORK/alltypes")|--name|edge-alltypes-mix|-d|$WORK/alltypes-queries.txt";;
    edge-signed) echo "--cmd|$(edge_cmd "$WORK/static-signed")|--name|edge-signed";;
    edge-geo-cidr) echo "--cmd|$(edge_cmd "$WORK/geo-cidr") --geo-file $WORK/geo.txt|--name|edge-geo-cidr";;
    edge-geo-mmdb) echo "--cmd|$(edge_cmd "$WORK/geo-mmdb") --geo-mmdb $WORK/geo.mmdb|--name|edge-geo-mmdb";;
    edge-signed-dynamic) echo "--cmd|$(edge_cmd "$WORK/dynamic-signed")|--name|edge-signed-dynamic";;
    knot-onlinesign) echo "--cmd|$WORK/knot-sign.sh {PORT} $WORK/knot-sign.conf.in|--name|knot-onlinesign";;
    edge-signed-nx) echo "--cmd|$(edge_cmd "$WORK/static-signed")|--name|edge-signed-nx|-d|$WORK/nx-queries.txt";;
    knot-onlinesign-nx) echo "--cmd|$WORK/knot-sign.sh {PORT} $WORK/knot-sign.conf.in|--name|knot-onlinesign-nx|-d|$WORK/nx-queries.txt";;
    nsd|knot) echo "$1";;
  esac
}
# The DNSSEC runs ask with DO set.
path_for() {  # server name -> PATH
  case "$1" in
    *signed*|*onlinesign*) echo "$WORK/do-bin:$PATH";;
    *geo*) echo "$WORK/ecs-bin:$PATH";;
    *) echo "$PATH";;
  esac
}
PIN=(--server-cpus 0 --client-cpus 1 -w "$WORKERS")
for rep in $(seq 1 "$REPS"); do
  for s in $SERVERS; do
    IFS='|' read -r -a A <<<"$(server_args "$s")"
    PATH="$(path_for "$s")" run "max/rep$rep" "${A[@]}" -l "$DUR" -c 8 -q 100 -T 1 --quiet-wait 10 "${PIN[@]}"
  done
done
if [ "$LAT" = 1 ]; then
  for s in $SERVERS; do
    IFS='|' read -r -a A <<<"$(server_args "$s")"
    PATH="$(path_for "$s")" run "lat20k" "${A[@]}" -l "$DUR" -c 8 -q 100 -T 1 --quiet-wait 10 -Q 20000 --latency "${PIN[@]}"
  done
fi

if [ "$SCALE" -gt 0 ]; then
  # Built with the workspace's features (as the binaries above), then run.
  cargo build --release -q --workspace --example synth_cache
  target/release/examples/synth_cache "$WORK/scale" "$SCALE" "$WORK/scale-queries.txt" >/dev/null
  target/release/examples/synth_cache "$WORK/scale-signed" "$SCALE" "$WORK/scale-queries.txt" signed >/dev/null
  # Resident memory idle, then after every name was asked (with DO for the
  # signed zone: each pool-backed answer's signature is then in the cache).
  for kind in scale scale-signed; do
    "$BIN/gslb-edge" --cache-dir "$WORK/$kind" --listen-dns 127.0.0.1:0 --listen-status 127.0.0.1:0 \
      --udp-workers "$WORKERS" --min-drain-secs 0 >"$WORK/$kind.out" 2>"$WORK/$kind.err" & SPID=$!; PIDS+=("$SPID")
    addr=$(listening "$WORK/$kind.out" dns)
    rss=$(awk '/^VmRSS/{print $2}' "/proc/$SPID/status")
    flags=(); [ "$kind" = scale-signed ] && flags=(-D)
    dnsperf -s "${addr%:*}" -p "${addr##*:}" -d "$WORK/scale-queries.txt" -n 1 -c 8 -q 100 "${flags[@]}" >/dev/null 2>&1 || true
    after=$(awk '/^VmRSS/{print $2}' "/proc/$SPID/status"); hwm=$(awk '/^VmHWM/{print $2}' "/proc/$SPID/status")
    echo "$kind edge names=$SCALE rss_mib=$((rss / 1024)) rss_after_all_names_mib=$((after / 1024)) peak_rss_mib=$((hwm / 1024))"
    kill "$SPID"; wait "$SPID" 2>/dev/null || true
  done
  run "max/scale" --cmd "$(edge_cmd "$WORK/scale")" --name "edge-dynamic-$SCALE" --probe "dyn.test SOA" \
    -d "$WORK/scale-queries.txt" -l "$DUR" -c 8 -q 100 -T 1 --quiet-wait 10 "${PIN[@]}"
fi
