#!/usr/bin/env bash
# Paired comparison of hostbench against sysbench on this machine.
#
# For each case both tools are run with the SAME options (only the program
# name differs), PAIRS times, alternating which one goes first in each pair so
# that slow drift of the (shared, noisy) machine cancels out.  For every pair
# the ratio of the figure of merit is computed; the per-case summary is the
# median of those per-pair ratios (not the ratio of the medians).
#
# Environment:
#   PAIRS=N        number of pairs per case (default 5)
#   CASES="..."    subset of: cpu1 cpu2 cpu3 cpu3p0 threads mutex
#                  mem64 mem64t2 mem1k mem1kt2 mem1m mem1mt2 mem256m
#                  lua1 lua2 (an empty Lua event(), 1 and 2 threads) (default: all)
#                  luarand1 (2000 sysbench.rand.uniform draws an event; not in the default set)
#                  pslua1 pslua2: oltp_point_select on PostgreSQL, hostbench through
#                    sysbench's own script (--lua) against sysbench;
#                  psnative1 psnative2: the same --lua run against hostbench's native
#                    path (baseline = hostbench without --lua);
#                  (the ps* cases are not in the default set: they need a server)
#   PGSQL_OPTS="..." connection options of the ps* cases (default:
#                  --db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-user=postgres
#                  --pgsql-db=test); their table (sbtest1, 10000 rows) is made by
#                  hostbench's native prepare before the first ps* case
#   HOSTBENCH=path hostbench binary (default: <repo>/target/release/hostbench)
#   SYSBENCH=path  sysbench binary (default: sysbench from PATH)
#   LOGDIR=dir     where raw reports are kept (default: a new mktemp -d)
#
# Ratios are always oriented so that > 1 means hostbench is faster:
#   throughput cases: hostbench/sysbench events per second (memory: MiB/sec)
#   mutex:            sysbench_time/hostbench_time
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(cd "$script_dir/.." && pwd)

PAIRS=${PAIRS:-5}
CASES=${CASES:-"cpu1 cpu2 cpu3 cpu3p0 threads mutex mem64 mem64t2 mem1k mem1kt2 mem1m mem1mt2 mem256m lua1 lua2"}
HOSTBENCH=${HOSTBENCH:-$repo_dir/target/release/hostbench}
SYSBENCH=${SYSBENCH:-$(command -v sysbench || true)}

die() { echo "error: $*" >&2; exit 1; }

[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || die "PAIRS must be a positive integer (got '$PAIRS')"
command -v python3 >/dev/null || die "python3 is required for the arithmetic"
if [[ -z $SYSBENCH || ! -x $SYSBENCH ]]; then
    die "sysbench not found${SYSBENCH:+ at '$SYSBENCH'}. Install it with: apt-get install sysbench (or set SYSBENCH=/path/to/sysbench)"
fi
if [[ ! -x $HOSTBENCH ]]; then
    die "hostbench binary not found at '$HOSTBENCH'. Build it with: cd $repo_dir && cargo build --release (or set HOSTBENCH=/path/to/hostbench)"
fi

LOGDIR=${LOGDIR:-$(mktemp -d /tmp/hostbench-vs-sysbench.XXXXXX)}
mkdir -p "$LOGDIR"

# These runs measure hostbench itself: keep them out of the user's results store.
export HOSTBENCH_NO_SAVE=${HOSTBENCH_NO_SAVE:-1}

# Run a private copy of hostbench, so a rebuild of target/release during the run
# (someone else running cargo build) cannot change the binary between cases.
HOSTBENCH_SRC=$HOSTBENCH
cp "$HOSTBENCH_SRC" "$LOGDIR/hostbench"
HOSTBENCH=$LOGDIR/hostbench

# The Lua cases' script: an empty event(), so both tools measure their own cost per
# Lua event (LuaJIT call, timing, accounting).
printf 'function event()\nend\n' >"$LOGDIR/empty_event.lua"
# luarand1: 2000 sysbench.rand.uniform draws an event (the cost of the rand API: each draw
# is an FFI call into the tool's generator).
printf 'function event()\n  local s = 0\n  for i = 1, 2000 do s = s + sysbench.rand.uniform(1, 1000000) end\nend\n' \
    >"$LOGDIR/rand_event.lua"

PGSQL_OPTS=${PGSQL_OPTS:-"--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-user=postgres --pgsql-db=test"}
PS="oltp_point_select $PGSQL_OPTS --tables=1 --table-size=10000 --time=5"

# case -> "options|metric|target[|hostbench's extra options[|baseline]]"
#   baseline: sysbench (default), or native = hostbench without the extra options
#   metric: eps   = "events per second" (higher is better, ratio hb/sb)
#           evt   = total number of events / total time (higher is better, ratio hb/sb)
#           time  = total time in seconds (lower is better, ratio sb/hb)
#           mib   = "MiB transferred (X MiB/sec)" (higher is better, ratio hb/sb)
#           tps   = "transactions: N (X per sec.)" (higher is better, ratio hb/sb)
#   target: "lo-hi" range, ">=x", or "-" (informational)
declare -A CASE_DEF=(
    [cpu1]="cpu --cpu-max-prime=20000 --threads=1 --time=5 run|eps|0.97-1.03"
    [cpu2]="cpu --cpu-max-prime=20000 --threads=2 --time=5 run|eps|0.97-1.03"
    [cpu3]="cpu --cpu-max-prime=3 --threads=1 --time=3 run|eps|>=2"
    [cpu3p0]="cpu --cpu-max-prime=3 --threads=1 --time=3 --percentile=0 run|eps|>=2"
    [threads]="threads --threads=4 --time=3 run|evt|-"
    [mutex]="mutex --threads=2 run|time|-"
    # memory: a quota large enough that --time ends the run; local scope for 2 threads so
    # both tools measure bandwidth, not two cores fighting over one block.
    [mem64]="memory --memory-block-size=64 --memory-total-size=1T --threads=1 --time=3 run|mib|>=1"
    [mem64t2]="memory --memory-block-size=64 --memory-total-size=1T --memory-scope=local --threads=2 --time=3 run|mib|>=1"
    [mem1k]="memory --memory-block-size=1K --memory-total-size=1T --threads=1 --time=3 run|mib|>=1"
    [mem1kt2]="memory --memory-block-size=1K --memory-total-size=1T --memory-scope=local --threads=2 --time=3 run|mib|>=1"
    [mem1m]="memory --memory-block-size=1M --memory-total-size=1T --threads=1 --time=3 run|mib|>=1"
    [mem1mt2]="memory --memory-block-size=1M --memory-total-size=1T --memory-scope=local --threads=2 --time=3 run|mib|>=1"
    [mem256m]="memory --memory-block-size=256M --memory-total-size=1T --threads=1 --time=3 run|mib|-"
    # Lua: the issue's target is events/s >= sysbench's at 1 and 2 threads.
    [lua1]="$LOGDIR/empty_event.lua --threads=1 --time=3 run|evt|>=1"
    [lua2]="$LOGDIR/empty_event.lua --threads=2 --time=3 run|evt|>=1"
    [luarand1]="$LOGDIR/rand_event.lua --threads=1 --time=3 run|evt|-"
    # oltp_point_select on PostgreSQL through sysbench's script: the issue's targets are
    # tps >= sysbench's, and within 10% of hostbench's native path.
    [pslua1]="$PS --threads=1 run|tps|>=1|--lua"
    [pslua2]="$PS --threads=2 run|tps|>=1|--lua"
    [psnative1]="$PS --threads=1 run|tps|>=0.9|--lua|native"
    [psnative2]="$PS --threads=2 run|tps|>=0.9|--lua|native"
)

for c in $CASES; do
    [[ -n ${CASE_DEF[$c]+x} ]] || die "unknown case '$c' (known: ${!CASE_DEF[*]})"
done

# parse <metric> <report file>  -> prints the figure of merit, or fails
parse() {
    local metric=$1 file=$2 v
    case $metric in
        eps)  v=$(awk '/^ *events per second:/ {print $4; exit}' "$file") ;;
        time) v=$(awk '/^ *total time:/ {sub(/s$/, "", $3); print $3; exit}' "$file") ;;
        mib)  v=$(awk '/ MiB transferred \(/ {sub(/^\(/, "", $4); print $4; exit}' "$file") ;;
        tps)  v=$(awk '/^ *transactions:/ {sub(/^\(/, "", $3); print $3; exit}' "$file") ;;
        evt)  v=$(awk '/^ *total time:/ {sub(/s$/, "", $3); t = $3}
                       /^ *total number of events:/ {n = $5}
                       END {if (t > 0 && n != "") printf "%.4f\n", n / t}' "$file") ;;
    esac
    [[ $v =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "error: could not parse '$metric' from $file" >&2; return 1; }
    echo "$v"
}

# run_tool <tool name> <binary> <case> <pair> <options...> -> prints figure
run_tool() {
    local name=$1 bin=$2 case=$3 pair=$4; shift 4
    local out="$LOGDIR/$case.$pair.$name.txt"
    if ! "$bin" "$@" >"$out" 2>&1; then
        echo "error: '$bin $*' failed; report in $out" >&2
        tail -5 "$out" >&2
        return 1
    fi
    parse "$METRIC" "$out"
}

echo "# hostbench vs sysbench, paired runs"
echo
echo "- sysbench:  $SYSBENCH ($("$SYSBENCH" --version 2>/dev/null | head -1))"
echo "- hostbench: $HOSTBENCH_SRC ($("$HOSTBENCH" --version 2>/dev/null | head -1 || echo '?'), built $(date -r "$HOSTBENCH_SRC" '+%F %T'), run from a copy in the log dir)"
echo "- pairs: $PAIRS, order alternates (odd pairs: sysbench first, even pairs: hostbench first)"
echo "- raw reports: $LOGDIR"
echo

# The ps* cases' table, made once by hostbench's native prepare (sysbench's own prepare
# would make the same one).
if [[ " $CASES " =~ \ ps ]]; then
    read -r -a ps_opts <<<"$PGSQL_OPTS"
    "$HOSTBENCH" oltp_point_select "${ps_opts[@]}" --tables=1 cleanup >/dev/null 2>&1 || true
    "$HOSTBENCH" oltp_point_select "${ps_opts[@]}" --tables=1 --table-size=10000 prepare >"$LOGDIR/ps-prepare.txt" 2>&1 ||
        die "the ps* cases' prepare failed (PGSQL_OPTS='$PGSQL_OPTS'); see $LOGDIR/ps-prepare.txt"
fi

rows=()
for c in $CASES; do
    IFS='|' read -r OPTS METRIC TARGET HB_EXTRA BASE <<<"${CASE_DEF[$c]}"
    read -r -a opts <<<"$OPTS"
    read -r -a hb_extra <<<"${HB_EXTRA:-}"
    # The hostbench side: its extra options before the command word (the last option).
    hb_opts=("${opts[@]:0:${#opts[@]}-1}" "${hb_extra[@]}" "${opts[-1]}")
    BASE_BIN=$SYSBENCH base_name=sysbench
    if [[ ${BASE:-} == native ]]; then
        BASE_BIN=$HOSTBENCH base_name="hostbench-native"
    fi
    case $METRIC in
        eps)  what="events per second; ratio = hostbench/sysbench (>1 = hostbench faster)" ;;
        evt)  what="total events / total time; ratio = hostbench/sysbench (>1 = hostbench faster)" ;;
        mib)  what="MiB/sec; ratio = hostbench/sysbench (>1 = hostbench faster)" ;;
        tps)  what="transactions per second; ratio = hostbench/$base_name (>1 = hostbench faster)" ;;
        time) what="total time in s, LOWER is better; ratio = sysbench_time/hostbench_time (>1 = hostbench faster)" ;;
    esac
    echo "## $c: <tool> $OPTS${HB_EXTRA:+ (hostbench adds: $HB_EXTRA)}${BASE:+; baseline: $base_name}"
    echo "figure: $what"
    [[ -r /proc/loadavg ]] && echo "load average before the case: $(cut -d' ' -f1-3 /proc/loadavg) (includes the previous case; $(nproc) CPUs)"
    sb_vals=() hb_vals=()
    for ((i = 1; i <= PAIRS; i++)); do
        if ((i % 2 == 1)); then
            sb=$(run_tool "$base_name" "$BASE_BIN" "$c" "$i" "${opts[@]}")
            hb=$(run_tool hostbench "$HOSTBENCH" "$c" "$i" "${hb_opts[@]}")
            first=$base_name
        else
            hb=$(run_tool hostbench "$HOSTBENCH" "$c" "$i" "${hb_opts[@]}")
            sb=$(run_tool "$base_name" "$BASE_BIN" "$c" "$i" "${opts[@]}")
            first=hostbench
        fi
        sb_vals+=("$sb") hb_vals+=("$hb")
        r=$(python3 -c 'import sys; sb, hb, m = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]; print("%.3f" % ((sb / hb) if m == "time" else (hb / sb)))' "$sb" "$hb" "$METRIC")
        printf '  pair %d/%d (%s first): %s %s  hostbench %s  ratio %s\n' "$i" "$PAIRS" "$first" "$base_name" "$sb" "$hb" "$r"
    done
    row=$(python3 - "$c" "$METRIC" "$TARGET" "${sb_vals[*]}" "${hb_vals[*]}" "${BASE:-sysbench}" <<'EOF'
import statistics, sys
case, metric, target, sb, hb, base = sys.argv[1:7]
sb = [float(x) for x in sb.split()]
hb = [float(x) for x in hb.split()]
ratios = [(s / h) if metric == "time" else (h / s) for s, h in zip(sb, hb)]
med = statistics.median(ratios)
fmt = (lambda v: "%.4f s" % v) if metric == "time" else (lambda v: "%.2f" % v)
if target == "-":
    tcell = "- (informational)"
elif target.startswith(">="):
    lo = float(target[2:])
    tcell = "≥ %g %s" % (lo, "(met)" if med >= lo else "(MISSED)")
else:
    lo, hi = (float(x) for x in target.split("-"))
    tcell = "%g–%g %s" % (lo, hi, "(met)" if lo <= med <= hi else "(MISSED)")
name = case + (" (time, lower better; ratio sb/hb)" if metric == "time" else "")
if base == "native":
    name += " (baseline: hostbench native, in the sysbench column)"
print("| %s | %s | %s | %.3f | %s | %s |" % (
    name, fmt(statistics.median(sb)), fmt(statistics.median(hb)), med,
    " ".join("%.3f" % r for r in ratios), tcell))
EOF
)
    echo "  median ratio: $(cut -d'|' -f5 <<<"$row" | xargs)"
    echo
    rows+=("$row")
done

echo "## Summary (ratio > 1 means hostbench faster; ratio median = median of per-pair ratios)"
echo
echo "| case | sysbench median | hostbench median | ratio median | per-pair ratios | target |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
