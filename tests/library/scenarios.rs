//! Specifications of the interval math, run through the real replay path
//! (`open_replay` → `advance` → `Engine::step`) on synthetic captures from
//! `noisetop::testkit::synth` and on the hand-written trees in `tests/fixtures/`.
//!
//! Every expected figure is worked out by hand from the counter model in
//! the `synth` module documentation; the arithmetic is in the comments.
//! Unless a test says otherwise the capture has two instants one second
//! apart, so a rate is simply the counter's advance over that second.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use noisetop::model::interval::FreqSource;
use noisetop::model::interval::{CpuRates, IdleRate, Interval, PkgRates, TimeSplit};
use noisetop::pipeline::replay::{advance_engine as advance, open_engine as open_replay};
use noisetop::sample::ladder::{Metric, Status};
use noisetop::testkit::synth::{Flavor, Spec, write_capture};

/// Replays every instant of a capture; returns the intervals and the
/// metric statuses after the last step.
fn replay(dir: &Path) -> (Vec<Interval>, Vec<Status>) {
    let (instants, mut engine) = open_replay(dir).expect("capture opens");
    let mut out = Vec::new();
    for (i, inst) in instants.iter().enumerate() {
        if i > 0 {
            advance(&mut engine, inst).expect("instant loads");
        }
        out.extend(engine.step());
    }
    (out, engine.statuses())
}

/// Generates a capture in a fresh temporary folder.
fn capture(spec: &Spec) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_capture(dir.path(), spec).unwrap();
    dir
}

/// The single interval of a two-instant capture of `flavor` with 8 CPUs.
fn interval_of(flavor: Flavor, cpus: u32) -> Interval {
    let dir = capture(&Spec::new(flavor, cpus));
    let (ivs, _) = replay(dir.path());
    assert_eq!(ivs.len(), 1, "two instants make one interval");
    ivs.into_iter().next().unwrap()
}

fn server() -> &'static Interval {
    static IV: OnceLock<Interval> = OnceLock::new();
    IV.get_or_init(|| interval_of(Flavor::IntelServer, 8))
}

fn laptop() -> &'static Interval {
    static IV: OnceLock<Interval> = OnceLock::new();
    IV.get_or_init(|| interval_of(Flavor::IntelLaptop, 8))
}

fn cpu(iv: &Interval, n: u32) -> &CpuRates {
    iv.cpu(n)
        .unwrap_or_else(|| panic!("cpu {n} missing from the interval"))
}

/// Asserts a figure equals the hand-computed value (to rounding of the
/// last bit: the pipeline divides in floating point).
#[track_caller]
fn close(got: Option<f64>, want: f64) {
    let g = got.unwrap_or_else(|| panic!("expected {want}, got None"));
    assert!(
        (g - want).abs() <= 1e-9 * want.abs().max(1.0),
        "expected {want}, got {g}"
    );
}

#[track_caller]
fn close_pairs<S: AsRef<str>>(got: &[(S, Option<f64>)], want: &[(&str, f64)]) {
    let names: Vec<&str> = got.iter().map(|(n, _)| n.as_ref()).collect();
    let want_names: Vec<&str> = want.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, want_names);
    for ((_, g), (_, w)) in got.iter().zip(want) {
        close(*g, *w);
    }
}

fn fixture(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(case)
}

/// Rewrites one file of a capture.
fn edit(path: &Path, f: impl FnOnce(String) -> String) {
    let text = std::fs::read_to_string(path).unwrap();
    std::fs::write(path, f(text)).unwrap();
}

/// Replaces the line that starts with `prefix`.
fn replace_line(text: &str, prefix: &str, new: &str) -> String {
    assert!(
        text.lines().any(|l| l.starts_with(prefix)),
        "no line starts with {prefix:?}"
    );
    text.lines()
        .map(|l| {
            if l.starts_with(prefix) {
                new.to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

fn idle<'a>(r: &'a CpuRates, name: &str) -> &'a IdleRate {
    r.idle
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no state {name}"))
}

// ---------------------------------------------------------------- Intel server

#[test]
fn intel_server_frequency_is_aperf_and_mperf_over_tsc() {
    let iv = server();
    assert_eq!(iv.freq_source, Some(FreqSource::DevMsr));
    close(Some(iv.dt_s), 1.0);
    // CPU0: busy 20 %, busy clock 2100 MHz, TSC 2100 MHz.
    // ΔAPERF = 2100e6·0.20 = 420e6 → Avg_MHz = 420e6 / 1 s / 1e6 = 420
    // ΔMPERF = 2100e6·0.20 = 420e6, ΔTSC = 2100e6 → Busy% = 100·420/2100 = 20
    // Bzy_MHz = base 2100 (cpufreq base_frequency) · ΔAPERF/ΔMPERF = 2100
    let c0 = cpu(iv, 0);
    close(c0.avg_mhz, 420.0);
    close(c0.busy_pct, 20.0);
    close(c0.bzy_mhz, 2100.0);
    close(c0.tsc_mhz, 2100.0);
    // CPU3: busy 60 %, busy clock 2100 + 100·3 = 2400 MHz.
    // ΔAPERF = 2400e6·0.6 = 1440e6 → 1440; ΔMPERF = 2100e6·0.6 = 1260e6
    // Bzy = 2100 · 1440/1260 = 2400
    let c3 = cpu(iv, 3);
    close(c3.avg_mhz, 1440.0);
    close(c3.busy_pct, 60.0);
    close(c3.bzy_mhz, 2400.0);
    // CPU1 barely runs: busy 1 %, clock 2200 → Avg 2200·0.01 = 22
    close(cpu(iv, 1).avg_mhz, 22.0);
    close(cpu(iv, 1).busy_pct, 1.0);
}

#[test]
fn intel_server_core_c6_is_read_and_c1_is_derived() {
    let iv = server();
    // CPU0: C6 = deep% = (100 − 20)/2 = 40 % of ΔTSC;
    // C1 = ΔTSC − ΔMPERF − ΔC6 = 100 − 20 − 40 = 40 %
    close_pairs(&cpu(iv, 0).hw_cstates, &[("C1", 40.0), ("C6", 40.0)]);
    // CPU1 sits in C6: 95 %; C1 = 100 − 1 − 95 = 4 %
    close_pairs(&cpu(iv, 1).hw_cstates, &[("C1", 4.0), ("C6", 95.0)]);
}

#[test]
fn intel_server_package_cstates_use_the_package_leaders_tsc() {
    let iv = server();
    // 8 CPUs, two packages: CPUs 0,1,4,5 on package 0 and 2,3,6,7 on package 1
    assert_eq!(cpu(iv, 5).package, Some(0));
    assert_eq!(cpu(iv, 2).package, Some(1));
    let ids: Vec<u32> = iv.pkgs.iter().map(|p| p.package).collect();
    assert_eq!(ids, [0, 1]);
    // PC2 = 10 + 10·p %, PC6 = 5 + 10·p % of the leader's (CPU0, CPU2) ΔTSC
    close_pairs(&iv.pkgs[0].cstates, &[("PC2", 10.0), ("PC6", 5.0)]);
    close_pairs(&iv.pkgs[1].cstates, &[("PC2", 20.0), ("PC6", 15.0)]);
}

fn watts(p: &PkgRates, domain: &str) -> Option<f64> {
    p.watts
        .iter()
        .find(|(d, _)| d == domain)
        .and_then(|(_, w)| *w)
}

#[test]
fn intel_server_pkg_watt_from_rapl_units_across_a_32_bit_wrap() {
    let iv = server();
    // unit MSR 0x606 = 0xA0E03: energy bits 12:8 = 0xE → 2^-14 J per count.
    // package 0: 100 W = 100·2^14 counts/s → ΔE = 1 638 400 · 2^-14 = 100 J in 1 s
    close(watts(&iv.pkgs[0], "pkg"), 100.0);
    // package 1 starts at 2^32 − 10^6 and advances 120·2^14 = 1 966 080:
    // it reads 966 080 after the wrap; Δ = 10^6 + 966 080 = 1 966 080 → 120 W
    close(watts(&iv.pkgs[1], "pkg"), 120.0);
    // the per-CPU view has no per-core RAPL on Intel
    assert_eq!(cpu(iv, 0).core_watt, None);
}

#[test]
fn intel_server_dram_watts_use_the_fixed_skylake_x_unit() {
    let iv = server();
    // DRAM advances 10^6 counts/s; SKX DRAM unit is 15.3 µJ → 15.3 W
    // (the 0x606 unit, 2^-14 J, would say 61.035 W)
    close(watts(&iv.pkgs[0], "ram"), 15.3);
}

#[test]
fn intel_server_temperature_is_tjmax_minus_the_readout() {
    let iv = server();
    // TjMax (0x1A2 bits 23:16) = 100; THERM_STATUS readout = 100 − (40 + core_id)
    close(cpu(iv, 0).temp_c, 40.0); // core_id 0
    close(cpu(iv, 3).temp_c, 41.0); // core_id 1
    // package readout 100 − (50 + p)
    close(iv.pkgs[0].temp_c, 50.0);
    close(iv.pkgs[1].temp_c, 51.0);
}

#[test]
fn intel_server_smi_and_throttle_counts_are_per_interval() {
    let iv = server();
    // one SMI per second lands on every CPU
    assert!(iv.cpus.iter().all(|c| c.smi == Some(1)));
    // CPU5's core_throttle_count advances 2/s, the others stay put
    assert_eq!(cpu(iv, 5).throttle, Some(2));
    assert_eq!(cpu(iv, 4).throttle, Some(0));
    // package_throttle_count advances 1/s on package 0 only
    assert_eq!(iv.pkgs[0].throttle, Some(1));
    assert_eq!(iv.pkgs[1].throttle, Some(0));
}

#[test]
fn cpuidle_residency_entries_above_and_below() {
    let iv = server();
    // CPU0: busy 20, deepest (C6) 40 → the two shallow states share
    // r = 100 − 20 − 40 = 40: C1E r/2 = 20, C1 the rest = 20.
    // usage/s: C1 1000, C1E 500, C6 200; above = usage/10, below = usage/20.
    let c0 = cpu(iv, 0);
    let names: Vec<&str> = c0.idle.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["POLL", "C1", "C1E", "C6"]);
    let want = [
        // name, pct, entries/s, above/s, below/s, latency, residency
        ("POLL", 0.0, 0.0, 0.0, 0.0, 0, 0),
        ("C1", 20.0, 1000.0, 100.0, 50.0, 2, 2),
        ("C1E", 20.0, 500.0, 50.0, 25.0, 10, 20),
        ("C6", 40.0, 200.0, 20.0, 10.0, 133, 600),
    ];
    for (name, pct, per_s, above, below, lat, res) in want {
        let s = idle(c0, name);
        close(s.pct, pct);
        close(s.per_s, per_s);
        close(s.above_per_s, above);
        close(s.below_per_s, below);
        assert_eq!(
            (s.latency_us, s.residency_us, s.disabled),
            (Some(lat), Some(res), Some(false))
        );
    }
    // CPU2 wakes 50 000 times a second into C1 (its network IRQ storm);
    // busy 40, deep 30 → C1 = C1E = (100 − 40 − 30)/2 = 15 %
    let c2 = cpu(iv, 2);
    close(idle(c2, "C1").per_s, 50_000.0);
    close(idle(c2, "C1").pct, 15.0);
    // CPU1 sleeps: C6 95 %, 20 entries/s
    close(idle(cpu(iv, 1), "C6").pct, 95.0);
    close(idle(cpu(iv, 1), "C6").per_s, 20.0);
}

#[test]
fn interrupt_rates_by_class() {
    let iv = server();
    // CPU2: LOC 250, RES 20, CAL 30, TLB 15, IWI 1, NMI 2, PMI 2;
    // disk queue nvme0q3 300/s and network queue eth0-TxRx-2 50 000/s.
    let c2 = cpu(iv, 2);
    close(c2.loc_per_s, 250.0);
    close(c2.res_per_s, 20.0);
    close(c2.cal_per_s, 30.0);
    close(c2.tlb_per_s, 15.0);
    close(c2.ipi_per_s, 66.0); // RES + CAL + TLB + IWI = 20 + 30 + 15 + 1
    close(c2.nmi_per_s, 2.0);
    close(c2.dev_per_s, 50_300.0); // 300 + 50 000
    close(c2.irq_per_s, 50_620.0); // 250 + 66 + 2 (NMI) + 2 (PMI) + 50 300
    // CPU1 is tickless-idle: 4 ticks/s
    close(cpu(iv, 1).loc_per_s, 4.0);
    close(cpu(iv, 3).res_per_s, 5000.0);
    // the hottest source is eth0-TxRx-2, only on CPU2
    let top = &iv.irqs[0];
    assert_eq!(top.label, "51");
    assert_eq!(top.desc, "IR-PCI-MSI 1048578-edge eth0-TxRx-2");
    close(Some(top.total), 50_000.0);
    close(top.per_cpu[2], 50_000.0);
    close(top.per_cpu[0], 0.0);
    // then RES: CPU3 5000 + 7 CPUs at 20 = 5140; then LOC: 7 CPUs at 250 + CPU1 at 4
    assert_eq!(iv.irqs[1].label, "RES");
    close(Some(iv.irqs[1].total), 5140.0);
    assert_eq!(iv.irqs[2].label, "LOC");
    close(Some(iv.irqs[2].total), 1754.0);
}

#[test]
fn softirq_rates_per_cpu_and_per_vector() {
    let iv = server();
    // CPU0: TIMER 100 + NET_TX 1 + NET_RX 10 + BLOCK 50 + SCHED 40 + RCU 60 = 261
    close(cpu(iv, 0).softirq_per_s, 261.0);
    // CPU1: TIMER 2 instead of 100 → 163
    close(cpu(iv, 1).softirq_per_s, 163.0);
    // CPU2: NET_RX 30 000 instead of 10 → 30 251
    close(cpu(iv, 2).softirq_per_s, 30_251.0);
    // CPU3: SCHED 2000 instead of 40 → 2221
    close(cpu(iv, 3).softirq_per_s, 2221.0);
    // hottest vector: NET_RX = 30 000 + 7·10
    assert_eq!(iv.softirqs[0].label, "NET_RX");
    close(Some(iv.softirqs[0].total), 30_070.0);
}

#[test]
fn proc_stat_splits_the_cpu_time() {
    let iv = server();
    // CPU2 ticks/s (USER_HZ 100): busy 40 = system 10 + irq 8 + softirq 8 + user 14; idle 60
    let t: TimeSplit = cpu(iv, 2).time.unwrap();
    for (got, want) in [
        (t.user, 14.0),
        (t.nice, 0.0),
        (t.system, 10.0),
        (t.idle, 60.0),
        (t.iowait, 0.0),
        (t.irq, 8.0),
        (t.softirq, 8.0),
        (t.steal, 0.0),
    ] {
        close(got, want);
    }
}

#[test]
fn context_switches_and_migrations_come_from_the_perf_table() {
    let iv = server();
    close(cpu(iv, 3).csw_per_s, 20_000.0);
    close(cpu(iv, 3).mig_per_s, 500.0);
    close(cpu(iv, 0).csw_per_s, 200.0);
    close(cpu(iv, 0).mig_per_s, 5.0);
}

// ---------------------------------------------------------------- other flavours

#[test]
fn vm_busy_comes_from_proc_stat_and_shows_steal() {
    let iv = interval_of(Flavor::Vm, 4);
    // no APERF/MPERF, no cpufreq: the nominal clock of /proc/cpuinfo
    assert_eq!(iv.freq_source, Some(FreqSource::Cpuinfo));
    let c0 = cpu(&iv, 0);
    // CPU0 ticks/s: user 15, system 5, steal 3, idle 100 − 20 − 3 = 77
    let t = c0.time.unwrap();
    close(t.user, 15.0);
    close(t.system, 5.0);
    close(t.steal, 3.0);
    close(t.idle, 77.0);
    // Busy% = 100 − idle − iowait − steal = 20: stolen time is the
    // hypervisor running something else, not this vCPU
    close(c0.busy_pct, 20.0);
    // Bzy_MHz = cpuinfo "cpu MHz" 2450; Avg = 2450·20/100 = 490
    close(c0.bzy_mhz, 2450.0);
    close(c0.avg_mhz, 490.0);
    // TSC_MHz from perf msr/tsc: 2450e6 ticks in 1 s
    close(c0.tsc_mhz, 2450.0);
    // haltpoll: POLL takes what the deep state leaves: 100 − 20 − 3 − 40 = 37 %
    close(idle(c0, "POLL").pct, 37.0);
    close(idle(c0, "haltpoll idle").pct, 40.0);
    // CPU2: 323 named (250 + 20 + 30 + 15 + 1 + 2 + 2 + HYP 3) + virtio1-req.2 300
    // + virtio2-input.2 50 000
    close(cpu(&iv, 2).irq_per_s, 50_623.0);
    assert!(
        iv.pkgs.is_empty(),
        "a VM has no RAPL and no package counters"
    );
}

#[test]
fn laptop_frequency_and_cstates_from_perf_pmus() {
    let iv = laptop();
    assert_eq!(iv.freq_source, Some(FreqSource::PerfMsr));
    // CPU0: busy 20 %, base 1900: Avg = 1900·0.2 = 380, Bzy 1900
    let c0 = cpu(iv, 0);
    close(c0.avg_mhz, 380.0);
    close(c0.busy_pct, 20.0);
    close(c0.bzy_mhz, 1900.0);
    close(c0.tsc_mhz, 1900.0);
    // cstate_core: C3 5, C6 10, C7 = deep 40; C1 = 100 − 20 − 5 − 10 − 40 = 25
    close_pairs(
        &c0.hw_cstates,
        &[("C1", 25.0), ("C3", 5.0), ("C6", 10.0), ("C7", 40.0)],
    );
    // CPU1: C3 0, C6 4, C7 95 → C1 = 100 − 1 − 0 − 4 − 95 = 0
    close_pairs(
        &cpu(iv, 1).hw_cstates,
        &[("C1", 0.0), ("C3", 0.0), ("C6", 4.0), ("C7", 95.0)],
    );
    // cstate_pkg on CPU0, against CPU0's perf TSC
    close_pairs(
        &iv.pkgs[0].cstates,
        &[
            ("PC2", 20.0),
            ("PC3", 5.0),
            ("PC6", 10.0),
            ("PC7", 5.0),
            ("PC8", 15.0),
            ("PC9", 0.0),
            ("PC10", 30.0),
        ],
    );
    // msr/smi through perf: one per second
    assert_eq!(c0.smi, Some(1));
    // nine intel_idle states; C10 is the deep one: 40 %
    assert_eq!(c0.idle.len(), 9);
    close(idle(c0, "C10").pct, 40.0);
    // the 3 shallow states besides C1 get r/4 of r = 100 − 20 − 40 = 40: 10 % each
    close(idle(c0, "C8").pct, 10.0);
}

#[test]
fn laptop_powercap_wraps_at_max_energy_range() {
    let iv = laptop();
    // package-0 starts at max − 5e6 µJ (max = 262 143 328 850) and uses 15e6 µJ in 1 s:
    // it reads (max − 5e6 + 15e6) mod (max + 1) = 9 999 999;
    // Δ = max − (max − 5e6) + 9 999 999 + 1 = 15e6 µJ → 15 W
    close_pairs(
        &iv.pkgs[0].watts,
        &[
            ("pkg", 15.0),
            ("core", 8.0),
            ("uncore", 1.0),
            ("dram", 2.0),
            ("psys", 25.0),
        ],
    );
}

#[test]
fn laptop_temperature_comes_from_coretemp_by_core_id() {
    let iv = laptop();
    // at instant 1 coretemp "Core k" reads 45 + 2k + 1 °C; CPU c has core_id c % 4
    close(cpu(iv, 0).temp_c, 46.0);
    close(cpu(iv, 5).temp_c, 48.0);
    close(cpu(iv, 3).temp_c, 52.0);
    assert_eq!(cpu(iv, 5).throttle, Some(2));
}

#[test]
fn amd_server_rapl_package_and_per_core_watts() {
    let iv = interval_of(Flavor::AmdServer, 8);
    assert_eq!(iv.freq_source, Some(FreqSource::DevMsr));
    // no base_frequency and no "@ x GHz" in the model name: Bzy = TSC_MHz·ΔAPERF/ΔMPERF
    // CPU3: busy 60, clock 2000 + 300 = 2300 → Avg 1380, Bzy 2000·1380/1200 = 2300
    close(cpu(&iv, 3).avg_mhz, 1380.0);
    close(cpu(&iv, 3).bzy_mhz, 2300.0);
    close(cpu(&iv, 3).tsc_mhz, 2000.0);
    // AMD has no core residency MSRs: no hardware C-states, and no SMI count
    assert!(cpu(&iv, 0).hw_cstates.is_empty());
    assert_eq!(cpu(&iv, 0).smi, None);
    // unit 0xC0010299 = 0xA1003: energy bits 0x10 → 2^-16 J.
    // package p: (180 + 20p)·2^16 counts/s → 180 W and 200 W; each core 3·2^16 → 3 W
    close(watts(&iv.pkgs[0], "pkg"), 180.0);
    close(watts(&iv.pkgs[1], "pkg"), 200.0);
    assert!(
        iv.cpus
            .iter()
            .all(|c| c.core_watt.is_some_and(|w| (w - 3.0).abs() < 1e-9))
    );
    // k10temp Tctl of the CPU's package at instant 1: 60 + 2p + 1
    close(cpu(&iv, 0).temp_c, 61.0);
    close(cpu(&iv, 2).temp_c, 63.0);
    assert_eq!(cpu(&iv, 0).throttle, None);
}

#[test]
fn arm64_ipis_and_an_arch_timer_count_that_wraps_at_2_pow_32() {
    let iv = interval_of(Flavor::Arm64, 8);
    assert_eq!(iv.freq_source, Some(FreqSource::Cpufreq));
    // CPU0's arch_timer count goes from 2^32 − 100 to 150: 250 ticks
    close(cpu(&iv, 0).loc_per_s, 250.0);
    close(cpu(&iv, 1).loc_per_s, 4.0);
    // IPI0 "Rescheduling" is RES; IPI1..6 are the other IPI classes:
    // CPU0 = 20 + 30 + 0 + 0 + 0 + IRQ work 1 + 0 = 51
    close(cpu(&iv, 0).res_per_s, 20.0);
    close(cpu(&iv, 3).res_per_s, 5000.0);
    close(cpu(&iv, 0).ipi_per_s, 51.0);
    // no NMI row on arm64: unknown, not 0
    assert_eq!(cpu(&iv, 0).nmi_per_s, None);
    // all: 250 + 51 + nvme0q1 300 + eth0-Tx-Rx-0 100 (+ Err 0) = 701
    close(cpu(&iv, 0).irq_per_s, 701.0);
    close(cpu(&iv, 0).dev_per_s, 400.0);
    // frequency: scaling_cur_freq 2000 MHz, Busy% from /proc/stat 20 → Avg 400
    close(cpu(&iv, 0).bzy_mhz, 2000.0);
    close(cpu(&iv, 0).busy_pct, 20.0);
    close(cpu(&iv, 0).avg_mhz, 400.0);
    assert_eq!(cpu(&iv, 0).tsc_mhz, None);
    close(idle(cpu(&iv, 1), "cpu-sleep").pct, 95.0);
}

// ---------------------------------------------------------------- edge cases

#[test]
fn interrupt_rows_with_fewer_columns_than_cpus() {
    // tests/fixtures/interrupts-short-rows: 4 CPUs; `FIQ:` has no value at
    // all, `ERR:`/`MIS:` one; ERR goes 3 → 5, LOC +250, RES +5 per CPU.
    let (ivs, _) = replay(&fixture("interrupts-short-rows"));
    let iv = &ivs[0];
    let err = iv.irqs.iter().find(|r| r.label == "ERR").unwrap();
    assert_eq!(err.per_cpu.len(), 4);
    close(err.per_cpu[0], 2.0);
    assert_eq!(&err.per_cpu[1..], &[None, None, None]);
    let fiq = iv.irqs.iter().find(|r| r.label == "FIQ").unwrap();
    assert_eq!(fiq.per_cpu, [None, None, None, None]);
    assert_eq!(fiq.desc, "usb_fiq");
    // ERR's one value sits in column 0, so CPU0 counts it (PCP's
    // kernel.percpu.intr does the same): 250 + 5 + 2
    close(cpu(iv, 0).irq_per_s, 257.0);
    close(cpu(iv, 3).irq_per_s, 255.0);
}

#[test]
fn cpu_that_goes_offline_leaves_the_interval() {
    // tests/fixtures/cpu-goes-offline: CPU3 is unplugged between the instants
    let (ivs, _) = replay(&fixture("cpu-goes-offline"));
    let iv = &ivs[0];
    let cpus: Vec<u32> = iv.cpus.iter().map(|c| c.cpu).collect();
    assert_eq!(cpus, [0, 1, 2]);
    assert_eq!(iv.gone, [3]);
    // the others keep their rates: +20 user, +5 system, +75 idle ticks of 100
    let t = cpu(iv, 1).time.unwrap();
    close(t.user, 20.0);
    close(t.idle, 75.0);
    close(cpu(iv, 1).busy_pct, 25.0);
    close(cpu(iv, 2).loc_per_s, 250.0);
    // /proc/softirqs lists possible CPUs, so it still has CPU3's column:
    // the per-source rates cover the CPUs of the interval only
    let timer = iv.softirqs.iter().find(|r| r.label == "TIMER").unwrap();
    assert_eq!(timer.per_cpu.len(), 3);
    close(Some(timer.total), 300.0);
}

#[test]
fn cpu_that_comes_online_has_no_rates_yet() {
    // tests/fixtures/cpu-comes-online: CPU3 is plugged in between the instants
    let (ivs, _) = replay(&fixture("cpu-comes-online"));
    let iv = &ivs[0];
    let c3 = cpu(iv, 3);
    assert!(c3.new);
    assert_eq!(c3.time, None);
    assert_eq!(c3.busy_pct, None);
    assert_eq!(c3.loc_per_s, None);
    assert_eq!(c3.softirq_per_s, None);
    assert!(iv.gone.is_empty());
    // the CPUs that were there all along are unaffected
    assert!(!cpu(iv, 0).new);
    close(cpu(iv, 0).loc_per_s, 250.0);
    close(cpu(iv, 0).busy_pct, 25.0);
    // CPU3's column in the interrupt table is unknown, not a count since boot
    let loc = iv.irqs.iter().find(|r| r.label == "LOC").unwrap();
    assert_eq!(loc.per_cpu[3], None);
    close(Some(loc.total), 750.0);
}

#[test]
fn interval_of_zero_length_has_every_rate_unknown() {
    // interval_ms = 0: both instants carry the same clock and counters
    let mut spec = Spec::new(Flavor::IntelServer, 8);
    spec.interval_ms = 0;
    let dir = capture(&spec);
    let (ivs, _) = replay(dir.path());
    let iv = &ivs[0];
    close(Some(iv.dt_s), 0.0);
    assert_eq!(iv.cpus.len(), 8);
    for c in &iv.cpus {
        let json = serde_json::to_value(c).unwrap();
        for (key, value) in json.as_object().unwrap() {
            if ["cpu", "core", "package", "new"].contains(&key.as_str()) {
                continue;
            }
            let empty = value.is_null() || value.as_array().is_some_and(Vec::is_empty);
            assert!(
                empty,
                "cpu {}: {key} = {value} over an empty interval",
                c.cpu
            );
        }
    }
    assert!(iv.irqs.is_empty() && iv.softirqs.is_empty() && iv.pkgs.is_empty());
}

#[test]
fn counters_that_went_backwards_are_unknown_not_negative_or_huge() {
    let dir = capture(&Spec::new(Flavor::IntelServer, 8));
    let next = dir.path().join("0001");
    // APERF of CPU0 reset to 16 (another tool wrote it)
    edit(&next.join("noisetop/msr"), |t| {
        replace_line(&t, "0 0xe8 ", "0 0xe8 0x10")
    });
    // package 0 RAPL 1000 counts below instant 0: a 32-bit "wrap" of
    // 2^32 − 1000 counts = 262 kJ in 1 s, beyond any package
    let e0 = std::fs::read_to_string(dir.path().join("0000/noisetop/msr")).unwrap();
    let pkg0 = e0.lines().find(|l| l.starts_with("0 0x611 ")).unwrap();
    let v = u64::from_str_radix(pkg0.trim_start_matches("0 0x611 0x"), 16).unwrap();
    edit(&next.join("noisetop/msr"), |t| {
        replace_line(&t, "0 0x611 ", &format!("0 0x611 {:#x}", v - 1000))
    });
    // CPU3's context switch count reset
    edit(&next.join("noisetop/perf"), |t| {
        let line = t.lines().find(|l| l.starts_with("3 ")).unwrap().to_string();
        let fixed = line.replace(
            "software/context-switches=",
            "software/context-switches=5 x=",
        );
        let fixed: String = fixed
            .split(' ')
            .filter(|w| !w.starts_with("x="))
            .collect::<Vec<_>>()
            .join(" ");
        replace_line(&t, "3 ", &fixed)
    });
    // /proc/stat user ticks of CPU1 went back to 0
    edit(&next.join("proc/stat"), |t| {
        let line = t
            .lines()
            .find(|l| l.starts_with("cpu1 "))
            .unwrap()
            .to_string();
        let mut w: Vec<&str> = line.split(' ').collect();
        w[1] = "0";
        replace_line(&t, "cpu1 ", &w.join(" "))
    });
    // cpuidle C6 time of CPU4 went back to 0
    std::fs::write(
        next.join("sys/devices/system/cpu/cpu4/cpuidle/state3/time"),
        "0\n",
    )
    .unwrap();

    let (ivs, _) = replay(dir.path());
    let iv = &ivs[0];
    let c0 = cpu(iv, 0);
    assert_eq!(c0.avg_mhz, None);
    assert_eq!(c0.bzy_mhz, None);
    close(c0.busy_pct, 20.0); // MPERF and TSC are fine
    assert_eq!(watts(&iv.pkgs[0], "pkg"), None);
    close(watts(&iv.pkgs[1], "pkg"), 120.0);
    assert_eq!(cpu(iv, 3).csw_per_s, None);
    close(cpu(iv, 3).mig_per_s, 500.0);
    assert_eq!(cpu(iv, 1).time, None);
    close(cpu(iv, 0).time.unwrap().user, 15.0);
    let c6 = idle(cpu(iv, 4), "C6");
    assert_eq!(c6.pct, None);
    close(c6.per_s, 200.0);
}

#[test]
fn interrupt_count_that_went_backwards_is_unknown() {
    let dir = capture(&Spec::new(Flavor::IntelServer, 8));
    // LOC of every CPU 10 lower than at instant 0: a wrap would be 2^32 − 10
    // interrupts in one second, which no CPU takes
    let first = std::fs::read_to_string(dir.path().join("0000/proc/interrupts")).unwrap();
    let loc = first.lines().find(|l| l.starts_with("LOC:")).unwrap();
    let lower: Vec<String> = loc
        .split_whitespace()
        .map(|w| {
            w.parse::<u64>()
                .map_or(w.to_string(), |v| (v - 10).to_string())
        })
        .collect();
    edit(&dir.path().join("0001/proc/interrupts"), |t| {
        replace_line(&t, "LOC:", &lower.join(" "))
    });
    let (ivs, _) = replay(dir.path());
    assert_eq!(cpu(&ivs[0], 0).loc_per_s, None);
}

fn status(statuses: &[Status], m: Metric) -> &Status {
    statuses.iter().find(|s| s.metric == m).unwrap()
}

#[test]
fn broken_kernel_files_make_their_metric_unavailable_with_a_reason() {
    let dir = capture(&Spec::new(Flavor::IntelServer, 8));
    let next = dir.path().join("0001");
    let cpu_dir = next.join("sys/devices/system/cpu");
    // garbage: no CPU header
    std::fs::write(next.join("proc/interrupts"), "garbage without a header\n").unwrap();
    // truncated: cut in the middle of the NET_RX row
    edit(&next.join("proc/softirqs"), |t| {
        let at = t.find("NET_RX:").unwrap() + 20;
        t[..at].to_string()
    });
    // unreadable: /proc/stat is a directory
    std::fs::remove_file(next.join("proc/stat")).unwrap();
    std::fs::create_dir(next.join("proc/stat")).unwrap();
    // garbage in one cpuidle counter of CPU2
    std::fs::write(cpu_dir.join("cpu2/cpuidle/state1/usage"), "garbage\n").unwrap();
    // empty throttle count of CPU5
    std::fs::write(
        cpu_dir.join("cpu5/thermal_throttle/core_throttle_count"),
        "",
    )
    .unwrap();

    let (ivs, statuses) = replay(dir.path());
    let iv = &ivs[0];
    // interrupts: unknown everywhere, with the parser's reason in the footer
    assert!(
        iv.cpus
            .iter()
            .all(|c| c.irq_per_s.is_none() && c.loc_per_s.is_none())
    );
    assert!(iv.irqs.is_empty());
    let s = status(&statuses, Metric::Interrupts);
    assert_eq!(s.rung, None);
    assert!(
        s.note.as_deref().unwrap().contains("/proc/interrupts"),
        "{s:?}"
    );
    // softirqs: the cut-off row is dropped, the rows before it still count:
    // CPU0 = HI 0 + TIMER 100 + NET_TX 1
    close(cpu(iv, 0).softirq_per_s, 101.0);
    assert_eq!(iv.softirqs.len(), 3);
    // /proc/stat: time split unknown, the reason says why
    assert!(iv.cpus.iter().all(|c| c.time.is_none()));
    let s = status(&statuses, Metric::CpuTime);
    assert!(
        s.note.as_deref().unwrap().contains("is a directory"),
        "{s:?}"
    );
    // cpuidle: CPU2's states are listed but unknown; CPU0's are fine
    assert!(
        cpu(iv, 2)
            .idle
            .iter()
            .all(|s| s.pct.is_none() && s.per_s.is_none())
    );
    close(idle(cpu(iv, 0), "C1").pct, 20.0);
    // throttle: unknown on CPU5 only
    assert_eq!(cpu(iv, 5).throttle, None);
    assert_eq!(cpu(iv, 4).throttle, Some(0));
    // the MSR figures do not depend on any of it
    close(cpu(iv, 0).avg_mhz, 420.0);
    close(cpu(iv, 2).busy_pct, 40.0);
}

#[test]
fn a_huge_kernel_file_is_refused_with_a_reason_not_read_into_memory() {
    let dir = capture(&Spec::new(Flavor::Vm, 2));
    // 65 MiB of zeros (sparse: no disk space) where /proc/softirqs was
    let f = std::fs::File::create(dir.path().join("0001/proc/softirqs")).unwrap();
    f.set_len(65 << 20).unwrap();
    let (ivs, statuses) = replay(dir.path());
    assert!(ivs[0].softirqs.is_empty());
    assert!(ivs[0].cpus.iter().all(|c| c.softirq_per_s.is_none()));
    let note = status(&statuses, Metric::Softirqs).note.clone().unwrap();
    assert!(note.contains("larger than 67108864 bytes"), "{note}");
    // the rest of the instant is read as usual
    close(cpu(&ivs[0], 1).loc_per_s, 4.0);
}

#[test]
fn broken_noisetop_tables_fail_the_instant_with_a_reason() {
    let dir = capture(&Spec {
        instants: 3,
        ..Spec::new(Flavor::IntelServer, 4)
    });
    std::fs::write(
        dir.path().join("0001/noisetop/msr"),
        "# header\n0 0xe8 zzz\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("0002/noisetop/clock"), "12\n").unwrap();
    let (instants, mut engine) = open_replay(dir.path()).unwrap();
    assert!(engine.step().is_none());
    let e = advance(&mut engine, &instants[1]).unwrap_err().to_string();
    assert!(e.contains("msr table") && e.contains("line 2"), "{e}");
    let e = advance(&mut engine, &instants[2]).unwrap_err().to_string();
    assert!(e.contains("clock") && e.contains("two integers"), "{e}");
}

// ---------------------------------------------------------------- scale

#[test]
fn tree_of_256_cpus_is_read_fully() {
    let iv = interval_of(Flavor::IntelServer, 256);
    assert_eq!(iv.cpus.len(), 256);
    assert!(
        iv.cpus
            .iter()
            .all(|c| c.avg_mhz.is_some() && c.idle.len() == 4 && c.irq_per_s.is_some())
    );
    // CPU255: busy 5·(255 % 4 + 1) = 20, clock 2100 + 100·(255 % 8) = 2800 → Avg 560
    close(cpu(&iv, 255).avg_mhz, 560.0);
    close(cpu(&iv, 255).bzy_mhz, 2800.0);
    // core 255 % 128 = 127 sits on package 127 / 64 = 1 as core_id 63
    assert_eq!(
        (cpu(&iv, 255).package, cpu(&iv, 255).core),
        (Some(1), Some(63))
    );
    close(cpu(&iv, 255).temp_c, 40.0 + 63.0 % 16.0);
    assert_eq!(iv.pkgs.len(), 2);
}

#[test]
fn tree_of_1024_cpus_is_read_fully() {
    let iv = interval_of(Flavor::Vm, 1024);
    assert_eq!(iv.cpus.len(), 1024);
    assert!(
        iv.cpus
            .iter()
            .all(|c| c.busy_pct.is_some() && c.csw_per_s.is_some())
    );
    // CPU1023: busy 20 (steal 3 is not busy); cpuinfo clock 2450 + 700 → Avg 3150·0.20 = 630
    close(cpu(&iv, 1023).avg_mhz, 630.0);
    // no queue interrupts past CPU7: the named rows only,
    // 250 + 20 + 30 + 15 + 1 + 2 + 2 + HYP 3 = 323
    close(cpu(&iv, 1023).irq_per_s, 323.0);
    let loc = iv.irqs.iter().find(|r| r.label == "LOC").unwrap();
    assert_eq!(loc.per_cpu.len(), 1024);
    // 1023 CPUs at 250 and CPU1 at 4
    close(Some(loc.total), 1023.0 * 250.0 + 4.0);
}

#[test]
fn per_cpu_files_past_the_budget_are_read_in_rounds_over_each_cpus_own_window() {
    // 8 CPUs × 17 files (POLL, C1, C1E, C6 × time/usage/above/below, and
    // core_throttle_count) = 136; a budget of 34 makes 4 rounds: sample s
    // reads the CPUs at positions s % 4 and s % 4 + 4
    let dir = capture(&Spec {
        instants: 6,
        ..Spec::new(Flavor::IntelServer, 8)
    });
    noisetop::os::capture::write_budget(&dir.path().join("0000"), 34, &[]).unwrap();
    let (ivs, statuses) = replay(dir.path());
    assert_eq!(ivs.len(), 5);
    // interval 4 ends at sample 4, which read CPUs 0 and 4 for the second
    // time (samples 0 and 4): their figures cover those 4 seconds
    let iv = &ivs[3];
    assert_eq!(cpu(iv, 0).window_s, Some(4.0));
    close(idle(cpu(iv, 0), "C6").pct, 40.0);
    close(idle(cpu(iv, 0), "C6").per_s, 200.0);
    close(idle(cpu(iv, 0), "C1").above_per_s, 100.0);
    close(idle(cpu(iv, 0), "C1E").below_per_s, 25.0);
    assert_eq!(cpu(iv, 4).throttle, Some(0));
    // CPU1 was read once (sample 1): nothing to compare with yet
    assert_eq!(cpu(iv, 1).window_s, None);
    assert_eq!(idle(cpu(iv, 1), "C6").pct, None);
    assert_eq!(cpu(iv, 1).throttle, None);
    // the last interval adds CPUs 1 and 5 (samples 1 and 5); CPU0's
    // figures stand until its next read
    let iv = &ivs[4];
    assert_eq!(cpu(iv, 1).window_s, Some(4.0));
    close(idle(cpu(iv, 1), "C6").pct, 95.0);
    close(idle(cpu(iv, 1), "C6").per_s, 20.0);
    // CPU5's core_throttle_count advances 2/s: 8 over its 4 s window
    assert_eq!(cpu(iv, 5).throttle, Some(8));
    assert_eq!(cpu(iv, 0).window_s, Some(4.0));
    close(idle(cpu(iv, 0), "C6").pct, 40.0);
    // CPUs 2, 3, 6, 7 were read once: unknown, not 0
    for n in [2, 3, 6, 7] {
        assert_eq!(cpu(iv, n).window_s, None, "cpu {n}");
        assert!(cpu(iv, n).idle.iter().all(|s| s.pct.is_none()), "cpu {n}");
    }
    // everything else is still per interval: package throttle, IRQs
    assert_eq!(iv.pkgs[0].throttle, Some(1));
    close(cpu(iv, 2).loc_per_s, 250.0);
    let note = status(&statuses, Metric::OsCstates).note.clone().unwrap();
    assert!(
        note.contains("17 files a CPU, read in 4 rounds to stay within --budget 34"),
        "{note}"
    );
}

#[test]
fn a_budget_that_fits_reads_every_cpu_every_sample() {
    let dir = capture(&Spec {
        instants: 3,
        ..Spec::new(Flavor::IntelServer, 8)
    });
    noisetop::os::capture::write_budget(&dir.path().join("0000"), 136, &[]).unwrap();
    let (ivs, statuses) = replay(dir.path());
    for iv in &ivs {
        assert!(iv.cpus.iter().all(|c| c.window_s.is_none()));
        close(idle(cpu(iv, 1), "C6").pct, 95.0);
        assert_eq!(cpu(iv, 5).throttle, Some(2));
    }
    let note = status(&statuses, Metric::OsCstates).note.clone();
    assert!(
        note.as_ref().is_none_or(|n| !n.contains("rounds")),
        "{note:?}"
    );
}

#[test]
fn the_default_budget_grows_with_the_machine() {
    use noisetop::sample::sampler::{DEFAULT_BUDGET_MIN, default_budget};
    assert_eq!(default_budget(2), DEFAULT_BUDGET_MIN);
    assert_eq!(default_budget(64), 448);
    assert_eq!(default_budget(1024), 1024);
    // a capture without a recorded budget replays with the default: a
    // 64-CPU server's 64 × 17 files take three rounds of at most 448, a
    // 26-CPU one (442 files) one
    for (cpus, rounds) in [(64, 3), (26, 1), (27, 2)] {
        let dir = capture(&Spec {
            instants: 1,
            ..Spec::new(Flavor::IntelServer, cpus)
        });
        let (_, mut engine) = open_replay(dir.path()).unwrap();
        assert_eq!(engine.sampler.budget(), 448);
        assert_eq!(engine.sampler.rounds(), rounds, "{cpus} CPUs");
        // a round reads whole CPUs: less than one CPU's files reads one
        engine.sampler.set_budget(1);
        assert_eq!(engine.sampler.rounds(), cpus as usize);
    }
}

#[test]
fn watched_cpus_are_read_every_sample_whatever_the_round() {
    let dir = capture(&Spec {
        instants: 3,
        ..Spec::new(Flavor::IntelServer, 8)
    });
    noisetop::os::capture::write_budget(&dir.path().join("0000"), 34, &[2]).unwrap();
    let (ivs, _) = replay(dir.path());
    for iv in &ivs {
        // CPU2 (watched) has one-second figures from the first interval on
        assert_eq!(cpu(iv, 2).window_s, Some(1.0));
        close(idle(cpu(iv, 2), "C1").per_s, 50_000.0);
        close(idle(cpu(iv, 2), "C1").pct, 15.0);
        // CPU3 is read by round 3 only, which none of the three samples was
        assert_eq!(idle(cpu(iv, 3), "C6").pct, None);
    }
}

/// A server whose `THERM_STATUS` reads but whose `TjMax` (0x1A2) does not: the
/// readout is an offset below an unknown `TjMax`, so the sampler reads no
/// thermal MSR and the status says why instead of naming a rung whose
/// figures would all be unknown.
#[test]
fn a_thermal_msr_without_tjmax_is_not_called_the_temperature_source() {
    let dir = capture(&Spec::new(Flavor::IntelServer, 8));
    let mut changed = 0;
    for inst in std::fs::read_dir(dir.path()).unwrap() {
        let table = inst.unwrap().path().join("noisetop/msr");
        let Ok(text) = std::fs::read_to_string(&table) else {
            continue;
        };
        let text: String = text
            .lines()
            .map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
                [cpu, "0x1a2", _] => format!("{cpu} 0x1a2 error not supported on this CPU\n"),
                _ => format!("{l}\n"),
            })
            .collect();
        std::fs::write(&table, text).unwrap();
        changed += 1;
    }
    assert_eq!(changed, 2, "two instants");
    let (ivs, statuses) = replay(dir.path());
    let temp = statuses
        .iter()
        .find(|s| s.metric == Metric::Temperature)
        .unwrap();
    assert_ne!(
        temp.rung,
        Some(noisetop::model::snapshot::Rung::Msr),
        "{temp:?}"
    );
    assert!(ivs[0].cpus.iter().all(|c| c.temp_c.is_none()));
    assert!(ivs[0].pkgs.iter().all(|p| p.temp_c.is_none()));
    assert_eq!(temp.rung, None, "the server capture has no hwmon: {temp:?}");
    assert!(
        temp.note
            .as_deref()
            .is_some_and(|n| n.contains("IA32_THERM_STATUS without TjMax")),
        "{temp:?}"
    );
    // the same capture untouched: THERM_STATUS with TjMax is the rung
    let (_, statuses) = replay(capture(&Spec::new(Flavor::IntelServer, 8)).path());
    let temp = statuses
        .iter()
        .find(|s| s.metric == Metric::Temperature)
        .unwrap();
    assert_eq!(
        temp.rung,
        Some(noisetop::model::snapshot::Rung::Msr),
        "{temp:?}"
    );
}

// ------------------------------------------------------------ IPC

#[test]
fn ipc_is_instructions_over_cycles_where_perf_gives_both() {
    // the laptop's CPU c: cycles `busy MHz·10⁶·b/100` per second,
    // instructions `cycles·(c%4+1)/2`; CPU 2 at 2100 MHz and 40 % busy
    let iv = laptop();
    let c2 = cpu(iv, 2);
    assert_eq!(c2.cycles, Some(840_000_000));
    assert_eq!(c2.instructions, Some(1_260_000_000));
    assert_eq!(c2.ipc, Some(1.5));
    let ipcs: Vec<Option<f64>> = iv.cpus.iter().map(|r| r.ipc).collect();
    let want = [0.5, 1.0, 1.5, 2.0, 0.5, 1.0, 1.5, 2.0].map(Some);
    assert_eq!(ipcs, want);
    let table = noisetop::output::batch::table(iv, Some(&[2]));
    let mut lines = table.lines();
    let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let row: Vec<&str> = lines.nth(1).unwrap().split_whitespace().collect();
    let at = head
        .iter()
        .position(|h| *h == "IPC")
        .expect("an IPC column");
    assert_eq!((row[0], row[at]), ("2", "1.50"));
}

#[test]
fn ipc_without_a_core_pmu_is_unknown_with_the_reason() {
    let dir = capture(&Spec::new(Flavor::Vm, 2));
    let (ivs, statuses) = replay(dir.path());
    assert!(ivs[0].cpus.iter().all(|r| r.ipc.is_none()));
    let st = statuses.iter().find(|s| s.metric == Metric::Ipc).unwrap();
    assert_eq!((st.rung, st.source.as_deref()), (None, None));
    assert_eq!(
        st.note.as_deref(),
        Some("no hardware PMU: perf has no cycles/instructions here (VM?)")
    );
    let table = noisetop::output::batch::table(&ivs[0], None);
    let head: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    let at = head
        .iter()
        .position(|h| *h == "IPC")
        .expect("an IPC column");
    for line in table.lines().skip(1) {
        assert_eq!(line.split_whitespace().nth(at), Some("-"), "{line}");
    }
    let footer = noisetop::output::batch::footer(&statuses);
    assert!(
        footer.contains(
            "# IPC: unavailable: no hardware PMU: perf has no cycles/instructions here (VM?)\n"
        ),
        "{footer}"
    );
}
