#!/usr/bin/env bash
# Paired comparison of hostbench's OLTP workloads against Debian's sysbench 1.0.20 on the same
# PostgreSQL and MariaDB/MySQL servers, the same tables and the same options (only the
# program name differs).
#
# For each case both tools run PAIRS times, alternating which one goes first, against tables
# that sysbench prepared once per server (so both read the same data). Two figures per run:
#   tx/s            "transactions: N (X per sec.)"; ratio = hostbench/sysbench (>1 = faster)
#   CPU per query   user+system CPU seconds of the client process (getrusage of the child)
#                   divided by the queries it ran, in µs; ratio = sysbench/hostbench
#                   (>1 = hostbench spends less client CPU per query)
# The per-case summary is the median of the per-pair ratios.
#
# Environment:
#   PAIRS=N         pairs per case (default 5)
#   TIME=S          seconds per run (default 5)
#   EVENTS=N        a fixed number of transactions per run instead (--events=N --time=0):
#                   both tools do the same work, so the CPU per query compares like with like
#   CASES="..."     subset of: pg_ps1 pg_ps2 pg_rw1 pg_rw2 my_ps1 my_ps2 my_rw1 my_rw2
#   TABLES=N        --tables (default 4)   TABLE_SIZE=N  --table-size (default 10000)
#   PG_HOST/PG_PORT/PG_USER (127.0.0.1/5432/postgres), MY_HOST/MY_PORT/MY_USER
#                   (127.0.0.1/3306/root): the servers; the database hb_bench is created on
#                   each and its sbtest tables are dropped at the end.
#   HOSTBENCH=path  (default <repo>/target/release/hostbench)   SYSBENCH=path (default: PATH)
#   HB_EXTRA="..."  options for hostbench only, e.g. "--mysql-client=crate" (default: none,
#                   i.e. the lean MySQL client)
#   LOGDIR=dir      raw reports (default: a new mktemp -d)
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(cd "$script_dir/.." && pwd)

PAIRS=${PAIRS:-5}
TIME=${TIME:-5}
EVENTS=${EVENTS:-}
if [[ -n $EVENTS ]]; then LIMIT="--events=$EVENTS --time=0"; else LIMIT="--time=$TIME"; fi
CASES=${CASES:-"pg_ps1 pg_ps2 pg_rw1 pg_rw2 my_ps1 my_ps2 my_rw1 my_rw2"}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-10000}
PG_HOST=${PG_HOST:-127.0.0.1} PG_PORT=${PG_PORT:-5432} PG_USER=${PG_USER:-postgres}
MY_HOST=${MY_HOST:-127.0.0.1} MY_PORT=${MY_PORT:-3306} MY_USER=${MY_USER:-root}
HOSTBENCH=${HOSTBENCH:-$repo_dir/target/release/hostbench}
SYSBENCH=${SYSBENCH:-$(command -v sysbench || true)}
HB_EXTRA=${HB_EXTRA:-}

die() { echo "error: $*" >&2; exit 1; }

[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || die "PAIRS must be a positive integer (got '$PAIRS')"
command -v python3 >/dev/null || die "python3 is required for the arithmetic and getrusage"
[[ -n $SYSBENCH && -x $SYSBENCH ]] || die "sysbench not found. Install it with: apt-get install sysbench"
[[ -x $HOSTBENCH ]] || die "hostbench not found at '$HOSTBENCH'. Build it with: cargo build --release"

LOGDIR=${LOGDIR:-$(mktemp -d /tmp/hostbench-db-vs-sysbench.XXXXXX)}
mkdir -p "$LOGDIR"
export HOSTBENCH_NO_SAVE=${HOSTBENCH_NO_SAVE:-1}
# A private copy, so a rebuild of target/release during the run cannot change the binary.
HOSTBENCH_SRC=$HOSTBENCH
cp "$HOSTBENCH_SRC" "$LOGDIR/hostbench"
HOSTBENCH=$LOGDIR/hostbench

PG_OPTS="--db-driver=pgsql --pgsql-host=$PG_HOST --pgsql-port=$PG_PORT --pgsql-user=$PG_USER --pgsql-db=hb_bench"
MY_OPTS="--db-driver=mysql --mysql-host=$MY_HOST --mysql-port=$MY_PORT --mysql-user=$MY_USER --mysql-db=hb_bench"
COMMON="--tables=$TABLES --table-size=$TABLE_SIZE"

declare -A CASE_DEF=(
    [pg_ps1]="pg|oltp_point_select --threads=1"
    [pg_ps2]="pg|oltp_point_select --threads=2"
    [pg_rw1]="pg|oltp_read_write --threads=1"
    [pg_rw2]="pg|oltp_read_write --threads=2"
    [my_ps1]="my|oltp_point_select --threads=1"
    [my_ps2]="my|oltp_point_select --threads=2"
    [my_rw1]="my|oltp_read_write --threads=1"
    [my_rw2]="my|oltp_read_write --threads=2"
)
for c in $CASES; do
    [[ -n ${CASE_DEF[$c]+x} ]] || die "unknown case '$c' (known: ${!CASE_DEF[*]})"
done

# run_measured <out> <cmd...>: runs the command, stdout+stderr to <out>, then appends the
# child's user+system CPU seconds as "CLIENT_CPU_S <s>".
run_measured() {
    local out=$1; shift
    python3 - "$out" "$@" <<'EOF'
import resource, subprocess, sys
out = sys.argv[1]
with open(out, "w") as f:
    rc = subprocess.run(sys.argv[2:], stdout=f, stderr=subprocess.STDOUT).returncode
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    f.write("CLIENT_CPU_S %.6f\n" % (r.ru_utime + r.ru_stime))
sys.exit(rc)
EOF
}

# figures <file> -> "tps cpu_us_per_query"
figures() {
    awk '/^ *transactions:/ {gsub(/\(/, "", $3); tps = $3}
         /^ *queries:/ && !q {q = $2}
         /^CLIENT_CPU_S/ {cpu = $2}
         END {if (tps == "" || q == "" || q == 0) exit 1; printf "%s %.3f\n", tps, cpu * 1e6 / q}' "$1" ||
        { echo "error: could not parse $1" >&2; tail -5 "$1" >&2; return 1; }
}

run_tool() { # name bin case pair opts...
    local name=$1 bin=$2 case=$3 pair=$4; shift 4
    local out="$LOGDIR/$case.$pair.$name.txt"
    if ! run_measured "$out" "$bin" "$@"; then
        echo "error: '$bin $*' failed; report in $out" >&2
        tail -5 "$out" >&2
        return 1
    fi
    figures "$out"
}

prepared=""
prepare() { # pg|my
    local s=$1
    local -a o cm
    [[ $prepared == *"$s"* ]] && return 0
    if [[ $s == pg ]]; then
        psql -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres -XAtq \
            -c "CREATE DATABASE hb_bench" >/dev/null 2>&1 || true
        read -r -a o <<<"$PG_OPTS"
    else
        mysql -h "$MY_HOST" -P "$MY_PORT" -u "$MY_USER" -e "CREATE DATABASE IF NOT EXISTS hb_bench"
        read -r -a o <<<"$MY_OPTS"
    fi
    read -r -a cm <<<"$COMMON"
    "$SYSBENCH" oltp_read_write "${o[@]}" "${cm[@]}" cleanup >/dev/null
    "$SYSBENCH" oltp_read_write "${o[@]}" "${cm[@]}" --threads=2 prepare >"$LOGDIR/prepare.$s.txt"
    prepared+=" $s"
}

cleanup() {
    local s
    local -a o cm
    for s in $prepared; do
        if [[ $s == pg ]]; then read -r -a o <<<"$PG_OPTS"; else read -r -a o <<<"$MY_OPTS"; fi
        read -r -a cm <<<"$COMMON"
        "$SYSBENCH" oltp_read_write "${o[@]}" "${cm[@]}" cleanup >/dev/null || true
    done
}
trap cleanup EXIT

echo "# hostbench vs sysbench on databases, paired runs"
echo
echo "- sysbench:  $SYSBENCH ($("$SYSBENCH" --version 2>/dev/null | head -1))"
echo "- hostbench: $HOSTBENCH_SRC ($("$HOSTBENCH" --version 2>/dev/null | head -1 || echo '?'))"
echo "- servers: PostgreSQL $PG_HOST:$PG_PORT, MariaDB/MySQL $MY_HOST:$MY_PORT (database hb_bench)"
echo "- $COMMON, $LIMIT, pairs: $PAIRS, order alternates; raw reports: $LOGDIR"
echo

rows=()
for c in $CASES; do
    IFS='|' read -r SRV OPTS <<<"${CASE_DEF[$c]}"
    prepare "$SRV"
    if [[ $SRV == pg ]]; then conn=$PG_OPTS; else conn=$MY_OPTS; fi
    read -r -a opts <<<"$OPTS $conn $COMMON $LIMIT run"
    read -r -a hbopts <<<"$HB_EXTRA $OPTS $conn $COMMON $LIMIT run"
    echo "## $c: <tool> ${opts[*]}${HB_EXTRA:+ (hostbench also: $HB_EXTRA)}"
    [[ -r /proc/loadavg ]] && echo "load average before the case: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
    vals=()
    for ((i = 1; i <= PAIRS; i++)); do
        if ((i % 2 == 1)); then
            sb=$(run_tool sysbench "$SYSBENCH" "$c" "$i" "${opts[@]}")
            hb=$(run_tool hostbench "$HOSTBENCH" "$c" "$i" "${hbopts[@]}")
        else
            hb=$(run_tool hostbench "$HOSTBENCH" "$c" "$i" "${hbopts[@]}")
            sb=$(run_tool sysbench "$SYSBENCH" "$c" "$i" "${opts[@]}")
        fi
        echo "  pair $i: sysbench tx/s, µs CPU/query = $sb; hostbench = $hb"
        vals+=("$sb $hb")
    done
    row=$(python3 - "$c" "${vals[@]}" <<'EOF'
import statistics, sys
case, pairs = sys.argv[1], [list(map(float, p.split())) for p in sys.argv[2:]]
tps = [h / s for s, _, h, _ in pairs]
cpu = [sc / hc for _, sc, _, hc in pairs]
m = statistics.median
print("| %s | %.1f | %.1f | %.3f | %.2f | %.2f | %.3f | %s |" % (
    case, m(p[0] for p in pairs), m(p[2] for p in pairs), m(tps),
    m(p[1] for p in pairs), m(p[3] for p in pairs), m(cpu),
    " ".join("%.2f/%.2f" % (a, b) for a, b in zip(tps, cpu))))
EOF
)
    echo "  medians: $row"
    echo
    rows+=("$row")
done

echo "## Summary (tx/s ratio = hostbench/sysbench, >1 = hostbench faster; CPU ratio = sysbench/hostbench µs per query, >1 = hostbench lighter)"
echo
echo "| case | sysbench tx/s | hostbench tx/s | tx/s ratio | sysbench µs CPU/query | hostbench µs CPU/query | CPU ratio | per-pair tx/CPU ratios |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
