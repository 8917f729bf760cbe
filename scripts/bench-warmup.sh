#!/usr/bin/env bash
# Edge warm-up benchmark (issue 21, seed 001), loopback only. One zone of
# N pool-backed names (10 pools of two members, no checks) on a real
# aggregator; edge A follows it and is asked every name once (its first
# queries: cold) and again (steady), sampling every query into its hot
# keys. Then, each started fresh and asked the same N queries one at a
# time (examples/first_queries.rs):
#   B  from A's cache alone (cold),
#   C  from A's cache with --warmup-from A (warm),
#   D  from the aggregator with --warmup-from A (warm, no cache),
#   E  with no aggregator and no cache: its snapshot and keys from A's TLS
#      warm-up listener (https://, mutual TLS with a development CA).
# Prints the time from start to ready (the "dns listening" line) for
# each, the p50/p99 of each edge's first N queries, and the share of
# C's and D's first-minute answers copied from prebuilt replies.
# Environment: N (names, default 10000; also the hot-key LRU size); GEO=1
# gives every record three geo branches (regions r1-r3 of a geo file
# placing 127.0.1-3.0/24) over the default pool, and the probe asks from
# 127.0.1.1, 127.0.2.1, 127.0.3.1 and 127.0.4.1 (unplaced) in turn, so
# each edge's first answers span every branch; GSLB_BIN runs the
# binaries of another build (e.g. main before a change; the probe is this
# tree's).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
N="${N:-10000}"
cd "$ROOT"
cargo build --release -q --workspace --bins
cargo build --release -q --workspace --example first_queries
BIN="${GSLB_BIN:-$ROOT/target/release}"
GEO="${GEO:-0}"
PROBE="$ROOT/target/release/examples/first_queries"
WORK="$(mktemp -d /tmp/gslb-bench-warmup.XXXXXX)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

# Poll (every 5 ms, at most 60 s) for "NAME listening on ADDR" in FILE.
listening() {
  local file="$1" name="$2" i
  for i in $(seq 1 12000); do
    if grep -q "^$name listening on " "$file" 2>/dev/null; then
      sed -n "s/^$name listening on //p" "$file" | head -1; return 0
    fi
    sleep 0.005
  done
  echo "bench-warmup: no '$name listening' in $file" >&2; cat "$file" "${file%.out}.err" >&2; return 1
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# A counter of an edge's /metrics with a label.
metric() { curl -s "http://$1/metrics" | awk -v n="$2" -v l="$3" 'index($0, n) == 1 && index($0, l) { print $2 }'; }
# The edge's own time per answer (receive to reply ready) since the
# /metrics text in file $2 (none: since start): mean, and the histogram
# bucket holding the 99th percentile.
served() {
  curl -s "http://$1/metrics" >"$WORK/metrics.now"
  awk -v basefile="${2:-}" '
    { f = (FILENAME == basefile) ? 1 : 2 }
    /^gslb_edge_query_duration_seconds_bucket/ { split($0, a, "le=\""); split(a[2], b, "\""); k = b[1]
      if (f == 1) base[k] = $2; else { le[n] = k; c[n++] = $2 - base[k] } }
    /^gslb_edge_query_duration_seconds_sum/ { if (f == 1) bs = $2; else sum = $2 - bs }
    /^gslb_edge_query_duration_seconds_count/ { if (f == 1) bc = $2; else cnt = $2 - bc }
    END { for (i = 0; i < n; i++) if (c[i] >= 0.99 * cnt) { p = le[i]; break }
          printf "server: mean_us=%.1f p99_bucket_le_us=%s", sum / cnt * 1e6, (p == "+Inf" ? p : p * 1e6) }
  ' ${2:+"$2"} "$WORK/metrics.now"
}
{
  printf '[[zone]]\napex = "warm.test"\nns = ["ns1.warm.test"]\ndefaultTtl = 60\n'
  printf '[zone.soa]\nmname = "ns1.warm.test"\nrname = "hostmaster.warm.test"\nrefresh = 3600\nretry = 600\nexpire = 604800\nnegativeTtl = 60\n'
  for p in $(seq 0 9); do
    printf '\n[[pool]]\nname = "p%s"\n' "$p"
    for m in 1 2; do printf '[[pool.member]]\nname = "m%s"\naddress = "127.0.6.%s"\nport = 80\n' "$m" "$((p * 2 + m))"; done
  done
  for i in $(seq 0 $((N - 1))); do
    geo=""
    if [ "$GEO" = 1 ]; then
      geo=", geo = [{ regions = [\"r1\"], pools = [\"p$(((i + 1) % 10))\"] }, { regions = [\"r2\"], pools = [\"p$(((i + 2) % 10))\"] }, { regions = [\"r3\"], pools = [\"p$(((i + 3) % 10))\"] }]"
    fi
    printf '\n[[record]]\nzone = "warm.test"\nname = "h%s.warm.test"\ntype = "A"\ndynamic = { steering = "roundrobin", pools = ["p%s"]%s }\n' "$i" "$((i % 10))" "$geo"
  done
} >"$WORK/catalog.toml"
seq 0 $((N - 1)) | sed 's/.*/h&.warm.test A/' >"$WORK/queries.txt"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$WORK/token"
GEO_FLAGS=()
if [ "$GEO" = 1 ]; then
  printf '127.0.1.0/24 r1\n127.0.2.0/24 r2\n127.0.3.0/24 r3\n' >"$WORK/regions.txt"
  GEO_FLAGS=(--geo-file "$WORK/regions.txt")
  export SOURCES=127.0.1.1,127.0.2.1,127.0.3.1,127.0.4.1
fi

token=$("$BIN/gslbctl" tokens create --file "$WORK/tokens.json" --name bench --role admin | head -n 1)
"$BIN/gslb-aggregator" --data-dir "$WORK/agg" --listen-grpc 127.0.0.1:0 --listen-http 127.0.0.1:0 \
  --insecure --tokens-file "$WORK/tokens.json" >"$WORK/agg.out" 2>"$WORK/agg.err" & PIDS+=($!)
grpc="http://$(listening "$WORK/agg.out" grpc)"
"$BIN/gslbctl" --server "$grpc" --token "$token" apply -f "$WORK/catalog.toml" >/dev/null

# Start edge NAME with FLAGS; sets READY_MS, DNS and STATUS.
edge() {
  local name="$1"; shift
  local t0; t0=$(now_ms)
  "$BIN/gslb-edge" --listen-dns 127.0.0.1:0 --listen-status 127.0.0.1:0 --min-drain-secs 0 \
    --udp-workers 1 --hot-keys "$N" --warmup-token-file "$WORK/token" "${GEO_FLAGS[@]}" "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" & PIDS+=($!)
  DNS=$(listening "$WORK/$name.out" dns)
  READY_MS=$(( $(now_ms) - t0 ))
  STATUS=$(sed -n 's/^status listening on //p' "$WORK/$name.out" | head -1)
}

"$BIN/gslbctl" certs --dir "$WORK/pki" --host 127.0.0.1 edge:edge-a edge:edge-e >/dev/null
tls() { echo --tls-cert "$WORK/pki/$1.crt" --tls-key "$WORK/pki/$1.key" --tls-ca "$WORK/pki/ca.crt"; }
# shellcheck disable=SC2046
edge a --aggregator "$grpc" --cache-dir "$WORK/cache-a" --hot-key-sample 1 --listen-warmup 127.0.0.1:0 $(tls edge-a)
a_ready=$READY_MS a_status=$STATUS a_dns=$DNS
a_warm=$(sed -n 's/^warmup listening on //p' "$WORK/a.out" | head -1)
a_cold="$("$PROBE" "$a_dns" "$WORK/queries.txt" "$N") $(served "$a_status")"
curl -s "http://$a_status/metrics" >"$WORK/metrics.a1"
a_steady="$("$PROBE" "$a_dns" "$WORK/queries.txt" "$N") $(served "$a_status" "$WORK/metrics.a1")"
for _ in $(seq 1 200); do
  [ "$(curl -s -H "Authorization: Bearer $(cat "$WORK/token")" "http://$a_status/internal/warmup" | grep -o '"name"' | wc -l)" -ge "$N" ] && break
  sleep 0.05
done
# A's cache is written off the apply path: wait for the file.
for _ in $(seq 1 200); do [ -s "$WORK/cache-a/snapshot.bin" ] && break; sleep 0.05; done
for c in b c; do mkdir -p "$WORK/cache-$c"; cp "$WORK/cache-a/snapshot.bin" "$WORK/cache-$c/"; done

edge b --cache-dir "$WORK/cache-b"
b_ready=$READY_MS
b_first="$("$PROBE" "$DNS" "$WORK/queries.txt" "$N") $(served "$STATUS")"
edge c --cache-dir "$WORK/cache-c" --warmup-from "http://$a_status"
c_ready=$READY_MS c_status=$STATUS
c_first="$("$PROBE" "$DNS" "$WORK/queries.txt" "$N") $(served "$c_status")"
c_hit=$(metric "$c_status" gslb_edge_first_minute_answers '"prebuilt"')
c_miss=$(metric "$c_status" gslb_edge_first_minute_answers '"encoded"')
edge d --aggregator "$grpc" --cache-dir "$WORK/cache-d" --warmup-from "http://$a_status"
d_ready=$READY_MS d_status=$STATUS
d_first="$("$PROBE" "$DNS" "$WORK/queries.txt" "$N") $(served "$d_status")"
d_hit=$(metric "$d_status" gslb_edge_first_minute_answers '"prebuilt"')
d_miss=$(metric "$d_status" gslb_edge_first_minute_answers '"encoded"')
# shellcheck disable=SC2046
edge e --cache-dir "$WORK/cache-e" --warmup-from "https://$a_warm" $(tls edge-e)
e_ready=$READY_MS e_status=$STATUS
e_first="$("$PROBE" "$DNS" "$WORK/queries.txt" "$N") $(served "$e_status")"
e_source=$(curl -s "http://$e_status/status/config" | python3 -c 'import json, sys; print(json.load(sys.stdin)["source"])')
e_hit=$(metric "$e_status" gslb_edge_first_minute_answers '"prebuilt"')
e_miss=$(metric "$e_status" gslb_edge_first_minute_answers '"encoded"')

echo "names=$N geo=$GEO"
echo "ready_ms from_aggregator=$a_ready from_cache=$b_ready from_cache_warm=$c_ready from_aggregator_warm=$d_ready from_peer_warm=$e_ready (E's source: $e_source)"
echo "A first (cold, from aggregator): $a_cold"
echo "A again (steady):                $a_steady"
echo "B first (cold, from cache):      $b_first"
echo "C first (warm, from cache):      $c_first"
echo "D first (warm, from aggregator): $d_first"
echo "E first (warm, from peer):       $e_first"
echo "first-minute answers from prebuilt replies: C $c_hit of $((c_hit + c_miss)), D $d_hit of $((d_hit + d_miss)), E $e_hit of $((e_hit + e_miss))"
grep -h "warm-up\|seeded" "$WORK/c.err" "$WORK/d.err" "$WORK/e.err" | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-240
