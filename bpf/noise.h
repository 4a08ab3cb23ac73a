/* The layout of what the programs count, shared with noisetop's reader
 * (src/os/bpf/layout.rs mirrors it field for field; both check the
 * sizes below). Every figure is cumulative since the programs were
 * attached: the reader takes differences, so nothing is ever reset and a
 * read never races a reset. */
#ifndef NOISETOP_NOISE_H
#define NOISETOP_NOISE_H

/* Task slots per CPU (a power of two) and how many a lookup probes. */
#define SLOT_BITS 9
#define NSLOTS (1 << SLOT_BITS)
#define PROBES 8

/* Interruption sources per CPU: softirqs by number, the x86 system
 * vectors by their number less 0xe0, then device IRQs in IRQ_SLOTS slots
 * found by their number. */
#define NSOFTIRQ 10
#define VEC_BASE 16
#define VEC_FIRST 0xe0
#define NVEC 32
#define IRQ_BASE (VEC_BASE + NVEC)
#define IRQ_SLOTS 64
#define IRQ_PROBES 8
#define NSRC (IRQ_BASE + IRQ_SLOTS)

/* Nested interruptions kept; deeper ones are counted as lost. */
#define MAX_DEPTH 8

/* Run-queue delay histogram: H2 buckets with grouping power 3 (at most
 * 6.25 % relative error) up to 2^39 ns. */
#define HIST_GP 3
#define NHIST 296

/* cpuidle states counted by their index. */
#define NIDLE 10

struct frame {
	__u32 src;
	__u32 pad;
	__u64 start;
	/* time of interruptions nested in this one, ns */
	__u64 inner;
};

/* What the reader needs consistent with the open slice: read under the
 * sequence count `seq` (odd while a program writes). */
struct cpu_head {
	__u64 seq;
	/* the task running now (tid 0: idle), since slice_start ns */
	__u32 cur_tid;
	__u32 cur_tgid;
	/* the scheduler's charge of it (sum_exec_runtime) when it switched in */
	__u64 cur_sum0;
	/* its task_struct, to read that charge again at a switch out the
	 * kernel did not show */
	__u64 cur_task;
	__u64 slice_start;
	/* interruptions in the current slice so far, ns */
	__u64 slice_irq;
	__u32 depth;
	__u32 pad0;
	struct frame stack[MAX_DEPTH];
	/* cumulative */
	__u64 events;
	__u64 switches;
	__u64 preempts;
	__u64 mig_in;
	__u64 idle_ns;
	__u64 idle_slices;
	/* slices of tasks no slot was free for: time and count */
	__u64 others_ns;
	__u64 others_slices;
	/* interruptions of IRQs no slot was free for */
	__u64 src_full;
	/* exits without their entry, entries past MAX_DEPTH */
	__u64 unmatched;
	/* tasks without storage for their wake-up time */
	__u64 no_storage;
	__u64 rq_waits;
	__u64 rq_delay_ns;
	__u64 rq_delay_max;
	__u32 rq_max_gen;
	__u32 idle_state;
	__u64 idle_since;
	__u64 idle_entries;
	__u64 idle_state_ns[NIDLE];
	__u64 idle_state_count[NIDLE];
	/* switches whose task leaving was not the one that switched in (the
	 * kernel showed no switch between them), and the time they spanned */
	__u64 unseen;
	__u64 unseen_ns;
	__u64 pad1[58];
};

struct src_slot {
	/* IRQ slots: the IRQ number + 1 (0: free) */
	__u32 id;
	__u32 max_gen;
	__u64 ns;
	__u64 count;
	/* longest single interruption in window max_gen, ns */
	__u64 max_ns;
};

struct task_slot {
	__u32 tid;
	__u32 tgid;
	/* even; bumped to odd while the slot is (re)claimed, then even again */
	__u32 epoch;
	/* the window (ctl gen) it last ran in */
	__u32 touched;
	__u64 cgroup;
	char comm[16];
	/* time on the CPU between its switches, interruptions not included */
	__u64 ns;
	__u32 slices;
	__u32 max_gen;
	__u64 max_ns;
	/* interruptions while it was current, ns */
	__u64 irq_ns;
	/* when its last closed slice began */
	__u64 last_start;
	/* what the scheduler charged it over its closed slices, ns: what its
	 * schedstat counts (from a wake-up that preempted another task, where
	 * the scheduler skips a clock update, rather than from its switch in) */
	__u64 charged;
};

struct cpu_area {
	struct cpu_head head;
	__u64 hist[NHIST];
	struct src_slot src[NSRC];
	struct task_slot task[NSLOTS];
};

/* Counts other CPUs add to this one's (atomically): its own programs never
 * write here, so its lines stay in its cache. */
struct remote {
	__u64 mig_out;
	__u64 pad[7];
};

struct ctl {
	/* the reader's window number: slots and maxima are tagged with it */
	__u32 gen;
	/* areas and remote lines there are (possible CPUs) */
	__u32 nr_cpus;
	/* when the reader first read the areas, ns: a CPU whose first event
	 * comes later has run its current task since then (no switch came) */
	__u64 t0;
	__u64 pad1[6];
};

/* The sizes both sides check. */
#define CPU_HEAD_SIZE 1024
#define CPU_AREA_SIZE (CPU_HEAD_SIZE + NHIST * 8 + NSRC * 32 + NSLOTS * 88)
#define REMOTE_SIZE 64
#define CTL_SIZE 64

#endif
