#!/usr/bin/env bash
# The headline figures of this checkout beside those of a base commit (the
# previous commit of main unless BASE says otherwise), both built and run
# here in one invocation, and the ratio of each (this ÷ base):
#   - the aggregator load benchmark (scripts/bench-aggregator.sh),
#   - the DNS benchmark's edge-only runs (edge-static, edge-dynamic),
#   - failover at the 100 ms check floor (INTERVAL_MS=100 TIMEOUT_MS=50).
# Run it before closing an issue; its output goes in the closing note.
#
# Environment: BASE (default HEAD~1), WORK (/tmp/gslb-bench-baseline),
# WINDOW_SECS (aggregator ingest window, default 5), DUR (DNS seconds per
# server, default 5), KILLS (failover kills, default 10).
# Which figure is better higher and which lower is in the ratio's column:
# `^` higher is better, `v` lower is better.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
BASE="${BASE:-HEAD~1}"
WORK="${WORK:-/tmp/gslb-bench-baseline}"
base=$(git rev-parse --short "$BASE^{commit}")
this=$(git rev-parse --short HEAD)
mkdir -p "$WORK"
# The benchmark scripts reach the shared harnesses at ../shared.
[ -e "$WORK/shared" ] || ln -sfn "$ROOT/../shared" "$WORK/shared"
tree="$WORK/base"
if [ -d "$tree" ]; then
    git -C "$tree" checkout -q --detach "$base"
else
    git worktree add -f --detach "$tree" "$base" >&2
fi
# The base's own target directory, started from this one's (same
# dependencies: only the workspace's crates rebuild), linked as its
# `target` (older scripts know no other place).
if [ ! -d "$WORK/base-target" ] && [ -d "$ROOT/target/release" ]; then
    mkdir -p "$WORK/base-target"
    cp -a --reflink=auto "$ROOT/target/release" "$WORK/base-target/"
fi
# On a machine with no release build yet, the base builds from nothing.
mkdir -p "$WORK/base-target"
ln -sfn "$WORK/base-target" "$tree/target"

# Figures of the checkout in $1, one `name key=value…` line each; each
# benchmark's own output in $WORK/$2-*.log (its tail is shown if it fails,
# and the others still run).
figures() {
    local dir="$1" label="$2"
    bench() {
        local name="$1"
        shift
        if ! (cd "$dir" && env "$@") >"$WORK/$label-$name.out" 2>"$WORK/$label-$name.log"; then
            echo "bench-baseline: $label: $name failed; the end of $WORK/$label-$name.log:" >&2
            tail -5 "$WORK/$label-$name.log" >&2
        fi
    }
    bench aggregator WINDOW_SECS="${WINDOW_SECS:-5}" scripts/bench-aggregator.sh
    bench dns SERVERS="edge-static edge-dynamic" DUR="${DUR:-5}" LAT=0 SCALE=0 scripts/bench-dns.sh
    bench failover INTERVAL_MS=100 TIMEOUT_MS=50 KILLS="${KILLS:-10}" scripts/bench-failover.sh
    grep -E '^[a-z_]+ [a-z_]+=' "$WORK/$label-aggregator.out" |
        sed 's/^ingest ui_streams=\([0-9]*\)/ingest_ui\1 ui_streams=\1/'
    sed -n 's/^max\/rep1 \([a-z-]*\) /dns_\1 /p' "$WORK/$label-dns.out"
    sed -n 's/^\(kill\|restore\) *n=\([0-9]*\) p50=\([0-9]*\) ms p99=\([0-9]*\) ms max=\([0-9]*\) ms.*/failover_\1 n=\2 p50_ms=\3 p99_ms=\4 max_ms=\5/p' \
        "$WORK/$label-failover.out"
}

echo "bench-baseline: base $base in $tree" >&2
figures "$tree" base >"$WORK/base.txt"
echo "bench-baseline: this checkout ($this)" >&2
figures "$ROOT" this >"$WORK/this.txt"

# Figure, direction (^ higher is better, v lower), as `line.key`.
compared="
ingest_ui0.results_per_s ^
ingest_ui0.cpu_s_per_million v
ingest_ui0.peak_rss_mib v
ingest_ui100.results_per_s ^
ingest_ui100.cpu_s_per_million v
ingest_ui100.peak_rss_mib v
transition_to_edge.p50_ms v
transition_to_edge.p99_ms v
transition_to_edge_under_ingest.p50_ms v
transition_to_edge_under_ingest.p99_ms v
configure.apply_ms v
single_writes.writes_per_s ^
single_writes.p99_ms v
concurrent_writes.writes_per_s ^
dns_edge-static.qps_per_server_core ^
dns_edge-dynamic.qps_per_server_core ^
failover_kill.p50_ms v
failover_kill.p99_ms v
failover_restore.p50_ms v
failover_restore.p99_ms v
"
printf '%-46s %12s %12s %7s\n' "figure (base $base, this $this)" base this ratio
echo "$compared" | while read -r fig dir; do
    [ -n "$fig" ] || continue
    b=$(scripts/bench-bisect.sh figure "$fig" <"$WORK/base.txt" || echo -)
    t=$(scripts/bench-bisect.sh figure "$fig" <"$WORK/this.txt" || echo -)
    ratio=$(awk -v b="$b" -v t="$t" 'BEGIN { if (b + 0 > 0 && t != "-") printf "%.2f", t / b; else print "-" }')
    printf '%-46s %12s %12s %6s%s\n' "$fig" "$b" "$t" "$ratio" "$dir"
done
