#!/usr/bin/env python3
"""Measures what noisetop adds to an idle CPU.

Counts the LOC, IWI, RES, CAL and TLB interrupts and the context switches of one CPU
over SECONDS with noisetop not running, then again with noisetop running
(pinned elsewhere, watching that CPU), and prints both and the difference.
It also reports noisetop's own CPU time from /proc/PID/stat.

usage: scripts/observer_cost.py [--cpu 1] [--pin 0] [--seconds 60] [--interval 1s] [--bin target/release/noisetop] [--exact] [-- extra noisetop args]

--exact also counts, from the kernel's ipi:ipi_send_cpu / ipi:ipi_send_cpumask
tracepoints (a tracefs instance of its own, root, Linux 6.6+), every IPI a
noisetop thread sends to the watched CPU during the measured window, by
kind: a function call (callback set: a perf or MSR read, a TLB flush,
irq_work) or a reschedule (a task woken there on noisetop's behalf). Those
sent by an interrupt that ran on noisetop's time (the trace's hardirq or
softirq flag: the tick's kick of the idle load balancer, an RCU wake-up)
are listed apart: they are the kernel's, and come the same with any task
that wakes on that CPU.
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


def parse_send(line, tgid, tids, cpu):
    """(callsite, is_call, in_irq) when the trace line is an IPI that
    process `tgid` (threads `tids`) sent to `cpu`, else None."""
    if line.startswith("#") or ") [" not in line:
        return None
    head, rest = line.split(") [", 1)
    task, _, group = head.rpartition("(")
    # the tgid shows as dashes when the kernel's pid-to-tgid cache missed
    # it: the sender's thread id tells then
    group = group.strip()
    tid = task.strip().rpartition("-")[2]
    mine = int(group) == tgid if group.isdigit() else tid.isdigit() and int(tid) in tids
    if not mine:
        return None
    # "001] d.h1. 123.456: ...": a third flag letter h, s or H is a hardirq
    # or softirq that ran on the task's time (the idle balancer's kick from
    # the tick, an RCU wake-up), not the task's own code
    words = rest.split()
    in_irq = len(words) > 1 and len(words[1]) > 2 and words[1][2] in "hsH"
    f = dict(w.split("=", 1) for w in words if "=" in w)
    if "cpu" in f:
        targets = {int(f["cpu"])}
    elif "cpumask" in f:
        bits = int(f["cpumask"].replace(",", ""), 16)
        targets = {i for i in range(bits.bit_length()) if bits >> i & 1}
    else:
        return None
    if cpu not in targets:
        return None
    return (f.get("callsite", "?"), f.get("callback", "0x0") not in ("0x0", "0"), in_irq)


def selftest():
    """parse_send on lines as the kernel (6.18) writes them."""
    own = ("        noisetop-12974   (  12974) [000] ...1. 22680.822060: ipi_send_cpu: cpu=1 "
           "callsite=generic_exec_single+0x36/0x150 callback=generic_smp_call_function_single_interrupt+0x0/0x10")
    assert parse_send(own, 12974, set(), 1) == ("generic_exec_single+0x36/0x150", True, False)
    assert parse_send(own, 12974, set(), 0) is None, "another target"
    assert parse_send(own, 999, set(), 1) is None, "another process"
    dashes = own.replace("(  12974)", "(-------)").replace("noisetop-12974", "noisetop-12977")
    assert parse_send(dashes, 12974, {12974, 12977}, 1)[0].startswith("generic_exec_single")
    assert parse_send(dashes, 12974, {12974}, 1) is None
    tick = own.replace("...1.", "d.h1.")
    assert parse_send(tick, 12974, set(), 1)[2], "sent from a hardirq on its time"
    mask = ("   noisetop-7 (      7) [000] d..2. 1.0: ipi_send_cpumask: cpumask=0000,00000006 "
            "callsite=smp_call_function_many_cond+0x1/0x2 callback=0x0")
    assert parse_send(mask, 7, set(), 2) == ("smp_call_function_many_cond+0x1/0x2", False, False)
    assert parse_send(mask, 7, set(), 0) is None
    assert parse_send("# tracer: nop", 7, set(), 1) is None
    print("selftest ok")


class IpiTrace:
    """A tracefs instance recording IPI sends, sender's tgid included."""

    def __init__(self):
        root = "/sys/kernel/tracing"
        if not os.path.isdir(root + "/events"):
            subprocess.run(["mount", "-t", "tracefs", "nodev", root], check=False)
        if not os.path.isdir(root + "/events/ipi/ipi_send_cpu"):
            raise SystemExit("--exact: no ipi:ipi_send_cpu tracepoint (Linux 6.6+, tracefs, root)")
        self.dir = f"{root}/instances/observer-cost-{os.getpid()}"
        os.mkdir(self.dir)
        for f, v in (("trace_clock", "mono"), ("options/record-tgid", "1"), ("buffer_size_kb", "8192"),
                     ("events/ipi/ipi_send_cpu/enable", "1"), ("events/ipi/ipi_send_cpumask/enable", "1")):
            with open(f"{self.dir}/{f}", "w") as fh:
                fh.write(v)

    def on(self, v):
        with open(f"{self.dir}/tracing_on", "w") as fh:
            fh.write("1" if v else "0")

    def sends(self, tgid, tids, cpu):
        """(callsite, is_call, in_irq) of each IPI that process `tgid`
        (threads `tids`) sent to `cpu`, or an interrupt on its time did."""
        with open(f"{self.dir}/trace") as fh:
            return [s for s in (parse_send(line, tgid, tids, cpu) for line in fh) if s]

    def close(self):
        self.on(False)
        with open(f"{self.dir}/events/enable", "w") as fh:
            fh.write("0")
        os.rmdir(self.dir)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--pin", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--interval", default="1s")
    ap.add_argument("--bin", default="target/release/noisetop")
    ap.add_argument("--pingpong", action="store_true",
                    help="two processes on the watched CPU wake each other through pipes (thousands of context switches a second) in both windows")
    ap.add_argument("--exact", action="store_true",
                    help="count the IPIs noisetop sends to the watched CPU from the ipi tracepoints")
    ap.add_argument("extra", nargs="*")
    ap.add_argument("--selftest", action="store_true", help="check the trace line parser and exit")
    a = ap.parse_args()
    if a.selftest:
        return selftest()
    load = pingpong(a.cpu) if a.pingpong else []
    base = window(a.cpu, a.seconds)
    cmd = [a.bin, "--batch", "--interval", a.interval, "--pin", str(a.pin), "--watch", str(a.cpu)] + a.extra
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2)  # let it start and take its first snapshot
    tr = IpiTrace() if a.exact else None
    if tr:
        tr.on(True)
    t0 = cpu_seconds(p.pid)
    w0 = time.time()
    withn = window(a.cpu, a.seconds)
    used = cpu_seconds(p.pid) - t0
    wall = time.time() - w0
    if tr:
        tr.on(False)
    tids = {int(t) for t in os.listdir(f"/proc/{p.pid}/task")}
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
    if tr:
        sent = tr.sends(p.pid, tids, a.cpu)
        tr.close()
        own = [(c, call) for c, call, irq in sent if not irq]
        calls = [c for c, call in own if call]
        print(f"IPIs noisetop sent to CPU {a.cpu} (ipi tracepoints, exact): {len(own)} "
              f"({len(calls)} function calls, {len(own) - len(calls)} reschedules)")
        for site in sorted(set(c for c, _ in own)):
            print(f"  {site}: {sum(1 for c, _ in own if c == site)}")
        irq = [c for c, _, i in sent if i]
        print(f"sent by interrupts that ran on noisetop's time (not its code): {len(irq)}")
        for site in sorted(set(irq)):
            print(f"  {site}: {irq.count(site)}")

if __name__ == "__main__":
    sys.exit(main())
