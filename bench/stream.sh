#!/usr/bin/env bash
# Paired comparison of `hostbench stream` against likwid-bench's hand-written STREAM triad
# on this machine.
#
# What is compared (same total size, same thread count, same pinning, same byte credit):
#   likwid-bench -t stream -w N:<SIZE_MB>MB:<THREADS>
#       likwid's "stream" test is STREAM's triad, A(i) = B(i) + s*C(i): three streams,
#       24 bytes credited per element (2 loads + 1 store, no write-allocate), MByte/s with
#       MB = 10^6, threads pinned to the first THREADS hwthreads of the node, arrays
#       first-touched per thread. Its figure is total data volume / total time over all its
#       iterations, i.e. an *average* rate.
#   hostbench stream --array-size=<SIZE_MB*10^6/24> --threads=<THREADS> --ntimes=<NTIMES>
#       the same three arrays (SIZE_MB MB in total), Triad row of STREAM's table. Two
#       figures are taken from its JSON result:
#         best = STREAM's "Best Rate MB/s" (bytes / minimum time over iterations 2..N), the
#                figure STREAM users publish;
#         avg  = bytes / mean time over iterations 2..N, the like-for-like match for likwid's
#                average.
# For each pair the two tools run back to back, alternating which goes first, and the ratio
# hostbench/likwid is computed per pair; the summary is the median of those ratios (not the
# ratio of medians). Ratios > 1 mean hostbench measured more bandwidth.
#
# Optional case "triad_avx" compares the same Triad against likwid's AVX variant stream_avx
# (likwid's "stream" is scalar SSE code; hostbench's default kernels are AVX where available).
# Optional case "triad_nt" compares hostbench's Triad with non-temporal stores
# (--nt-stores, row "Triad NT") against likwid's stream_mem_avx (AVX, non-temporal stores;
# likwid 5.2.2's SSE variant stream_mem segfaults here).
#
# Environment:
#   PAIRS=N          pairs per case (default 5)
#   CASES="..."      subset of: triad triad_avx triad_nt (default: triad)
#   SIZE_MB=N        total size of the three arrays in MB = 10^6 bytes (default 768)
#   THREADS=N        threads for both tools (default: nproc)
#   NTIMES=N         hostbench iterations (default 10, STREAM's default)
#   LIKWID_TEST=t    likwid test for the triad case (default: stream)
#   HOSTBENCH=path   hostbench binary (default: <repo>/target/release/hostbench)
#   LIKWID_BENCH=p   likwid-bench binary (default: likwid-bench from PATH)
#   LOGDIR=dir       where raw outputs are kept (default: a new mktemp -d)
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(cd "$script_dir/.." && pwd)

PAIRS=${PAIRS:-5}
CASES=${CASES:-triad}
SIZE_MB=${SIZE_MB:-768}
THREADS=${THREADS:-$(nproc)}
NTIMES=${NTIMES:-10}
LIKWID_TEST=${LIKWID_TEST:-stream}
HOSTBENCH=${HOSTBENCH:-$repo_dir/target/release/hostbench}
# Benchmark runs are not results to keep: do not fill the user's results store.
export HOSTBENCH_NO_SAVE=${HOSTBENCH_NO_SAVE:-1}
LIKWID_BENCH=${LIKWID_BENCH:-$(command -v likwid-bench || true)}

die() { echo "error: $*" >&2; exit 1; }

[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || die "PAIRS must be a positive integer (got '$PAIRS')"
[[ $SIZE_MB =~ ^[1-9][0-9]*$ ]] || die "SIZE_MB must be a positive integer (got '$SIZE_MB')"
[[ $THREADS =~ ^[1-9][0-9]*$ ]] || die "THREADS must be a positive integer (got '$THREADS')"
[[ $NTIMES =~ ^[1-9][0-9]*$ && $NTIMES -ge 2 ]] || die "NTIMES must be an integer >= 2 (got '$NTIMES')"
command -v python3 >/dev/null || die "python3 is required for the arithmetic"
if [[ -z $LIKWID_BENCH || ! -x $LIKWID_BENCH ]]; then
    die "likwid-bench not found${LIKWID_BENCH:+ at '$LIKWID_BENCH'}. Install it with: apt-get install likwid (or set LIKWID_BENCH=/path/to/likwid-bench)"
fi
if [[ ! -x $HOSTBENCH ]]; then
    die "hostbench binary not found at '$HOSTBENCH'. Build it with: cd $repo_dir && cargo build --release (or set HOSTBENCH=/path/to/hostbench)"
fi
# likwid splits each array evenly over the threads; make the element counts match exactly.
bytes=$((SIZE_MB * 1000000))
((bytes % (24 * THREADS) == 0)) || die "SIZE_MB*10^6 must be divisible by 24*THREADS so both tools use the same arrays (SIZE_MB=$SIZE_MB, THREADS=$THREADS)"
ELEMENTS=$((bytes / 24))

LOGDIR=${LOGDIR:-$(mktemp -d /tmp/hostbench-vs-likwid.XXXXXX)}
mkdir -p "$LOGDIR"
# Run a private copy, so a rebuild of target/release during the run cannot swap binaries.
HOSTBENCH_SRC=$HOSTBENCH
cp "$HOSTBENCH_SRC" "$LOGDIR/hostbench"
HOSTBENCH=$LOGDIR/hostbench

# case -> "likwid test|hostbench extra options|hostbench row|target"
declare -A CASE_DEF=(
    [triad]="$LIKWID_TEST||Triad|>=0.95"
    [triad_avx]="stream_avx|--simd=avx|Triad|-"
    [triad_nt]="stream_mem_avx|--nt-stores|Triad NT|-"
)
for c in $CASES; do
    [[ -n ${CASE_DEF[$c]+x} ]] || die "unknown case '$c' (known: ${!CASE_DEF[*]})"
done

# likwid <case> <pair> <test> -> prints MByte/s
run_likwid() {
    local out="$LOGDIR/$1.$2.likwid.txt" v
    if ! "$LIKWID_BENCH" -t "$3" -w "N:${SIZE_MB}MB:$THREADS" >"$out" 2>&1; then
        echo "error: likwid-bench failed; output in $out" >&2; tail -5 "$out" >&2; return 1
    fi
    v=$(awk '/^MByte\/s:/ {print $2; exit}' "$out")
    [[ $v =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "error: no MByte/s in $out" >&2; return 1; }
    echo "$v"
}

# hostbench <case> <pair> <row> <extra options...> -> prints "best avg"
run_hostbench() {
    local case=$1 pair=$2 row=$3; shift 3
    local out="$LOGDIR/$case.$pair.hostbench.json"
    if ! "$HOSTBENCH" stream --array-size="$ELEMENTS" --threads="$THREADS" --ntimes="$NTIMES" \
        "$@" --format=json >"$out" 2>"$out.stderr"; then
        echo "error: hostbench failed; output in $out(.stderr)" >&2; tail -5 "$out.stderr" >&2; return 1
    fi
    python3 - "$out" "$row" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["workload"]["facts"].get("validated") == 1, "STREAM validation failed"
for t in r["tables"]:
    cols = [c["name"] for c in t["columns"]]
    for row in t["rows"]:
        if row["label"] == sys.argv[2]:
            v = dict(zip(cols, row["values"]))
            print("%.1f %.1f" % (v["best_rate_mb_per_s"], 1e-6 * v["bytes_per_iteration"] / v["avg_time_s"]))
            sys.exit(0)
sys.exit("row %r not found" % sys.argv[2])
EOF
}

echo "# hostbench stream vs likwid-bench, paired runs"
echo
echo "- date: $(date '+%F %T %Z')"
echo "- machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs, kernel $(uname -r)$(grep -q hypervisor /proc/cpuinfo && echo ', virtual machine')"
echo "- likwid-bench: $LIKWID_BENCH ($("$LIKWID_BENCH" -h 2>&1 | grep -m1 -o 'Version *[0-9.]*' || echo '?'))"
echo "- hostbench: $HOSTBENCH_SRC ($("$HOSTBENCH" --version 2>/dev/null | head -1 || echo '?'), built $(date -r "$HOSTBENCH_SRC" '+%F %T'), run from a copy in the log dir)"
echo "- size: $SIZE_MB MB (10^6 B) in three arrays of $ELEMENTS doubles; threads: $THREADS; hostbench --ntimes=$NTIMES"
echo "- pairs: $PAIRS, order alternates (odd pairs: likwid first, even pairs: hostbench first)"
echo "- raw outputs: $LOGDIR"
echo

rows=()
for c in $CASES; do
    IFS='|' read -r LTEST HOPTS HROW TARGET <<<"${CASE_DEF[$c]}"
    read -r -a hopts <<<"$HOPTS"
    echo "## $c: likwid-bench -t $LTEST -w N:${SIZE_MB}MB:$THREADS  vs  hostbench stream --array-size=$ELEMENTS --threads=$THREADS --ntimes=$NTIMES ${HOPTS} (row '$HROW')"
    [[ -r /proc/loadavg ]] && echo "load average before the case: $(cut -d' ' -f1-3 /proc/loadavg)"
    lk_vals=() best_vals=() avg_vals=()
    for ((i = 1; i <= PAIRS; i++)); do
        if ((i % 2 == 1)); then
            lk=$(run_likwid "$c" "$i" "$LTEST")
            hb=$(run_hostbench "$c" "$i" "$HROW" "${hopts[@]}")
            first=likwid
        else
            hb=$(run_hostbench "$c" "$i" "$HROW" "${hopts[@]}")
            lk=$(run_likwid "$c" "$i" "$LTEST")
            first=hostbench
        fi
        read -r best avg <<<"$hb"
        lk_vals+=("$lk") best_vals+=("$best") avg_vals+=("$avg")
        printf '  pair %d/%d (%s first): likwid %s  hostbench best %s avg %s  ratio best %s avg %s\n' \
            "$i" "$PAIRS" "$first" "$lk" "$best" "$avg" \
            "$(python3 -c 'import sys; print("%.3f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$best" "$lk")" \
            "$(python3 -c 'import sys; print("%.3f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$avg" "$lk")"
    done
    row=$(python3 - "$c" "$TARGET" "${lk_vals[*]}" "${best_vals[*]}" "${avg_vals[*]}" <<'EOF'
import statistics, sys
case, target, lk, best, avg = sys.argv[1:6]
lk, best, avg = ([float(x) for x in v.split()] for v in (lk, best, avg))
rb = [b / l for b, l in zip(best, lk)]
ra = [a / l for a, l in zip(avg, lk)]
mb, ma = statistics.median(rb), statistics.median(ra)
if target.startswith(">="):
    lo = float(target[2:])
    tcell = "best ≥ %g %s; avg %s" % (lo, "(met)" if mb >= lo else "(MISSED)", "(met)" if ma >= lo else "(missed)")
else:
    tcell = "- (informational)"
print("| %s | %.0f | %.0f | %.0f | %.3f | %.3f | %s | %s | %s |" % (
    case, statistics.median(lk), statistics.median(best), statistics.median(avg), mb, ma,
    " ".join("%.3f" % r for r in rb), " ".join("%.3f" % r for r in ra), tcell))
EOF
)
    echo "  median ratios: best $(cut -d'|' -f6 <<<"$row" | xargs), avg $(cut -d'|' -f7 <<<"$row" | xargs)"
    echo
    rows+=("$row")
done

echo "## Summary (MB/s with MB = 10^6 B; ratio = hostbench/likwid per pair, median over pairs)"
echo
echo "| case | likwid median | hostbench best median | hostbench avg median | ratio best | ratio avg | per-pair best | per-pair avg | target |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
