#!/usr/bin/env bash
# The whole mesh on this machine, on loopback only: builds the workspace,
# starts one aggregator, three agents as three locations (fra1/eu, iad1/us,
# sin1/ap), one DNS edge and six demo backends on 127.0.0.x, applies
# deploy/examples/quickstart.toml (a pool-backed name with warm-up, a backup
# member, geo branches and firstN), then tours it: gslbctl status, DNS
# answers per region (gslbctl query, the project's own DNS client), one backend stopped (the answer changes, the health
# log says why), and started again. Every link runs mutual TLS with
# certificates from a development CA (`gslbctl certs`), and admin calls carry
# an admin token (`gslbctl tokens create`). Everything stays up until Ctrl-C;
# --once runs the tour and exits. Every process it started is stopped on
# exit. Needs only the Rust toolchain (curl, when installed, shows the REST
# API's token check too).
#
# Options: --once (tour, then exit), --release (optimised build),
#          --dir DIR (keep the store, cache and logs in DIR).
# Fixed loopback ports (so gslbctl's default server works): aggregator gRPC
# 127.0.0.1:7000, HTTP 127.0.0.1:7080; edge DNS 127.0.0.1:5353, status
# 127.0.0.1:8053; agents' metrics 127.0.0.1:9101-9103.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ONCE=0 PROFILE=debug DIR=""
while [ $# -gt 0 ]; do
  case "$1" in
    --once) ONCE=1 ;;
    --release) PROFILE=release ;;
    --dir) DIR="$2"; shift ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "quickstart: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

cd "$ROOT"
echo "== building ($PROFILE)"
if [ "$PROFILE" = release ]; then cargo build --release --locked -q --workspace --bins
else cargo build --locked -q --workspace --bins; fi
BIN="$ROOT/target/$PROFILE"
export PATH="$BIN:$PATH"

if [ -z "$DIR" ]; then DIR="$(mktemp -d /tmp/gslb-quickstart.XXXXXX)"; KEEP=0; else mkdir -p "$DIR"; KEEP=1; fi
LOGS="$DIR/logs"; mkdir -p "$LOGS"
PIDS=()
declare -A BACKEND_PID
cleanup() {
  trap - EXIT INT TERM
  echo
  echo "== stopping everything"
  for p in "${PIDS[@]}" "${BACKEND_PID[@]}" $(jobs -p); do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$KEEP" = 0 ]; then rm -rf "$DIR"; else echo "store, cache and logs kept in $DIR"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_for SECONDS DESCRIPTION COMMAND...: poll every 200 ms, fail after SECONDS.
wait_for() {
  local secs="$1" what="$2" i; shift 2
  for ((i = 0; i < secs * 5; i++)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  echo "quickstart: timed out after ${secs}s waiting for $what (logs in $LOGS)" >&2
  KEEP=1
  exit 1
}
listening() { grep -q "^$2 listening on " "$LOGS/$1.out"; }
start() { # NAME BINARY ARGS...: start in the background, logs in $LOGS/NAME.{out,err}
  local name="$1"; shift
  "$@" >"$LOGS/$name.out" 2>"$LOGS/$name.err" &
  PIDS+=($!)
}
start_backend() { # NAME ADDR
  gslb-demo-backend --listen "$2" --name "$1" >"$LOGS/$1.out" 2>"$LOGS/$1.err" &
  BACKEND_PID[$1]=$!
  wait_for 10 "backend $1" listening "$1" backend
}

echo "== demo backends"
declare -A BACKENDS=(
  [web-eu-1]=127.0.0.11:18081 [web-eu-2]=127.0.0.12:18082 [web-eu-backup]=127.0.0.13:18083
  [web-us-1]=127.0.0.21:18091 [web-us-2]=127.0.0.22:18092 [api-1]=127.0.0.31:18101
)
for name in web-eu-1 web-eu-2 web-eu-backup web-us-1 web-us-2 api-1; do
  start_backend "$name" "${BACKENDS[$name]}"
done

echo "== certificates and an admin token"
PKI="$DIR/pki"
gslbctl certs --dir "$PKI" --host 127.0.0.1 --host localhost aggregator:aggregator \
  operator:operator agent:fra1 agent:iad1 agent:sin1 edge:edge
# The token is printed once; the tokens file keeps only its hash.
gslbctl tokens create --file "$DIR/tokens.json" --name quickstart --role admin | head -n 1 >"$DIR/admin.token"
chmod 600 "$DIR/admin.token"
gslbctl tokens list --file "$DIR/tokens.json"
# gslbctl reads these: the aggregator over TLS, an operator certificate, the token.
export GSLB_SERVER=https://127.0.0.1:7000 GSLB_CA="$PKI/ca.crt"
export GSLB_CERT="$PKI/operator.crt" GSLB_KEY="$PKI/operator.key"
GSLB_TOKEN="$(cat "$DIR/admin.token")"; export GSLB_TOKEN
tls() { echo --tls-cert "$PKI/$1.crt" --tls-key "$PKI/$1.key" --tls-ca "$PKI/ca.crt"; }

echo "== aggregator"
# shellcheck disable=SC2046 # tls prints flags meant to split
start aggregator gslb-aggregator --data-dir "$DIR/store" --listen-grpc 127.0.0.1:7000 --listen-http 127.0.0.1:7080 \
  --tokens-file "$DIR/tokens.json" $(tls aggregator)
wait_for 30 "the aggregator (is port 7000 or 7080 taken?)" listening aggregator http
gslbctl apply -f deploy/examples/quickstart.toml

echo "== agents"
i=1
for loc in fra1:eu iad1:us sin1:ap; do
  # shellcheck disable=SC2046
  start "agent-${loc%%:*}" gslb-agent --location "${loc%%:*}" --region "${loc##*:}" \
    --aggregator "$GSLB_SERVER" --listen-metrics "127.0.0.1:910$i" $(tls "${loc%%:*}")
  i=$((i + 1))
done
for loc in fra1 iad1 sin1; do wait_for 30 "agent $loc" listening "agent-$loc" metrics; done

echo "== edge"
# shellcheck disable=SC2046
start edge gslb-edge --aggregator "$GSLB_SERVER" --listen-dns 127.0.0.1:5353 \
  --listen-status 127.0.0.1:8053 --cache-dir "$DIR/edge-cache" \
  --geo-file deploy/examples/geo.txt --udp-workers 1 --min-drain-secs 1 $(tls edge)
wait_for 30 "the edge to answer DNS (is port 5353 taken?)" listening edge dns

pool_id() { gslbctl pools list | awk -v n="$1" '$2 == n { print $1 }'; }
member_id() { gslbctl members list --pool "$(pool_id "$1")" | awk -v n="$2" '$2 == n { print $1 }'; }
member_is() { gslbctl members list --pool "$(pool_id "$1")" | awk -v n="$2" '$2 == n' | grep -q "$3"; }
# query SUBNET: www's answer to a client in SUBNET (EDNS Client Subnet).
query() { gslbctl query www.example.test --dns 127.0.0.1:5353 --subnet "$1" --short | tr '\n' ' '; }
# ask LABEL SUBNET: print it.
ask() {
  printf '  %-28s %s\n' "$1" "$(query "$2")"
}
answers() {
  echo "gslbctl query www.example.test --dns 127.0.0.1:5353 --subnet ... (three clients):"
  ask "eu client (192.0.2.0/24)" 192.0.2.0/24
  ask "us client (198.51.100.0/24)" 198.51.100.0/24
  ask "ap client (203.0.113.0/24)" 203.0.113.0/24
}
eu_answer_is() { [ "$(query 192.0.2.0/24)" = "$1" ]; }

echo "== waiting for the first passing cycles (checks every 2 s from three locations)"
wait_for 30 "web-eu-1 healthy" member_is web-eu web-eu-1 healthy
echo "gslbctl members list --pool $(pool_id web-eu)   (web-eu-2 warms up over three passing cycles)"
gslbctl members list --pool "$(pool_id web-eu)"
answers
wait_for 30 "web-eu-2 to finish warming up" member_is web-eu web-eu-2 healthy
echo
echo "web-eu-2 has passed three cycles and joins the answer:"
answers
echo
echo "gslbctl status"
gslbctl status
echo
echo "gslbctl explain www.example.test --client eu"
gslbctl explain www.example.test --client eu
echo
if command -v curl >/dev/null; then
echo "REST over TLS needs the token: without it 401, with it the pools"
echo "  curl https://127.0.0.1:7080/api/v1/pools -> $(curl -s -o /dev/null -w '%{http_code}' --cacert "$GSLB_CA" https://127.0.0.1:7080/api/v1/pools)"
echo "  curl -H 'Authorization: Bearer ...' https://127.0.0.1:7080/api/v1/pools -> $(curl -s --cacert "$GSLB_CA" -H "Authorization: Bearer $GSLB_TOKEN" https://127.0.0.1:7080/api/v1/pools | head -c 72)..."
echo "the web UI: the token is exchanged for a session cookie, then the topology is drawn"
ui_cookie=$(curl -s -D - -o /dev/null --cacert "$GSLB_CA" -H 'x-gslb-ui: 1' -H 'content-type: application/json' \
  --data "{\"token\": \"$GSLB_TOKEN\"}" https://127.0.0.1:7080/ui/session | sed -n 's/^set-cookie: \(gslb_session=[0-9a-f]*\).*/\1/p')
echo "  https://127.0.0.1:7080/ui/ -> $(curl -s --cacert "$GSLB_CA" -H "Cookie: $ui_cookie" https://127.0.0.1:7080/ui/ | grep -o 'data-member=' | wc -l) member nodes"
else
  echo "(curl is not installed: the REST API's token check and the web UI's sign-in are not shown)"
fi
echo "an agent certificate may not call admin:"
gslbctl --cert "$PKI/fra1.crt" --key "$PKI/fra1.key" pools list 2>&1 | sed 's/^/  /' || true

echo
echo "== stopping backend web-eu-1 (${BACKENDS[web-eu-1]})"
kill "${BACKEND_PID[web-eu-1]}"; wait "${BACKEND_PID[web-eu-1]}" 2>/dev/null || true
wait_for 30 "web-eu-1 unhealthy" member_is web-eu web-eu-1 unhealthy
wait_for 10 "the edge to drop web-eu-1" eu_answer_is "127.0.0.12 "
answers
echo "gslbctl logs $(member_id web-eu web-eu-1)   (web-eu-1's health log, with each location's evidence)"
gslbctl logs "$(member_id web-eu web-eu-1)"

echo
echo "== starting web-eu-1 again"
start_backend web-eu-1 "${BACKENDS[web-eu-1]}"
wait_for 30 "web-eu-1 healthy again" member_is web-eu web-eu-1 healthy
wait_for 10 "the edge to answer web-eu-1 again" eu_answer_is "127.0.0.11 127.0.0.12 "
answers

cat <<INFO

== the mesh is running on loopback, every link over mutual TLS
  aggregator  gRPC 127.0.0.1:7000 (agents, edges, gslbctl)   HTTPS 127.0.0.1:7080 (web UI /ui/, REST /api/v1, /metrics)
  agents      fra1 (eu) 127.0.0.1:9101   iad1 (us) 127.0.0.1:9102   sin1 (ap) 127.0.0.1:9103   (/metrics, /readyz)
  edge        DNS 127.0.0.1:5353 (UDP+TCP)   status 127.0.0.1:8053 (/readyz, /status/config, /metrics)
  backends    web-eu 127.0.0.11-13   web-us 127.0.0.21-22   api 127.0.0.31
  store, cache, logs: $DIR   certificates: $PKI   admin token: $DIR/admin.token
Try:  export PATH=$BIN:\$PATH GSLB_SERVER=$GSLB_SERVER GSLB_CA=$GSLB_CA
      export GSLB_CERT=$GSLB_CERT GSLB_KEY=$GSLB_KEY GSLB_TOKEN=\$(cat $DIR/admin.token)
      gslbctl status
      gslbctl query www.example.test --dns 127.0.0.1:5353 --subnet 192.0.2.0/24
Web UI: https://127.0.0.1:7080/ui/  (the certificate is from the development CA $GSLB_CA:
      import it in the browser, or accept the warning for this loopback address)
      sign in with the admin token in $DIR/admin.token (paste it into the sign-in page)
      (a read-only one: gslbctl tokens create --file $DIR/tokens.json --name viewer --role read)
INFO
if [ "$ONCE" = 1 ]; then exit 0; fi
echo "Ctrl-C stops everything."
# wait is interrupted by the signal, sleep alone would delay the trap.
while true; do sleep 3600 & wait $!; done
