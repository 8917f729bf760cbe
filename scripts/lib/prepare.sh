# Shared by the DNS benchmarks (bench-dns.sh, bench-xdp.sh): wait for a
# process's "NAME listening on ADDR" line, and prepare an edge snapshot
# cache from a gslbctl configuration. Needs ROOT (the repository), BIN
# (the binaries' directory), WORK (a scratch directory) and PIDS (an array
# the caller's cleanup kills) set by the caller.

listening() {
  local file="$1" name="$2" i
  for i in $(seq 1 300); do
    if grep -q "^$name listening on " "$file" 2>/dev/null; then
      sed -n "s/^$name listening on //p" "$file" | head -1; return 0
    fi
    sleep 0.1
  done
  echo "bench: no '$name listening' in $file" >&2; cat "$file" >&2; return 1
}

# Fill cache dir $1 with the snapshot of declarative config $2 (and zone
# file $3, imported over it, when given): apply it to a throwaway
# aggregator, let an edge apply and cache it, stop both.
prepare() {
  local dir="$1" config="$2" zonefile="${3:-}"
  # A baseline built before token roles knows read and write only.
  local role=admin; "$BIN/gslbctl" tokens create --help | grep -q operate || role=write
  local token; token=$("$BIN/gslbctl" tokens create --file "$dir.tokens.json" --name bench --role "$role" | head -n 1)
  "$BIN/gslb-aggregator" --data-dir "$dir.agg" --listen-grpc 127.0.0.1:0 --listen-http 127.0.0.1:0 \
    --insecure --tokens-file "$dir.tokens.json" >"$dir.agg.out" 2>"$dir.agg.err" & local agg=$!; PIDS+=("$agg")
  local grpc; grpc="http://$(listening "$dir.agg.out" grpc)"
  local version; version=$("$BIN/gslbctl" --server "$grpc" --token "$token" apply -f "$config" | sed -n 's/^applied: .*version \([0-9]*\).*/\1/p')
  if [ -n "$zonefile" ]; then
    version=$("$BIN/gslbctl" --server "$grpc" --token "$token" zone import "$zonefile" | sed -n 's/^applied: .*version \([0-9]*\).*/\1/p')
    [ -n "$version" ] || { echo "bench: $zonefile did not import" >&2; exit 1; }
  fi
  "$BIN/gslb-edge" --aggregator "$grpc" --cache-dir "$dir" --listen-dns 127.0.0.1:0 \
    --listen-status 127.0.0.1:0 --min-drain-secs 0 >"$dir.edge.out" 2>"$dir.edge.err" & local edge=$!; PIDS+=("$edge")
  local status; status=$(listening "$dir.edge.out" status)
  for _ in $(seq 1 300); do
    curl -s "http://$status/status/config" | grep -q "\"version\":$version" && break
    sleep 0.1
  done
  kill "$edge" "$agg"; wait "$edge" "$agg" 2>/dev/null || true
  [ -s "$dir/snapshot.bin" ] || { echo "bench: no snapshot cached in $dir" >&2; exit 1; }
}


# Caches $WORK/static and $WORK/dynamic of zone file $1: its sets as static
# records, and every A/AAAA set pool-backed (scripts/zone2gslb.py).
prepare_zone() {
  python3 "$ROOT/scripts/zone2gslb.py" "$1" >"$WORK/static.toml"
  python3 "$ROOT/scripts/zone2gslb.py" --dynamic "$1" >"$WORK/dynamic.toml"
  prepare "$WORK/static" "$WORK/static.toml"
  prepare "$WORK/dynamic" "$WORK/dynamic.toml"
}
