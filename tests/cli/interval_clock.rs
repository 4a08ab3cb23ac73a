//! The time an interval's rates divide by: perf's own `time_enabled` and
//! `time_running` for perf counts, and no rates (with the reason) when the
//! clock stamps of two instants do not make an interval.

use std::path::Path;

use noisetop::base::cpu_map::CpuMap;
use noisetop::model::interval::FreqSource;
use noisetop::model::interval::{self, MAX_INTERVAL_S};
use noisetop::model::machine::Machine;
use noisetop::model::snapshot::{CpuHw, Snapshot};
use noisetop::os::fs::{Fs, Roots};
use noisetop::os::hw::Stamp;
use noisetop::testkit::synth::{self, Flavor, Spec};

fn machine(dir: &Path) -> Machine {
    synth::write_capture(dir, &Spec::new(Flavor::Vm, 2)).unwrap();
    Machine::read(&mut Fs::new(Roots::under(&dir.join("0000"))))
}

/// A snapshot of CPUs 0-1 at `mono_ns` whose perf counters read `tsc`,
/// `aperf`, `mperf` and `csw` with perf times `enabled`/`running`.
fn snap(mono_ns: u64, tsc: u64, csw: u64, enabled: u64, running: u64) -> Snapshot {
    let mut hw = CpuMap::new();
    let mut switches = CpuMap::new();
    for cpu in 0..2 {
        hw.insert(
            cpu,
            CpuHw {
                aperf: Some(tsc / 2),
                mperf: Some(tsc / 4),
                tsc: Some(tsc),
                perf_time: Some((enabled, running)),
                ..CpuHw::default()
            },
        );
        switches.insert(cpu, csw);
    }
    let time = Stamp {
        mono_ns,
        wall_ns: mono_ns,
    };
    Snapshot {
        csw: switches,
        hw,
        ..Snapshot::unread(time, vec![0, 1])
    }
}

#[test]
fn perf_rates_divide_by_perf_time_not_by_the_clock_stamps() {
    let dir = tempfile::tempdir().unwrap();
    let m = machine(dir.path());
    // the stamps are 1.0004 s apart (taken before the reads, which lag by
    // a varying few hundred µs); perf says the counters ran exactly 1 s
    let a = snap(
        10_000_000_000,
        1_000_000_000_000,
        500,
        5_000_000_000,
        5_000_000_000,
    );
    let b = snap(
        11_000_400_000,
        1_002_600_000_000,
        1_500,
        6_000_000_000,
        6_000_000_000,
    );
    for freq in [None, Some(FreqSource::PerfMsr)] {
        let iv = interval::delta_of(&m, freq, &a, &b);
        let c = iv.cpu(0).unwrap();
        assert_eq!(c.tsc_mhz, Some(2600.0), "{freq:?}");
        assert_eq!(c.csw_per_s, Some(1000.0), "{freq:?}");
        if freq.is_some() {
            assert_eq!(c.avg_mhz, Some(1300.0));
            assert_eq!(c.bzy_mhz.map(|f| (f * 1e6).round() / 1e6), Some(5200.0));
        }
    }
    // multiplexed: the counts cover the 0.5 s the counters ran
    let c = snap(
        12_000_000_000,
        1_003_900_000_000,
        2_000,
        7_000_000_000,
        6_500_000_000,
    );
    let iv = interval::delta_of(&m, None, &b, &c);
    assert_eq!(iv.cpu(0).unwrap().tsc_mhz, Some(2600.0));
    // never ran in the interval: unknown, not 0
    let d = snap(
        13_000_000_000,
        1_003_900_000_000,
        2_000,
        8_000_000_000,
        6_500_000_000,
    );
    let iv = interval::delta_of(&m, None, &c, &d);
    assert_eq!(iv.cpu(0).unwrap().tsc_mhz, None);
    assert_eq!(iv.cpu(0).unwrap().csw_per_s, None);
}

/// In-kernel switch counts are read at the snapshot's instant, whatever
/// perf group the CPU has: their rate is over the clock's interval, while
/// the same CPU's perf counts stay over perf's running time.
#[test]
fn in_kernel_switch_counts_divide_by_the_clock_and_perf_counts_by_perf_time() {
    let dir = tempfile::tempdir().unwrap();
    let m = machine(dir.path());
    // 1.25 s by the clock; the msr group ran 0.5 s of it (multiplexed)
    let mut a = snap(
        10_000_000_000,
        1_000_000_000_000,
        500,
        5_000_000_000,
        5_000_000_000,
    );
    let mut b = snap(
        11_250_000_000,
        1_001_300_000_000,
        3_000,
        6_250_000_000,
        5_500_000_000,
    );
    let iv = interval::delta_of(&m, None, &a, &b);
    assert_eq!(iv.cpu(0).unwrap().csw_per_s, Some(5000.0));
    a.switches_by_clock = true;
    b.switches_by_clock = true;
    let iv = interval::delta_of(&m, None, &a, &b);
    let c = iv.cpu(0).unwrap();
    assert_eq!(c.csw_per_s, Some(2000.0));
    assert_eq!(c.tsc_mhz, Some(2600.0));
    // one of the two counted by perf: perf's time, as before
    a.switches_by_clock = false;
    let iv = interval::delta_of(&m, None, &a, &b);
    assert_eq!(iv.cpu(0).unwrap().csw_per_s, Some(5000.0));
}

#[test]
fn without_perf_times_the_clock_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let m = machine(dir.path());
    let mut a = snap(10_000_000_000, 1_000_000_000_000, 0, 0, 0);
    let mut b = snap(12_000_000_000, 1_005_200_000_000, 0, 0, 0);
    for s in [&mut a, &mut b] {
        for cpu in 0..2 {
            s.hw.get_mut(&cpu).unwrap().perf_time = None;
        }
    }
    let iv = interval::delta_of(&m, None, &a, &b);
    assert_eq!(iv.cpu(1).unwrap().tsc_mhz, Some(2600.0));
}

#[test]
fn clock_stamps_that_make_no_interval_give_no_rates_and_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let m = machine(dir.path());
    let a = snap(
        100_000_000_000,
        1_000_000_000_000,
        0,
        5_000_000_000,
        5_000_000_000,
    );
    let ok = snap(
        101_000_000_000,
        1_002_600_000_000,
        0,
        6_000_000_000,
        6_000_000_000,
    );
    assert_eq!(interval::clock_note(a.time, ok.time), None);
    let same = snap(
        100_000_000_000,
        1_002_600_000_000,
        0,
        6_000_000_000,
        6_000_000_000,
    );
    let back = snap(
        10_000_000_000,
        1_002_600_000_000,
        0,
        6_000_000_000,
        6_000_000_000,
    );
    let years = 3 * 365 * 86_400 * 1_000_000_000u64;
    let jump = snap(
        100_000_000_000 + years,
        1_002_600_000_000,
        0,
        6_000_000_000,
        6_000_000_000,
    );
    for (b, want) in [
        (
            &same,
            "same clock (100.000 s) as the instant before: no rates",
        ),
        (
            &back,
            "clock went back 90.000 s from the instant before: no rates",
        ),
        (
            &jump,
            "clock jumped forward 3.0 years from the instant before: no rates",
        ),
    ] {
        assert_eq!(interval::clock_note(a.time, b.time).as_deref(), Some(want));
        let iv = interval::delta_of(&m, None, &a, b);
        assert!(
            iv.cpus
                .iter()
                .all(|c| c.tsc_mhz.is_none() && c.csw_per_s.is_none()),
            "{want}: {:?}",
            iv.cpus
        );
    }
    // the longest gap that is still an interval keeps its rates
    let edge = (MAX_INTERVAL_S * 1e9) as u64;
    let far = snap(
        100_000_000_000 + edge,
        1_002_600_000_000,
        0,
        6_000_000_000,
        6_000_000_000,
    );
    assert_eq!(interval::clock_note(a.time, far.time), None);
}

#[test]
fn replay_prints_why_an_interval_has_no_rates() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("cap");
    let spec = Spec {
        instants: 4,
        ..Spec::new(Flavor::Vm, 2)
    };
    synth::write_capture(&cap, &spec).unwrap();
    let clock = |i: u32| cap.join(format!("{i:04}/noisetop/clock"));
    let read = |i: u32| -> (u64, u64) {
        let t = std::fs::read_to_string(clock(i)).unwrap();
        let mut it = t.split_whitespace().map(|x| x.parse::<u64>().unwrap());
        (it.next().unwrap(), it.next().unwrap())
    };
    // instant 2 repeats instant 1's clock
    let (m1, w1) = read(1);
    std::fs::write(clock(2), format!("{m1} {w1}\n")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .args(["replay", "--batch", cap.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = format!(
        "# same clock ({:.3} s) as the instant before: no rates",
        m1 as f64 / 1e9
    );
    assert!(text.contains(&want), "{want}\n{text}");
}
