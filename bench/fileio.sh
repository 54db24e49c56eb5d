#!/usr/bin/env bash
# Paired comparison of `hostbench fileio` against Debian's `sysbench fileio`.
#
# Each tool gets its own directory (under BENCHDIR) and lays out its own files there with
# `prepare`; then, PAIRS times, both run the SAME options (only the program name differs),
# alternating which one goes first so that slow drift of a shared machine cancels out. The
# per-case summary is the median of the per-pair ratios hostbench/sysbench (> 1 = hostbench
# faster). Files are removed with each tool's own `cleanup` at the end.
#
# Environment:
#   PAIRS=N        pairs per case (default 5)
#   CASES="..."    subset of: rndrw rndrw_direct seqwr (default: all)
#   SIZE=SIZE      --file-total-size (default 1G; keep it well below the free space)
#   TIME=N         seconds per run (default 5)
#   BENCHDIR=dir   where the test files go (default: a new mktemp -d under /var/tmp;
#                  not tmpfs, so the disk is measured)
#   HOSTBENCH=path hostbench binary (default: <repo>/target/release/hostbench)
#   SYSBENCH=path  sysbench binary (default: sysbench from PATH)
#
# Figures: rndrw* = reads/s + writes/s from "File operations"; seqwr = written, MiB/s.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(cd "$script_dir/.." && pwd)

PAIRS=${PAIRS:-5}
CASES=${CASES:-"rndrw rndrw_direct seqwr"}
SIZE=${SIZE:-1G}
TIME=${TIME:-5}
HOSTBENCH=${HOSTBENCH:-$repo_dir/target/release/hostbench}
SYSBENCH=${SYSBENCH:-$(command -v sysbench || true)}

die() { echo "error: $*" >&2; exit 1; }

[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || die "PAIRS must be a positive integer (got '$PAIRS')"
command -v python3 >/dev/null || die "python3 is required for the arithmetic"
[[ -n $SYSBENCH && -x $SYSBENCH ]] || die "sysbench not found. Install it with: apt-get install sysbench (or set SYSBENCH=/path/to/sysbench)"
[[ -x $HOSTBENCH ]] || die "hostbench not found at '$HOSTBENCH'. Build it with: cd $repo_dir && cargo build --release (or set HOSTBENCH=...)"

BENCHDIR=${BENCHDIR:-$(mktemp -d /var/tmp/hostbench-vs-sysbench-fileio.XXXXXX)}
mkdir -p "$BENCHDIR/sysbench" "$BENCHDIR/hostbench" "$BENCHDIR/logs"
LOGDIR=$BENCHDIR/logs
export HOSTBENCH_NO_SAVE=${HOSTBENCH_NO_SAVE:-1}
cp "$HOSTBENCH" "$LOGDIR/hostbench"
HB=$LOGDIR/hostbench

COMMON=(fileio --file-num=16 "--file-total-size=$SIZE" "--time=$TIME")
declare -A CASE_DEF=(
    [rndrw]="--file-test-mode=rndrw|iops"
    [rndrw_direct]="--file-test-mode=rndrw --file-extra-flags=direct|iops"
    [seqwr]="--file-test-mode=seqwr|wmib"
)
for c in $CASES; do
    [[ -n ${CASE_DEF[$c]+x} ]] || die "unknown case '$c' (known: ${!CASE_DEF[*]})"
done

parse() {
    local metric=$1 file=$2 v
    case $metric in
        iops) v=$(awk '/^ *reads\/s:/ {r = $2} /^ *writes\/s:/ {w = $2} END {if (r != "") printf "%.2f\n", r + w}' "$file") ;;
        wmib) v=$(awk '/^ *written, MiB\/s:/ {print $3; exit}' "$file") ;;
    esac
    [[ $v =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "error: could not parse '$metric' from $file" >&2; return 1; }
    echo "$v"
}

# run_tool <name> <binary> <case> <pair> <options...>: runs in the tool's own directory.
run_tool() {
    local name=$1 bin=$2 case=$3 pair=$4; shift 4
    local out="$LOGDIR/$case.$pair.$name.txt"
    if ! (cd "$BENCHDIR/$name" && "$bin" "$@") >"$out" 2>&1; then
        echo "error: '$bin $*' failed; report in $out" >&2
        tail -5 "$out" >&2
        return 1
    fi
    parse "$METRIC" "$out"
}

cleanup() {
    (cd "$BENCHDIR/sysbench" && "$SYSBENCH" "${COMMON[@]}" cleanup >/dev/null 2>&1) || true
    (cd "$BENCHDIR/hostbench" && "$HB" "${COMMON[@]}" cleanup >/dev/null 2>&1) || true
}
trap cleanup EXIT

echo "# hostbench fileio vs sysbench fileio, paired runs"
echo
echo "- sysbench:  $SYSBENCH ($("$SYSBENCH" --version 2>/dev/null | head -1))"
echo "- hostbench: $HOSTBENCH ($("$HB" --version 2>/dev/null | head -1 || echo '?'))"
echo "- files: 16 × ($SIZE / 16) in $BENCHDIR/{sysbench,hostbench} ($(stat -f -c %T "$BENCHDIR"))"
echo "- pairs: $PAIRS, $TIME s per run, order alternates"
echo

rows=()
for c in $CASES; do
    IFS='|' read -r OPTS METRIC <<<"${CASE_DEF[$c]}"
    read -r -a opts <<<"$OPTS"
    # Each tool prepares its own files (seqwr recreates them itself).
    if [[ $c != seqwr ]]; then
        (cd "$BENCHDIR/sysbench" && "$SYSBENCH" "${COMMON[@]}" prepare >"$LOGDIR/$c.prepare.sysbench.txt" 2>&1)
        (cd "$BENCHDIR/hostbench" && "$HB" "${COMMON[@]}" prepare >"$LOGDIR/$c.prepare.hostbench.txt" 2>&1)
    fi
    echo "## $c: <tool> ${COMMON[*]} $OPTS run"
    [[ -r /proc/loadavg ]] && echo "load average before the case: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
    sb_vals=() hb_vals=()
    for ((i = 1; i <= PAIRS; i++)); do
        if ((i % 2 == 1)); then
            sb=$(run_tool sysbench "$SYSBENCH" "$c" "$i" "${COMMON[@]}" "${opts[@]}" run)
            hb=$(run_tool hostbench "$HB" "$c" "$i" "${COMMON[@]}" "${opts[@]}" run)
        else
            hb=$(run_tool hostbench "$HB" "$c" "$i" "${COMMON[@]}" "${opts[@]}" run)
            sb=$(run_tool sysbench "$SYSBENCH" "$c" "$i" "${COMMON[@]}" "${opts[@]}" run)
        fi
        sb_vals+=("$sb") hb_vals+=("$hb")
        printf '  pair %d/%d: sysbench %s  hostbench %s  ratio %s\n' "$i" "$PAIRS" "$sb" "$hb" \
            "$(python3 -c 'import sys; print("%.3f" % (float(sys.argv[2]) / float(sys.argv[1])))' "$sb" "$hb")"
    done
    rows+=("$(python3 - "$c" "$METRIC" "${sb_vals[*]}" "${hb_vals[*]}" <<'PY'
import statistics, sys
case, metric, sb, hb = sys.argv[1:5]
sb = [float(x) for x in sb.split()]
hb = [float(x) for x in hb.split()]
r = [h / s for s, h in zip(sb, hb)]
med = statistics.median(r)
unit = "reads+writes/s" if metric == "iops" else "written MiB/s"
print("| %s (%s) | %.2f | %.2f | %.3f | %s | 0.9–1.1 %s |" % (
    case, unit, statistics.median(sb), statistics.median(hb), med,
    " ".join("%.3f" % x for x in r), "(met)" if 0.9 <= med <= 1.1 else "(MISSED)"))
PY
)")
    echo
done

echo "## Summary (ratio = hostbench/sysbench; median of per-pair ratios)"
echo
echo "| case | sysbench median | hostbench median | ratio median | per-pair ratios | target |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
