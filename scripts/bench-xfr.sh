#!/usr/bin/env bash
# Zone transfer benchmark (issue 19), release build, loopback only:
#
# 1. AXFR of a SIZE-record zone (default 100,000 record sets: A, AAAA, TXT
#    and MX in turn) to Knot as a secondary of the edge: from applying the
#    zone's transfer settings (whose NOTIFY starts it) to Knot answering
#    the zone's serial, and Knot's own "AXFR ... finished" time. The peer
#    in the same run: a Knot primary serving the exported zone file to a
#    second Knot secondary. Then one kdig AXFR (TSIG) from each primary.
# 2. Flip to IXFR applied: a pool-backed name (two members, manual health)
#    flipped FLIPS times (default 20) with `gslbctl health`; for each, the
#    time from before the command until the edge, Knot and NSD answer the
#    new set (one poller asks all three). Prints median and p90 per server.
#
# EDGE_FLAGS adds flags to the edge; KEEP=1 keeps the work directory (logs).
# Needs knotd, kdig, nsd, dig, python3 (scripts/packages.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SIZE="${SIZE:-100000}" FLIPS="${FLIPS:-20}"
for t in knotd kdig nsd dig python3 curl; do
  command -v "$t" >/dev/null || { echo "bench-xfr: $t missing (scripts/packages.sh)" >&2; exit 2; }
done
cd "$ROOT"
cargo build --release -q --workspace --bins
BIN="$ROOT/target/release"
WORK="$(mktemp -d /tmp/gslb-bench-xfr.XXXXXX)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; [ -n "${KEEP:-}" ] && echo "bench-xfr: kept $WORK" || rm -rf "$WORK"; }
trap cleanup EXIT

listening() {
  local file="$1" name="$2" i
  for i in $(seq 1 600); do
    if grep -q "^$name listening on " "$file" 2>/dev/null; then
      sed -n "s/^$name listening on //p" "$file" | head -1; return 0
    fi
    sleep 0.1
  done
  echo "bench-xfr: no '$name listening' in $file" >&2; cat "$file" >&2; return 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ms() { date +%s%3N; }
serial_at() { dig +short +time=1 +tries=1 @127.0.0.1 -p "$1" big.test SOA 2>/dev/null | awk '{print $3}'; }
# Wait until command "$@" prints $want (at most 120 s); print the ms taken since $start.
until_equal() {
  local start="$1" want="$2"; shift 2
  local deadline=$(( $(now_ms) + 120000 ))
  while [ "$("$@")" != "$want" ]; do
    [ "$(now_ms)" -lt "$deadline" ] || { echo "bench-xfr: timed out waiting for $want from $*" >&2; return 1; }
    sleep 0.002
  done
  echo $(( $(now_ms) - start ))
}

# The aggregator, a zone with a pool-backed name, and the big zone file.
TOKEN=$("$BIN/gslbctl" tokens create --file "$WORK/tokens.json" --name bench --role admin | head -n 1)
"$BIN/gslb-aggregator" --data-dir "$WORK/agg" --listen-grpc 127.0.0.1:0 --listen-http 127.0.0.1:0 \
  --insecure --tokens-file "$WORK/tokens.json" >"$WORK/agg.out" 2>"$WORK/agg.err" & PIDS+=($!)
GRPC="http://$(listening "$WORK/agg.out" grpc)"
ctl() { "$BIN/gslbctl" --server "$GRPC" --token "$TOKEN" "$@"; }
version_of() { sed -n 's/^applied: .*version \([0-9]*\).*/\1/p'; }

cat >"$WORK/base.toml" <<'EOF'
[[zone]]
apex = "big.test"
ns = ["ns1.big.test"]
defaultTtl = 300
[zone.soa]
mname = "ns1.big.test"
rname = "hostmaster.big.test"
refresh = 3600
retry = 600
expire = 604800
negativeTtl = 60
EOF
cat >"$WORK/pool.toml" <<'EOF'

[[pool]]
name = "web"
[[pool.member]]
name = "w1"
address = "192.0.2.1"
port = 80
[[pool.member]]
name = "w2"
address = "192.0.2.2"
port = 80

[[record]]
zone = "big.test"
name = "www.big.test"
type = "A"
dynamic = { steering = "roundrobin", pools = ["web"] }
EOF
cat "$WORK/base.toml" "$WORK/pool.toml" >"$WORK/catalog.toml"
ctl apply -f "$WORK/catalog.toml" >/dev/null
python3 - "$SIZE" >"$WORK/big.test.zone" <<'EOF'
import sys
n = int(sys.argv[1])
print("$ORIGIN big.test.\n$TTL 300\n@ IN SOA ns1 hostmaster 1 3600 600 604800 60\n@ IN NS ns1\nns1 IN A 192.0.2.53")
for i in range(n):
    k = i % 4
    if k == 0: print(f"h{i} A 10.{(i>>16)&255}.{(i>>8)&255}.{i&255}")
    elif k == 1: print(f"h{i} AAAA 2001:db8::{i >> 16:x}:{i & 0xffff:x}")
    elif k == 2: print(f'h{i} TXT "record {i}"')
    else: print(f"h{i} MX 10 mail{i}.example.net.")
EOF
ctl zone import "$WORK/big.test.zone" >/dev/null
W1=$(ctl -o json members list --pool "$(ctl -o json pools list | python3 -c 'import json,sys; print([p["id"] for p in json.load(sys.stdin) if p["name"]=="web"][0])')" \
  | python3 -c 'import json,sys; print(" ".join(str(m["id"]) for m in json.load(sys.stdin)))')
read -r M1 M2 <<<"$W1"
ctl health "$M1" up >/dev/null
ctl health "$M2" up >/dev/null
SECRET=$(ctl -o json tsig create xfr.big.test | python3 -c 'import json,sys; print(json.load(sys.stdin)["secret"])')

# The edge.
"$BIN/gslb-edge" --aggregator "$GRPC" --listen-dns 127.0.0.1:0 --listen-status 127.0.0.1:0 \
  --min-drain-secs 0 ${EDGE_FLAGS:-} >"$WORK/edge.out" 2>"$WORK/edge.err" & PIDS+=($!)
EDGE=$(listening "$WORK/edge.out" dns)
EDGE_PORT="${EDGE##*:}"

# Secondaries: Knot and NSD of the edge, and the peer pair (Knot to Knot).
knot_conf() { # dir port primary_port allow_notify
  cat <<EOF
server:
    rundir: "$1"
    listen: 127.0.0.1@$2
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
database:
    storage: "$1"
log:
  - target: stderr
    any: info
key:
  - id: xfr.big.test
    algorithm: hmac-sha256
    secret: $SECRET
remote:
  - id: primary
    address: 127.0.0.1@$3
    key: xfr.big.test
acl:
  - id: notify
    address: 127.0.0.1
    key: xfr.big.test
    action: notify
  - id: transfer
    address: 127.0.0.1
    key: xfr.big.test
    action: transfer
EOF
}
KNOT_PORT=$(free_port) NSD_PORT=$(free_port) PEER_PORT=$(free_port) PEER2_PORT=$(free_port)
mkdir -p "$WORK/knot" "$WORK/nsd" "$WORK/peer" "$WORK/peer2"
{ knot_conf "$WORK/knot" "$KNOT_PORT" "$EDGE_PORT"
  printf 'zone:\n  - domain: big.test.\n    master: primary\n    acl: notify\n    file: "%s/big.test.zone"\n    zonefile-sync: -1\n    zonefile-load: none\n' "$WORK/knot"
} >"$WORK/knot/knot.conf"
cat >"$WORK/nsd/nsd.conf" <<EOF
server:
    ip-address: 127.0.0.1@$NSD_PORT
    port: $NSD_PORT
    username: ""
    chroot: ""
    zonesdir: "$WORK/nsd"
    database: ""
    pidfile: "$WORK/nsd/nsd.pid"
    xfrdfile: "$WORK/nsd/xfrd.state"
    xfrdir: "$WORK/nsd"
    zonelistfile: "$WORK/nsd/zone.list"
    logfile: "$WORK/nsd/nsd.log"
    server-count: 1
    # NSD reloads at most once a second after transfers by default; 0
    # applies each at once (as Knot does).
    xfrd-reload-timeout: 0
remote-control:
    control-enable: no
key:
    name: xfr.big.test
    algorithm: hmac-sha256
    secret: "$SECRET"
zone:
    name: big.test
    zonefile: "$WORK/nsd/big.test.zone"
    request-xfr: 127.0.0.1@$EDGE_PORT xfr.big.test
    allow-notify: 127.0.0.1 xfr.big.test
EOF
knotd -c "$WORK/knot/knot.conf" >/dev/null 2>"$WORK/knot/log" & PIDS+=($!)
nsd -d -c "$WORK/nsd/nsd.conf" >/dev/null 2>"$WORK/nsd/log" & PIDS+=($!)
for i in $(seq 1 100); do dig +short +time=1 +tries=1 @127.0.0.1 -p "$KNOT_PORT" . SOA >/dev/null 2>&1 && break; sleep 0.1; done

# 1. AXFR: the transfer settings (a merge-patch of the zone over REST),
# whose NOTIFY starts the transfers.
HTTP=$(listening "$WORK/agg.out" http)
ZID=$(ctl -o json zones list | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
BEFORE=$(serial_at "$EDGE_PORT")
START=$(now_ms)
curl -sf -X PUT -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  "http://$HTTP/api/v1/zones/$ZID" -d "{\"transfer\": {\"allow\": [{\"address\": \"127.0.0.1\", \"key\": \"xfr.big.test\"}],
  \"notify\": [{\"address\": \"127.0.0.1:$KNOT_PORT\", \"key\": \"xfr.big.test\"}, {\"address\": \"127.0.0.1:$NSD_PORT\", \"key\": \"xfr.big.test\"}]}}" >/dev/null
while [ "$(serial_at "$EDGE_PORT")" = "$BEFORE" ]; do sleep 0.002; done
SERIAL=$(serial_at "$EDGE_PORT")
EDGE_AXFR_MS=$(until_equal "$START" "$SERIAL" serial_at "$KNOT_PORT")
NSD_AXFR_MS=$(until_equal "$START" "$SERIAL" serial_at "$NSD_PORT")
KNOT_LOG_S=$(grep -o 'AXFR, incoming.*finished, [0-9.]* seconds' "$WORK/knot/log" | tail -1 | sed 's/.*finished, \([0-9.]*\) seconds/\1/')
RECORDS=$(( SIZE + 5 ))

# The peer: the exported zone, served by a Knot primary to a Knot secondary.
ctl zone export big.test >"$WORK/peer/big.test.zone"
{ knot_conf "$WORK/peer" "$PEER_PORT" 1
  printf 'zone:\n  - domain: big.test.\n    file: "%s/big.test.zone"\n    acl: transfer\n    zonefile-sync: -1\n' "$WORK/peer"
} >"$WORK/peer/knot.conf"
knotd -c "$WORK/peer/knot.conf" >/dev/null 2>"$WORK/peer/log" & PIDS+=($!)
until_equal "$(now_ms)" "$SERIAL" serial_at "$PEER_PORT" >/dev/null
{ knot_conf "$WORK/peer2" "$PEER2_PORT" "$PEER_PORT"
  printf 'zone:\n  - domain: big.test.\n    master: primary\n    file: "%s/big.test.zone"\n    zonefile-sync: -1\n    zonefile-load: none\n' "$WORK/peer2"
} >"$WORK/peer2/knot.conf"
START=$(now_ms)
knotd -c "$WORK/peer2/knot.conf" >/dev/null 2>"$WORK/peer2/log" & PIDS+=($!)
PEER_AXFR_MS=$(until_equal "$START" "$SERIAL" serial_at "$PEER2_PORT")
PEER_LOG_S=$(grep -o 'AXFR, incoming.*finished, [0-9.]* seconds' "$WORK/peer2/log" | tail -1 | sed 's/.*finished, \([0-9.]*\) seconds/\1/')

kdig_ms() {
  local start; start=$(now_ms)
  kdig @127.0.0.1 -p "$1" +tcp -y "hmac-sha256:xfr.big.test:$SECRET" AXFR big.test. >"$WORK/kdig.out"
  local took=$(( $(now_ms) - start ))
  grep -c "^[a-z0-9]" "$WORK/kdig.out" >"$WORK/kdig.count"
  echo "$took"
}
EDGE_KDIG_MS=$(kdig_ms "$EDGE_PORT"); EDGE_KDIG_RR=$(cat "$WORK/kdig.count")
PEER_KDIG_MS=$(kdig_ms "$PEER_PORT"); PEER_KDIG_RR=$(cat "$WORK/kdig.count")

echo "xfr-axfr records=$RECORDS edge->knot_ms=$EDGE_AXFR_MS (knot log ${KNOT_LOG_S:-?} s) edge->nsd_ms=$NSD_AXFR_MS knot->knot_ms=$PEER_AXFR_MS (knot log ${PEER_LOG_S:-?} s)"
echo "xfr-kdig records_edge=$EDGE_KDIG_RR edge_ms=$EDGE_KDIG_MS records_knot=$PEER_KDIG_RR knot_ms=$PEER_KDIG_MS"

# 2. Flips: each member down and up in turn. One poller asks the three
# servers in turn every few ms (UDP, 200 ms timeout, so a lost reply costs
# that, not dig's whole second) and writes each one's time to the new set.
cat >"$WORK/poll.py" <<'PY'
import random, socket, struct, sys, time
start, want = float(sys.argv[1]) / 1000, set(sys.argv[2].split())
ports, names = [int(p) for p in sys.argv[3:6]], sys.argv[6:9]
qname = b"".join(bytes([len(l)]) + l.encode() for l in "www.big.test".split(".")) + b"\0"
def ask(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(0.2)
    header = struct.pack(">HHHHHH", random.randrange(65536), 0, 1, 0, 0, 0)
    s.sendto(header + qname + struct.pack(">HH", 1, 1), ("127.0.0.1", port))
    try:
        data = s.recv(4096)
    except socket.timeout:
        return None
    finally:
        s.close()
    i, count, got = 12 + len(qname) + 4, struct.unpack(">H", data[6:8])[0], set()
    for _ in range(count):
        while data[i] and data[i] < 0xC0:
            i += data[i] + 1
        i += 2 if data[i] >= 0xC0 else 1
        rtype, _, _, rdlen = struct.unpack(">HHIH", data[i:i + 10])
        i += 10
        if rtype == 1:
            got.add(".".join(str(b) for b in data[i:i + 4]))
        i += rdlen
    return got
done, deadline = {}, time.time() + 60
while len(done) < 3 and time.time() < deadline:
    for port, name in zip(ports, names):
        if name not in done and ask(port) == want:
            done[name] = round((time.time() - start) * 1000)
    time.sleep(0.002)
for name in names:
    print(name, done.get(name, "timeout"))
PY
for who in edge knot nsd; do : >"$WORK/flip.$who"; done
for i in $(seq 1 "$FLIPS"); do
  if [ $((i % 2)) -eq 1 ]; then state=down want="192.0.2.1"; else state=up want="192.0.2.1 192.0.2.2"; fi
  START=$(now_ms)
  ctl health "$M2" "$state" >/dev/null
  python3 "$WORK/poll.py" "$START" "$want" "$EDGE_PORT" "$KNOT_PORT" "$NSD_PORT" edge knot nsd >"$WORK/poll.out"
  while read -r who ms; do
    [ "$ms" != timeout ] || { echo "bench-xfr: $who did not follow flip $i" >&2; exit 1; }
    echo "$ms" >>"$WORK/flip.$who"
  done <"$WORK/poll.out"
done
stats() { sort -n "$1" | awk '{v[NR]=$1} END {m=v[int((NR+1)/2)]; p=v[int(NR*0.9+0.999)]; printf "median_ms=%s p90_ms=%s max_ms=%s", m, p, v[NR]}'; }
IXFRS=$(curl -s "http://$(listening "$WORK/edge.out" status)/metrics" | sed -n 's/^gslb_edge_xfr_ixfr_total //p')
for who in edge knot nsd; do
  echo "xfr-flip server=$who flips=$FLIPS $(stats "$WORK/flip.$who")"
done
echo "xfr-flip edge_ixfr_sent=$IXFRS"
# The edge's cost per snapshot of rebuilding the zone's transfer state.
grep -o 'build_ms=[0-9]*' "$WORK/edge.err" | cut -d= -f2 >"$WORK/build.ms" || true
[ -s "$WORK/build.ms" ] && echo "xfr-build zone_records=$RECORDS updates=$(wc -l <"$WORK/build.ms") $(stats "$WORK/build.ms")"
grep -o 'compile_ms=[0-9]*' "$WORK/edge.err" | cut -d= -f2 >"$WORK/compile.ms" || true
[ -s "$WORK/compile.ms" ] && echo "edge-compile zone_records=$RECORDS snapshots=$(wc -l <"$WORK/compile.ms") $(stats "$WORK/compile.ms")"
