#!/usr/bin/env bash
# Paired comparison of `hostbench iozone` against IOzone (Debian's iozone3, non-free) on this
# machine, with the same command line for both tools.
#
# What is compared: each case is one IOzone command line, run as `iozone <args>` and as
# `hostbench iozone <args>` in the same scratch directory (the files are created, used and
# removed by each tool in turn). Both print IOzone's layout, and the same parser reads both:
#   throughput cases (-t N): the "Children see throughput for N <test>" figure of every test
#       block (kB/s, kB = 1024 B) — the figure IOzone users quote; also the "Parent sees"
#       figure, reported separately because IOzone's includes fork() of its child processes
#       and hostbench's children are threads started before the release;
#   single-stream cases: every column of the `kB reclen write rewrite ...` row (kB/s).
# For each pair the two tools run back to back, alternating which goes first, and the ratio
# hostbench/iozone is computed per pair and test; the summary is the median of those ratios.
# Ratios > 1 mean hostbench measured more throughput.
#
# Environment:
#   PAIRS=N        pairs per case (default 5)
#   CASES="..."    subset of: tp_buffered tp_direct tp_random single (default: all)
#   DIR=dir        scratch directory on the filesystem to test (default: a new mktemp -d
#                  under /var/tmp, which is disk-backed here; /tmp may be tmpfs elsewhere)
#   HOSTBENCH=path hostbench binary (default: <repo>/target/release/hostbench)
#   IOZONE=path    iozone binary (default: iozone from PATH)
#   LOGDIR=dir     where raw outputs are kept (default: a new mktemp -d)
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(cd "$script_dir/.." && pwd)

PAIRS=${PAIRS:-5}
CASES=${CASES:-tp_buffered tp_direct tp_random single}
HOSTBENCH=${HOSTBENCH:-$repo_dir/target/release/hostbench}
IOZONE=${IOZONE:-$(command -v iozone || true)}
# Benchmark runs are not results to keep: do not fill the user's results store.
export HOSTBENCH_NO_SAVE=${HOSTBENCH_NO_SAVE:-1}

die() { echo "error: $*" >&2; exit 1; }

[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || die "PAIRS must be a positive integer (got '$PAIRS')"
command -v python3 >/dev/null || die "python3 is required for the arithmetic"
if [[ -z $IOZONE || ! -x $IOZONE ]]; then
    die "iozone not found${IOZONE:+ at '$IOZONE'}. On Debian enable the non-free component and apt-get install iozone3 (or set IOZONE=/path/to/iozone)"
fi
[[ -x $HOSTBENCH ]] || die "hostbench binary not found at '$HOSTBENCH'. Build it with: cd $repo_dir && cargo build --release (or set HOSTBENCH=/path/to/hostbench)"

LOGDIR=${LOGDIR:-$(mktemp -d /tmp/hostbench-vs-iozone.XXXXXX)}
mkdir -p "$LOGDIR"
DIR=${DIR:-$(mktemp -d /var/tmp/hostbench-iozone-bench.XXXXXX)}
mkdir -p "$DIR"
# Run a private copy, so a rebuild of target/release during the run cannot swap binaries.
cp "$HOSTBENCH" "$LOGDIR/hostbench"
HOSTBENCH=$LOGDIR/hostbench

# case -> IOzone arguments
declare -A ARGS=(
    [tp_buffered]="-s 256m -r 4k -i 0 -i 1 -t 2"
    [tp_direct]="-I -s 128m -r 64k -i 0 -i 1 -e -t 2"
    # 1 GiB per child: the random readers read from the page cache at ~1 GB/s each, so at
    # 128 MiB the phase lasted ~0.1 s and one scheduling hiccup (with stonewalling, the
    # first child to finish stops the other) swung the sum 2-3x in either tool.
    [tp_random]="-s 1g -r 4k -i 0 -i 2 -t 2"
    [single]="-s 64m -r 4k -i 0 -i 1 -i 2 -i 3 -i 5"
)

echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n): $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# iozone: $("$IOZONE" -v 2>/dev/null | grep -m1 -o 'Version \$Revision: [0-9.]*' || echo unknown); dir: $DIR ($(df -T "$DIR" | awk 'NR==2 {print $2}'))"
echo "# logs in $LOGDIR"

run_one() { # tool case pair
    local tool=$1 c=$2 p=$3 out="$LOGDIR/$c.$p.$1.txt"
    # shellcheck disable=SC2086
    if [[ $tool == iozone ]]; then
        (cd "$DIR" && "$IOZONE" ${ARGS[$c]}) >"$out" 2>&1
    else
        (cd "$DIR" && "$HOSTBENCH" iozone ${ARGS[$c]}) >"$out" 2>"$out.err"
    fi
}

for c in $CASES; do
    [[ -n ${ARGS[$c]:-} ]] || die "unknown case '$c' (known: ${!ARGS[*]})"
    for ((p = 1; p <= PAIRS; p++)); do
        if ((p % 2)); then
            run_one iozone "$c" "$p"
            run_one hostbench "$c" "$p"
        else
            run_one hostbench "$c" "$p"
            run_one iozone "$c" "$p"
        fi
    done
done

python3 - "$LOGDIR" "$PAIRS" $CASES <<'EOF'
import re, statistics, sys
logdir, pairs, cases = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
COLS = ["write", "rewrite", "read", "reread", "random read", "random write", "bkwd read",
        "record rewrite", "stride read", "fwrite", "frewrite", "fread", "freread"]
WIDTHS = [9] * 7 + [10, 10] + [9] * 4

def figures(path):
    text = open(path).read()
    out = {}
    for who, label, v in re.findall(
        r"^\t(Children see|Parent sees) throughput for +\d+ (.+?) \t+= +([0-9.]+) kB/sec",
        text, re.M):
        out[f"{label} ({'children' if who.startswith('C') else 'parent'})"] = float(v)
    if out:
        return out
    for line in text.splitlines():
        if re.match(r"^ {0,15}\d+ +\d+ ", line) and len(line) >= 24:
            pos = 24
            for name, w in zip(COLS, WIDTHS):
                cell = line[pos:pos + w].strip()
                pos += w
                if cell:
                    out[name] = float(cell)
    return out

print()
print("| case | test | iozone median kB/s | hostbench median kB/s | ratio median | per-pair ratios |")
print("|---|---|---|---|---|---|")
for c in cases:
    per = {}
    for p in range(1, pairs + 1):
        a = figures(f"{logdir}/{c}.{p}.iozone.txt")
        b = figures(f"{logdir}/{c}.{p}.hostbench.txt")
        for k in a:
            if k in b and a[k] > 0:
                per.setdefault(k, []).append((a[k], b[k], b[k] / a[k]))
    for k, v in per.items():
        ratios = [x[2] for x in v]
        print(f"| {c} | {k} | {statistics.median(x[0] for x in v):.0f} | "
              f"{statistics.median(x[1] for x in v):.0f} | {statistics.median(ratios):.3f} | "
              + " ".join(f"{r:.3f}" for r in ratios) + " |")
EOF
rmdir "$DIR" 2>/dev/null || true
