#!/usr/bin/env bash
# Builds fully static hostbench binaries (musl libc, linked in) for x86_64 and aarch64 Linux,
# checks that they are static, strips them, and packs each as
# hostbench-<version>-<target>.tar.gz with a SHA256SUMS file. With --test it runs each binary
# (natively, or under qemu-user for the other architecture) on the quick suite's cpu and
# memory parts. How, why, and the known limits: docs/release.md.
#
# It installs nothing: when a rustup target, a compiler or qemu is missing it stops and names
# the command that installs it. It expects a Debian or Ubuntu host (x86_64 or aarch64): the C
# code inside (SQLite; ring's C and assembly once rustls is in) is compiled by Debian's
# <arch>-linux-gnu-gcc against musl's headers from Debian's musl-dev, and the binary is linked
# by rust-lld, which ships with the Rust toolchain, against Rust's own copy of musl (the
# target's self-contained crt objects and libc.a). Set CC_<target>, CFLAGS_<target>,
# AR_<target> and CARGO_TARGET_<TARGET>_LINKER yourself to use another toolchain.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: scripts/release.sh [--target x86_64|aarch64|all] [--test] [--out DIR] [--dry-run]

  --target T   which binary to build: x86_64, aarch64 or all (default: all)
  --test       run each binary after building it (the other architecture under qemu-user)
  --out DIR    where the archives and SHA256SUMS go (default: dist/)
  --dry-run    print what would be built and how (targets, compilers, linker, flags, the
               cargo command) and what is missing, then stop: builds nothing, exits 0
  -h, --help   this text

Environment: CARGO_TARGET_DIR (default: target/ in the repository), CARGO_BUILD_JOBS.
EOF
}

die() {
    echo "release.sh: error: $*" >&2
    exit 1
}
usage_error() {
    usage >&2
    echo "release.sh: error: $*" >&2
    exit 2
}
say() { echo "== $*"; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

which_targets=all
run_tests=0
dry_run=0
out=dist
while [[ $# -gt 0 ]]; do
    case $1 in
        --target) [[ $# -ge 2 ]] || usage_error "--target needs a value: x86_64, aarch64 or all"
                  which_targets=$2; shift 2 ;;
        --target=*) which_targets=${1#--target=}; shift ;;
        --test) run_tests=1; shift ;;
        --out) [[ $# -ge 2 ]] || usage_error "--out needs a directory"
               out=$2; shift 2 ;;
        --out=*) out=${1#--out=}; shift ;;
        --dry-run) dry_run=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage_error "unknown argument '$1'" ;;
    esac
done
case $which_targets in
    x86_64) arches=(x86_64) ;;
    aarch64) arches=(aarch64) ;;
    all) arches=(x86_64 aarch64) ;;
    *) usage_error "--target must be x86_64, aarch64 or all, not '$which_targets'" ;;
esac

host_arch=$(uname -m)
[[ $(uname -s) == Linux ]] || die "this script builds on Linux only (found $(uname -s))"
case $host_arch in
    x86_64|aarch64) ;;
    *) die "this script builds on an x86_64 or aarch64 host (found $host_arch)" ;;
esac

deb_arch() { case $1 in x86_64) echo amd64 ;; aarch64) echo arm64 ;; esac; }
# Debian's package with the gcc for <arch>-linux-gnu: the host's own is in 'gcc'.
gcc_pkg() {
    if [[ $1 == "$host_arch" ]]; then echo gcc; else echo "gcc-${1//_/-}-linux-gnu"; fi
}
# The command that installs musl's headers for <arch> (a foreign architecture needs adding first).
musl_dev_cmd() {
    local a
    a=$(deb_arch "$1")
    if [[ $1 == "$host_arch" ]]; then
        echo "apt-get install musl-dev"
    elif dpkg --print-foreign-architectures 2>/dev/null | grep -qx "$a"; then
        echo "apt-get install musl-dev:$a"
    else
        echo "dpkg --add-architecture $a && apt-get update && apt-get install musl-dev:$a"
    fi
}
# A missing prerequisite stops the script, naming the install command; a dry run lists them
# all and goes on.
missing_list=()
missing() {
    if [[ $dry_run == 1 ]]; then
        missing_list+=("$1: $2")
        return 0
    fi
    echo "release.sh: missing $1; install it with: $2" >&2
    exit 1
}

# --- what each target needs -------------------------------------------------------------------
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing "'$1'" "$2"; }
need_cmd cargo "https://rustup.rs (then open a new shell)"
need_cmd rustup "https://rustup.rs (then open a new shell)"
need_cmd file "apt-get install file"
need_cmd readelf "apt-get install binutils"
need_cmd sha256sum "apt-get install coreutils"
need_cmd tar "apt-get install tar"
need_cmd gzip "apt-get install gzip"

installed_targets=$(rustup target list --installed 2>/dev/null || true)
rust_lld="$(rustc --print sysroot 2>/dev/null)/lib/rustlib/$(rustc -vV 2>/dev/null | sed -n 's/^host: //p')/bin/rust-lld"
for arch in "${arches[@]}"; do
    triple=$arch-unknown-linux-musl
    tu=${triple//-/_}                      # x86_64_unknown_linux_musl
    TU=${tu^^}                             # X86_64_UNKNOWN_LINUX_MUSL
    grep -qx "$triple" <<<"$installed_targets" || missing "the Rust target $triple" "rustup target add $triple"

    cc_var=CC_$tu cflags_var=CFLAGS_$tu ar_var=AR_$tu linker_var=CARGO_TARGET_${TU}_LINKER
    specs=/usr/lib/$arch-linux-musl/musl-gcc.specs
    if [[ -z ${!cc_var:-} ]]; then
        need_cmd "$arch-linux-gnu-gcc" "apt-get install $(gcc_pkg "$arch")"
        [[ -f $specs ]] || missing "musl's headers for $arch ($specs)" "$(musl_dev_cmd "$arch")"
        export "$cc_var=$arch-linux-gnu-gcc"
        export "$cflags_var=-specs=$specs${!cflags_var:+ ${!cflags_var}}"
    fi
    [[ -n ${!ar_var:-} ]] || export "$ar_var=$arch-linux-gnu-ar"
    # rust-lld (in the toolchain's own bin directory, where rustc looks for it) links Rust's
    # self-contained musl for either architecture: no cross linker needed.
    [[ -n ${!linker_var:-} ]] || export "$linker_var=rust-lld"
    need_cmd "${!cc_var%% *}" "apt-get install $(gcc_pkg "$arch")"
    need_cmd "${!ar_var}" "apt-get install $(gcc_pkg "$arch")"
    if [[ ${!linker_var} == rust-lld ]]; then
        [[ -x $rust_lld ]] || missing "rust-lld ($rust_lld)" "rustup update (rust-lld ships with the Rust toolchain; or set $linker_var=$arch-linux-gnu-gcc)"
    else
        need_cmd "${!linker_var}" "apt-get install $(gcc_pkg "$arch")"
    fi
    need_cmd "$arch-linux-gnu-strip" "apt-get install binutils-${arch//_/-}-linux-gnu"
    # The vendored LuaJIT (mlua's `vendored` feature) also links its standalone `luajit`
    # interpreter, which nobody uses (only libluajit.a goes into hostbench); linked with the
    # gnu gcc and musl's specs it fails on glibc's libgcc_eh (`_dl_find_object`). Let that
    # link ignore it, so make finishes; hostbench itself links with rust-lld as below.
    export TARGET_XLDFLAGS="${TARGET_XLDFLAGS:--Wl,--unresolved-symbols=ignore-in-object-files}"
    # LuaJIT registers the unwind data of its compiled traces with __register_frame the way
    # libgcc wants it (the CIE); the static binary's unwinder is LLVM's libunwind, which
    # wants an FDE and prints "libunwind: __unw_add_dynamic_fde: bad fde: FDE is really a
    # CIE" on a script's first trace. LuaJIT built without external unwinding registers
    # nothing and raises Lua errors with its own unwinder (as PUC Lua's longjmp, which mlua
    # is built for); the --test below runs a script whose errors come from compiled code.
    export TARGET_XCFLAGS="${TARGET_XCFLAGS:--DLUAJIT_NO_UNWIND}"
    # musl targets link statically by default; say so, so that a changed default cannot slip by.
    rf_var=CARGO_TARGET_${TU}_RUSTFLAGS
    export "$rf_var=-C target-feature=+crt-static${!rf_var:+ ${!rf_var}}"

    if [[ $run_tests == 1 && $arch != "$host_arch" ]]; then
        if ! command -v "qemu-$arch-static" >/dev/null 2>&1 && ! command -v "qemu-$arch" >/dev/null 2>&1; then
            missing "qemu-$arch-static (to run the $arch binary here)" "apt-get install qemu-user-static"
        fi
    fi
done
if [[ -n ${RUSTFLAGS:-}${CARGO_ENCODED_RUSTFLAGS:-} ]]; then
    die "RUSTFLAGS is set; it would replace the per-target flags this script sets (+crt-static). Unset it."
fi

if [[ $dry_run == 1 ]]; then
    say "dry run: nothing is built"
    for arch in "${arches[@]}"; do
        triple=$arch-unknown-linux-musl
        tu=${triple//-/_}
        TU=${tu^^}
        echo "target $triple"
        for v in CC_$tu CFLAGS_$tu AR_$tu CARGO_TARGET_${TU}_LINKER CARGO_TARGET_${TU}_RUSTFLAGS TARGET_XLDFLAGS TARGET_XCFLAGS; do
            echo "   $v=${!v:-}"
        done
        echo "   cargo build --locked --profile dist --target $triple -p hostbench --bin hostbench"
        echo "   check: file, readelf (no INTERP, no NEEDED), machine $([[ $arch == x86_64 ]] && echo X86-64 || echo AArch64), no glibc; strip with $arch-linux-gnu-strip"
        if [[ $run_tests == 1 ]]; then
            if [[ $arch == "$host_arch" ]]; then
                echo "   test: natively"
            else
                echo "   test: under qemu-$arch-static"
            fi
        fi
    done
    if [[ ${#missing_list[@]} -gt 0 ]]; then
        echo "missing (a real run stops at the first):"
        for m in "${missing_list[@]}"; do echo "   $m"; done
    else
        echo "missing: nothing"
    fi
    exit 0
fi

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
pkgid=$(cargo pkgid --quiet -p hostbench)
version=${pkgid##*[@#]}
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || die "could not read hostbench's version from '$pkgid'"
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
dirty=""
if [[ -n $(git status --porcelain --untracked-files=no 2>/dev/null) ]]; then
    dirty=" (work tree has uncommitted changes: the binaries say commit $commit but contain them)"
fi
# Archives carry the commit's time, not the build's, so the same commit packs the same way.
mtime=$(git log -1 --format=%cI 2>/dev/null || date -u +%Y-%m-%dT%H:%M:%SZ)

mkdir -p "$out"
out=$(cd "$out" && pwd)
say "hostbench $version, commit $commit$dirty"
say "targets: ${arches[*]/%/-unknown-linux-musl}; profile dist (Cargo.toml); CARGO_TARGET_DIR=$CARGO_TARGET_DIR; out $out"

# --- build, check, strip, pack -----------------------------------------------------------------
declare -A bin_of
summary=()
for arch in "${arches[@]}"; do
    triple=$arch-unknown-linux-musl
    say "build $triple"
    t0=$(date +%s)
    cargo build --locked --profile dist --target "$triple" -p hostbench --bin hostbench
    build_s=$(($(date +%s) - t0))
    built=$CARGO_TARGET_DIR/$triple/dist/hostbench
    [[ -x $built ]] || die "cargo reported success but $built is missing"

    # Static: no program interpreter and no shared libraries, whatever file(1) calls it
    # ("statically linked", or "static-pie linked" for a static position-independent one).
    desc=$(file -b "$built")
    case $desc in
        *"statically linked"*|*"static-pie linked"*) ;;
        *) die "$triple: not static: file says: $desc" ;;
    esac
    # (Whole outputs in variables: `readelf | grep -q` under pipefail can fail on SIGPIPE.)
    headers=$(readelf -hlW "$built")
    dynamic=$(readelf -dW "$built")
    if grep -q 'INTERP' <<<"$headers"; then die "$triple: has a program interpreter (dynamic)"; fi
    if grep -q '(NEEDED)' <<<"$dynamic"; then
        die "$triple: needs shared libraries: $(grep '(NEEDED)' <<<"$dynamic" | tr -s ' ' | tr '\n' ';')"
    fi
    want_machine=$([[ $arch == x86_64 ]] && echo 'X86-64' || echo 'AArch64')
    grep -q "Machine:.*$want_machine" <<<"$headers" || die "$triple: not an $want_machine binary: $desc"
    if grep -aq 'GNU C Library' "$built"; then die "$triple: contains glibc (the musl link did not happen)"; fi
    if [[ $arch == "$host_arch" ]]; then
        ldd_out=$(ldd "$built" 2>&1 || true)
        case $ldd_out in
            *"not a dynamic executable"*|*"statically linked"*) ;;
            *) die "$triple: ldd lists libraries: $ldd_out" ;;
        esac
        static_note="; ldd: $(head -n1 <<<"$ldd_out" | sed 's/^[[:space:]]*//')"
    else
        static_note=""
    fi
    static_note="file: $(grep -o 'stat[a-z-]* linked' <<<"$desc"); readelf: no INTERP, no NEEDED$static_note"

    stage=$CARGO_TARGET_DIR/release-stage/$triple
    rm -rf "$stage"
    mkdir -p "$stage"
    cp "$built" "$stage/hostbench"
    size_built=$(stat -c %s "$stage/hostbench")
    "$arch-linux-gnu-strip" --strip-all "$stage/hostbench"
    size=$(stat -c %s "$stage/hostbench")
    tarball=hostbench-$version-$triple.tar.gz
    tar --create --owner=0 --group=0 --numeric-owner --mtime="$mtime" --mode='u+rwx,go+rx,go-w' \
        -C "$stage" hostbench | gzip -n -9 >"$out/$tarball"
    bin_of[$arch]=$stage/hostbench
    say "$triple: built in ${build_s}s; static ($static_note); ${size_built} bytes, ${size} stripped; $out/$tarball ($(stat -c %s "$out/$tarball") bytes)"
    summary+=("$triple  build ${build_s}s  binary ${size} bytes  $tarball")
done

# Every archive of this version in the out dir (a later run for the other target adds to it).
(cd "$out" && sha256sum hostbench-"$version"-*.tar.gz >SHA256SUMS)
say "$out/SHA256SUMS:"
sed 's/^/   /' "$out/SHA256SUMS"

# --- test ----------------------------------------------------------------------------------------
failures=0
if [[ $run_tests == 1 ]]; then
    tmp=$(mktemp -d -t hostbench-release-XXXXXX)
    trap 'rm -rf "$tmp"' EXIT
    cat >"$tmp/suite.toml" <<'EOF'
# The quick suite's cpu and memory entries, shortened for a test under emulation.
name = "release-test"
description = "cpu and memory, from the quick suite, shortened"
[defaults]
time = "1s"
repetitions = 2
stable_rsd = false
[[entry]]
name = "cpu 2000, 1 thread"
workload = "cpu"
params = { max_prime = 2000 }
threads = 1
[[entry]]
name = "cpu 2000, all threads"
workload = "cpu"
params = { max_prime = 2000 }
threads = "all"
[[entry]]
name = "memory, sysbench default"
workload = "memory"
threads = 1
[[entry]]
name = "memory read 64M, all threads"
workload = "memory"
params = { block_size = "64M", total_size = "1G", oper = "read", scope = "global" }
threads = "all"
time = 0
EOF
    cat >"$tmp/errors.lua" <<'EOF'
-- Every 7th event raises an error inside a hot loop (compiled by LuaJIT) and catches it.
local n, caught = 0, 0
function event()
  n = n + 1
  local ok = pcall(function()
    local s = 0
    for i = 1, 100 do s = s + i end
    if n % 7 == 0 then error("x") end
    return s
  end)
  if not ok then caught = caught + 1 end
end
function thread_done() print("caught " .. caught .. " of " .. n) end
EOF

    for arch in "${arches[@]}"; do
        triple=$arch-unknown-linux-musl
        bin=${bin_of[$arch]}
        runner=()
        how=natively
        if [[ $arch != "$host_arch" ]]; then
            q=$(command -v "qemu-$arch-static" || command -v "qemu-$arch")
            runner=("$q")
            qv=$("$q" --version 2>&1) || die "$q does not run: $qv"
            how="under $(basename "$q") (${qv%%$'\n'*})"
        fi
        say "test $triple $how"
        export HOSTBENCH_RESULTS_DB=$tmp/results-$arch.db
        n=0
        # check NAME EXPECTED-LINE-REGEX... -- ARGS...: the run exits 0, stdout has every line,
        # nothing panicked.
        check() {
            local name=$1
            shift
            local pats=()
            while [[ $1 != -- ]]; do pats+=("$1"); shift; done
            shift
            n=$((n + 1))
            local log=$tmp/$arch-$n
            local t0 rc=0 ms bad=""
            t0=$(date +%s%N)
            "${runner[@]}" "$bin" "$@" >"$log.out" 2>"$log.err" || rc=$?
            ms=$((($(date +%s%N) - t0) / 1000000))
            [[ $rc == 0 ]] || bad="exit code $rc"
            if grep -q 'panicked' "$log.out" "$log.err"; then bad="${bad:+$bad; }panicked"; fi
            local p
            for p in "${pats[@]}"; do
                grep -Eq -- "$p" "$log.out" || bad="${bad:+$bad; }no line matching /$p/"
            done
            if [[ -n $bad ]]; then
                failures=$((failures + 1))
                echo "   FAIL $name ($bad): hostbench $*"
                sed 's/^/      | /' "$log.out" "$log.err" | tail -n 40
            else
                local first
                first=$(grep -Em1 -- "${pats[0]}" "$log.out" | sed 's/^[[:space:]]*//')
                printf '   ok   %-9s %6d ms  %s\n' "$name" "$ms" "$first"
            fi
            if [[ -s $log.err ]]; then
                grep -E '^(WARNING|warning|hostbench: warning)' "$log.err" | cut -c1-150 | sort -u | sed 's/^/        stderr: /' || true
            fi
        }
        check version "^hostbench $version\$" -- --version
        check cpu 'events per second: +[0-9.]+' 'total number of events: +[1-9]' \
            -- cpu --cpu-max-prime=2000 --time=1 --label=release-test run
        check memory 'MiB transferred \([0-9.]+ MiB/sec\)' 'Total operations: 1024 ' \
            -- memory --memory-block-size=1M --memory-total-size=1G --no-save run
        check stream '^Triad: +[0-9.]+' '^Solution Validates' \
            -- stream --array-size=1000000 --ntimes=3 --no-save
        check timer 'hostbench times events with' '^CLOCK_MONOTONIC +[0-9.]+' -- timer
        check sysinfo '^cpu +' '^clocksource +' -- sysinfo
        check suite '^cpu 2000, 1 thread +event rate' '^memory read 64M, all threads +transfer rate' \
            'run\(s\) in .*, not saved' -- suite "$tmp/suite.toml" --no-save --quiet
        # The cpu run above went into a fresh SQLite store: the bundled C code works too.
        check store '"workload": *"cpu"' -- results list --label release-test --format json
        # LuaJIT in the static binary: traces compiled, errors raised from them caught by
        # pcall, and nothing from the unwinder on stderr.
        check lua '^caught 2857 of 20000$' 'total number of events: +20000' \
            -- "$tmp/errors.lua" --events=20000 --no-save run
        if grep -q 'libunwind' "$tmp/$arch-$n.err"; then
            failures=$((failures + 1))
            echo "   FAIL lua: the unwinder wrote to stderr: $(grep -m1 libunwind "$tmp/$arch-$n.err")"
        fi
    done
fi

say "done"
for s in "${summary[@]}"; do echo "   $s"; done
if [[ $run_tests == 1 ]]; then
    if [[ $failures -gt 0 ]]; then
        echo "release.sh: $failures test(s) failed" >&2
        exit 1
    fi
    echo "   tests: all passed"
fi
