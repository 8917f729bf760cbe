#!/usr/bin/env bash
# Run a benchmark on other commits, each built in its own worktree and
# target directory, so figures of old and new code come from one machine
# on one day.
#
#   scripts/bench-bisect.sh run COMMIT...
#       One block of figures per commit, in the order given, each line
#       prefixed with `commit=SHORT`.
#   scripts/bench-bisect.sh bisect GOOD BAD FIGURE LIMIT
#       `git bisect` between GOOD and BAD: a commit is bad when FIGURE
#       (a key of the benchmark's output, e.g. p99_ms of transition_to_edge
#       written as transition_to_edge.p99_ms) is above LIMIT (below it, for
#       a figure ending in _per_s). Prints the first bad commit.
#
# Environment:
#   BENCH     the script to run in each worktree (scripts/bench-aggregator.sh);
#             its own environment (MEMBERS, WINDOW_SECS, UI_STREAMS, ...) is
#             passed through
#   WORK      where worktrees and target directories go (/tmp/gslb-bench-bisect)
#   KEEP=1    keep each commit's worktree and target after its run
#
# A new target directory starts as a copy of the last one built (the
# dependencies are the same across most commits, so only the workspace's
# own crates rebuild).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
WORK="${WORK:-/tmp/gslb-bench-bisect}"
BENCH="${BENCH:-scripts/bench-aggregator.sh}"
mkdir -p "$WORK"
# Scripts reach the shared harnesses at ../shared from the checkout.
[ -e "$WORK/shared" ] || ln -sfn "$ROOT/../shared" "$WORK/shared"

usage() {
    sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
}

# Build and benchmark one commit; its output on stdout, prefixed.
run_one() {
    local commit short tree target seed
    commit=$(git rev-parse --verify "$1^{commit}")
    short=$(git rev-parse --short "$commit")
    tree="$WORK/$short"
    target="$WORK/$short-target"
    if [ ! -d "$tree" ]; then
        git worktree add -f --detach "$tree" "$commit" >&2
    fi
    if [ ! -d "$target" ]; then
        seed=$(ls -dt "$WORK"/*-target 2>/dev/null | head -1 || true)
        if [ -n "$seed" ]; then
            echo "bench-bisect: $short: target seeded from $(basename "$seed")" >&2
            cp -a --reflink=auto "$seed" "$target"
        fi
    fi
    # Linked as the worktree's `target`: older scripts know no other place.
    mkdir -p "$target"
    ln -sfn "$target" "$tree/target"
    echo "bench-bisect: $short: building and running $BENCH" >&2
    (cd "$tree" && "./$BENCH") |
        grep -E '^[a-z_]+ [a-z_]+=' | sed "s/^/commit=$short /"
    if [ "${KEEP:-0}" != 1 ]; then
        git worktree remove --force "$tree" >&2
        # Keep the newest target as the next seed; drop the others.
        for old in "$WORK"/*-target; do
            [ "$old" = "$target" ] || rm -rf "$old"
        done
    fi
}

# The value of FIGURE (`line.key`) in benchmark output on stdin (the
# first line of that name: the ingest line without UI streams).
figure() {
    local line="${1%%.*}" key="${1#*.}"
    awk -v line="$line" -v key="$key" '
        { f = ($1 ~ /^commit=/) ? 2 : 1 }
        $f == line && v == "" { for (i = f + 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == key) v = kv[2] } }
        END { if (v == "") exit 1; print v }'
}

case "${1:-}" in
run)
    shift
    [ $# -gt 0 ] || usage
    for c in "$@"; do run_one "$c"; done
    ;;
bisect)
    [ $# -eq 5 ] || usage
    good=$2 bad=$3 fig=$4 limit=$5
    # In a worktree of its own (the checkout here is left alone), with one
    # target directory that each step rebuilds incrementally.
    tree="$WORK/bisect"
    [ -d "$tree" ] || git worktree add -f --detach "$tree" "$bad" >&2
    mkdir -p "$WORK/bisect-target"
    ln -sfn "$WORK/bisect-target" "$tree/target"
    cp "$0" "$WORK/bench-bisect.sh" # old commits may not have this script
    probe="$WORK/probe.sh"
    cat >"$probe" <<EOF
#!/usr/bin/env bash
set -uo pipefail
out=\$("./$BENCH" | grep -E '^[a-z_]+ [a-z_]+=') || exit 125
echo "\$out" >&2
v=\$(echo "\$out" | bash "$WORK/bench-bisect.sh" figure "$fig") || exit 125
echo "bench-bisect: \$(git rev-parse --short HEAD) $fig=\$v (limit $limit)" >&2
case "$fig" in
*_per_s) awk -v v="\$v" -v l="$limit" 'BEGIN { exit !(v < l) }' ;;
*) awk -v v="\$v" -v l="$limit" 'BEGIN { exit !(v > l) }' ;;
esac
EOF
    chmod +x "$probe"
    (
        cd "$tree"
        git bisect start "$bad" "$good" >&2
        git bisect run "$probe" >&2 || true
        git bisect log | grep -E '^# first bad commit' || echo "bench-bisect: no first bad commit found"
        git bisect reset >&2
    )
    [ "${KEEP:-0}" = 1 ] || git worktree remove --force "$tree" >&2
    ;;
figure)
    figure "$2"
    ;;
*)
    usage
    ;;
esac
