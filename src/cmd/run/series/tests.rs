//! A series built from synthetic windows, through the same accumulator,
//! estimate and rows as a live one: exact statistics, outliers and their
//! explanations, the time alone, the stability line and the recurring fix.

use super::analysis::analyse;
use super::outcome::SeriesReport;
use super::repetition::{Culprit, Repetition, RunVerdict};
use crate::cmd::run::seen::{Accumulator, RunFacts};
use crate::cmd::run::session::Stamp;
use crate::model::interval::{CpuRates, Interval, TimeSplit};
use crate::noise::traced::Traced;
use crate::noise::traced::TracedCpu;
use crate::noise::traced::TracedTask;
use crate::noise::traced::{Intruder, StolenBy};
use crate::noise::{CpuVerdict, Judgement, VerdictState};
use crate::pipeline::Sample;

const MS: u64 = 1_000_000;

/// One run on CPU 1 as the pipeline would have seen it: `work_ms` of the
/// command's own work, 4 ms of local timer interrupts while it ran, a
/// kworker for 0.2 ms, and `sh[1234]` for `intruder_ms` while the command
/// waited (it waited 0.2 ms more for the kworker). Its wall time is its
/// work, the interrupts and its waits; its CPU time holds the interrupts
/// (no `IRQ_TIME_ACCOUNTING`).
fn run(n: u32, wall_ms: f64, intruder_ms: f64) -> Repetition {
    let wall_ns = (wall_ms * 1e6) as u64;
    let waited = (0.2 * 1e6) as u64 + (intruder_ms * 1e6) as u64;
    let task = |comm: &str, pid: u32| TracedTask {
        comm: comm.into(),
        pid,
        tid: pid,
        per_cpu_kthread: false,
        exited: false,
        cgroup: None,
    };
    let mut intruders = vec![Intruder {
        task: task("kworker/1:3", 77),
        ns: MS / 5,
        slices: 2,
        charged_ns: None,
    }];
    if intruder_ms > 0.0 {
        intruders.insert(
            0,
            Intruder {
                task: task("sh", 1234),
                ns: (intruder_ms * 1e6) as u64,
                slices: 9,
                charged_ns: None,
            },
        );
    }
    let s = Sample {
        interval: Interval {
            dt_s: wall_ms / 1e3,
            cpus: vec![CpuRates {
                cpu: 1,
                busy_pct: Some(100.0),
                time: Some(TimeSplit {
                    idle: Some(0.0),
                    steal: Some(0.0),
                    ..TimeSplit::default()
                }),
                ..CpuRates::default()
            }],
            ..Interval::default()
        },
        judgement: Judgement {
            findings: Vec::new(),
            verdicts: vec![CpuVerdict {
                cpu: 1,
                watched: true,
                state: VerdictState::Quiet,
                causes: Vec::new(),
                reason: None,
                probe_ns: None,
            }],
        },
        watched: vec![1],
        trace: Some(Traced {
            cpus: vec![TracedCpu {
                cpu: 1,
                window_ns: wall_ns,
                owner: Some(task("bench", 4000)),
                owner_ns: wall_ns - waited - 4 * MS,
                owner_irq_ns: 4 * MS,
                intruders,
                stolen: vec![StolenBy {
                    kind: "timer".into(),
                    name: "local_timer".into(),
                    irq: None,
                    ns: 4 * MS,
                    count: 1400,
                    max_ns: 20_000,
                }],
                owner_given: true,
                ..TracedCpu::default()
            }],
            ..Traced::default()
        }),
        ..Sample::default()
    };
    let mut acc = Accumulator::new(&[1]);
    acc.add(&s);
    let mut rep = acc.report(RunFacts {
        command: vec!["bench".into()],
        pid: 4000,
        cpus: vec![1],
        seconds: wall_ms / 1e3,
        exit: Some(0),
        signal: None,
        command_switches: None,
        command_migrations: Some(2),
        trace_missing: None,
        command_cpu_ns: Some(wall_ns - waited),
        others_limit_pct: 1.5,
        own_ipis: None,
        own_ipis_missing: None,
    });
    rep.estimate_alone(Ok((wall_ns - waited, waited)));
    let at = |ms: f64| Stamp {
        mono_ns: 1_000_000_000_000 + (ms * 1e6) as u64,
        wall_ns: 1_790_000_000_000_000_000 + (ms * 1e6) as u64,
    };
    let start = f64::from(n) * 1000.0;
    Repetition::of(n, &rep, at(start), at(start + wall_ms), None)
}

/// Ten runs: seven quiet around 350 ms, one of them (6) 150 ms slower by
/// itself, and three (4, 7, 9) beside `sh[1234]` for about 210 ms.
fn series() -> Vec<Repetition> {
    // (wall ms, intruder ms): a disturbed run's wall is its quiet time and
    // the intruder's
    [
        (350.0, 0.0),
        (351.0, 0.0),
        (349.0, 0.0),
        (354.0 + 208.0, 208.0),
        (350.0, 0.0),
        (500.0, 0.0),
        (350.0 + 210.0, 210.0),
        (348.0, 0.0),
        (351.0 + 214.0, 214.0),
        (351.0, 0.0),
    ]
    .iter()
    .enumerate()
    .map(|(i, &(w, x))| run(i as u32 + 1, w, x))
    .collect()
}

fn taskset(c: &Culprit) -> String {
    match c {
        Culprit::Task { pid, .. } => format!("taskset -apc 0 {pid}"),
        other => format!("fix {}", other.label()),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn each_run_has_its_times_its_share_and_who_took_the_rest() {
    let runs = series();
    let r4 = &runs[3];
    assert!(close(r4.wall_s, 0.562));
    assert!(close(r4.others_s.unwrap(), 0.2082), "{r4:?}");
    assert!(close(r4.irq_s.unwrap(), 0.004));
    // it waited 208.2 ms and interrupts took 4 ms while it ran
    assert!(close(r4.taken_s.unwrap(), 0.2122), "{r4:?}");
    assert!(close(r4.time_alone_s.unwrap(), 0.3498), "{r4:?}");
    // its CPU time 353.8 ms of the 566 ms it wanted the CPU
    assert!(
        close(r4.share_pct.unwrap(), 100.0 * 353.8 / 566.0),
        "{r4:?}"
    );
    assert_eq!(
        r4.top,
        Some(Culprit::Task {
            name: "sh[1234]".into(),
            pid: 1234,
            s: 0.208,
            cpus: vec![1],
        })
    );
    assert_eq!(r4.verdict, RunVerdict::Noisy);
    // a quiet run's largest noise is the tick, under the 1.5 % limit
    let r1 = &runs[0];
    assert_eq!(r1.verdict, RunVerdict::Quiet);
    assert!(
        matches!(&r1.top, Some(Culprit::Interrupts { most, s }) if most == "timer local_timer" && close(*s, 0.004))
    );
    assert!(close(r1.start_monotonic_s, 1001.0) && close(r1.end_monotonic_s, 1001.35));
    assert_eq!(r1.migrations, Some(2));
}

#[test]
fn statistics_over_all_runs_the_quiet_ones_and_the_time_alone_are_exact() {
    let mut runs = series();
    let a = analyse(&mut runs, &[1], false, &taskset);
    let all = a.statistics.all.unwrap();
    // Python's statistics over the same wall times (ms): mean 428.6,
    // stdev 103.2776193890364, median 351
    assert_eq!(all.runs, 10);
    assert!(close(all.mean_s, 0.4286));
    assert!(
        (all.sd_s - 0.103_277_619_389_036_4).abs() < 1e-12,
        "{all:?}"
    );
    assert!(close(all.median_s, 0.351));
    assert!(close(all.min_s, 0.348) && close(all.max_s, 0.565));
    // quiet: 1 2 3 5 6 8 10 (run 6 is slow, but nothing took its CPU)
    let q = a.statistics.quiet.unwrap();
    assert_eq!(q.runs, 7);
    assert!((q.mean_s - 2.599 / 7.0).abs() < 1e-12, "{q:?}");
    assert!((q.sd_s - 0.056_767_697_051_857_13).abs() < 1e-12, "{q:?}");
    assert!(close(q.median_s, 0.350));
    // time alone: mean 361.2, stdev 47.31971635117391, median 346.3
    let t = a.statistics.time_alone.unwrap();
    assert!(close(t.mean_s, 0.3612), "{t:?}");
    assert!((t.sd_s - 0.047_319_716_351_173_91).abs() < 1e-12, "{t:?}");
    assert!(close(t.median_s, 0.3463));
}

#[test]
fn outliers_pass_the_median_by_three_mads_and_each_is_explained_or_not() {
    let mut runs = series();
    let a = analyse(&mut runs, &[1], false, &taskset);
    // |wall − 351|: 0 0 1 1 2 3 149 209 211 214 → MAD 2.5 ms; limit
    // 351 + 3 × 1.4826 × 2.5 ms
    let l = a.outlier_limit.unwrap();
    assert!(close(l.mad_s, 0.0025));
    assert!(close(l.limit_s, 0.351 + 3.0 * 1.4826 * 0.0025), "{l:?}");
    let flagged: Vec<u32> = runs.iter().filter(|r| r.outlier).map(|r| r.run).collect();
    assert_eq!(flagged, [4, 6, 7, 9]);
    let said: Vec<&str> = runs
        .iter()
        .filter_map(|r| r.explanation.as_deref())
        .collect();
    assert_eq!(
        said,
        [
            "run 4: +212 ms; sh[1234] took 208 ms of CPU 1",
            "run 6: +150 ms, unexplained: others took 4.2 ms from it (0.0 ms more than in a \
             quiet run); its own CPU time was 150 ms more than a quiet run's: the command's \
             own work (its code and data, caches, the CPU's speed)",
            "run 7: +210 ms; sh[1234] took 210 ms of CPU 1",
            "run 9: +215 ms; sh[1234] took 214 ms of CPU 1",
        ]
    );
    assert_eq!(runs[3].explained, Some(true));
    assert_eq!(runs[5].explained, Some(false));
    // each explained excess is what others took, beyond a quiet run
    for r in runs.iter().filter(|r| r.explained == Some(true)) {
        let others = r.others_total_s().unwrap() - 0.0042;
        assert!(
            (r.excess_s.unwrap() - others).abs() <= 0.2 * others,
            "{r:?}"
        );
    }
}

/// Beside a busy machine, the local timer can top more noisy runs than
/// the intruder does, taking a few ms in each; the intruder that took
/// hundreds of ms in fewer runs still comes first.
#[test]
fn recurring_noise_is_ranked_by_the_time_it_took_not_by_how_often() {
    let mut runs = series();
    analyse(&mut runs, &[1], false, &taskset);
    let sh: Vec<u32> = runs
        .iter()
        .filter(|r| matches!(r.top, Some(Culprit::Task { pid: 1234, .. })))
        .map(|r| r.run)
        .collect();
    assert_eq!(sh.len(), 3, "{runs:?}");
    let mut timer = Vec::new();
    for r in runs.iter_mut().filter(|r| !sh.contains(&r.run)).take(4) {
        r.verdict = RunVerdict::Noisy;
        r.top = Some(Culprit::Interrupts {
            most: "timer local_timer".into(),
            s: 0.003,
        });
        timer.push(r.run);
    }
    let rec = super::stability::recurring(&runs, &taskset);
    let said: Vec<(String, Vec<u32>)> = rec
        .iter()
        .map(|r| (r.culprit.clone(), r.runs.clone()))
        .collect();
    assert_eq!(
        said,
        [
            ("sh[1234]".to_string(), sh),
            ("interrupts (most: timer local_timer)".to_string(), timer)
        ]
    );
}

#[test]
fn noise_that_recurred_is_named_with_its_fix_and_the_stability_line_says_whose_spread() {
    let mut runs = series();
    let a = analyse(&mut runs, &[1], false, &taskset);
    let lines: Vec<String> = a
        .recurring
        .iter()
        .map(super::stability::Recurring::text)
        .collect();
    assert_eq!(
        lines,
        ["3 of 10 runs were disturbed by sh[1234] → taskset -apc 0 1234"]
    );
    assert_eq!(
        a.stability.as_deref(),
        Some(
            "stability: unstable: the sd is 24.1 % of the mean over all 10 runs and 15.3 % over \
             the quiet ones too: the spread is the command's own, or noise no CPU of it showed \
             (the host, memory, caches)"
        )
    );
    // without the run that was slow by itself, the quiet runs are stable
    // and the spread is the noise the others met
    let mut runs: Vec<Repetition> = series().into_iter().filter(|r| r.run != 6).collect();
    let a = analyse(&mut runs, &[1], false, &taskset);
    let s = a.stability.unwrap();
    assert!(
        s.starts_with("stability: unstable: the sd is ")
            && s.ends_with("over the 6 quiet ones: the spread is the noise the other 3 met"),
        "{s}"
    );
}

#[test]
fn a_failed_run_is_left_out_of_the_figures_unless_failures_count() {
    let mut runs = series();
    runs[1].exit_code = Some(3);
    let a = analyse(&mut runs, &[1], false, &taskset);
    assert_eq!(a.statistics.all.unwrap().runs, 9);
    let mut runs = series();
    runs[1].exit_code = Some(3);
    let a = analyse(&mut runs, &[1], true, &taskset);
    assert_eq!(a.statistics.all.unwrap().runs, 10);
}

#[test]
fn the_json_names_carry_units_and_its_sd_is_the_one_printed() {
    let mut runs = series();
    let analysis = analyse(&mut runs, &[1], false, &taskset);
    let report = SeriesReport {
        command: vec!["bench".into()],
        cpus: vec![1],
        check: None,
        repeat: 10,
        warmup: Vec::new(),
        settle_limit_s: 1.0,
        settle_idle_below_pct: 10.0,
        runs,
        analysis,
        ignore_failure: false,
        time_alone_how: crate::cmd::run::alone::HOW,
        trace_missing: None,
        ended: "all 10 runs done".into(),
        exit_code: 0,
    };
    let v: serde_json::Value = serde_json::to_value(&report).unwrap();
    let run = &v["runs"][3];
    for key in [
        "wall_s",
        "cpu_s",
        "others_s",
        "irq_s",
        "taken_s",
        "time_alone_s",
        "share_pct",
        "outlier",
        "excess_s",
        "start_monotonic_s",
        "end_unix_s",
    ] {
        assert!(!run[key].is_null(), "{key}: {run}");
    }
    assert_eq!(run["outlier"], true);
    assert_eq!(run["top"]["kind"], "task");
    assert_eq!(v["recurring"][0]["runs"], serde_json::json!([4, 7, 9]));
    // the sd printed is the one the JSON's wall times give
    let walls: Vec<f64> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["wall_s"].as_f64().unwrap())
        .collect();
    let sd = super::spread::spread(&walls).unwrap().sd_s;
    let text = report.text(true);
    assert!(
        text.contains(&format!("428.6 ± {:.1} ms", sd * 1e3)),
        "{text}"
    );
    assert!(
        text.contains("\n  run 4: +212 ms; sh[1234] took 208 ms of CPU 1\n"),
        "{text}"
    );
    assert!(
        text.contains("\n  4      562.0      349.8      353.8   63 %      208.2  sh[1234]"),
        "{text}"
    );
}
