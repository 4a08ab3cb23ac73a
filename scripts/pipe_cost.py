#!/usr/bin/env python3
"""What watching a CPU costs the benchmark on it: `perf bench sched pipe`.

Both ends of the pipe ping-pong run pinned to the watched CPU (about half a
million scheduler events a second, the worst case for an observer that
counts them). Each pair runs the benchmark unwatched, then watched by
noisetop (`--batch --watch CPU --pin HOUSE`, started and past its first
sample before the benchmark begins), then unwatched again; the loss of the
pair is 1 - watched / mean(before, after), so drift of the machine between
pairs cancels. Prints every pair and the median.

usage: scripts/pipe_cost.py [--pairs 5] [--loops 200000] [--cpu 1] [--house 0]
       [--bin target/release/noisetop] [--args "--no-trace"]

Needs perf (linux-perf) and root for the BPF programs.
"""
import argparse
import os
import shlex
import statistics
import subprocess
import time


def ops_per_s(cpu, loops):
    out = subprocess.run(["taskset", "-c", str(cpu), "perf", "bench", "sched", "pipe", "-l", str(loops)],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and f[1] == "ops/sec":
            return float(f[0])
    raise SystemExit(f"perf bench gave no ops/sec:\n{out}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--loops", type=int, default=200000)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--house", type=int, default=0)
    ap.add_argument("--bin", default="target/release/noisetop")
    ap.add_argument("--args", default="", help="more noisetop arguments")
    a = ap.parse_args()
    # this script and what it starts stay off the benchmark's CPU
    os.sched_setaffinity(0, {a.house})
    losses = []
    print(f"perf bench sched pipe -l {a.loops} on CPU {a.cpu}; noisetop {a.args or '(default)'} from CPU {a.house}")
    print(f"{'pair':>4} {'before':>10} {'watched':>10} {'after':>10} {'loss':>7}")
    for i in range(1, a.pairs + 1):
        before = ops_per_s(a.cpu, a.loops)
        nt = subprocess.Popen([a.bin, "--batch", "--watch", str(a.cpu), "--pin", str(a.house), "-i", "1s"]
                              + shlex.split(a.args), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        # past setup: the first table is printed after the first interval
        first = nt.stdout.readline()
        if not first:
            raise SystemExit("noisetop ended before its first sample")
        time.sleep(0.2)
        watched = ops_per_s(a.cpu, a.loops)
        nt.terminate()
        nt.wait()
        after = ops_per_s(a.cpu, a.loops)
        loss = 1 - watched / ((before + after) / 2)
        losses.append(loss)
        print(f"{i:>4} {before:>10.0f} {watched:>10.0f} {after:>10.0f} {100 * loss:>6.1f}%")
    print(f"median loss {100 * statistics.median(losses):.1f}% "
          f"(range {100 * min(losses):.1f}% to {100 * max(losses):.1f}%)")


if __name__ == "__main__":
    main()
