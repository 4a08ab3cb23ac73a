//! `noisetop check` rules on synthetic /proc and /sys trees laid out like
//! the kernel's (each rule firing, staying silent, and UNKNOWN when its file
//! is missing, with exact evidence and fix commands), on every real capture,
//! and live on this machine.

use std::fmt::Write as _;
use std::path::Path;

use noisetop::check::facts::CheckFacts;
use noisetop::check::{self, Outcome, RuleResult};
use noisetop::cmd::check::render_text;
use noisetop::noise::config::CheckConfig;
use noisetop::os::fs::{Fs, Roots};

fn judge(root: &Path, cpus: Option<&[u32]>) -> Vec<RuleResult> {
    judge_with(root, cpus, &CheckConfig::default())
}

fn judge_with(root: &Path, cpus: Option<&[u32]>, cfg: &CheckConfig) -> Vec<RuleResult> {
    let mut fs = Fs::new(Roots::under(root));
    let facts = CheckFacts::read(&mut fs);
    let cpus = cpus.map_or_else(|| facts.machine.online.clone(), <[u32]>::to_vec);
    check::rules(&facts, &cpus, cfg)
}

/// A /proc + /sys + /dev tree in a temporary folder.
struct Tree(tempfile::TempDir);

impl Tree {
    fn put(&self, rel: &str, text: &str) {
        self.put_bytes(rel, text.as_bytes());
    }

    fn put_bytes(&self, rel: &str, bytes: &[u8]) {
        let p = self.0.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    fn rm(&self, rel: &str) {
        let p = self.0.path().join(rel);
        if p.is_dir() {
            std::fs::remove_dir_all(p).unwrap();
        } else {
            std::fs::remove_file(p).unwrap();
        }
    }

    fn rule(&self, cpus: Option<&[u32]>, id: &str) -> RuleResult {
        find(&judge(self.0.path(), cpus), id).clone()
    }

    /// The rule judged for the benchmark CPUs 2-3.
    fn bench(&self, id: &str) -> RuleResult {
        self.rule(Some(&[2, 3]), id)
    }
}

const CPU: &str = "sys/devices/system/cpu";

/// grubby's command that adds `args` to every kernel entry.
fn grubby(args: &str) -> String {
    format!("grubby --update-kernel=ALL --args=\"{args}\"  # then reboot")
}

/// A 4-CPU Intel server prepared for benchmarks on CPUs 2-3: every rule
/// passes. Each test below changes one file from here.
fn quiet() -> Tree {
    let t = Tree(tempfile::tempdir().unwrap());
    t.put(&format!("{CPU}/online"), "0-3\n");
    t.put(&format!("{CPU}/isolated"), "2-3\n");
    t.put(&format!("{CPU}/nohz_full"), "2-3\n");
    t.put(&format!("{CPU}/smt/control"), "off\n");
    t.put(&format!("{CPU}/smt/active"), "0\n");
    t.put(&format!("{CPU}/intel_pstate/no_turbo"), "1\n");
    t.put(&format!("{CPU}/intel_pstate/status"), "active\n");
    t.put(&format!("{CPU}/cpuidle/current_driver"), "intel_idle\n");
    let mut cpuinfo = String::new();
    for c in 0..4 {
        let d = format!("{CPU}/cpu{c}");
        t.put(
            &format!("{d}/topology/thread_siblings_list"),
            &format!("{c}\n"),
        );
        for (f, v) in [
            ("scaling_driver", "intel_pstate"),
            ("scaling_governor", "performance"),
            ("energy_performance_preference", "performance"),
            ("scaling_min_freq", "3000000"),
            ("scaling_max_freq", "3000000"),
            ("cpuinfo_min_freq", "800000"),
            ("cpuinfo_max_freq", "4000000"),
            ("base_frequency", "3000000"),
        ] {
            t.put(&format!("{d}/cpufreq/{f}"), &format!("{v}\n"));
        }
        for (k, name, lat, off) in [(0, "POLL", 0, 0), (1, "C1", 2, 0), (2, "C6", 133, 1)] {
            let s = format!("{d}/cpuidle/state{k}");
            t.put(&format!("{s}/name"), &format!("{name}\n"));
            t.put(&format!("{s}/latency"), &format!("{lat}\n"));
            t.put(&format!("{s}/disable"), &format!("{off}\n"));
        }
        let _ = write!(
            cpuinfo,
            "processor\t: {c}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n\
             flags\t\t: fpu tsc msr\n\n"
        );
    }
    t.put("proc/cpuinfo", &cpuinfo);
    // a Fedora-like system: grubby changes the kernel command line
    t.put("usr/sbin/grubby", "");
    t.put(
        "proc/cmdline",
        "BOOT_IMAGE=/vmlinuz-6.8.0 ro isolcpus=2-3 nohz_full=2-3 rcu_nocbs=2-3 \
         intel_idle.max_cstate=1\n",
    );
    t.put(
        "proc/interrupts",
        "           CPU0       CPU1       CPU2       CPU3       \n \
          24:        120          0          0          0  IR-PCI-MSI 524288-edge      nvme0q1\n \
          25:          0        340          0          0  IR-PCI-MSI 1048576-edge      eth0-TxRx-0\n\
         LOC:       1000       1000       1000       1000   Local timer interrupts\n",
    );
    t.put("proc/irq/24/smp_affinity_list", "0-1\n");
    t.put("proc/irq/25/smp_affinity_list", "0-1\n");
    t.put("proc/irq/default_smp_affinity", "3\n");
    t.put("proc/1/comm", "systemd\n");
    t.put("proc/2/comm", "kthreadd\n");
    t.put("proc/sys/kernel/perf_event_max_sample_rate", "1\n");
    t.put("proc/sys/kernel/randomize_va_space", "0\n");
    t.put("proc/sys/kernel/nmi_watchdog", "0\n");
    t.put("proc/sys/kernel/timer_migration", "0\n");
    t.put(
        "sys/kernel/mm/transparent_hugepage/enabled",
        "always madvise [never]\n",
    );
    t.put(
        "sys/kernel/mm/transparent_hugepage/defrag",
        "always defer defer+madvise [madvise] never\n",
    );
    t.put("sys/class/power_supply/AC/type", "Mains\n");
    t.put("sys/class/power_supply/AC/online", "1\n");
    t.put("sys/class/power_supply/BAT0/type", "Battery\n");
    t.put_bytes("dev/cpu_dma_latency", &2_000_000_000i32.to_ne_bytes());
    t.put("sys/class/dmi/id/sys_vendor", "Dell Inc.\n");
    t.put("sys/class/dmi/id/product_name", "PowerEdge R740\n");
    t
}

#[track_caller]
fn assert_rule(r: &RuleResult, status: Outcome, evidence: &[&str], fix: &[&str]) {
    assert_eq!(r.status, status, "{r:#?}");
    assert_eq!(r.evidence, evidence, "{r:#?}");
    assert_eq!(r.fix, fix, "{r:#?}");
    assert_eq!(r.reason, None, "{r:#?}");
}

#[track_caller]
fn assert_unknown(r: &RuleResult, reason: &str) {
    assert_eq!(r.status, Outcome::Unknown, "{r:#?}");
    assert_eq!(r.reason.as_deref(), Some(reason), "{r:#?}");
    assert!(r.fix.is_empty(), "{r:#?}");
}

#[test]
fn quiet_machine_passes_every_rule() {
    let t = quiet();
    let r = judge(t.0.path(), Some(&[2, 3]));
    let text = render_text(&r);
    for rule in &r {
        assert_eq!(rule.status, Outcome::Ok, "{text}");
    }
    assert_eq!(check::exit_code(&r), 0);
    assert!(
        text.ends_with("20 OK, 0 WARN, 0 FAIL, 0 UNKNOWN: exit 0\n"),
        "{text}"
    );
}

#[test]
fn governor() {
    let t = quiet();
    assert_rule(
        &t.bench("governor"),
        Outcome::Ok,
        &["/sys/devices/system/cpu/cpuN/cpufreq/scaling_governor = performance on CPUs 2-3"],
        &[],
    );
    t.put(
        &format!("{CPU}/cpu2/cpufreq/scaling_governor"),
        "powersave\n",
    );
    assert_rule(
        &t.bench("governor"),
        Outcome::Warn,
        &[
            "/sys/devices/system/cpu/cpuN/cpufreq/scaling_governor = performance on CPU 3",
            "/sys/devices/system/cpu/cpuN/cpufreq/scaling_governor = powersave on CPU 2",
        ],
        &["cpupower -c 2 frequency-set -g performance"],
    );
    t.rm(&format!("{CPU}/cpu2/cpufreq"));
    t.rm(&format!("{CPU}/cpu3/cpufreq"));
    assert_unknown(
        &t.bench("governor"),
        "no cpufreq driver: /sys/devices/system/cpu/cpu2/cpufreq is absent",
    );
}

#[test]
fn turbo() {
    let t = quiet();
    assert_rule(
        &t.bench("turbo-on"),
        Outcome::Ok,
        &[
            "/sys/devices/system/cpu/intel_pstate/no_turbo = 1",
            "/sys/devices/system/cpu/intel_pstate/status = active",
        ],
        &[],
    );
    t.put(&format!("{CPU}/intel_pstate/no_turbo"), "0\n");
    assert_rule(
        &t.bench("turbo-on"),
        Outcome::Warn,
        &[
            "/sys/devices/system/cpu/intel_pstate/no_turbo = 0",
            "/sys/devices/system/cpu/intel_pstate/status = active",
        ],
        &["echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo"],
    );
    // acpi-cpufreq: one machine-wide switch
    t.rm(&format!("{CPU}/intel_pstate"));
    t.put(&format!("{CPU}/cpufreq/boost"), "1\n");
    assert_rule(
        &t.bench("turbo-on"),
        Outcome::Warn,
        &["/sys/devices/system/cpu/cpufreq/boost = 1"],
        &["echo 0 > /sys/devices/system/cpu/cpufreq/boost"],
    );
    t.put(&format!("{CPU}/cpufreq/boost"), "0\n");
    assert_rule(
        &t.bench("turbo-on"),
        Outcome::Ok,
        &["/sys/devices/system/cpu/cpufreq/boost = 0"],
        &[],
    );
    // amd-pstate on Linux 6.11+: a switch per policy
    t.rm(&format!("{CPU}/cpufreq/boost"));
    t.put(&format!("{CPU}/amd_pstate/status"), "active\n");
    t.put(&format!("{CPU}/cpu2/cpufreq/boost"), "1\n");
    t.put(&format!("{CPU}/cpu3/cpufreq/boost"), "0\n");
    t.put(&format!("{CPU}/cpu0/cpufreq/boost"), "1\n");
    assert_rule(
        &t.bench("turbo-on"),
        Outcome::Warn,
        &[
            "/sys/devices/system/cpu/cpuN/cpufreq/boost = 0 on CPU 3",
            "/sys/devices/system/cpu/cpuN/cpufreq/boost = 1 on CPU 2",
            "/sys/devices/system/cpu/amd_pstate/status = active",
        ],
        &["echo 0 > /sys/devices/system/cpu/cpu2/cpufreq/boost"],
    );
    for c in [0, 2, 3] {
        t.rm(&format!("{CPU}/cpu{c}/cpufreq/boost"));
    }
    let r = t.bench("turbo-on");
    assert_unknown(
        &r,
        "no intel_pstate/no_turbo, cpufreq/boost or cpuN/cpufreq/boost file",
    );
    assert_eq!(
        r.evidence,
        ["/sys/devices/system/cpu/amd_pstate/status = active"]
    );
}

#[test]
fn epp() {
    let t = quiet();
    assert_rule(
        &t.bench("epp"),
        Outcome::Ok,
        &[
            "/sys/devices/system/cpu/cpuN/cpufreq/energy_performance_preference = performance on CPUs 2-3",
        ],
        &[],
    );
    for c in [2, 3] {
        t.put(
            &format!("{CPU}/cpu{c}/cpufreq/energy_performance_preference"),
            "balance_power\n",
        );
    }
    assert_rule(
        &t.bench("epp"),
        Outcome::Warn,
        &[
            "/sys/devices/system/cpu/cpuN/cpufreq/energy_performance_preference = balance_power on CPUs 2-3",
        ],
        &[
            "for c in 2 3; do echo performance > /sys/devices/system/cpu/cpu$c/cpufreq/energy_performance_preference; done",
        ],
    );
    for c in [2, 3] {
        t.rm(&format!(
            "{CPU}/cpu{c}/cpufreq/energy_performance_preference"
        ));
        t.put(
            &format!("{CPU}/cpu{c}/cpufreq/scaling_driver"),
            "acpi-cpufreq\n",
        );
    }
    assert_unknown(
        &t.bench("epp"),
        "no energy_performance_preference (cpufreq driver acpi-cpufreq; EPP needs intel_pstate \
         or amd-pstate in active mode)",
    );
}

#[test]
fn freq_range() {
    let t = quiet();
    assert_rule(
        &t.bench("freq-range"),
        Outcome::Ok,
        &[
            "/sys/devices/system/cpu/cpuN/cpufreq/scaling_min_freq = 3000000, scaling_max_freq = 3000000 (kHz) on CPUs 2-3",
        ],
        &[],
    );
    t.put(&format!("{CPU}/cpu3/cpufreq/scaling_min_freq"), "800000\n");
    t.put(&format!("{CPU}/cpu3/cpufreq/scaling_max_freq"), "4000000\n");
    assert_rule(
        &t.bench("freq-range"),
        Outcome::Warn,
        &[
            "/sys/devices/system/cpu/cpuN/cpufreq/scaling_min_freq = 800000, scaling_max_freq = 4000000 (kHz) on CPU 3",
            "/sys/devices/system/cpu/cpuN/cpufreq/scaling_min_freq = 3000000, scaling_max_freq = 3000000 (kHz) on CPU 2",
        ],
        // pinned to the base frequency, not the turbo maximum
        &["cpupower -c 3 frequency-set -d 3000000 -u 3000000"],
    );
    for c in [2, 3] {
        t.rm(&format!("{CPU}/cpu{c}/cpufreq/scaling_min_freq"));
    }
    assert_unknown(
        &t.bench("freq-range"),
        "scaling_min_freq or scaling_max_freq unreadable on every benchmark CPU",
    );
}

#[test]
fn isolcpus() {
    let t = quiet();
    let ok = [
        "/sys/devices/system/cpu/isolated = 2-3",
        "/proc/cmdline has isolcpus=2-3",
    ];
    assert_rule(&t.bench("isolcpus"), Outcome::Ok, &ok, &[]);
    // with every CPU as benchmark CPU: is any set apart?
    assert_rule(&t.rule(None, "isolcpus"), Outcome::Ok, &ok, &[]);
    assert_rule(
        &t.rule(Some(&[1, 2]), "isolcpus"),
        Outcome::Warn,
        &[ok[0], ok[1], "not in the set: CPU 1"],
        &[&grubby(
            "isolcpus=domain,managed_irq,1-3 nohz_full=1-3 rcu_nocbs=1-3",
        )],
    );
    t.put(&format!("{CPU}/isolated"), "\n");
    t.put("proc/cmdline", "ro quiet\n");
    assert_rule(
        &t.rule(None, "isolcpus"),
        Outcome::Warn,
        &[
            "/sys/devices/system/cpu/isolated = (empty)",
            "/proc/cmdline has no isolcpus=",
        ],
        &[&grubby(
            "isolcpus=domain,managed_irq,1-3 nohz_full=1-3 rcu_nocbs=1-3",
        )],
    );
    t.rm(&format!("{CPU}/isolated"));
    assert_unknown(&t.bench("isolcpus"), "no /sys/devices/system/cpu/isolated");
}

#[test]
fn nohz_full() {
    let t = quiet();
    let ok = [
        "/sys/devices/system/cpu/nohz_full = 2-3",
        "/proc/cmdline has nohz_full=2-3",
    ];
    assert_rule(&t.bench("nohz-full"), Outcome::Ok, &ok, &[]);
    assert_rule(&t.rule(Some(&[3]), "nohz-full"), Outcome::Ok, &ok, &[]);
    assert_rule(
        &t.rule(Some(&[0, 3]), "nohz-full"),
        Outcome::Warn,
        &[
            ok[0],
            ok[1],
            "not in the set: CPU 0",
            "CPU 0 is the boot CPU: the kernel keeps it for housekeeping whatever nohz_full= says",
        ],
        // no boot argument sets the boot CPU apart
        &[],
    );
    assert_rule(
        &t.rule(Some(&[0, 1]), "nohz-full"),
        Outcome::Warn,
        &[
            ok[0],
            ok[1],
            "not in the set: CPUs 0-1",
            "CPU 0 is the boot CPU: the kernel keeps it for housekeeping whatever nohz_full= says",
        ],
        &[&grubby(
            "isolcpus=domain,managed_irq,1-3 nohz_full=1-3 rcu_nocbs=1-3",
        )],
    );
    // a kernel built without CONFIG_NO_HZ_FULL has no such file
    t.rm(&format!("{CPU}/nohz_full"));
    let r = t.bench("nohz-full");
    assert_unknown(
        &r,
        "no /sys/devices/system/cpu/nohz_full (kernel built without CONFIG_NO_HZ_FULL?)",
    );
    assert_eq!(r.evidence, ["/proc/cmdline has nohz_full=2-3"]);
}

#[test]
fn rcu_nocbs() {
    let t = quiet();
    assert_rule(
        &t.bench("rcu-nocbs"),
        Outcome::Ok,
        &[
            "/proc/cmdline has rcu_nocbs=2-3",
            "/sys/devices/system/cpu/nohz_full = 2-3 (offloaded too)",
        ],
        &[],
    );
    // nohz_full CPUs are offloaded without rcu_nocbs=
    t.put("proc/cmdline", "ro nohz_full=2-3\n");
    assert_rule(
        &t.bench("rcu-nocbs"),
        Outcome::Ok,
        &[
            "/proc/cmdline has no rcu_nocbs=",
            "/sys/devices/system/cpu/nohz_full = 2-3 (offloaded too)",
        ],
        &[],
    );
    t.put(&format!("{CPU}/nohz_full"), " (null)\n");
    assert_rule(
        &t.bench("rcu-nocbs"),
        Outcome::Warn,
        &[
            "/proc/cmdline has no rcu_nocbs=",
            "not in the set: CPUs 2-3",
        ],
        &[&grubby(
            "isolcpus=domain,managed_irq,2-3 nohz_full=2-3 rcu_nocbs=2-3",
        )],
    );
    t.put("proc/cmdline", "ro rcu_nocbs=2-x\n");
    assert_unknown(
        &t.bench("rcu-nocbs"),
        "/proc/cmdline: rcu_nocbs=2-x: not a CPU number in \"2-x\"",
    );
    t.rm("proc/cmdline");
    assert_unknown(&t.bench("rcu-nocbs"), "no /proc/cmdline");
}

#[test]
fn smt_siblings() {
    let t = quiet();
    let ok = [
        "/sys/devices/system/cpu/smt/control = off",
        "/sys/devices/system/cpu/smt/active = 0",
    ];
    assert_rule(
        &t.bench("smt-siblings"),
        Outcome::Ok,
        &[
            ok[0],
            ok[1],
            "CPUs 2-3 alone on their cores (cpuN/topology/thread_siblings_list)",
        ],
        &[],
    );
    // cores (0,2) and (1,3)
    t.put(&format!("{CPU}/smt/control"), "on\n");
    t.put(&format!("{CPU}/smt/active"), "1\n");
    for (c, s) in [(0, "0,2"), (1, "1,3"), (2, "0,2"), (3, "1,3")] {
        t.put(
            &format!("{CPU}/cpu{c}/topology/thread_siblings_list"),
            &format!("{s}\n"),
        );
    }
    let on = [
        "/sys/devices/system/cpu/smt/control = on",
        "/sys/devices/system/cpu/smt/active = 1",
    ];
    assert_rule(
        &t.rule(Some(&[2]), "smt-siblings"),
        Outcome::Warn,
        &[
            on[0],
            on[1],
            "CPU 2 shares a core with CPU 0 (cpu2/topology/thread_siblings_list)",
        ],
        &[
            "echo 0 > /sys/devices/system/cpu/cpu0/online",
            "echo off > /sys/devices/system/cpu/smt/control",
        ],
    );
    assert_rule(
        &t.rule(None, "smt-siblings"),
        Outcome::Warn,
        &[
            on[0],
            on[1],
            "CPUs 0-3 share a core with another online CPU (cpuN/topology/thread_siblings_list)",
        ],
        &["echo off > /sys/devices/system/cpu/smt/control"],
    );
    // the sibling is offline: silent again
    t.put(&format!("{CPU}/online"), "1-3\n");
    assert_rule(
        &t.rule(Some(&[2]), "smt-siblings"),
        Outcome::Ok,
        &[
            on[0],
            on[1],
            "CPU 2 alone on its core (cpuN/topology/thread_siblings_list)",
        ],
        &[],
    );
    for c in 0..4 {
        t.rm(&format!("{CPU}/cpu{c}/topology"));
    }
    t.rm(&format!("{CPU}/smt"));
    assert_unknown(
        &t.bench("smt-siblings"),
        "no cpuN/topology/thread_siblings_list and no smt/active",
    );
}

#[test]
fn irq_affinity() {
    let t = quiet();
    // not judged: IRQ 9 has no handler (no row in /proc/interrupts), and
    // IRQ 11 is the per-CPU arm64 timer line, which cannot be moved
    t.put("proc/irq/9/smp_affinity_list", "0-3\n");
    t.put("proc/irq/11/smp_affinity_list", "0-3\n");
    let text = std::fs::read_to_string(t.0.path().join("proc/interrupts")).unwrap();
    t.put(
        "proc/interrupts",
        &text.replace(
            "LOC:",
            " 11:        500        500        500        500     GICv3  27 Level     arch_timer\nLOC:",
        ),
    );
    let default = "/proc/irq/default_smp_affinity = 3 (CPUs 0-1)";
    assert_rule(
        &t.bench("irq-affinity"),
        Outcome::Ok,
        &[
            default,
            "none of 2 IRQs may run on CPUs 2-3 (/proc/irq/N/smp_affinity_list)",
        ],
        &[],
    );
    assert_rule(
        &t.rule(None, "irq-affinity"),
        Outcome::Ok,
        &[
            default,
            "CPUs 2-3 receive no device IRQ (2 IRQs read from /proc/irq/N/smp_affinity_list)",
        ],
        &[],
    );
    assert_rule(
        &t.rule(Some(&[1, 2]), "irq-affinity"),
        Outcome::Warn,
        &[
            default,
            "IRQ 24 nvme0q1: /proc/irq/24/smp_affinity_list = 0-1",
            "IRQ 25 eth0-TxRx-0: /proc/irq/25/smp_affinity_list = 0-1",
        ],
        &[
            "for i in 24 25; do echo 0,3 > /proc/irq/$i/smp_affinity_list; done",
            "echo 9 > /proc/irq/default_smp_affinity",
        ],
    );
    t.put("proc/irq/25/smp_affinity_list", "0-3\n");
    t.put("proc/irq/default_smp_affinity", "f\n");
    assert_rule(
        &t.bench("irq-affinity"),
        Outcome::Warn,
        &[
            "/proc/irq/default_smp_affinity = f (CPUs 0-3)",
            "IRQ 25 eth0-TxRx-0: /proc/irq/25/smp_affinity_list = 0-3",
        ],
        &[
            "echo 0-1 > /proc/irq/25/smp_affinity_list",
            "echo 3 > /proc/irq/default_smp_affinity",
        ],
    );
    // every CPU may get an IRQ: set CPUs 1-3 apart, keep CPU 0
    assert_rule(
        &t.rule(None, "irq-affinity"),
        Outcome::Warn,
        &[
            "/proc/irq/default_smp_affinity = f (CPUs 0-3)",
            "every online CPU may receive device IRQs (2 IRQs read from /proc/irq/N/smp_affinity_list)",
        ],
        &[
            "for i in 24 25; do echo 0 > /proc/irq/$i/smp_affinity_list; done",
            "echo 1 > /proc/irq/default_smp_affinity",
        ],
    );
    t.rm("proc/irq");
    assert_unknown(&t.bench("irq-affinity"), "no /proc/irq");
}

#[test]
fn irqbalance() {
    let t = quiet();
    assert_rule(
        &t.bench("irqbalance"),
        Outcome::Ok,
        &["no process named irqbalance among 2 (/proc/PID/comm)"],
        &[],
    );
    t.put("proc/812/comm", "irqbalance\n");
    assert_rule(
        &t.bench("irqbalance"),
        Outcome::Warn,
        &["irqbalance runs as pid 812 (/proc/812/comm)"],
        &["systemctl stop irqbalance"],
    );
    for p in ["1", "2", "812"] {
        t.rm(&format!("proc/{p}"));
    }
    assert_unknown(
        &t.bench("irqbalance"),
        "no /proc/PID/comm readable (procfs of a capture?)",
    );
}

#[test]
fn deep_cstates() {
    let t = quiet();
    assert_rule(
        &t.bench("deep-cstates"),
        Outcome::Ok,
        &["deepest enabled state C1: exit latency 2 µs on CPUs 2-3 (below 100 µs)"],
        &[],
    );
    for c in 0..4 {
        t.put(&format!("{CPU}/cpu{c}/cpuidle/state2/disable"), "0\n");
    }
    assert_rule(
        &t.bench("deep-cstates"),
        Outcome::Warn,
        &["C6: exit latency 133 µs, enabled on CPUs 2-3 (cpuN/cpuidle/state2)"],
        &["for c in 2 3; do echo 1 > /sys/devices/system/cpu/cpu$c/cpuidle/state2/disable; done"],
    );
    // a held latency limit below 133 µs keeps the governor out of C6
    t.put_bytes("dev/cpu_dma_latency", &20i32.to_ne_bytes());
    assert_rule(
        &t.bench("deep-cstates"),
        Outcome::Ok,
        &[
            "C6: exit latency 133 µs, enabled on CPUs 2-3 (cpuN/cpuidle/state2) but skipped: \
             /dev/cpu_dma_latency holds 20 µs",
            "deepest enabled state C1: exit latency 2 µs on CPUs 2-3 (below 100 µs)",
        ],
        &[],
    );
    for c in 0..4 {
        t.rm(&format!("{CPU}/cpu{c}/cpuidle"));
    }
    assert_unknown(
        &t.bench("deep-cstates"),
        "no cpuidle states: /sys/devices/system/cpu/cpu2/cpuidle has none (idle driver: intel_idle)",
    );
}
#[test]
fn cstate_limits() {
    let t = quiet();
    let driver = "/sys/devices/system/cpu/cpuidle/current_driver = intel_idle";
    assert_rule(
        &t.bench("cstate-limits"),
        Outcome::Ok,
        &["/proc/cmdline has intel_idle.max_cstate=1", driver],
        &[],
    );
    t.put("proc/cmdline", "ro quiet\n");
    assert_rule(
        &t.bench("cstate-limits"),
        Outcome::Ok,
        &[
            "/proc/cmdline has none of intel_idle.max_cstate=, processor.max_cstate=, idle=, \
             cpuidle.off=",
            driver,
        ],
        &[],
    );
    // idle=poll spins on the SMT sibling of a benchmark CPU
    t.put("proc/cmdline", "ro processor.max_cstate=1 idle=poll\n");
    assert_rule(
        &t.bench("cstate-limits"),
        Outcome::Ok,
        &[
            "/proc/cmdline has processor.max_cstate=1",
            "/proc/cmdline has idle=poll",
            driver,
        ],
        &[],
    );
    t.put(
        &format!("{CPU}/cpu1/topology/thread_siblings_list"),
        "1,3\n",
    );
    t.put(
        &format!("{CPU}/cpu3/topology/thread_siblings_list"),
        "1,3\n",
    );
    assert_rule(
        &t.bench("cstate-limits"),
        Outcome::Warn,
        &[
            "/proc/cmdline has processor.max_cstate=1",
            "/proc/cmdline has idle=poll",
            driver,
            "idle=poll with online SMT siblings of CPU 3",
        ],
        &["grubby --update-kernel=ALL --remove-args=idle  # then reboot"],
    );
    t.rm("proc/cmdline");
    assert_unknown(&t.bench("cstate-limits"), "no /proc/cmdline");
}

#[test]
fn cpu_dma_latency() {
    let t = quiet();
    assert_rule(
        &t.bench("cpu-dma-latency"),
        Outcome::Ok,
        &["/dev/cpu_dma_latency = 2000000000 µs (the kernel default: no limit held)"],
        &[],
    );
    t.put_bytes("dev/cpu_dma_latency", &0i32.to_ne_bytes());
    assert_rule(
        &t.bench("cpu-dma-latency"),
        Outcome::Warn,
        &[
            "/dev/cpu_dma_latency = 0 µs: idle states with a longer exit latency are skipped on \
             every CPU while the holder keeps the device open",
        ],
        &["fuser -v /dev/cpu_dma_latency  # names the process holding it"],
    );
    t.put_bytes("dev/cpu_dma_latency", &[1, 0]);
    assert_unknown(
        &t.bench("cpu-dma-latency"),
        "/dev/cpu_dma_latency: read 2 bytes, expected 4",
    );
    t.rm("dev/cpu_dma_latency");
    assert_unknown(&t.bench("cpu-dma-latency"), "no /dev/cpu_dma_latency");
}

#[test]
fn perf_sample_rate() {
    let t = quiet();
    let rate = "proc/sys/kernel/perf_event_max_sample_rate";
    assert_rule(
        &t.bench("perf-sample-rate"),
        Outcome::Ok,
        &["/proc/sys/kernel/perf_event_max_sample_rate = 1"],
        &[],
    );
    t.put(rate, "100000\n");
    assert_rule(
        &t.bench("perf-sample-rate"),
        Outcome::Warn,
        &["/proc/sys/kernel/perf_event_max_sample_rate = 100000"],
        &["sysctl -w kernel.perf_event_max_sample_rate=1"],
    );
    let cfg = CheckConfig {
        perf_sample_rate_max: 100_000,
        ..CheckConfig::default()
    };
    let r = judge_with(t.0.path(), Some(&[2, 3]), &cfg);
    assert_eq!(find(&r, "perf-sample-rate").status, Outcome::Ok);
    t.put(rate, "lots\n");
    assert_unknown(
        &t.bench("perf-sample-rate"),
        "/proc/sys/kernel/perf_event_max_sample_rate: not a number: \"lots\"",
    );
    t.rm(rate);
    assert_unknown(
        &t.bench("perf-sample-rate"),
        "no /proc/sys/kernel/perf_event_max_sample_rate",
    );
}

/// The three sysctls that are 0 on a quiet machine.
#[test]
fn aslr_nmi_watchdog_timer_migration() {
    let t = quiet();
    for (id, name, on) in [
        ("aslr-on", "randomize_va_space", "2"),
        ("nmi-watchdog", "nmi_watchdog", "1"),
        ("timer-migration", "timer_migration", "1"),
    ] {
        let file = format!("proc/sys/kernel/{name}");
        assert_rule(&t.bench(id), Outcome::Ok, &[&format!("/{file} = 0")], &[]);
        t.put(&file, &format!("{on}\n"));
        assert_rule(
            &t.bench(id),
            Outcome::Warn,
            &[&format!("/{file} = {on}")],
            &[&format!("sysctl -w kernel.{name}=0")],
        );
        t.rm(&file);
        assert_unknown(&t.bench(id), &format!("no /{file}"));
    }
}

#[test]
fn thp() {
    let t = quiet();
    let dir = "sys/kernel/mm/transparent_hugepage";
    assert_rule(
        &t.bench("thp"),
        Outcome::Ok,
        &[
            "/sys/kernel/mm/transparent_hugepage/enabled = [never]",
            "/sys/kernel/mm/transparent_hugepage/defrag = [madvise]",
        ],
        &[],
    );
    t.put(&format!("{dir}/enabled"), "[always] madvise never\n");
    t.put(
        &format!("{dir}/defrag"),
        "[always] defer defer+madvise madvise never\n",
    );
    assert_rule(
        &t.bench("thp"),
        Outcome::Warn,
        &[
            "/sys/kernel/mm/transparent_hugepage/enabled = [always]",
            "/sys/kernel/mm/transparent_hugepage/defrag = [always]",
        ],
        &[
            "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled",
            "echo madvise > /sys/kernel/mm/transparent_hugepage/defrag",
        ],
    );
    t.rm(&format!("{dir}/defrag"));
    assert_rule(
        &t.bench("thp"),
        Outcome::Warn,
        &[
            "/sys/kernel/mm/transparent_hugepage/enabled = [always]",
            "no /sys/kernel/mm/transparent_hugepage/defrag",
        ],
        &["echo madvise > /sys/kernel/mm/transparent_hugepage/enabled"],
    );
    t.put(&format!("{dir}/enabled"), "always madvise never\n");
    assert_unknown(
        &t.bench("thp"),
        "/sys/kernel/mm/transparent_hugepage/enabled: no [choice] in \"always madvise never\"",
    );
}

#[test]
fn on_battery() {
    let t = quiet();
    let bat = "/sys/class/power_supply/BAT0: type = Battery";
    assert_rule(
        &t.bench("on-battery"),
        Outcome::Ok,
        &["/sys/class/power_supply/AC: type = Mains, online = 1", bat],
        &[],
    );
    t.put("sys/class/power_supply/AC/online", "0\n");
    let r = judge(t.0.path(), Some(&[2, 3]));
    assert_rule(
        find(&r, "on-battery"),
        Outcome::Fail,
        &["/sys/class/power_supply/AC: type = Mains, online = 0", bat],
        &[],
    );
    assert_eq!(check::exit_code(&r), 2, "a failure exits 2");
    // a USB-C charger counts as mains
    t.put(
        "sys/class/power_supply/ucsi-source-psy-USBC000:001/type",
        "USB\n",
    );
    t.put(
        "sys/class/power_supply/ucsi-source-psy-USBC000:001/online",
        "1\n",
    );
    assert_eq!(t.bench("on-battery").status, Outcome::Ok);
    t.rm("sys/class/power_supply/AC");
    t.rm("sys/class/power_supply/ucsi-source-psy-USBC000:001");
    assert_unknown(
        &t.bench("on-battery"),
        "a battery but no Mains supply with an online file",
    );
    // a wireless mouse's battery says nothing about the machine
    t.rm("sys/class/power_supply/BAT0");
    t.put("sys/class/power_supply/hidpp_battery_0/type", "Battery\n");
    t.put("sys/class/power_supply/hidpp_battery_0/scope", "Device\n");
    assert_rule(
        &t.bench("on-battery"),
        Outcome::Ok,
        &["/sys/class/power_supply/hidpp_battery_0: type = Battery"],
        &[],
    );
    t.rm("sys/class/power_supply/hidpp_battery_0");
    assert_rule(
        &t.bench("on-battery"),
        Outcome::Ok,
        &["/sys/class/power_supply is empty (no battery: desktop, server or VM)"],
        &[],
    );
    t.rm("sys/class/power_supply");
    assert_unknown(&t.bench("on-battery"), "no /sys/class/power_supply");
}

#[test]
fn vm() {
    let t = quiet();
    assert_rule(
        &t.bench("vm"),
        Outcome::Ok,
        &[
            "/proc/cpuinfo flags lack hypervisor",
            "/sys/class/dmi/id: Dell Inc. / PowerEdge R740",
        ],
        &[],
    );
    t.put("sys/class/dmi/id/sys_vendor", "QEMU\n");
    t.put(
        "sys/class/dmi/id/product_name",
        "Standard PC (Q35 + ICH9, 2009)\n",
    );
    assert_rule(
        &t.bench("vm"),
        Outcome::Warn,
        &[
            "/proc/cpuinfo flags lack hypervisor",
            "hypervisor QEMU (/sys/hypervisor/type or /sys/class/dmi/id)",
            "steal time expected: watch the steal column",
        ],
        &[],
    );
    t.rm("sys/class/dmi");
    let cpuinfo = std::fs::read_to_string(t.0.path().join("proc/cpuinfo")).unwrap();
    t.put(
        "proc/cpuinfo",
        &cpuinfo.replace("fpu tsc msr", "fpu tsc msr hypervisor"),
    );
    assert_rule(
        &t.bench("vm"),
        Outcome::Warn,
        &[
            "/proc/cpuinfo flags include hypervisor",
            "steal time expected: watch the steal column",
        ],
        &[],
    );
    t.rm("proc/cpuinfo");
    assert_unknown(
        &t.bench("vm"),
        "no /proc/cpuinfo and no /sys/class/dmi/id/sys_vendor",
    );
}

/// The JSON shape scripts read: schema, cpus, and per rule id, status,
/// title, goal, evidence, fix, reason, doc.
#[test]
fn json_shape() {
    let t = quiet();
    t.put("proc/sys/kernel/nmi_watchdog", "1\n");
    t.rm("proc/sys/kernel/timer_migration");
    let report = check::CheckReport {
        schema: check::SCHEMA,
        cpus: vec![2, 3],
        rules: judge(t.0.path(), Some(&[2, 3])),
    };
    let v = serde_json::to_value(&report).unwrap();
    assert_eq!(v["schema"], 2);
    assert_eq!(v["cpus"], serde_json::json!([2, 3]));
    let nmi = v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "nmi-watchdog")
        .unwrap();
    assert_eq!(
        nmi,
        &serde_json::json!({
            "id": "nmi-watchdog",
            "status": "WARN",
            // what was found; the goal beside it
            "title": "NMI watchdog is on",
            "goal": "NMI watchdog is off",
            "evidence": ["/proc/sys/kernel/nmi_watchdog = 1"],
            "fix": ["sysctl -w kernel.nmi_watchdog=0"],
            "reason": null,
            "doc": "man noisetop, CHECK RULES: nmi-watchdog"
        })
    );
    let tm = v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "timer-migration")
        .unwrap();
    assert_eq!(tm["status"], "UNKNOWN");
    assert_eq!(tm["reason"], "no /proc/sys/kernel/timer_migration");
}

fn find<'a>(rs: &'a [RuleResult], id: &str) -> &'a RuleResult {
    rs.iter().find(|r| r.id == id).unwrap()
}

/// Live: every rule answers, and what this machine lacks is UNKNOWN with
/// the reason (a VM without cpufreq: governor, turbo, EPP, range).
#[test]
fn live_machine() {
    let r = judge(Path::new("/"), None);
    println!("{}", render_text(&r));
    let ids: Vec<&str> = r.iter().map(|r| r.id).collect();
    assert_eq!(ids, check::RULE_IDS);
    for rule in &r {
        assert_eq!(
            rule.status == Outcome::Unknown,
            rule.reason.is_some(),
            "{rule:?}"
        );
    }
    if !Path::new("/sys/devices/system/cpu/cpu0/cpufreq").exists() {
        for id in ["governor", "epp", "freq-range"] {
            let g = find(&r, id);
            assert_eq!(g.status, Outcome::Unknown, "{g:?}");
            assert_eq!(
                g.reason.as_deref(),
                Some("no cpufreq driver: /sys/devices/system/cpu/cpu0/cpufreq is absent")
            );
        }
        let t = find(&r, "turbo-on");
        if t.status == Outcome::Unknown {
            assert_eq!(
                t.reason.as_deref(),
                Some(
                    "no cpufreq driver: no intel_pstate/no_turbo, cpufreq/boost or \
                     cpuN/cpufreq/boost file"
                )
            );
        }
    }
}

fn captures() -> Option<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/captures");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("{}: absent: skipped", dir.display());
        None
    }
}

/// The statuses in rule order, for a capture judged with every CPU.
fn statuses(dir: &Path) -> Vec<&'static str> {
    judge(dir, None).iter().map(|r| r.status.label()).collect()
}

/// Rule ids in the order of `check::RULE_IDS`, for reading the tables below.
const ORDER: &str = "governor turbo-on epp freq-range isolcpus nohz-full rcu-nocbs smt-siblings \
                     irq-affinity irqbalance deep-cstates cstate-limits cpu-dma-latency \
                     perf-sample-rate aslr-on nmi-watchdog thp timer-migration on-battery vm";

/// Three captures checked by hand against their files.
#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn captures_checked_by_hand() {
    let Some(dir) = captures() else { return };
    assert_eq!(
        ORDER.split_whitespace().collect::<Vec<_>>(),
        check::RULE_IDS
    );
    let (o, w, u) = ("OK", "WARN", "UNKNOWN");
    // sosreport-rhcos-hyperv-2cpu: no cpufreq directory (governor, turbo,
    // EPP, range unknown); isolated is empty and nohz_full `(null)`; the
    // cmdline has no isolcpus/nohz_full/rcu_nocbs nor any C-state limit;
    // smt/active 1 with thread_siblings_list 0-1; no proc/irq, no pids;
    // cpuidle current_driver `none` and no cpuN/cpuidle; randomize_va_space 2;
    // cpuinfo flags include hypervisor; no dev, no other sysctl, no
    // power_supply, no THP files.
    assert_eq!(
        statuses(&dir.join("sosreport-rhcos-hyperv-2cpu")),
        [u, u, u, u, w, w, w, w, u, u, u, o, u, u, w, u, u, u, u, w]
    );
    // util-linux-epyc7451-2s-96cpu: acpi-cpufreq, governor performance on
    // all 96 policies, cpufreq/boost 1, scaling_min_freq 1200000 < max
    // 2300000, no EPP file; isolated empty, nohz_full `(null)`; siblings
    // N,N+48 with smt/active 1; acpi_idle C2 at exit latency 100 µs enabled
    // (the threshold is 100); no cmdline, irq, pids, sysctls, dev; flags
    // without hypervisor.
    assert_eq!(
        statuses(&dir.join("util-linux-epyc7451-2s-96cpu")),
        [o, w, u, w, w, w, u, w, u, u, w, u, u, u, u, u, u, u, u, o]
    );
    // pcp-sysdev-001-i3-4005u-4cpu: intel_pstate, governor powersave on
    // CPUs 0-3, no_turbo 1, no EPP file, scaling 800000..1700000 kHz; no
    // isolated/nohz_full files (an old kernel); siblings 0-1 and 2-3 and
    // no smt directory; intel_idle C6-HSW (133 µs) to C10-HSW (2600 µs)
    // enabled; no cmdline, irq, pids, sysctls, dev; flags without
    // hypervisor.
    assert_eq!(
        statuses(&dir.join("pcp-sysdev-001-i3-4005u-4cpu")),
        [w, o, u, w, u, u, u, w, u, u, w, u, u, u, u, u, u, u, u, o]
    );
    let r = judge(&dir.join("util-linux-epyc7451-2s-96cpu"), None);
    let deep = find(&r, "deep-cstates");
    assert_eq!(
        deep.evidence,
        ["C2: exit latency 100 µs, enabled on CPUs 0-95 (cpuN/cpuidle/state2)"]
    );
    assert_eq!(
        deep.fix,
        [
            "for c in {0..95}; do echo 1 > /sys/devices/system/cpu/cpu$c/cpuidle/state2/disable; done"
        ]
    );
    assert_eq!(
        find(&r, "isolcpus").fix,
        [format!(
            "# add isolcpus=domain,managed_irq,{l} nohz_full={l} rcu_nocbs={l} to the kernel \
             command line, then reboot (grubby --update-kernel=ALL --args=\"…\" on Fedora and \
             RHEL; GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub, on Debian and Ubuntu)",
            l = "1-47,49-95"
        )],
        "CPU 0 and its sibling 48 keep the housekeeping"
    );
    assert_eq!(
        find(&r, "freq-range").fix,
        ["cpupower -c 0-95 frequency-set -d 2300000 -u 2300000"]
    );
}

/// Every real capture: no panic, every rule answers, UNKNOWN has a reason.
#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn every_capture_is_judged() {
    let Some(dir) = captures() else { return };
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .collect();
    names.sort_by_key(std::fs::DirEntry::file_name);
    assert!(names.len() >= 20, "{} captures", names.len());
    for e in names {
        let r = judge(&e.path(), None);
        println!(
            "== {}\n{}",
            e.file_name().to_string_lossy(),
            render_text(&r)
        );
        assert_eq!(r.len(), check::RULE_IDS.len());
        for rule in &r {
            assert_eq!(
                rule.status == Outcome::Unknown,
                rule.reason.is_some(),
                "{rule:?}"
            );
        }
    }
}

/// Every rule has its section in docs/check.md, and the page names no rule
/// that does not exist.
#[test]
fn the_check_page_has_a_section_per_rule() {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/check.md"))
        .unwrap();
    let sections: Vec<&str> = page
        .lines()
        .filter_map(|l| l.strip_prefix("### check-"))
        .collect();
    assert_eq!(
        sections,
        check::RULE_IDS,
        "docs/check.md's sections in rule order"
    );
}

/// The command end to end on a tree: the exit code follows the verdicts,
/// and a CPU that is not online is a clear error.
#[test]
fn command_exit_codes() {
    use noisetop::base::cpulist::CpuList;
    use noisetop::cmd::check::{CheckArgs, run};
    use std::process::ExitCode;
    let t = quiet();
    let roots = Roots::under(t.0.path());
    let args = |cpus: &[u32]| CheckArgs {
        cpus: Some(CpuList(cpus.to_vec())),
        json: true,
    };
    assert_eq!(run(&args(&[2, 3]), &roots).unwrap(), ExitCode::from(0));
    t.put("proc/sys/kernel/nmi_watchdog", "1\n");
    assert_eq!(run(&args(&[2, 3]), &roots).unwrap(), ExitCode::from(1));
    t.put("sys/class/power_supply/AC/online", "0\n");
    assert_eq!(run(&args(&[2, 3]), &roots).unwrap(), ExitCode::from(2));
    let err = run(&args(&[2, 9]), &roots).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--cpus 2,9: CPU 9 is not online (online: 0-3)"
    );
}

/// Live with the last online CPU as benchmark CPU: the IRQ rule answers
/// from the real /proc/irq, names each IRQ it blames, and moves them to
/// the other CPUs.
#[test]
fn live_machine_one_cpu() {
    let mut fs = Fs::new(Roots::default());
    let facts = CheckFacts::read(&mut fs);
    let online = facts.machine.online.clone();
    if online.len() < 2 || !Path::new("/proc/irq").is_dir() {
        println!("fewer than 2 CPUs or no /proc/irq: skipped");
        return;
    }
    let last = *online.last().unwrap();
    let r = check::rules(&facts, &[last], &CheckConfig::default());
    println!("{}", render_text(&r));
    let irq = find(&r, "irq-affinity");
    assert_ne!(irq.status, Outcome::Unknown, "{irq:#?}");
    if irq.status == Outcome::Warn {
        let others = noisetop::base::cpulist::format(&online[..online.len() - 1]);
        assert!(
            irq.fix
                .iter()
                .any(|f| f.contains(&format!("echo {others} > /proc/irq/"))),
            "{irq:#?}"
        );
        for e in irq.evidence.iter().filter(|e| e.starts_with("IRQ ")) {
            let n: u32 = e[4..].split([' ', ':']).next().unwrap().parse().unwrap();
            let list = std::fs::read_to_string(format!("/proc/irq/{n}/smp_affinity_list")).unwrap();
            let cpus = noisetop::base::cpulist::parse(&list).unwrap();
            assert!(cpus.contains(&last), "{e}: {list}");
        }
    }
}

/// One isolation advice, fit for the system: on a Debian-like tree (the
/// GRUB defaults file and `update-grub`, no grubby) the three isolation
/// rules give the same command, in GRUB's form, and its boot arguments
/// are the ones the dashboard's finding gives.
#[test]
fn isolation_advice_is_one_and_fits_the_boot_loader() {
    let t = quiet();
    t.rm("usr/sbin/grubby");
    t.put("etc/default/grub", "GRUB_CMDLINE_LINUX=\"\"\n");
    t.put("usr/sbin/update-grub", "");
    t.put(&format!("{CPU}/isolated"), "\n");
    t.put(&format!("{CPU}/nohz_full"), " (null)\n");
    t.put("proc/cmdline", "ro quiet\n");
    let args = "isolcpus=domain,managed_irq,2-3 nohz_full=2-3 rcu_nocbs=2-3";
    let want = format!(
        "sed -i 's/^GRUB_CMDLINE_LINUX=\"/&{args} /' /etc/default/grub && update-grub  # then reboot"
    );
    for id in ["isolcpus", "nohz-full", "rcu-nocbs"] {
        let r = t.bench(id);
        assert_eq!(r.status, Outcome::Warn, "{r:#?}");
        assert_eq!(r.fix, std::slice::from_ref(&want), "{id}");
    }
    let mut fs = Fs::new(Roots::under(t.0.path()));
    let m = noisetop::model::machine::Machine::read(&mut fs);
    let f = noisetop::noise::settings::not_isolated(&m, &[2, 3]).unwrap();
    assert_eq!(
        f.fix.as_deref(),
        Some(format!("boot with {args} (kernel command line)").as_str())
    );
}
