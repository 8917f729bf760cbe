#!/usr/bin/env bash
# Admin write throughput and latency through the real aggregator, with
# each write's audit record: REST member updates (keep-alive), one writer
# and 16 concurrent ones, on a single node and on a 3-node Raft cluster
# (writes sent to the leader, then to a follower that forwards them);
# then the audit log's bytes per 1,000
# writes (its records as stored, from a backup). Everything on loopback.
# BIN_DIR runs other binaries (a baseline build); ONE, WRITERS, EACH size
# the runs.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
if [ -z "${BIN_DIR:-}" ]; then
  cargo build --release --workspace --bins -q
  BIN_DIR="$ROOT/target/release"
fi
BIN="$BIN_DIR"
ONE="${ONE:-500}" WRITERS="${WRITERS:-16}" EACH="${EACH:-100}"
WORK="$(mktemp -d)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
# A baseline built before token roles knows read and write only.
ROLE=admin; "$BIN/gslbctl" tokens create --help | grep -q operate || ROLE=write
TOKEN=$("$BIN/gslbctl" tokens create --file "$WORK/tokens.json" --name bench --role "$ROLE" | head -n 1)

up() { # wait for /livez on $1
  for _ in $(seq 1 300); do curl -sf "http://$1/livez" >/dev/null && return 0; sleep 0.1; done
  echo "bench-writes: $1 never came up" >&2; return 1
}
rest() { # METHOD ADDR PATH BODY -> body
  curl -s -X "$1" -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' "http://$2$3" --data "${4:-}"
}
catalog() { # a check, a pool and WRITERS members on $1; prints their ids as JSON
  local created=""
  for _ in $(seq 1 100); do # a new leader takes writes once its leadership is confirmed
    created=$(rest POST "$1" /api/v1/checks '{"name":"tcp","probe":{"type":"tcp"},"interval":"30s","timeout":"5s"}')
    case "$created" in *'"id"'*) break ;; esac
    sleep 0.1
  done
  local pool; pool=$(rest POST "$1" /api/v1/pools '{"name":"web","check":1}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  local ids=()
  for i in $(seq 1 "$WRITERS"); do
    ids+=("$(rest POST "$1" "/api/v1/pools/$pool/members" "{\"name\":\"m$i\",\"ipAddress\":\"127.0.0.$i\"}" \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')")
  done
  (IFS=,; echo "[${ids[*]}]")
}

echo "== single node"
"$BIN/gslb-aggregator" --data-dir "$WORK/single" --listen-grpc 127.0.77.1:7000 --listen-http 127.0.77.1:7080 \
  --insecure --tokens-file "$WORK/tokens.json" >"$WORK/single.out" 2>"$WORK/single.err" & PIDS+=("$!")
up 127.0.77.1:7080
MEMBERS=$(catalog 127.0.77.1:7080)
python3 scripts/lib/writes.py 127.0.77.1:7080 "$TOKEN" "$MEMBERS" "$ONE" "$WRITERS" "$EACH" | sed 's/^/single /'
# The audit log's bytes per 1,000 writes: the newest 1,000 records as
# stored (compact JSON), from a backup; none when the build keeps no log.
"$BIN/gslbctl" --server http://127.0.77.1:7000 --token "$TOKEN" backup --out "$WORK/backup.json" >/dev/null
python3 - "$WORK/backup.json" <<'PY'
import json, sys
records = json.load(open(sys.argv[1])).get("audit", [])[-1000:]
if records:
    size = sum(len(json.dumps(r, separators=(",", ":"))) + 32 for r in records)
    print(f"audit bytes_per_1000_writes={size * 1000 // len(records)} records={len(records)}")
else:
    print("audit none kept by this build")
PY
kill "${PIDS[-1]}"; wait "${PIDS[-1]}" 2>/dev/null || true

echo "== 3-node cluster"
PEERS="1=127.0.77.1:7000,2=127.0.77.2:7000,3=127.0.77.3:7000"
for i in 1 2 3; do
  "$BIN/gslb-aggregator" --data-dir "$WORK/node$i" --node-id "$i" --peers "$PEERS" \
    --listen-grpc "127.0.77.$i:7000" --listen-http "127.0.77.$i:7080" --insecure \
    --tokens-file "$WORK/tokens.json" >"$WORK/node$i.out" 2>"$WORK/node$i.err" & PIDS+=("$!")
done
LEADER=""
for _ in $(seq 1 300); do
  for i in 1 2 3; do
    if curl -s "http://127.0.77.$i:7080/readyz" | grep -q "this node leads"; then LEADER="127.0.77.$i:7080"; break 2; fi
  done
  sleep 0.1
done
[ -n "$LEADER" ] || { echo "bench-writes: no leader" >&2; exit 1; }
MEMBERS=$(catalog "$LEADER")
python3 scripts/lib/writes.py "$LEADER" "$TOKEN" "$MEMBERS" "$ONE" "$WRITERS" "$EACH" | sed 's/^/cluster3 /'
# The same writes sent to a follower, which forwards them to the leader
# (a baseline built before forwarding redirects instead: skipped).
FOLLOWER=""
for i in 1 2 3; do [ "127.0.77.$i:7080" != "$LEADER" ] && { FOLLOWER="127.0.77.$i:7080"; break; }; done
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' \
  "http://$FOLLOWER/api/v1/decisions" --data '{"paused": false}')
if [ "$code" = 200 ]; then
  python3 scripts/lib/writes.py "$FOLLOWER" "$TOKEN" "$MEMBERS" "$ONE" "$WRITERS" "$EACH" | sed 's/^/cluster3-forwarded /'
else
  echo "cluster3-forwarded skipped: a follower answers writes with $code"
fi
