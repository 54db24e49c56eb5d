#!/usr/bin/env bash
# Paired comparison of hostbench's HTTP load generator against Debian's wrk, ab and httperf,
# all against nginx on loopback with ONE worker process (the server is the bottleneck on a
# small machine; one worker keeps it the same for both tools).
#
# For each case the peer and hostbench run PAIRS times, alternating which goes first. Per
# pair: requests/s of each, and the load generator's own CPU time per request (user+system
# from wait4's rusage of the generator process, in microseconds). The summary is the median
# of the per-pair ratios (hostbench/peer; > 1 = hostbench served more requests/s) and the
# median CPU per request of each tool.
#
# On a 2-CPU machine the server and the generator share the CPUs: figures describe the pair,
# and vary a lot from run to run (see /work/shared/reference/http-load.md, section 4).
#
# Environment:
#   PAIRS=N         pairs per case (default 3)
#   CASES="..."     subset of: wrk1c50 wrk2c50 wrk1c200 wrk2c200 abk ab httperf rate
#                   tls-wrk1c50 tls-ab tls-ab-full (default: all; the tls-* cases hit nginx's
#                   HTTPS port, a self-signed P-256 certificate made with the openssl CLI;
#                   tls-ab resumes sessions on hostbench's side as it does by default,
#                   tls-ab-full compares ab with `hostbench http --no-tls-resume`, both a
#                   full handshake per request)
#   DURATION=S      seconds per wrk/hostbench-http run (default 5)
#   HOSTBENCH=path  hostbench binary (default: <repo>/target/release/hostbench)
#   NGINX=path      nginx binary (default: nginx from PATH or /usr/sbin/nginx)
#   LOGDIR=dir      raw outputs (default: a new mktemp -d)
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_dir=$(cd "$script_dir/.." && pwd)

PAIRS=${PAIRS:-3}
CASES=${CASES:-"wrk1c50 wrk2c50 wrk1c200 wrk2c200 abk ab httperf rate tls-wrk1c50 tls-ab tls-ab-full"}
DURATION=${DURATION:-5}
HOSTBENCH=${HOSTBENCH:-$repo_dir/target/release/hostbench}
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}

die() { echo "error: $*" >&2; exit 1; }
[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || die "PAIRS must be a positive integer (got '$PAIRS')"
command -v python3 >/dev/null || die "python3 is required"
[[ -x $HOSTBENCH ]] || die "hostbench not found at '$HOSTBENCH'. Build it: cd $repo_dir && cargo build --release"
[[ -x $NGINX ]] || die "nginx not found. Install it: apt-get install nginx-light (or set NGINX=)"
for t in wrk ab httperf openssl; do
    command -v $t >/dev/null || die "$t not found. Install it: apt-get install wrk apache2-utils httperf"
done

LOGDIR=${LOGDIR:-$(mktemp -d /tmp/hostbench-vs-http.XXXXXX)}
mkdir -p "$LOGDIR/www"
export HOSTBENCH_NO_SAVE=${HOSTBENCH_NO_SAVE:-1}
cp "$HOSTBENCH" "$LOGDIR/hostbench"
HB=$LOGDIR/hostbench

head -c 4096 /dev/zero | tr '\0' x >"$LOGDIR/www/4k.txt"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
TLS_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$LOGDIR/key.pem" -out "$LOGDIR/cert.pem" >/dev/null 2>&1
cat >"$LOGDIR/nginx.conf" <<EOF
worker_processes 1; daemon off; master_process off;
pid $LOGDIR/nginx.pid; error_log $LOGDIR/nginx-error.log;
worker_rlimit_nofile 65536;
events { worker_connections 16384; }
http {
    access_log off; sendfile on; tcp_nodelay on; open_file_cache max=100;
    keepalive_requests 10000000;
    client_body_temp_path $LOGDIR/t1; proxy_temp_path $LOGDIR/t2; fastcgi_temp_path $LOGDIR/t3;
    uwsgi_temp_path $LOGDIR/t4; scgi_temp_path $LOGDIR/t5;
    server { listen 127.0.0.1:$PORT backlog=4096; root $LOGDIR/www; }
    server { listen 127.0.0.1:$TLS_PORT ssl backlog=4096; root $LOGDIR/www;
             ssl_certificate $LOGDIR/cert.pem; ssl_certificate_key $LOGDIR/key.pem;
             ssl_protocols TLSv1.2 TLSv1.3; ssl_session_cache shared:hb:10m; }
}
EOF
"$NGINX" -p "$LOGDIR" -c "$LOGDIR/nginx.conf" >/dev/null 2>&1 &
NGINX_PID=$!
trap 'kill $NGINX_PID 2>/dev/null || true' EXIT
for _ in $(seq 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1',$PORT)).close()" 2>/dev/null && break
    sleep 0.1
done
URL=http://127.0.0.1:$PORT/4k.txt
TLS_URL=https://127.0.0.1:$TLS_PORT/4k.txt

echo "# hostbench vs wrk / ab / httperf, paired runs against nginx (1 worker) on loopback"
echo
echo "- hostbench: $HOSTBENCH ($("$HB" --version | head -1), built $(date -r "$HOSTBENCH" '+%F %T'))"
echo "- peers: $(wrk -v 2>&1 | head -1 | cut -c1-40); ab $(ab -V | head -1 | awk '{print $5}'); $(httperf --version 2>&1 | head -1)"
echo "- nginx: $("$NGINX" -v 2>&1) at $URL, one worker process, 4096-byte file"
echo "- machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
echo "- pairs: $PAIRS, order alternates; raw outputs: $LOGDIR"
echo

python3 - "$LOGDIR" "$HB" "$URL" "$PORT" "$PAIRS" "$DURATION" "$TLS_URL" $CASES <<'PY'
import json, os, re, statistics, subprocess, sys
logdir, hb, url, port, pairs, dur, tls_url = sys.argv[1:8]
cases = sys.argv[8:]
pairs, dur = int(pairs), int(dur)

def run(cmd, tag):
    """Runs cmd; returns (stdout, cpu seconds of the process and its children)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate()
    # Popen.communicate reaps the child; resource usage via RUSAGE_CHILDREN deltas.
    with open(os.path.join(logdir, tag + ".txt"), "wb") as f:
        f.write(out + b"\n--- stderr ---\n" + err)
    if p.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} exited {p.returncode}; see {logdir}/{tag}.txt")
    return out.decode(errors="replace")

import resource
def timed(cmd, tag):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = run(cmd, tag)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return out, cpu

def num(pattern, text):
    m = re.search(pattern, text, re.M)
    if not m:
        sys.exit(f"error: /{pattern}/ not found in:\n{text[:2000]}")
    return float(m.group(1))

def wrk_case(t, c, url=url, extra=()):
    peer = ["wrk", f"-t{t}", f"-c{c}", f"-d{dur}s", url]
    mine = [hb, "http", url, *extra, "-t", str(t), "-c", str(c), "-d", f"{dur}s", "-f", "json"]
    def p(o): return num(r"^Requests/sec:\s+([\d.]+)", o), num(r"^\s+(\d+) requests in", o)
    def m(o):
        j = json.loads(o); return j["metrics"]["events_per_s"], j["metrics"]["events"]
    return peer, p, mine, m, ">= 1.0x wrk, CPU/req <= wrk's"

def ab_case(k):
    n = "200000" if k else "30000"
    flags = ["-k"] if k else []
    peer = ["ab", *flags, "-c", "50", "-n", n, url]
    mine = [hb, "ab", *flags, "-c", "50", "-n", n, url]
    def p(o): return num(r"^Requests per second:\s+([\d.]+)", o), num(r"^Complete requests:\s+(\d+)", o)
    return peer, p, mine, p, "-" if k else ">= 1.5x ab"

def tls_ab_case(full):
    n = "3000"
    peer = ["ab", "-c", "20", "-n", n, tls_url]
    def p(o): return num(r"^Requests per second:\s+([\d.]+)", o), num(r"^Complete requests:\s+(\d+)", o)
    if not full:
        return peer, p, [hb, "ab", "-c", "20", "-n", n, tls_url], p, "- (hostbench resumes sessions)"
    mine = [hb, "http", tls_url, "-k", "--no-keepalive", "--no-tls-resume", "--http1.0",
            "-c", "20", "-n", n, "-d", "0", "-f", "json"]
    def m(o):
        j = json.loads(o); return j["metrics"]["events_per_s"], j["metrics"]["events"]
    return peer, p, mine, m, "full handshakes on both sides"

def httperf_case():
    rate, conns = 2000, 10000
    args = ["--server", "127.0.0.1", "--port", port, "--uri", "/4k.txt", "--rate", str(rate),
            "--num-conns", str(conns), "--timeout", "5"]
    peer = ["httperf", *args]
    mine = [hb, "httperf", *args]
    def p(o): return num(r"^Connection rate: ([\d.]+) conn/s", o), num(r"replies (\d+) test-duration", o)
    return peer, p, mine, p, f"both hold {rate} conn/s; compare CPU"

results = []
for case in cases:
    if case == "rate":
        continue
    if case == "tls-wrk1c50":
        peer, pp, mine, mp, target = wrk_case(1, 50, tls_url, ["-k"])
    elif case == "tls-ab":
        peer, pp, mine, mp, target = tls_ab_case(False)
    elif case == "tls-ab-full":
        peer, pp, mine, mp, target = tls_ab_case(True)
    elif case.startswith("wrk"):
        t, c = re.match(r"wrk(\d)c(\d+)", case).groups()
        peer, pp, mine, mp, target = wrk_case(int(t), int(c))
    elif case == "abk":
        peer, pp, mine, mp, target = ab_case(True)
    elif case == "ab":
        peer, pp, mine, mp, target = ab_case(False)
    elif case == "httperf":
        peer, pp, mine, mp, target = httperf_case()
    else:
        sys.exit(f"unknown case {case}")
    print(f"## {case}: `{' '.join(peer)}` vs `hostbench {' '.join(mine[1:])}`", flush=True)
    ratios, cpu_p, cpu_m, rps_p, rps_m = [], [], [], [], []
    for i in range(pairs):
        order = [("peer", peer, pp), ("hb", mine, mp)]
        if i % 2:
            order.reverse()
        got = {}
        for who, cmd, parse in order:
            out, cpu = timed(cmd, f"{case}.{i}.{who}")
            rps, n = parse(out)
            got[who] = (rps, cpu * 1e6 / max(n, 1))
        ratios.append(got["hb"][0] / got["peer"][0])
        rps_p.append(got["peer"][0]); rps_m.append(got["hb"][0])
        cpu_p.append(got["peer"][1]); cpu_m.append(got["hb"][1])
        print(f"  pair {i+1}: peer {got['peer'][0]:.0f}/s {got['peer'][1]:.2f} us/req, "
              f"hostbench {got['hb'][0]:.0f}/s {got['hb'][1]:.2f} us/req, ratio {ratios[-1]:.3f}", flush=True)
    med = statistics.median
    results.append((case, med(rps_p), med(rps_m), med(ratios), med(cpu_p), med(cpu_m), ratios, target))

if "rate" in cases:
    print("## rate: open-loop accuracy of `hostbench http -R X` (constant schedule, 50 connections)", flush=True)
    for r in (1000, 5000, 20000, 50000):
        out, _ = timed([hb, "http", url, "-R", str(r), "-c", "50", "-t", "2", "-d", f"{dur}s", "-f", "json"], f"rate.{r}")
        j = json.loads(out)
        got = j["metrics"]["events_per_s"]
        print(f"  target {r}/s: achieved {got:.1f}/s ({100*got/r:.2f}%), p99 {j['latency']['percentiles'][3]['ns']/1e6:.2f} ms, "
              f"late sends {j['workload']['facts']['late_sends']:.0f}", flush=True)

print()
print("| case | peer req/s (median) | hostbench req/s (median) | ratio median | per-pair ratios | peer CPU us/req | hostbench CPU us/req | target |")
print("|---|---|---|---|---|---|---|---|")
for case, rp, rm, ratio, cp, cm, rs, target in results:
    print(f"| {case} | {rp:.0f} | {rm:.0f} | {ratio:.3f} | {' '.join(f'{x:.3f}' for x in rs)} | {cp:.2f} | {cm:.2f} | {target} |")
PY
