#!/usr/bin/env bash
# Paired comparison on Percona-Lab's sysbench-tpcc (TPC-C-like Lua scripts): Debian's
# sysbench 1.0.20 and hostbench run the same unmodified scripts against the same warehouse,
# alternating which goes first, and the per-pair ratio of transactions per second
# (hostbench / sysbench, > 1 = hostbench faster) is summarised by its median.
#
# The scripts are not part of hostbench: fetch them yourself (e.g.
# `git clone https://github.com/Percona-Lab/sysbench-tpcc`) and give the directory in
# TPCC_DIR. The warehouse is prepared once by sysbench (both then run on the same data,
# which each run changes as TPC-C does) and dropped at the end.
#
# Environment:
#   TPCC_DIR=dir    the sysbench-tpcc checkout (required)
#   DB=mysql|pgsql  the server (default mysql: 127.0.0.1:3306 root; pgsql: 127.0.0.1:5432
#                   postgres); the database hb_tpcc is created on it
#   PAIRS=N (5)  TIME=S (10)  THREADS=N (2)  SCALE=N (1 warehouse)  TABLES=N (1)
#   HOSTBENCH=path  (default <repo>/target/release/hostbench)   SYSBENCH=path (default: PATH)
#   LOGDIR=dir      raw reports (default: a new mktemp -d)
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(cd "$script_dir/.." && pwd)
PAIRS=${PAIRS:-5} TIME=${TIME:-10} THREADS=${THREADS:-2} SCALE=${SCALE:-1} TABLES=${TABLES:-1}
DB=${DB:-mysql}
HOSTBENCH=${HOSTBENCH:-$repo_dir/target/release/hostbench}
SYSBENCH=${SYSBENCH:-$(command -v sysbench || true)}

die() { echo "error: $*" >&2; exit 1; }
[[ -n ${TPCC_DIR:-} && -f $TPCC_DIR/tpcc.lua ]] || die "TPCC_DIR must name a sysbench-tpcc checkout (with tpcc.lua)"
[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || die "PAIRS must be a positive integer (got '$PAIRS')"
[[ -n $SYSBENCH && -x $SYSBENCH ]] || die "sysbench not found. Install it with: apt-get install sysbench"
[[ -x $HOSTBENCH ]] || die "hostbench not found at '$HOSTBENCH'. Build it with: cargo build --release"
command -v python3 >/dev/null || die "python3 is required for the arithmetic"

LOGDIR=${LOGDIR:-$(mktemp -d /tmp/hostbench-tpcc.XXXXXX)}
mkdir -p "$LOGDIR"
export HOSTBENCH_NO_SAVE=1
cp "$HOSTBENCH" "$LOGDIR/hostbench"
HOSTBENCH=$LOGDIR/hostbench

case $DB in
    mysql)
        mysql -h 127.0.0.1 -u root -e "DROP DATABASE IF EXISTS hb_tpcc; CREATE DATABASE hb_tpcc"
        OPTS="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=root --mysql-db=hb_tpcc" ;;
    pgsql)
        psql -q -h 127.0.0.1 -U postgres -c "DROP DATABASE IF EXISTS hb_tpcc" -c "CREATE DATABASE hb_tpcc" postgres
        OPTS="--db-driver=pgsql --pgsql-host=127.0.0.1 --pgsql-user=postgres --pgsql-db=hb_tpcc" ;;
    *) die "DB must be mysql or pgsql (got '$DB')" ;;
esac
OPTS="$OPTS --tables=$TABLES --scale=$SCALE --threads=$THREADS"
cd "$TPCC_DIR"
echo "== prepare ($DB, $SCALE warehouse(s), $TABLES table set(s)) with sysbench; logs in $LOGDIR"
# shellcheck disable=SC2086
"$SYSBENCH" ./tpcc.lua $OPTS prepare >"$LOGDIR/prepare.log" 2>&1 || die "prepare failed: see $LOGDIR/prepare.log"

tps() { sed -n 's/.*transactions: *[0-9]* *(\([0-9.]*\) per sec.).*/\1/p' "$1"; }
ratios=()
for p in $(seq 1 "$PAIRS"); do
    order=(sysbench hostbench)
    (( p % 2 == 0 )) && order=(hostbench sysbench)
    for tool in "${order[@]}"; do
        bin=$SYSBENCH; [[ $tool == hostbench ]] && bin=$HOSTBENCH
        # shellcheck disable=SC2086
        "$bin" ./tpcc.lua $OPTS --time="$TIME" run >"$LOGDIR/$tool-$p.log" 2>&1 \
            || die "$tool run $p failed: see $LOGDIR/$tool-$p.log"
    done
    s=$(tps "$LOGDIR/sysbench-$p.log"); h=$(tps "$LOGDIR/hostbench-$p.log")
    r=$(python3 -c "print(f'{$h / $s:.3f}')")
    ratios+=("$r")
    echo "pair $p: sysbench $s tps, hostbench $h tps, ratio $r"
done
echo "median ratio (hostbench/sysbench tps): $(python3 -c "import statistics,sys; print(f'{statistics.median(map(float, sys.argv[1:])):.3f}')" "${ratios[@]}")"
# shellcheck disable=SC2086
"$SYSBENCH" ./tpcc.lua $OPTS cleanup >"$LOGDIR/cleanup.log" 2>&1 || true
