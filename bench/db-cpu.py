#!/usr/bin/env python3
"""Client CPU per query, split into user and system time, for sysbench 1.0.20 and hostbench's two
MariaDB/MySQL clients (--mysql-client=lean and crate) running the same fixed number of
oltp_point_select events against tables sysbench prepared (bench/db.sh's hb_bench database:
run `sysbench oltp_read_write --db-driver=mysql --mysql-host=... --mysql-user=root
--mysql-db=hb_bench --tables=4 --table-size=10000 prepare` first).

User time is the client library's own work; system time is mostly the loopback TCP path (on
loopback, the sender's CPU also runs the receiver's protocol processing), so it moves with the
server and the machine's load. Runs alternate the order of the tools each round.

Environment: ROUNDS (5), EVENTS (100000), HOSTBENCH (target/release/hostbench),
MY_HOST (127.0.0.1), MY_PORT (3306), MY_USER (root).
"""
import os
import re
import resource
import statistics
import subprocess
import sys

repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
hb = os.environ.get("HOSTBENCH", os.path.join(repo, "target/release/hostbench"))
rounds = int(os.environ.get("ROUNDS", "5"))
events = int(os.environ.get("EVENTS", "100000"))
common = [
    "oltp_point_select", "--threads=1", "--db-driver=mysql",
    "--mysql-host=" + os.environ.get("MY_HOST", "127.0.0.1"),
    "--mysql-port=" + os.environ.get("MY_PORT", "3306"),
    "--mysql-user=" + os.environ.get("MY_USER", "root"),
    "--mysql-db=hb_bench", "--tables=4", "--table-size=10000",
    "--events=%d" % events, "--time=0", "run",
]
tools = {
    "sysbench": ["sysbench"] + common,
    "lean": [hb] + common + ["--mysql-client=lean"],
    "crate": [hb] + common + ["--mysql-client=crate"],
}
os.environ["HOSTBENCH_NO_SAVE"] = "1"
res = {k: [] for k in tools}
for rnd in range(rounds):
    order = list(tools) if rnd % 2 == 0 else list(reversed(list(tools)))
    for k in order:
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(tools[k], capture_output=True, text=True)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        m = re.search(r"queries:\s+(\d+)", p.stdout)
        t = re.search(r"transactions:\s+\d+\s+\(([\d.]+)", p.stdout)
        if p.returncode != 0 or not m or not t:
            sys.exit("%s failed: %s" % (k, (p.stderr or p.stdout)[-500:]))
        q = int(m.group(1))
        u = (r1.ru_utime - r0.ru_utime) * 1e6 / q
        s = (r1.ru_stime - r0.ru_stime) * 1e6 / q
        res[k].append((u, s, float(t.group(1))))
        print("round %d %-8s user %.2f sys %.2f µs/query, %.0f tx/s" % (rnd + 1, k, u, s, float(t.group(1))), flush=True)
print("\n| client | user µs/query | system µs/query | tx/s | (medians of %d runs, %d events each) |" % (rounds, events))
print("|---|---|---|---|---|")
for k, v in res.items():
    med = statistics.median
    print("| %s | %.2f | %.2f | %.0f | |" % (k, med(x[0] for x in v), med(x[1] for x in v), med(x[2] for x in v)))
