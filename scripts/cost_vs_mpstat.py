#!/usr/bin/env python3
"""What noisetop costs against mpstat, whole process, over the same intervals.

Runs `mpstat -P ALL -I ALL 1 N` and `noisetop --batch -n N [ARGS]` side by
side (one paired run), each under `perf stat -e task-clock` (CPU time of
the whole process, kernel work on its behalf included: perf_event_open,
ring allocation, tracepoint registration, /proc reads, exit), REPEAT times,
for each configuration, and prints both times and the ratio. It also
times `-n 1` alone (setup, one interval and teardown) so that the setup and
the per-interval cost can be told apart.

usage: scripts/cost_vs_mpstat.py [--intervals 20] [--repeat 3] [--bin target/release/noisetop]
       [--config "--watch 1 --pin 0" ...]

Needs perf (linux-perf) and mpstat (sysstat); root for the watched
configurations' tracepoints.
"""
import argparse
import shlex
import statistics
import subprocess
import sys
import tempfile

CONFIGS = ["", "--watch 1 --pin 0 --no-trace", "--watch 1 --pin 0"]


def timed(cmd):
    """Starts `cmd` under perf stat; returns (process, output file)."""
    out = tempfile.NamedTemporaryFile(mode="r", suffix=".perf")
    p = subprocess.Popen(["perf", "stat", "-x,", "-e", "task-clock", "-o", out.name] + cmd,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p, out


def task_clock_ms(out):
    for line in out.read().splitlines():
        f = line.split(",")
        if len(f) > 2 and f[2] == "task-clock":
            return float(f[0])
    raise SystemExit(f"perf stat gave no task-clock: {out.name}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--intervals", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bin", default="target/release/noisetop")
    ap.add_argument("--config", action="append", help="noisetop arguments (repeatable)")
    a = ap.parse_args()
    configs = a.config if a.config is not None else CONFIGS
    print(f"{a.intervals} intervals of 1 s, {a.repeat} paired runs each; CPU ms (perf stat task-clock)")
    print(f"{'noisetop arguments':<32} {'-n 1':>8} {'noisetop':>9} {'mpstat':>8} {'ratio':>7}")
    for c in configs:
        args = shlex.split(c)
        setup, ratios, ours, theirs = [], [], [], []
        for _ in range(a.repeat):
            p, o = timed([a.bin, "--batch", "-n", "1"] + args)
            p.wait()
            setup.append(task_clock_ms(o))
            pm, om = timed(["mpstat", "-P", "ALL", "-I", "ALL", "1", str(a.intervals)])
            pn, on = timed([a.bin, "--batch", "-n", str(a.intervals)] + args)
            pm.wait()
            pn.wait()
            n, m = task_clock_ms(on), task_clock_ms(om)
            ours.append(n)
            theirs.append(m)
            ratios.append(n / m)
        med = statistics.median
        print(f"{c or '(none)':<32} {med(setup):8.1f} {med(ours):9.1f} {med(theirs):8.1f} {med(ratios):6.2f}x"
              f"   (ratios {', '.join(f'{r:.2f}' for r in ratios)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
