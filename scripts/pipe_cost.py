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
       [--bin target/release/noisetop] [--args "--no-trace"] [--bare]

--bare watches with a bare BPF counter on the same scheduler events
instead (bpftrace on the tracepoints sched_switch and sched_wakeup;
bpftrace 0.17, as Debian 12 has it, attaches no raw tracepoints): what the machine
charges any observer there, the floor noisetop is held to.

--per-event also prints each BPF program's mean run time per event over
the watched runs (the kernel's own figures, BPF_ENABLE_STATS: held only
while this script runs, no setting written; read with bpftool).

Needs perf (linux-perf) and root for the BPF programs; bpftrace for --bare;
bpftool for --per-event.
"""
import argparse
import ctypes
import json
import os
import shlex
import signal
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


STATS_FD = None


def enable_stats():
    """Asks the kernel to time every BPF program while the fd is open
    (bpf(BPF_ENABLE_STATS, BPF_STATS_RUN_TIME))."""
    global STATS_FD
    libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.create_string_buffer(16)
    fd = libc.syscall(321, 32, attr, 16)  # SYS_bpf on x86_64, BPF_ENABLE_STATS
    if fd < 0:
        raise SystemExit(f"BPF_ENABLE_STATS: {os.strerror(ctypes.get_errno())}")
    STATS_FD = fd


def program_stats():
    """Run counts and total run time of every BPF program that ran."""
    progs = json.loads(subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True,
                                      text=True, check=True).stdout)
    return {p.get("name", str(p["id"])): (p["run_cnt"], p["run_time_ns"])
            for p in progs if p.get("run_cnt")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--loops", type=int, default=200000)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--house", type=int, default=0)
    ap.add_argument("--bin", default="target/release/noisetop")
    ap.add_argument("--args", default="", help="more noisetop arguments")
    ap.add_argument("--bare", action="store_true", help="a bare bpftrace counter instead of noisetop")
    ap.add_argument("--per-event", action="store_true", help="each BPF program's run time per event")
    a = ap.parse_args()
    # this script and what it starts stay off the benchmark's CPU
    os.sched_setaffinity(0, {a.house})
    if a.per_event:
        enable_stats()
    runs = {}
    losses = []
    who = "a bare bpftrace counter" if a.bare else f"noisetop {a.args or '(default)'} from CPU {a.house}"
    print(f"perf bench sched pipe -l {a.loops} on CPU {a.cpu}; watched by {who}")
    print(f"{'pair':>4} {'before':>10} {'watched':>10} {'after':>10} {'loss':>7}")
    for i in range(1, a.pairs + 1):
        before = ops_per_s(a.cpu, a.loops)
        if a.bare:
            nt = subprocess.Popen(["bpftrace", "-e", "tracepoint:sched:sched_switch,"
                                   "tracepoint:sched:sched_wakeup { @[cpu] = count(); }"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        else:
            nt = subprocess.Popen([a.bin, "--batch", "--watch", str(a.cpu), "--pin", str(a.house), "-i", "1s"]
                                  + shlex.split(a.args), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True)
        # past setup: noisetop prints its first table after the first
        # interval, bpftrace says it is attaching
        first = nt.stdout.readline()
        if not first:
            raise SystemExit("the observer ended before it was ready")
        time.sleep(0.2)
        watched = ops_per_s(a.cpu, a.loops)
        if a.per_event:
            for name, (n, ns) in program_stats().items():
                runs[name] = n, ns
        nt.send_signal(signal.SIGINT)
        nt.wait()
        after = ops_per_s(a.cpu, a.loops)
        loss = 1 - watched / ((before + after) / 2)
        losses.append(loss)
        print(f"{i:>4} {before:>10.0f} {watched:>10.0f} {after:>10.0f} {100 * loss:>6.1f}%")
    print(f"median loss {100 * statistics.median(losses):.1f}% "
          f"(range {100 * min(losses):.1f}% to {100 * max(losses):.1f}%)")
    for name, (n, ns) in sorted(runs.items()):
        print(f"  {name:<20} {n:>10} runs, {ns / n:6.0f} ns each (last watched run's observer)")


if __name__ == "__main__":
    main()
