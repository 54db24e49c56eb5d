#!/usr/bin/env bash
# Paired comparison of `hostbench fio` against Debian's fio on this machine: the same job,
# the same file, run back to back, alternating which tool goes first.
#
# Cases (all time_based, RUNTIME seconds, one job, one file laid out once and reused):
#   randread_uring  --rw=randread --bs=4k --iodepth=32 --direct=1 --ioengine=io_uring
#   randread_aio    --rw=randread --bs=4k --iodepth=32 --direct=1 --ioengine=libaio
#   gitlab          --randrepeat=1 --ioengine=libaio --direct=1 --gtod_reduce=1 --bs=4k
#                   --iodepth=64 --readwrite=randrw --rwmixread=75   (GitLab's check)
#   seqwrite_1m     --rw=write --bs=1M --iodepth=32 --direct=1 --ioengine=libaio
#   null            --ioengine=null --rw=randread --bs=4k --size=1g (harness overhead)
#   randread_buffered --rw=randread --bs=4k --ioengine=psync (buffered: the page cache of
#                   the file is dropped first, fio's invalidate=1; with fio's default
#                   fadvise_hint=1 readahead is off, so the reads reach the device)
#   mmap_randrw     --rw=randrw --bs=4k --ioengine=mmap (madvise RANDOM on the mapping)
#   bssplit_qd32    --rw=randrw --rwmixread=70 --bssplit=4k/50:16k/30:64k/20 --iodepth=32
#                   --direct=1 --ioengine=libaio (issue 21: a random size mix at QD32; the
#                   random map by blocks and the size draw are on the per-I/O path)
#   null_seq        --ioengine=null --rw=write --bs=4k --size=1g (harness, sequential)
#   null_qd32       --ioengine=null --rw=randread --bs=4k --size=1g --iodepth=32
#                   (harness with a queue: fio's null engine queues up to iodepth and
#                   completes them at commit; iodepth_batch stays 1)
#   verify_crc32c   --rw=write --bs=4k --size=VSIZE --verify=crc32c (size-based, not
#                   time_based: the write phase, then the verify phase reading it all back)
#   verify_md5      the same with --verify=md5
# The verify cases run on their own file (DIR/verify.dat, VSIZE, default 256m), buffered;
# their IOPS is (reads + writes) / job_runtime: write+verify throughput in I/Os per second.
# Figures come from each tool's JSON (`--output-format=json`, fio's field names):
#   IOPS = Σ over jobs and directions of iops;
#   CPU per I/O = (usr_cpu + sys_cpu)% × job_runtime / total I/Os, in µs — the CPU time
#   each tool itself spent per I/O, from getrusage as both report it.
# For each pair the ratio hostbench/fio is computed (IOPS: > 1 = hostbench did more;
# CPU/IO: < 1 = hostbench spent less); the summary is the median of the per-pair ratios.
#
# Environment:
#   PAIRS=N        pairs per case (default 5)
#   CASES="..."    subset of the cases above (default: all)
#   RUNTIME=S      seconds per run (default 5)
#   SIZE=SIZE      file size for the disk cases (default 1g)
#   DIR=dir        where the test file lives (default: /var/tmp/hostbench-fio-bench; must
#                  allow O_DIRECT, so not tmpfs)
#   FILE=path      the file or block device itself (default: DIR/bench.dat). A block device
#                  is used as it is, never laid out; give read-only CASES for a device whose
#                  contents matter. A loop device over a file in /dev/shm takes the disk out
#                  of the measurement (CPU-bound): losetup -f --show /dev/shm/img
#   HOSTBENCH=path hostbench binary (default: <repo>/target/release/hostbench)
#   FIO=path       fio binary (default: fio from PATH)
#   LOGDIR=dir     where raw outputs are kept (default: a new mktemp -d)
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(cd "$script_dir/.." && pwd)

PAIRS=${PAIRS:-5}
CASES=${CASES:-"randread_uring randread_aio gitlab seqwrite_1m null randread_buffered mmap_randrw bssplit_qd32 null_seq null_qd32 verify_crc32c verify_md5"}
VSIZE=${VSIZE:-256m}
RUNTIME=${RUNTIME:-5}
SIZE=${SIZE:-1g}
DIR=${DIR:-/var/tmp/hostbench-fio-bench}
HOSTBENCH=${HOSTBENCH:-$repo_dir/target/release/hostbench}
FIO=${FIO:-$(command -v fio || true)}
export HOSTBENCH_NO_SAVE=${HOSTBENCH_NO_SAVE:-1}

die() { echo "error: $*" >&2; exit 1; }
[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || die "PAIRS must be a positive integer (got '$PAIRS')"
[[ $RUNTIME =~ ^[1-9][0-9]*$ ]] || die "RUNTIME must be whole seconds (got '$RUNTIME')"
command -v python3 >/dev/null || die "python3 is required for the arithmetic"
[[ -n $FIO && -x $FIO ]] || die "fio not found. Install it with: apt-get install fio (or set FIO=/path/to/fio)"
[[ -x $HOSTBENCH ]] || die "hostbench not found at '$HOSTBENCH'. Build it with: cd $repo_dir && cargo build --release"

LOGDIR=${LOGDIR:-$(mktemp -d /tmp/hostbench-vs-fio.XXXXXX)}
mkdir -p "$LOGDIR" "$DIR"
cp "$HOSTBENCH" "$LOGDIR/hostbench"
HOSTBENCH=$LOGDIR/hostbench
FILE=${FILE:-$DIR/bench.dat}

common=(--time_based "--runtime=$RUNTIME" --output-format=json)
case_args() {
    case $1 in
    randread_uring) echo "--name=rr --filename=$FILE --size=$SIZE --rw=randread --bs=4k --iodepth=32 --direct=1 --ioengine=io_uring" ;;
    randread_aio) echo "--name=rr --filename=$FILE --size=$SIZE --rw=randread --bs=4k --iodepth=32 --direct=1 --ioengine=libaio" ;;
    gitlab) echo "--randrepeat=1 --ioengine=libaio --direct=1 --gtod_reduce=1 --name=test --bs=4k --iodepth=64 --readwrite=randrw --rwmixread=75 --size=$SIZE --filename=$FILE" ;;
    seqwrite_1m) echo "--name=sw --filename=$FILE --size=$SIZE --rw=write --bs=1M --iodepth=32 --direct=1 --ioengine=libaio" ;;
    null) echo "--name=null --ioengine=null --rw=randread --bs=4k --size=1g" ;;
    randread_buffered) echo "--name=rb --filename=$FILE --size=$SIZE --rw=randread --bs=4k --ioengine=psync" ;;
    mmap_randrw) echo "--name=mm --filename=$FILE --size=$SIZE --rw=randrw --bs=4k --ioengine=mmap" ;;
    bssplit_qd32) echo "--name=bss --filename=$FILE --size=$SIZE --rw=randrw --rwmixread=70 --bssplit=4k/50:16k/30:64k/20 --iodepth=32 --direct=1 --ioengine=libaio" ;;
    null_seq) echo "--name=nulls --ioengine=null --rw=write --bs=4k --size=1g" ;;
    null_qd32) echo "--name=nullq --ioengine=null --rw=randread --bs=4k --size=1g --iodepth=32" ;;
    verify_crc32c) echo "--name=vc --filename=$DIR/verify.dat --size=$VSIZE --rw=write --bs=4k --verify=crc32c --verify_state_save=0" ;;
    verify_md5) echo "--name=vm --filename=$DIR/verify.dat --size=$VSIZE --rw=write --bs=4k --verify=md5 --verify_state_save=0" ;;
    *) die "unknown case '$1'" ;;
    esac
}

# Lay the file out once with fio (both tools then find it complete and reuse it).
[[ -b $FILE ]] || "$FIO" --name=layout --filename="$FILE" --size="$SIZE" --rw=read --bs=1M --io_size=1M >/dev/null

# iops and CPU µs per I/O from a fio-format JSON document.
# A verify case's IOPS is its I/Os (writes and verify reads) over the job's whole runtime.
figures() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ios = iops = cpu_ms = run_ms = 0.0
for j in d["jobs"]:
    for dr in ("read", "write"):
        iops += j[dr]["iops"]
        ios += j[dr]["total_ios"]
    cpu_ms += (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * j["job_runtime"]
    run_ms = max(run_ms, j["job_runtime"])
if sys.argv[2].startswith("verify_"):
    iops = ios * 1000.0 / run_ms if run_ms else 0.0
print(f"{iops:.2f} {cpu_ms * 1000.0 / ios if ios else 0:.4f}")
EOF
}

echo "hostbench fio vs $("$FIO" --version), $PAIRS pairs of ${RUNTIME}s, file $FILE ($SIZE), logs in $LOGDIR"
printf "%-15s %12s %12s %9s %9s %9s %s\n" case "fio IOPS" "hb IOPS" "IOPS x" "fio us/IO" "hb us/IO" "CPU/IO x (per pair IOPS x)"
for c in $CASES; do
    read -r -a args <<<"$(case_args "$c")"
    run_args=("${common[@]}")
    [[ $c == verify_* ]] && run_args=(--output-format=json)
    iops_r=() cpu_r=() fio_i=() hb_i=() fio_c=() hb_c=()
    for ((p = 1; p <= PAIRS; p++)); do
        order=(fio hb)
        ((p % 2 == 0)) && order=(hb fio)
        for t in "${order[@]}"; do
            out=$LOGDIR/$c.$p.$t.json
            if [[ $t == fio ]]; then
                "$FIO" "${args[@]}" "${run_args[@]}" >"$out" 2>"$out.err"
            else
                "$HOSTBENCH" fio "${args[@]}" "${run_args[@]}" >"$out" 2>"$out.err"
            fi
        done
        read -r fi fc <<<"$(figures "$LOGDIR/$c.$p.fio.json" "$c")"
        read -r hi hc <<<"$(figures "$LOGDIR/$c.$p.hb.json" "$c")"
        fio_i+=("$fi") hb_i+=("$hi") fio_c+=("$fc") hb_c+=("$hc")
        iops_r+=("$(python3 -c "print(f'{$hi/$fi:.3f}')")")
        cpu_r+=("$(python3 -c "print(f'{($hc/$fc) if $fc > 0 else 0:.3f}')")")
    done
    python3 - "$c" "${fio_i[*]}" "${hb_i[*]}" "${fio_c[*]}" "${hb_c[*]}" "${iops_r[*]}" "${cpu_r[*]}" <<'EOF'
import statistics as s, sys
c = sys.argv[1]
f = lambda i: [float(x) for x in sys.argv[i].split()]
fi, hi, fc, hc, ir, cr = (f(i) for i in range(2, 8))
print(f"{c:<15} {s.median(fi):12.0f} {s.median(hi):12.0f} {s.median(ir):9.3f} "
      f"{s.median(fc):9.3f} {s.median(hc):9.3f} {s.median(cr):9.3f} ({' '.join(f'{x:.3f}' for x in ir)})")
EOF
done
