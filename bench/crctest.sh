#!/usr/bin/env bash
# Paired comparison of `hostbench fio --crctest` against fio 3.33's `--crctest`: the same
# test (a 128 KiB buffer checksummed 2048 times per algorithm, timed after a 100 ms spin),
# fio's code against hostbench's verify code. Pairs alternate which tool goes first.
# For each algorithm both tools measure: the median MiB/s of each and the median of the
# per-pair ratios hostbench/fio (> 1 = hostbench's checksum is faster).
#
# Options by environment variable:
#   PAIRS=5        pairs of runs
#   LIST=...       the --crctest list (default: every test; fio's murmur3, jhash and fnv
#                  are not measured by hostbench)
#   HOSTBENCH=path hostbench binary (default: target/release/hostbench)
#   FIO=path       fio binary (default: fio from PATH)
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${PAIRS:-5}
LIST=${LIST:-}
HOSTBENCH=${HOSTBENCH:-target/release/hostbench}
FIO=${FIO:-$(command -v fio || true)}
[[ -x $HOSTBENCH ]] || { echo "no $HOSTBENCH: cargo build --release" >&2; exit 2; }
[[ -n $FIO && -x $FIO ]] || { echo "fio not found: apt-get install fio (or FIO=/path)" >&2; exit 2; }
arg=--crctest
[[ -n $LIST ]] && arg="--crctest=$LIST"
LOGDIR=$(mktemp -d /tmp/hostbench-crctest.XXXXXX)
echo "hostbench fio $arg vs $("$FIO" --version) $arg, $PAIRS pairs, logs in $LOGDIR"
for ((p = 1; p <= PAIRS; p++)); do
    order=(fio hb)
    ((p % 2 == 0)) && order=(hb fio)
    for t in "${order[@]}"; do
        if [[ $t == fio ]]; then
            "$FIO" "$arg" >"$LOGDIR/fio.$p" 2>/dev/null
        else
            "$HOSTBENCH" fio "$arg" >"$LOGDIR/hb.$p" 2>/dev/null
        fi
    done
done
python3 - "$LOGDIR" "$PAIRS" <<'EOF'
import statistics, sys
d, pairs = sys.argv[1], int(sys.argv[2])
def read(path):
    out = {}
    for l in open(path):
        name, rest = l.split(":", 1)
        out[name] = float(rest.split()[0]) if "inf" not in rest else float("inf")
    return out
fio = [read(f"{d}/fio.{p}") for p in range(1, pairs + 1)]
hb = [read(f"{d}/hb.{p}") for p in range(1, pairs + 1)]
print(f"{'test':10} {'fio MiB/s':>11} {'hb MiB/s':>11} {'hb/fio':>8}  per pair")
for name in fio[0]:
    if name not in hb[0]:
        print(f"{name:10} {statistics.median(f[name] for f in fio):11.2f} {'-':>11} {'-':>8}  (not in hostbench)")
        continue
    r = [h[name] / f[name] for f, h in zip(fio, hb)]
    print(f"{name:10} {statistics.median(f[name] for f in fio):11.2f} "
          f"{statistics.median(h[name] for h in hb):11.2f} {statistics.median(r):8.2f}  "
          + " ".join(f"{x:.2f}" for x in r))
EOF
