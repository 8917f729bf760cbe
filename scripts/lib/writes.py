#!/usr/bin/env python3
"""Write-throughput driver for scripts/bench-writes.sh: REST member updates
over keep-alive HTTP/1.1 to one aggregator (a single node, or a cluster's
leader), one writer and then WRITERS concurrent ones, each on its own
member; prints one line per run. Every request goes to loopback.

usage: writes.py HTTP_ADDR TOKEN MEMBERS_JSON WRITES_ONE WRITERS EACH
"""
import http.client
import json
import sys
import threading
import time


def put(conn, token, member, weight):
    body = json.dumps({"weight": weight})
    t = time.perf_counter()
    conn.request("PUT", f"/api/v1/members/{member}", body,
                 {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    r = conn.getresponse()
    r.read()
    if r.status != 200:
        raise SystemExit(f"write refused: {r.status}")
    return time.perf_counter() - t


def run(addr, token, members, writers, each):
    host, port = addr.rsplit(":", 1)
    latencies = []
    lock = threading.Lock()

    def writer(i):
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        mine = []
        for n in range(each):
            mine.append(put(conn, token, members[i % len(members)], 1 + (n % 900)))
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(writers)]
    t = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    elapsed = time.perf_counter() - t
    latencies.sort()
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1e3
    return len(latencies) / elapsed, p(0.5), p(0.99)


def main():
    addr, token, members, one, writers, each = sys.argv[1:7]
    members = json.loads(members)
    for label, w, n in (("1", 1, int(one)), (writers, int(writers), int(each))):
        rate, p50, p99 = run(addr, token, members, w, n)
        print(f"writers={label} writes_per_s={rate:.0f} p50_ms={p50:.2f} p99_ms={p99:.2f}", flush=True)


if __name__ == "__main__":
    main()
