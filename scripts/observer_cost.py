#!/usr/bin/env python3
"""Measures what noisetop adds to an idle CPU.

Counts the LOC, IWI, RES, CAL and TLB interrupts and the context switches of one CPU
over SECONDS with noisetop not running, then again with noisetop running
(pinned elsewhere, watching that CPU), and prints both and the difference.
It also reports noisetop's own CPU time from /proc/PID/stat.

usage: scripts/observer_cost.py [--cpu 1] [--pin 0] [--seconds 60] [--interval 1s] [--bin target/release/noisetop] [-- extra noisetop args]
Context switches per CPU come from the scheduler's debug file
(/sys/kernel/debug/sched/debug, root with debugfs mounted); without it only
interrupts are compared.
"""
import argparse
import os
import subprocess
import sys
import time


def pingpong(cpu):
    """Two processes pinned to `cpu` bouncing a byte through two pipes."""
    code = (
        "import os, sys\n"
        "os.sched_setaffinity(0, {%d})\n"
        "r, w = int(sys.argv[1]), int(sys.argv[2])\n"
        "first = sys.argv[3] == '1'\n"
        "if first: os.write(w, b'x')\n"
        "while True:\n"
        "    os.read(r, 1); os.write(w, b'x')\n" % cpu
    )
    a_r, b_w = os.pipe()
    b_r, a_w = os.pipe()
    procs = []
    for r, w, first in ((a_r, a_w, "1"), (b_r, b_w, "0")):
        procs.append(subprocess.Popen([sys.executable, "-c", code, str(r), str(w), first], pass_fds=(r, w)))
    return procs


def irq_counts(cpu):
    with open("/proc/interrupts") as f:
        header = f.readline().split()
        col = header.index(f"CPU{cpu}")
        out = {}
        for line in f:
            label, _, rest = line.partition(":")
            label = label.strip()
            if label in ("LOC", "IWI", "RES", "CAL", "TLB"):
                out[label] = int(rest.split()[col])
        return out


def switches(cpu):
    try:
        with open("/sys/kernel/debug/sched/debug") as f:
            text = f.read()
    except OSError:
        return None
    vals = [int(l.split(":")[1]) for l in text.splitlines() if l.strip().startswith(".nr_switches")]
    return vals[cpu] if cpu < len(vals) else None


def sample(cpu):
    c = irq_counts(cpu)
    c["CSW"] = switches(cpu)
    return c


def window(cpu, seconds):
    a = sample(cpu)
    time.sleep(seconds)
    b = sample(cpu)
    return {k: (None if a[k] is None or b[k] is None else (b[k] - a[k]) / seconds) for k in a}


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--pin", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--interval", default="1s")
    ap.add_argument("--bin", default="target/release/noisetop")
    ap.add_argument("--pingpong", action="store_true",
                    help="two processes on the watched CPU wake each other through pipes (thousands of context switches a second) in both windows")
    ap.add_argument("extra", nargs="*")
    a = ap.parse_args()
    load = pingpong(a.cpu) if a.pingpong else []
    base = window(a.cpu, a.seconds)
    cmd = [a.bin, "--batch", "--interval", a.interval, "--pin", str(a.pin), "--watch", str(a.cpu)] + a.extra
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2)  # let it start and take its first snapshot
    t0 = cpu_seconds(p.pid)
    w0 = time.time()
    withn = window(a.cpu, a.seconds)
    used = cpu_seconds(p.pid) - t0
    wall = time.time() - w0
    p.terminate()
    p.wait()
    for q in load:
        q.kill()
        q.wait()
    print(f"CPU {a.cpu}, {a.seconds:.0f} s each, noisetop pinned to CPU {a.pin}, interval {a.interval}")
    print(f"{'per second':>12} {'without':>10} {'with':>10} {'added':>10}")
    for k in ("LOC", "IWI", "RES", "CAL", "TLB", "CSW"):
        x, y = base.get(k), withn.get(k)
        if x is None or y is None:
            print(f"{k:>12} {'-':>10} {'-':>10} {'-':>10}")
        else:
            print(f"{k:>12} {x:10.2f} {y:10.2f} {y - x:+10.2f}")
    print(f"noisetop CPU time: {used:.2f} s over {wall:.0f} s = {100 * used / wall:.3f} % of one CPU")


if __name__ == "__main__":
    sys.exit(main())
