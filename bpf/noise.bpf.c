// SPDX-License-Identifier: (MIT OR Apache-2.0) AND GPL-2.0-only
/*
 * Who ran on each CPU and what interrupted it, counted in the kernel.
 *
 * Every program adds into the area of the CPU it runs on: the task that
 * ran (time between its switches, interruptions not included), each
 * interruption source (time without the ones nested in it, count,
 * longest), switches, migrations in, idle entries by state, and the delay
 * from a task's wake-up (or preemption) to its switch in. Nothing is
 * copied out per event: noisetop maps the areas read-only and takes
 * differences each window from a CPU of its own, which is plain memory
 * access and wakes no one.
 *
 * A CPU's area is written only by programs running on that CPU, so no
 * lock is taken. What other CPUs add (tasks that left it) goes to a
 * separate line, atomically. IPIs are counted where they land, as the
 * vectors that run them (reschedule, call function, irq_work).
 *
 * The scheduler programs are BTF tracepoints (they read the tasks'
 * fields, relocated to the running kernel's layout, and keep the wake-up
 * time in task storage); the interruption programs are raw tracepoints,
 * one program for every vector tracepoint, so that few programs need
 * verifying at start.
 *
 * Bounded: NSLOTS tasks per CPU (a slot whose task has not run for two
 * windows is taken by the next), IRQ_SLOTS device IRQs per CPU, MAX_DEPTH
 * nested interruptions; what finds no room is counted apart and said.
 * The wake-up times sit in task storage, which the kernel frees with the
 * task.
 */
#include "kernel.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "noise.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_area);
} areas SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct remote);
} remotes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ctl);
} ctls SEC(".maps");

struct wake {
	/* when it became runnable (woken or preempted), ns; 0: not waiting */
	__u64 queued;
	/* the CPU it last ran on, + 1 (0: not seen running) */
	__u32 cpu1;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct wake);
} wakes SEC(".maps");

static __always_inline struct cpu_area *area_of(__u32 cpu)
{
	return bpf_map_lookup_elem(&areas, &cpu);
}

static __always_inline __u32 gen_now(void)
{
	__u32 zero = 0;
	struct ctl *c = bpf_map_lookup_elem(&ctls, &zero);
	return c ? c->gen : 0;
}

/* The first event on a CPU since the programs were attached, where no
 * switch came yet: the task current now has run since the reader's first
 * read (any switch since would have been seen), or since now. */
static __always_inline void adopt_current(struct cpu_head *h, __u64 now)
{
	if (h->slice_start)
		return;
	__u32 zero = 0;
	struct ctl *c = bpf_map_lookup_elem(&ctls, &zero);
	__u64 t0 = c ? c->t0 : 0;
	__u64 id = bpf_get_current_pid_tgid();
	struct task_struct *t = bpf_get_current_task_btf();
	h->cur_tid = (__u32)id;
	h->cur_tgid = id >> 32;
	h->cur_task = (__u64)t;
	h->cur_sum0 = BPF_CORE_READ(t, se.sum_exec_runtime);
	h->slice_irq = 0;
	h->slice_start = t0 && t0 < now ? t0 : now;
}

/* The reader retries a copy of the head taken while `seq` was odd or
 * moved. A compiler barrier orders the stores: x86 keeps stores in
 * program order; where a CPU does not, a torn read puts at most one
 * event's figures in the next window. */
#define barrier() asm volatile("" ::: "memory")

static __always_inline void seq_begin(struct cpu_head *h)
{
	h->seq++;
	barrier();
}

static __always_inline void seq_end(struct cpu_head *h)
{
	barrier();
	h->seq++;
}

/* floor(log2(v)) without a branch: every branch is a path the verifier
 * walks at load, and six of them here would multiply every path after.
 * Each step adds 2^w - 1 to the bits above w, which carries into bit w
 * exactly when one of them is set. */
static __always_inline __u32 log2_u64(__u64 v)
{
	__u64 r, s;
	r = (((v >> 32) + 0xffffffffULL) >> 32) << 5;
	v >>= r;
	s = (((v >> 16) + 0xffff) >> 16) << 4;
	v >>= s;
	r |= s;
	s = (((v >> 8) + 0xff) >> 8) << 3;
	v >>= s;
	r |= s;
	s = (((v >> 4) + 0xf) >> 4) << 2;
	v >>= s;
	r |= s;
	s = (((v >> 2) + 0x3) >> 2) << 1;
	v >>= s;
	r |= s;
	return r | (v >> 1);
}

/* The H2 bucket of a value: exact below 2^HIST_GP, then 2^HIST_GP
 * buckets per power of two. */
static __always_inline __u32 hist_index(__u64 v)
{
	if (v < (1 << HIST_GP))
		return v;
	__u32 h = log2_u64(v);
	__u32 i = (h - HIST_GP + 1) * (1 << HIST_GP) + ((v >> (h - HIST_GP)) & ((1 << HIST_GP) - 1));
	return i < NHIST ? i : NHIST - 1;
}

/* The slot of task `tid` on this CPU, claiming one not used for two
 * windows when it has none; NULL when every probed slot is in use. */
static __always_inline struct task_slot *task_slot(struct cpu_area *a, __u32 tid, __u32 tgid, __u32 gen)
{
	__u32 h = (tid * 2654435761u) >> (32 - SLOT_BITS);
	/* an index, not a pointer, so that the verifier's states along the
	 * probes differ in one scalar */
	__u32 stale = NSLOTS;
	for (__u32 i = 0; i < PROBES; i++) {
		__u32 k = (h + i) & (NSLOTS - 1);
		struct task_slot *s = &a->task[k];
		if (s->tid == tid && s->epoch)
			return s;
		if (stale == NSLOTS && s->touched + 2 <= gen)
			stale = k;
	}
	if (stale >= NSLOTS)
		return 0;
	struct task_slot *c = &a->task[stale];
	c->epoch |= 1;
	barrier();
	c->tid = tid;
	c->tgid = tgid;
	c->cgroup = 0;
	c->ns = 0;
	c->slices = 0;
	c->max_gen = 0;
	c->max_ns = 0;
	c->irq_ns = 0;
	c->last_start = 0;
	c->charged = 0;
	barrier();
	c->epoch += 1;
	return c;
}

/* One closed slice of one task, as add_slice takes it: a global function
 * takes at most five arguments, and a pointer to a struct of scalars is
 * one the verifier can check once for every caller. */
struct slice {
	__u32 tid;
	__u32 tgid;
	/* when it began, ns */
	__u64 start;
	/* between switches, interruptions not included; in interruptions; as
	 * the scheduler charged it, ns */
	__u64 ran;
	__u64 irq;
	__u64 charged;
	/* the task is the one leaving: `comm` is its name, and its cgroup
	 * comes from `current` */
	__u32 named;
	__u32 gen;
	char comm[16];
};

/* Adds a slice to its task's slot on this CPU. Global, not inlined: the
 * verifier checks a global function once, on its own, where an inlined
 * copy is checked again along every path of each of its three callers
 * (on_switch took 5 ms of verifying at load with three copies). */
__noinline int add_slice(struct slice *sl)
{
	if (!sl)
		return 0;
	struct cpu_area *a = area_of(bpf_get_smp_processor_id());
	if (!a)
		return 0;
	struct cpu_head *h = &a->head;
	__u64 ran = sl->ran;
	if (sl->tid == 0) {
		h->idle_ns += ran;
		h->idle_slices++;
		return 0;
	}
	__u32 gen = sl->gen;
	struct task_slot *s = task_slot(a, sl->tid, sl->tgid, gen);
	if (!s) {
		h->others_ns += ran;
		h->others_slices++;
		return 0;
	}
	if (sl->named) {
		/* the name at every slice (after an exec in it too), read
		 * from the task as plain loads; the cgroup, a helper call, once
		 * a window per slot: current is still the task leaving. Two
		 * helper calls on every switch were a third of the program's
		 * time (on a 2-vCPU VM, 443-474 ns a run with them, 298-322
		 * without); a task that changes cgroup shows it from the next
		 * window on. */
		__builtin_memcpy(s->comm, sl->comm, sizeof(s->comm));
		if (s->touched != gen || !s->cgroup)
			s->cgroup = bpf_get_current_cgroup_id();
	}
	s->touched = gen;
	s->tgid = sl->tgid;
	s->ns += ran;
	s->irq_ns += sl->irq;
	s->slices++;
	s->charged += sl->charged;
	s->last_start = sl->start;
	if (s->max_gen != gen) {
		s->max_gen = gen;
		s->max_ns = ran;
	} else if (ran > s->max_ns) {
		s->max_ns = ran;
	}
	return 0;
}

/* Closes the slice open since the last switch in, at a switch out of
 * `prev`. Where `prev` is not the task that switched in, the kernel showed
 * no switch between them (seen on a PVM guest, for its agent's threads):
 * the one that switched in ran what the scheduler charged it since, and
 * `prev` the rest. */
static __always_inline void close_slice(struct cpu_area *a, struct task_struct *prev, __u32 ptid, __u64 now,
					__u32 gen)
{
	struct cpu_head *h = &a->head;
	if (!h->slice_start)
		return;
	__u64 span = now - h->slice_start;
	__u64 irq = h->slice_irq < span ? h->slice_irq : span;
	__u64 ran = span - irq;
	/* the scheduler brought prev's charge up to date just before this */
	__u64 sum = prev->se.sum_exec_runtime;
	if (h->cur_tid == ptid) {
		struct slice sl = {
			.tid = ptid,
			.tgid = h->cur_tgid,
			.start = h->slice_start,
			.ran = ran,
			.irq = irq,
			.charged = sum > h->cur_sum0 ? sum - h->cur_sum0 : 0,
			.named = 1,
			.gen = gen,
		};
		__builtin_memcpy(sl.comm, prev->comm, sizeof(sl.comm));
		add_slice(&sl);
		return;
	}
	h->unseen++;
	h->unseen_ns += span;
	__u64 first = 0;
	/* a local first: CO-RE relocates the task's fields, not the head's */
	struct task_struct *cur = (struct task_struct *)h->cur_task;
	if (h->cur_tid && cur) {
		__u64 now_sum = BPF_CORE_READ(cur, se.sum_exec_runtime);
		if (now_sum > h->cur_sum0)
			first = now_sum - h->cur_sum0;
	}
	if (first > ran)
		first = ran;
	struct slice was = {
		.tid = h->cur_tid,
		.tgid = h->cur_tgid,
		.start = h->slice_start,
		.ran = first,
		.irq = 0,
		.charged = first,
		.named = 0,
		.gen = gen,
		.comm = {},
	};
	add_slice(&was);
	struct slice left = {
		.tid = ptid,
		.tgid = prev->tgid,
		.start = h->slice_start + first,
		.ran = ran - first,
		.irq = irq,
		.charged = ran - first,
		.named = 1,
		.gen = gen,
	};
	__builtin_memcpy(left.comm, prev->comm, sizeof(left.comm));
	add_slice(&left);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct cpu_area *a = area_of(cpu);
	if (!a)
		return 0;
	struct cpu_head *h = &a->head;
	__u64 now = bpf_ktime_get_ns();
	__u32 gen = gen_now();
	__u32 ptid = prev->pid;
	__u32 ntid = next->pid;

	seq_begin(h);
	h->events++;
	h->switches++;
	/* no interruption is open across a switch: frames left are ones
	 * whose exits came before the programs were attached */
	if (h->depth) {
		h->unmatched += h->depth;
		h->depth = 0;
	}
	close_slice(a, prev, ptid, now, gen);
	if (ptid && (preempt || prev_state == 0)) {
		/* still runnable: its wait for the CPU starts now */
		h->preempts++;
		struct wake *w = bpf_task_storage_get(&wakes, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (w)
			w->queued = now;
		else
			h->no_storage++;
	}
	h->cur_tid = ntid;
	h->cur_tgid = next->tgid;
	h->cur_sum0 = next->se.sum_exec_runtime;
	h->cur_task = (__u64)next;
	h->slice_start = now;
	h->slice_irq = 0;
	if (ntid) {
		struct wake *w = bpf_task_storage_get(&wakes, next, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (w) {
			if (w->queued && now > w->queued) {
				__u64 d = now - w->queued;
				h->rq_waits++;
				h->rq_delay_ns += d;
				if (h->rq_max_gen != gen) {
					h->rq_max_gen = gen;
					h->rq_delay_max = d;
				} else if (d > h->rq_delay_max) {
					h->rq_delay_max = d;
				}
				__u32 i = hist_index(d);
				if (i < NHIST)
					a->hist[i]++;
			}
			w->queued = 0;
			/* perf's cpu-migrations counts a task that changed CPU
			 * when it next switches in there: so does this */
			if (w->cpu1 && w->cpu1 != cpu + 1) {
				h->mig_in++;
				__u32 from = w->cpu1 - 1;
				struct remote *r = bpf_map_lookup_elem(&remotes, &from);
				if (r)
					__sync_fetch_and_add(&r->mig_out, 1);
			}
			w->cpu1 = cpu + 1;
		} else {
			h->no_storage++;
		}
	}
	seq_end(h);
	return 0;
}

/* A wake-up restarts the wait even where one was noted: a task woken
 * while it still ran keeps no stale time for its next wait. */
static __always_inline void on_wakeup(struct task_struct *p)
{
	struct wake *w = bpf_task_storage_get(&wakes, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (w)
		w->queued = bpf_ktime_get_ns();
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_wakeup_tp, struct task_struct *p)
{
	on_wakeup(p);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_wakeup_new, struct task_struct *p)
{
	on_wakeup(p);
	return 0;
}

/* An interruption begins: it takes the CPU from whatever ran. */
static __always_inline void push(__u32 src)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct cpu_area *a = area_of(cpu);
	if (!a)
		return;
	struct cpu_head *h = &a->head;
	__u64 now = bpf_ktime_get_ns();
	seq_begin(h);
	h->events++;
	adopt_current(h, now);
	__u32 d = h->depth;
	if (d < MAX_DEPTH) {
		h->stack[d].src = src;
		h->stack[d].start = now;
		h->stack[d].inner = 0;
		h->depth = d + 1;
	} else {
		h->unmatched++;
	}
	seq_end(h);
}

static __always_inline void charge_src(struct cpu_area *a, __u32 src, __u64 ns, __u32 gen)
{
	if (src >= NSRC)
		return;
	struct src_slot *s = &a->src[src];
	s->ns += ns;
	s->count++;
	if (s->max_gen != gen) {
		s->max_gen = gen;
		s->max_ns = ns;
	} else if (ns > s->max_ns) {
		s->max_ns = ns;
	}
}

/* Ends the top frame of `d`: its time, less the ones nested in it, goes
 * to its source; all of it leaves the one it interrupted. */
static __always_inline void end_frame(struct cpu_area *a, struct cpu_head *h, __u32 d, __u64 now, __u32 gen)
{
	if (d == 0 || d > MAX_DEPTH)
		return;
	struct frame *f = &h->stack[(d - 1) & (MAX_DEPTH - 1)];
	__u64 span = now > f->start ? now - f->start : 0;
	__u64 own = f->inner < span ? span - f->inner : 0;
	charge_src(a, f->src, own, gen);
	if (d > 1)
		h->stack[(d - 2) & (MAX_DEPTH - 1)].inner += span;
	else
		h->slice_irq += span;
}

/* An interruption ends. */
static __always_inline void pop(__u32 src)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct cpu_area *a = area_of(cpu);
	if (!a)
		return;
	struct cpu_head *h = &a->head;
	__u64 now = bpf_ktime_get_ns();
	__u32 gen = gen_now();
	seq_begin(h);
	h->events++;
	__u32 d = h->depth;
	/* the frame of this source is the top one; where it is not, no
	 * entry of it was seen: the programs were attached in its middle
	 * (exits are attached first, and a program on a tracepoint never
	 * nests in itself, so no exit is missed after that) */
	if (d >= 1 && d <= MAX_DEPTH && h->stack[(d - 1) & (MAX_DEPTH - 1)].src == src) {
		end_frame(a, h, d, now, gen);
		d--;
	} else {
		h->unmatched++;
	}
	h->depth = d;
	seq_end(h);
}

/* The source slot of device IRQ `irq`, found or claimed by its number. */
static __always_inline __u32 irq_src(__u32 irq)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct cpu_area *a = area_of(cpu);
	if (!a)
		return NSRC;
	__u32 id = irq + 1;
	__u32 h = irq & (IRQ_SLOTS - 1);
	for (int i = 0; i < IRQ_PROBES; i++) {
		__u32 k = (h + i) & (IRQ_SLOTS - 1);
		struct src_slot *s = &a->src[IRQ_BASE + k];
		if (s->id == id)
			return IRQ_BASE + k;
		if (s->id == 0) {
			s->id = id;
			return IRQ_BASE + k;
		}
	}
	a->head.src_full++;
	/* pushed anyway so that its exit pairs: charged to nothing */
	return NSRC;
}

SEC("raw_tp")
int BPF_PROG(on_irq_entry, int irq)
{
	push(irq_src(irq));
	return 0;
}

SEC("raw_tp")
int BPF_PROG(on_irq_exit, int irq)
{
	pop(irq_src(irq));
	return 0;
}

SEC("raw_tp")
int BPF_PROG(on_softirq_entry, unsigned int vec)
{
	push(vec < NSOFTIRQ ? vec : NSRC);
	return 0;
}

SEC("raw_tp")
int BPF_PROG(on_softirq_exit, unsigned int vec)
{
	pop(vec < NSOFTIRQ ? vec : NSRC);
	return 0;
}

/* Attached to every x86 vector tracepoint: each passes its vector. */
static __always_inline __u32 vector_src(int vector)
{
	__u32 v = (__u32)vector - VEC_FIRST;
	return v < NVEC ? VEC_BASE + v : NSRC;
}

SEC("raw_tp")
int BPF_PROG(on_vector_entry, int vector)
{
	push(vector_src(vector));
	return 0;
}

SEC("raw_tp")
int BPF_PROG(on_vector_exit, int vector)
{
	pop(vector_src(vector));
	return 0;
}

SEC("raw_tp")
int BPF_PROG(on_cpu_idle, unsigned int state, unsigned int cpu_id)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct cpu_area *a = area_of(cpu);
	if (!a)
		return 0;
	struct cpu_head *h = &a->head;
	__u64 now = bpf_ktime_get_ns();
	seq_begin(h);
	h->events++;
	adopt_current(h, now);
	if (state == (unsigned int)-1) {
		__u32 s = h->idle_state;
		if (h->idle_since && s < NIDLE) {
			h->idle_state_ns[s] += now - h->idle_since;
			h->idle_state_count[s]++;
		}
		h->idle_since = 0;
	} else {
		h->idle_entries++;
		h->idle_state = state;
		h->idle_since = now;
	}
	seq_end(h);
	return 0;
}
