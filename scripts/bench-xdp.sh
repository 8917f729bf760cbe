#!/usr/bin/env bash
# XDP benchmark (issue 24): the edge's AF_XDP path against its own kernel
# path, NSD and Knot (kernel path, and Knot's XDP mode where this kernel
# loads it), in the same run, through the shared harness
# ../shared/bench/xdp-dns-bench.sh: two namespaces joined by a veth pair,
# the load generator on CPU 1, the server pinned to CPU 0, one line per
# server with replies_per_server_core (see ../shared/bench/XDP.md).
#
# Runs, REPS times each (default 3): ceiling (the generator alone, the
# reply path empty: its frames dropped in an AF_XDP socket), nsd, knot,
# knot-xdp, edge-kernel (static zone, kernel UDP path), edge-xdp (static,
# --xdp), edge-xdp-dynamic (every A/AAAA set pool-backed, --xdp).
#
# The generator: Knot's kxdpgun when it works here; otherwise this repo's
# AF_XDP generator (dns-edge/xdp/examples/xdpgun.rs, the same flags and
# summary lines), put first on PATH as `kxdpgun` for the harness. Some
# kernels (6.18.44-fc) refuse kxdpgun's and knotd's XDP program (its
# bpf_xdp_adjust_meta call); knot-xdp is then reported as refused.
#
# Env: DUR (seconds per run, default 10), REPS (3), GUN (auto|kxdpgun|ours),
# SERVERS (the run list above). Needs root, nsd, knotd, kdig, kxdpgun.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BENCH="${BENCH_DIR:-$ROOT/../shared/bench}"
HARNESS="$BENCH/xdp-dns-bench.sh"
ZONE="$BENCH/peer-dns/example.test.zone"
DUR="${DUR:-10}" REPS="${REPS:-3}" GUN="${GUN:-auto}"
SERVERS="${SERVERS:-ceiling nsd knot knot-xdp edge-kernel edge-xdp edge-xdp-dynamic}"
[ "$(id -u)" = 0 ] || { echo "bench-xdp: needs root (namespaces, XDP)" >&2; exit 2; }
for t in nsd knotd kdig kxdpgun python3; do
  command -v "$t" >/dev/null || { echo "bench-xdp: $t missing (apt-get install nsd knot knot-dnsutils python3)" >&2; exit 2; }
done
cd "$ROOT"
cargo build --release -q --workspace --bins --examples
BIN="$ROOT/target/release"
WORK="$(mktemp -d /tmp/gslb-bench-xdp.XXXXXX)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
# shellcheck source=lib/prepare.sh
source "$ROOT/scripts/lib/prepare.sh"

prepare_zone "$ZONE"

harness() { bash "$HARNESS" -l "$DUR" --quiet-wait 20 "$@" 2>"$WORK/harness.err" || true; }

# Which generator: kxdpgun if a short nsd run gives it statistics.
if [ "$GUN" = auto ]; then
  if bash "$HARNESS" -l 2 --quiet-wait 0 nsd 2>"$WORK/probe.err" | grep -q replies_pps=; then
    GUN=kxdpgun
  else
    GUN=ours
    why=$(grep -m1 -o 'cannot use helper [a-z_]*' "$WORK/probe.err" || echo "no statistics")
    echo "# kxdpgun does not run on this kernel ($(uname -r): $why); generator: dns-edge/xdp/examples/xdpgun.rs"
  fi
fi
if [ "$GUN" = ours ]; then
  mkdir -p "$WORK/gun"
  ln -s "$BIN/examples/xdpgun" "$WORK/gun/kxdpgun"
  export PATH="$WORK/gun:$PATH"
fi
echo "# generator: $GUN; $DUR s per run, $REPS runs; server CPU 0, generator CPU 1"

edge() {  # $1 = cache dir, $2.. = extra flags
  local cache="$1"; shift
  echo "exec $BIN/gslb-edge --cache-dir $cache --listen-dns {ADDR}:{PORT} --listen-status 127.0.0.1:0 --udp-workers 1 --min-drain-secs 0 $*"
}

for rep in $(seq 1 "$REPS"); do
  for s in $SERVERS; do
    case "$s" in
      # The generator alone: the frames reach an AF_XDP socket through the
      # same XDP program as the edge's and are dropped there; only the
      # harness's readiness probes are answered (xdpgun --sink).
      ceiling) harness --cmd "exec $BIN/examples/xdpgun --sink -I {IFACE} -l {ADDR} -p {PORT}" --name ceiling;;
      nsd|knot) harness "$s";;
      knot-xdp)
        line=$(harness knot-xdp)
        if [ -z "$line" ] || ! grep -q replies_pps= <<<"$line"; then
          why=$(grep -m1 -o 'cannot use helper [a-z_]*' "$WORK/harness.err" || echo "see the harness log")
          echo "knot-xdp REFUSED by this kernel ($why)"
        else
          echo "$line"
        fi;;
      edge-kernel) harness --cmd "$(edge "$WORK/static")" --name edge-kernel;;
      edge-xdp) harness --cmd "$(edge "$WORK/static" --xdp {IFACE})" --name edge-xdp;;
      edge-xdp-dynamic) harness --cmd "$(edge "$WORK/dynamic" --xdp {IFACE})" --name edge-xdp-dynamic;;
      *) echo "bench-xdp: unknown server $s" >&2; exit 2;;
    esac
  done
done
