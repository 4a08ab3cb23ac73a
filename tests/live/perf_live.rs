//! Live perf counter tests on the machine running them: context switches,
//! the msr PMU's tsc, the reasons given for events this machine lacks, and
//! the permission reason an unprivileged user gets.
//!
//! perf needs root (or `CAP_PERFMON` / a low `perf_event_paranoid`) to count all
//! tasks of a CPU; as another user the tests that open counters skip.

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use noisetop::base::cpulist;
use noisetop::os::fs::{Base, Fs, Roots};
use noisetop::os::perf::{PERMISSION_REASON, PerfCounts, PerfEvent, PerfSet, pmu_cpumask};

const SYS: &str = "/sys";
const MSR_EVENTS: &str = "/sys/bus/event_source/devices/msr/events";

fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

fn online_cpus(fs: &mut Fs) -> Vec<u32> {
    let text = fs.read(Base::Sys, "devices/system/cpu/online").unwrap();
    cpulist::parse(text).unwrap()
}

fn package_cpus(fs: &mut Fs) -> Vec<u32> {
    pmu_cpumask(fs, "power")
        .or_else(|_| pmu_cpumask(fs, "cstate_pkg"))
        .unwrap_or_default()
}

fn paranoid(fs: &mut Fs) -> Option<i64> {
    fs.read_i64(Base::Proc, "sys/kernel/perf_event_paranoid")
        .ok()
}

/// Sleeps and yields for `d`, so the scheduler switches tasks on some CPU.
fn churn(d: Duration) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let end = Instant::now() + d;
        while Instant::now() < end {
            std::thread::sleep(Duration::from_micros(500));
            std::thread::yield_now();
        }
    })
}

fn get(counts: &[PerfCounts], cpu: u32, e: PerfEvent) -> Option<u64> {
    counts.iter().find(|c| c.cpu == cpu)?.get(e)
}

/// The TSC rate /proc/cpuinfo implies, in Hz, when its "cpu MHz" is the
/// TSC-calibrated `cpu_khz`: true when the CPU lacks the `aperfmperf` flag
/// (VMs). With the flag, "cpu MHz" is the current clock, not the TSC.
fn cpuinfo_tsc_hz(fs: &mut Fs) -> Option<f64> {
    let text = fs.read(Base::Proc, "cpuinfo").ok()?;
    let flags = text.lines().find(|l| l.starts_with("flags"))?;
    if flags.split_whitespace().any(|f| f == "aperfmperf") {
        return None;
    }
    let mhz = text.lines().find(|l| l.starts_with("cpu MHz"))?;
    let mhz: f64 = mhz.split(':').nth(1)?.trim().parse().ok()?;
    Some(mhz * 1e6)
}

#[test]
fn counts_context_switches_and_tsc_per_cpu() {
    let _turn = crate::turn::take();
    if !is_root() {
        eprintln!("not root: perf needs root to count all tasks per CPU: skipped");
        return;
    }
    let mut fs = Fs::new(Roots::default());
    let cpus = online_cpus(&mut fs);
    let (mut set, failed) = PerfSet::open(&cpus, &package_cpus(&mut fs), Path::new(SYS));
    eprintln!(
        "opened {:?}\nfailed {failed:#?}\nnotes {:#?}",
        set.opened(),
        set.notes()
    );
    for &cpu in &cpus {
        assert!(
            set.opened().contains(&(cpu, PerfEvent::ContextSwitches)),
            "cpu {cpu}"
        );
        assert!(
            set.opened().contains(&(cpu, PerfEvent::Migrations)),
            "cpu {cpu}"
        );
    }
    let worker = churn(Duration::from_millis(350));
    std::thread::sleep(Duration::from_millis(20));
    let first = set.read();
    std::thread::sleep(Duration::from_millis(200));
    let second = set.read();
    worker.join().unwrap();
    assert!(set.read_errors().is_empty(), "{:?}", set.read_errors());
    let cpus_of = |c: &[PerfCounts]| c.iter().map(|x| x.cpu).collect::<Vec<_>>();
    assert_eq!(cpus_of(&first), cpus);
    assert_eq!(cpus_of(&second), cpus);

    // Every counter here only counts up; none may go backwards.
    for (a, b) in first.iter().zip(&second) {
        assert!(b.time_enabled_ns > a.time_enabled_ns, "cpu {}", a.cpu);
        for (e, v) in &a.values {
            let now = b
                .get(*e)
                .unwrap_or_else(|| panic!("cpu {} lost {e}", a.cpu));
            assert!(now >= *v, "cpu {} {e} went backwards: {v} -> {now}", a.cpu);
        }
    }
    let switched: Vec<u64> = cpus
        .iter()
        .map(|&c| {
            get(&second, c, PerfEvent::ContextSwitches).unwrap()
                - get(&first, c, PerfEvent::ContextSwitches).unwrap()
        })
        .collect();
    eprintln!("context switches per CPU in 200 ms: {switched:?}");
    assert!(switched.iter().any(|&n| n > 0), "{switched:?}");

    if Path::new(MSR_EVENTS).join("tsc").exists() {
        check_tsc_rate(&mut fs, &cpus, &first, &second);
    } else {
        assert!(failed.iter().any(|(e, _)| *e == PerfEvent::Tsc));
    }
}

fn check_tsc_rate(fs: &mut Fs, cpus: &[u32], first: &[PerfCounts], second: &[PerfCounts]) {
    let expected = cpuinfo_tsc_hz(fs);
    for (&cpu, (a, b)) in cpus.iter().zip(first.iter().zip(second)) {
        let ticks = b.get(PerfEvent::Tsc).unwrap() - a.get(PerfEvent::Tsc).unwrap();
        let secs = (b.time_enabled_ns - a.time_enabled_ns) as f64 / 1e9;
        let hz = ticks as f64 / secs;
        eprintln!("cpu {cpu}: msr/tsc {hz:.0} Hz, cpuinfo implies {expected:?}");
        match expected {
            Some(want) => assert!(
                (hz - want).abs() / want < 0.10,
                "cpu {cpu}: tsc {hz} Hz vs cpuinfo {want} Hz"
            ),
            None => assert!(hz > 100e6 && hz < 10e9, "cpu {cpu}: tsc {hz} Hz"),
        }
    }
}

/// Where the in-kernel programs count switches, perf's software counters
/// are not opened, and a CPU's group can hold the msr PMU's events alone:
/// they must count there too (opened disabled and enabled with the group,
/// msr/tsc counted 0 in such a group on Linux 6.18).
#[test]
fn msr_events_count_in_a_group_without_the_software_counters() {
    let _turn = crate::turn::take();
    if !is_root() {
        eprintln!("not root: perf needs root to count all tasks per CPU: skipped");
        return;
    }
    if !Path::new(MSR_EVENTS).join("tsc").exists() {
        eprintln!("no msr/tsc event here: skipped");
        return;
    }
    let mut fs = Fs::new(Roots::default());
    let cpus = online_cpus(&mut fs);
    let counted = [PerfEvent::ContextSwitches, PerfEvent::Migrations];
    let (mut set, failed) = PerfSet::open_but(&cpus, &[], Path::new(SYS), &counted);
    for e in counted {
        assert!(!set.opened().iter().any(|(_, x)| *x == e), "{e} opened");
        assert!(!failed.iter().any(|(x, _)| *x == e), "{e} said to fail");
    }
    let first = set.read();
    std::thread::sleep(Duration::from_millis(200));
    let second = set.read();
    assert!(set.read_errors().is_empty(), "{:?}", set.read_errors());
    check_tsc_rate(&mut fs, &cpus, &first, &second);
}

#[test]
fn missing_msr_events_have_a_clear_reason() {
    let _turn = crate::turn::take();
    if !is_root() {
        eprintln!("not root: perf needs root to count all tasks per CPU: skipped");
        return;
    }
    let mut fs = Fs::new(Roots::default());
    let cpus = online_cpus(&mut fs);
    let (set, failed) = PerfSet::open(&cpus, &[], Path::new(SYS));
    let msr_pmu = Path::new(MSR_EVENTS).parent().unwrap().is_dir();
    for (e, name) in [(PerfEvent::Aperf, "aperf"), (PerfEvent::Mperf, "mperf")] {
        let opened_on = set.opened().iter().filter(|(_, x)| *x == e).count();
        if Path::new(MSR_EVENTS).join(name).exists() {
            assert_eq!(opened_on, cpus.len(), "{name}: {failed:?}");
        } else {
            assert_eq!(opened_on, 0);
            let want = if msr_pmu {
                format!("perf msr PMU has no {name} event (VM?)")
            } else {
                "no perf msr PMU (kernel without the x86 msr PMU)".to_string()
            };
            assert!(
                failed.contains(&(e, want.clone())),
                "want {want:?} in {failed:?}"
            );
        }
    }
    // Package events were not asked for a CPU: each absent one still says why.
    assert!(failed.iter().any(|(e, _)| *e == PerfEvent::EnergyPkg));
}

#[test]
fn a_cpu_that_does_not_exist_gives_a_reason() {
    let _turn = crate::turn::take();
    if !is_root() {
        eprintln!("not root: perf needs root to count all tasks per CPU: skipped");
        return;
    }
    let (mut set, failed) = PerfSet::open(&[9999], &[], Path::new(SYS));
    assert!(set.is_empty());
    assert!(set.read().is_empty());
    let reason = failed
        .iter()
        .find(|(e, _)| *e == PerfEvent::ContextSwitches)
        .map(|(_, r)| r.as_str());
    assert_eq!(
        reason,
        Some(
            "cpu 9999: perf software/context-switches: invalid argument \
             (CPU offline or not present, or the kernel rejects the event)"
        )
    );
}

/// Opens as the current (unprivileged) user and checks the reason given.
fn check_unprivileged() {
    let mut fs = Fs::new(Roots::default());
    if paranoid(&mut fs).is_some_and(|p| p <= 0) {
        println!("perf_event_paranoid <= 0 lets any user count per CPU: skipped");
        return;
    }
    let cpus = online_cpus(&mut fs);
    let (set, failed) = PerfSet::open(&cpus, &[], Path::new(SYS));
    assert!(set.is_empty(), "{:?}", set.opened());
    for e in [PerfEvent::ContextSwitches, PerfEvent::Migrations] {
        let reasons: Vec<&str> = failed
            .iter()
            .filter(|(k, _)| *k == e)
            .map(|(_, r)| r.as_str())
            .collect();
        assert_eq!(reasons, [PERMISSION_REASON], "{e}");
    }
    println!("PERMISSION-REASON-OK");
}

#[test]
#[ignore = "run by unprivileged_user_gets_a_permission_reason as uid 65534"]
fn unprivileged_child() {
    let _turn = crate::turn::take();
    if is_root() {
        eprintln!("runs as uid 65534 from unprivileged_user_gets_a_permission_reason");
        return;
    }
    check_unprivileged();
}

#[test]
fn unprivileged_user_gets_a_permission_reason() {
    let _turn = crate::turn::take();
    if !is_root() {
        check_unprivileged();
        return;
    }
    // Drop to nobody in a child process: setuid in a test thread would
    // change the whole test process.
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args([
            "--exact",
            "perf_live::unprivileged_child",
            "--ignored",
            "--nocapture",
        ])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    let mut fs = Fs::new(Roots::default());
    if paranoid(&mut fs).is_some_and(|p| p <= 0) {
        assert!(stdout.contains("skipped"), "{stdout}");
    } else {
        assert!(
            stdout.contains("PERMISSION-REASON-OK"),
            "{stdout}\n{stderr}"
        );
    }
}
