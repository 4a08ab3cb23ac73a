#!/usr/bin/env python3
"""serve over a long run with process and cgroup churn: RSS and series flat?

Starts `noisetop serve --watch CPU --pin HOUSE`, then for MINUTES: on CPU a
loop starts about 100 short processes a second, each second in a new cgroup
made under the cgroup2 mount (and removed the next second), and /metrics
is scraped every second. Every 30 s it prints the elapsed time, serve's
RSS (VmRSS), its open files, and the exposition's series
(`noisetop_series`) and cgroup series. Root; the cgroups it makes are its
own (`noisetop-soak-N`), removed as it goes and at the end.

usage: scripts/serve_soak.py [--minutes 10] [--cpu 1] [--house 0]
       [--bin target/release/noisetop] [--port 9310]
"""
import argparse
import os
import subprocess
import time
import urllib.request


def cgroup2():
    for line in open("/proc/self/mountinfo"):
        left, _, right = line.partition(" - ")
        if right.split()[0] == "cgroup2":
            return left.split()[4]
    raise SystemExit("no cgroup2 mount")


def status(pid, key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--house", type=int, default=0)
    ap.add_argument("--bin", default="target/release/noisetop")
    ap.add_argument("--port", type=int, default=9310)
    a = ap.parse_args()
    os.sched_setaffinity(0, {a.house})
    mount = cgroup2()
    serve = subprocess.Popen([a.bin, "serve", "--listen", f"127.0.0.1:{a.port}", "--watch", str(a.cpu),
                              "--pin", str(a.house), "-i", "1s"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    start = time.monotonic()
    n = 0
    last = None
    print(f"{'s':>6} {'rss kB':>8} {'files':>6} {'series':>7} {'cgroup series':>14}")
    try:
        while time.monotonic() - start < a.minutes * 60:
            # a cgroup a second, five short processes in it on the CPU
            n += 1
            cg = os.path.join(mount, f"noisetop-soak-{n}")
            os.mkdir(cg)
            for _ in range(5):
                subprocess.run(["taskset", "-c", str(a.cpu), "sh", "-c",
                                f"echo $$ > {cg}/cgroup.procs; /bin/true"])
            if last:
                try:
                    os.rmdir(last)
                except OSError:
                    pass
            last = cg
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{a.port}/metrics", timeout=2).read().decode()
            except OSError:
                body = ""
            el = time.monotonic() - start
            if n % 30 == 0:
                series = next((l.split()[-1] for l in body.splitlines()
                               if l.startswith("noisetop_series ")), "?")
                cgs = sum(1 for l in body.splitlines() if l.startswith("noisetop_cgroup_cpu_seconds_total{"))
                print(f"{el:>6.0f} {status(serve.pid, 'VmRSS'):>8} {len(os.listdir(f'/proc/{serve.pid}/fd')):>6} "
                      f"{series:>7} {cgs:>14}", flush=True)
            time.sleep(max(0.0, n - (time.monotonic() - start)))
    finally:
        serve.terminate()
        serve.wait()
        for d in os.listdir(mount):
            if d.startswith("noisetop-soak-"):
                try:
                    os.rmdir(os.path.join(mount, d))
                except OSError:
                    pass


if __name__ == "__main__":
    main()
