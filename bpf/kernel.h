/* The few kernel types the programs read, declared with
 * preserve_access_index: the loader moves every field access to the
 * offset the running kernel's BTF gives (CO-RE), so one object runs on
 * every kernel that has the fields, whatever their layout. */
#ifndef NOISETOP_KERNEL_H
#define NOISETOP_KERNEL_H

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef signed int __s32;
typedef signed long long __s64;
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef _Bool bool;
enum { false = 0, true = 1 };
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct kernfs_node {
	u64 id;
};

struct cgroup {
	struct kernfs_node *kn;
};

struct css_set {
	struct cgroup *dfl_cgrp;
};

struct sched_entity {
	u64 sum_exec_runtime;
};

struct task_struct {
	int pid;
	int tgid;
	char comm[16];
	struct css_set *cgroups;
	struct sched_entity se;
};

struct cpumask {
	unsigned long bits[1];
};

#pragma clang attribute pop

enum {
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_TASK_STORAGE = 29,
};

enum {
	BPF_F_NO_PREALLOC = 1U << 0,
	BPF_F_MMAPABLE = 1U << 10,
};

enum {
	BPF_LOCAL_STORAGE_GET_F_CREATE = 1ULL << 0,
};

#endif
