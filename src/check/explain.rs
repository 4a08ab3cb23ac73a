//! What each `check` rule judges and why it matters, in words: the man
//! page's CHECK RULES section is made of these texts, and the
//! `check-<id>` sections of docs/check.md hold the same (a test keeps them
//! equal), so an installed binary carries the explanation its verdicts
//! point to.

/// Each rule's explanation, in [`super::RULE_IDS`] order.
pub const EXPLAIN: [(&str, &str); 20] = [
    (
        "governor",
        "The cpufreq governor of each benchmark CPU\n\
(`cpuN/cpufreq/scaling_governor`) is `performance`. Other governors\n\
(`powersave`, `schedutil`, `ondemand`) change the frequency with the load, so\n\
short runs and the first iterations of a benchmark run at a frequency that\n\
depends on what ran just before. Fix: `cpupower -c LIST frequency-set -g\n\
performance`. UNKNOWN without a cpufreq driver (most VMs).",
    ),
    (
        "turbo-on",
        "Turbo/boost is off. Above the base frequency, the frequency a core reaches\n\
depends on how many cores are busy, on temperature and on power limits, so it\n\
varies from run to run and between machines. The switches read are\n\
`intel_pstate/no_turbo` (1 = off), `cpufreq/boost` (acpi-cpufreq and others,\n\
0 = off) and the per-policy `cpuN/cpufreq/boost` (amd-pstate, Linux 6.11+).\n\
`check` reads no MSR, so the turbo-disable bit that pyperf reads where none of\n\
these files exists is not consulted; the rule is then UNKNOWN. Fix: write the\n\
off value into the switch shown.",
    ),
    (
        "epp",
        "The energy/performance preference (`cpuN/cpufreq/energy_performance_preference`,\n\
intel_pstate and amd-pstate in active mode) is `performance`. Any other value\n\
lets the hardware pick lower frequencies to save energy. UNKNOWN when the\n\
driver has no such file (acpi-cpufreq, passive modes). Fix: write\n\
`performance` into the file of each CPU shown.",
    ),
    (
        "freq-range",
        "`scaling_min_freq` equals `scaling_max_freq` on each benchmark CPU, so the\n\
frequency cannot move. Otherwise the governor or the hardware picks any\n\
frequency between the two. Fix: `cpupower -c LIST frequency-set -d F -u F`,\n\
with F the base frequency (`base_frequency`, else `cpuinfo_max_freq`, which\n\
is the base on acpi-cpufreq) so that it holds without turbo. pyperf's\n\
`system tune` pins the minimum in the same way.",
    ),
    (
        "isolcpus",
        "The benchmark CPUs are in `/sys/devices/system/cpu/isolated` (the\n\
`isolcpus=` boot parameter): the scheduler does not balance tasks onto them,\n\
so tasks run there only when pinned there (per-CPU kernel threads still do). Without `--cpus` the rule asks whether\n\
any CPU is isolated. Isolation does not move IRQs (see\n\
`irq-affinity` below). CPUs set apart with cgroup cpuset\n\
partitions are not read. Fix: boot with the isolation arguments\n\
(`isolcpus=domain,managed_irq,LIST nohz_full=LIST rcu_nocbs=LIST`).",
    ),
    (
        "nohz-full",
        "The benchmark CPUs are in `/sys/devices/system/cpu/nohz_full` (the\n\
`nohz_full=` boot parameter): a CPU running a single task there stops the\n\
periodic scheduler tick, which otherwise interrupts it CONFIG_HZ times a\n\
second. UNKNOWN when the file is missing: the kernel was then probably built\n\
without CONFIG_NO_HZ_FULL, and `nohz_full=` has no effect. Fix: boot with\n\
the isolation arguments, as for `isolcpus`.",
    ),
    (
        "rcu-nocbs",
        "RCU callbacks of the benchmark CPUs are offloaded to kernel threads that can\n\
run elsewhere (`rcu_nocbs=LIST` on /proc/cmdline; the kernel offloads the\n\
`nohz_full` CPUs too). Otherwise the callbacks run in softirq on the CPU that\n\
queued them. The rule reads /proc/cmdline and the nohz_full set; no file\n\
lists the offloaded CPUs. Fix: boot with the isolation arguments, as for\n\
`isolcpus`.",
    ),
    (
        "smt-siblings",
        "No other online CPU shares a core with a benchmark CPU\n\
(`cpuN/topology/thread_siblings_list`). Hardware threads of one core share\n\
its execution units and caches, so whatever runs on the sibling slows the\n\
benchmark by an amount that depends on that work. Fix: take the siblings\n\
offline (`echo 0 > /sys/devices/system/cpu/cpuN/online`), or SMT off for the\n\
whole machine (`echo off > /sys/devices/system/cpu/smt/control`).",
    ),
    (
        "irq-affinity",
        "No device IRQ may be delivered to a benchmark CPU: each\n\
`/proc/irq/N/smp_affinity_list` and `/proc/irq/default_smp_affinity` (for\n\
IRQs set up later) is compared with the benchmark CPUs, and the IRQs are\n\
named with their device from /proc/interrupts. Only the device IRQs listed\n\
there are judged: an IRQ without a handler disturbs nothing, and the per-CPU\n\
timer line of arm64 cannot move. An IRQ delivered there runs\n\
its handler, and often its softirq, on the benchmark CPU. Without `--cpus`\n\
the rule asks whether any CPU receives no IRQ. Fix: write the other CPUs\n\
into the files shown. The kernel refuses (EIO) for managed IRQs, such as\n\
NVMe queues, whose affinity it sets itself; `isolcpus=managed_irq,LIST`\n\
keeps those off isolated CPUs where it can.",
    ),
    (
        "irqbalance",
        "No process named `irqbalance` runs (`/proc/PID/comm`). irqbalance rewrites\n\
IRQ affinities periodically, so it undoes a manual placement and can move\n\
IRQs onto the benchmark CPUs during a run. UNKNOWN on a capture without\n\
process directories. Fix: `systemctl stop irqbalance`.",
    ),
    (
        "deep-cstates",
        "No enabled idle state of a benchmark CPU has an exit latency at or above\n\
`deep-latency-us` (100 µs by default): `cpuN/cpuidle/stateK/latency`, with\n\
`disable` = 0. Waking from such a state takes that long, so the first\n\
interrupt or wake-up after an idle period is late, and the state may flush\n\
the core's caches. Two servers whose cores sleep in different states answer\n\
the same request with different latencies. States whose exit latency is\n\
above a limit held through `/dev/cpu_dma_latency` are listed but not counted:\n\
the idle governor does not choose them. Fix: disable the states shown on the\n\
benchmark CPUs (`echo 1 > .../cpuidle/stateK/disable`). UNKNOWN without\n\
cpuidle states (VMs without a cpuidle driver).",
    ),
    (
        "cstate-limits",
        "Reports the kernel command line limits on idle states:\n\
`intel_idle.max_cstate=`, `processor.max_cstate=`, `idle=` and\n\
`cpuidle.off=`, with the cpuidle driver in use. It warns only for `idle=poll`\n\
while a benchmark CPU has an online SMT sibling: idle CPUs then spin instead\n\
of halting, and a spinning sibling takes execution resources from the\n\
benchmark thread on the same core. Fix: remove `idle=` and disable the deep\n\
states per CPU instead (`deep-cstates` above).",
    ),
    (
        "cpu-dma-latency",
        "No process holds a CPU latency limit. Reading `/dev/cpu_dma_latency` gives the\n\
current CPU latency QoS target in µs (a 4-byte integer); 2000000000 is the\n\
kernel default, meaning no limit. Opening the device to read it adds a\n\
request at that default value, which changes nothing, and closing it removes\n\
the request. A process that writes a smaller value and keeps the device open\n\
(tuned's latency-performance profile does) makes the idle governors skip\n\
slower states on every CPU while it lives: lower wake-up latency, but more\n\
power and results that depend on that process. Keep it for latency tests;\n\
stop it for throughput benchmarks. Fix: `fuser -v /dev/cpu_dma_latency`\n\
names the holder. UNKNOWN when the device cannot be read (it is usually\n\
readable by root only).",
    ),
    (
        "perf-sample-rate",
        "`/proc/sys/kernel/perf_event_max_sample_rate` is at most\n\
`perf-sample-rate-max` (1 by default, the value pyperf's `system tune`\n\
writes). The kernel lowers this limit by itself when perf sampling\n\
interrupts take too long (it logs \"perf: interrupt took too long\"), so the\n\
limit can change during a run. Fix: `sysctl -w\n\
kernel.perf_event_max_sample_rate=1`.",
    ),
    (
        "aslr-on",
        "`/proc/sys/kernel/randomize_va_space` is 0. With 1 or 2 the stack, mmap\n\
areas (and with 2 the heap) start at random addresses in each run, which\n\
changes cache and branch-predictor aliasing, so single runs of the same\n\
binary differ. pyperf, which averages many processes, recommends keeping\n\
full ASLR instead; turn it off to compare single runs, on a machine where\n\
the lost hardening does not matter, or run only the benchmark without it\n\
(`setarch -R`). Fix: `sysctl -w kernel.randomize_va_space=0`.",
    ),
    (
        "nmi-watchdog",
        "`/proc/sys/kernel/nmi_watchdog` is 0. The hard-lockup detector raises an NMI\n\
on every CPU about every `watchdog_thresh` seconds (10 by default) and keeps\n\
one hardware performance counter busy on each CPU, which perf and noisetop\n\
then cannot use. Fix: `sysctl -w kernel.nmi_watchdog=0`.",
    ),
    (
        "thp",
        "Transparent huge pages are not `[always]` in\n\
`/sys/kernel/mm/transparent_hugepage/enabled` or `defrag`. With `enabled`\n\
always, khugepaged scans memory in the background and collapses pages; with\n\
`defrag` always, a page fault may stall in direct compaction. Both make run\n\
times depend on memory fragmentation. `madvise` limits them to memory that\n\
asks for huge pages. Fix: `echo madvise >` the file shown.",
    ),
    (
        "timer-migration",
        "`/proc/sys/kernel/timer_migration` is 0. With 1 (the default) the kernel\n\
lets busy CPUs take over timers from idle ones so that idle CPUs sleep\n\
longer; a busy benchmark CPU can then run other CPUs' timers. Kernels with\n\
the late-2025 change \"timers/migration: Exclude isolated cpus from\n\
hierarchy\" leave isolated CPUs out of this; older ones do not. Fix: `sysctl\n\
-w kernel.timer_migration=0`.",
    ),
    (
        "on-battery",
        "A mains supply (`type` Mains, or USB for USB-C chargers) in\n\
`/sys/class/power_supply` is online. FAIL when every charger listed is\n\
offline: on battery, firmware and power profiles lower power limits and\n\
frequencies, and they change as the battery drains. OK when no supply is\n\
listed (desktops, servers, VMs); UNKNOWN when a battery is listed without a\n\
mains supply. Batteries of devices (`scope` Device: a wireless mouse) do not\n\
count. Fix: plug the power cable in (no command).",
    ),
    (
        "vm",
        "The machine is not a virtual machine: the x86 `hypervisor` flag in\n\
/proc/cpuinfo, `/sys/hypervisor/type`, and the DMI vendor and product names.\n\
In a VM the hypervisor runs other work on the physical CPUs behind the\n\
virtual ones (steal time, shown by noisetop), virtual CPUs may move between\n\
physical CPUs, and frequency and deep idle states are the host's, out of the\n\
guest's sight. No command fixes it: use bare metal, or dedicated and pinned\n\
virtual CPUs, and watch steal.",
    ),
];
