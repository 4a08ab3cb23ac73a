//! `compare` as users met it: an empty side is refused, an unknown side
//! gives `?` (a disabled idle state is 0 % only where the sidecar says
//! so), equal per-CPU differences share a line, long settings fit 100
//! columns, and the sentence names the CPUs that differ.

use std::path::{Path, PathBuf};

use crate::recordings;
use noisetop::record::diff::Comparison;
use noisetop::record::digest::Format;
use noisetop::record::sidecar::RecordMeta;
use noisetop::record::writer::OpenMode;
use noisetop::record::writer::Recorder;
use noisetop::testkit::synth::Flavor;

/// A: C1E and C6 disabled, shallow sleep; B: every state, deep sleep.
fn ping_pair(dir: &Path) -> (PathBuf, PathBuf) {
    let mut a = recordings::machine(Flavor::IntelServer, 8);
    recordings::disable_states(&mut a, &["C1E", "C6"]);
    let b = recordings::machine(Flavor::IntelServer, 8);
    let (pa, pb) = (dir.join("a.csv"), dir.join("b.csv"));
    recordings::record(&pa, &a, 60, 1.0, 1, &recordings::shallow);
    recordings::record(&pb, &b, 60, 1.0, 2, &recordings::deep);
    (pa, pb)
}

/// The line whose words start with those of `start`.
fn line_of<'a>(text: &'a str, start: &str) -> &'a str {
    let want: Vec<&str> = start.split_whitespace().collect();
    text.lines()
        .find(|l| {
            l.split_whitespace()
                .take(want.len())
                .eq(want.iter().copied())
        })
        .unwrap_or_else(|| panic!("no line {start:?} in\n{text}"))
}

#[test]
fn an_empty_side_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, b) = ping_pair(dir.path());
    let empty = dir.path().join("empty.csv");
    let m = recordings::machine(Flavor::IntelServer, 8);
    let meta = RecordMeta {
        version: "test".into(),
        interval_s: 1.0,
        watched: vec![],
        command_line: vec![],
    };
    drop(Recorder::create(&empty, OpenMode::New, &m, &meta).unwrap());
    for (x, y) in [(&empty, &b), (&b, &empty)] {
        let e = Comparison::build(x, y, None).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}: no interval recorded (a header only): nothing to compare",
                empty.display()
            )
        );
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_noisetop"))
            .arg("compare")
            .args([x, y])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(out.stdout.is_empty(), "no table with a side of nothing");
    }
}

#[test]
fn an_unknown_side_is_a_question_mark_and_disabled_is_zero_only_by_the_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = ping_pair(dir.path());
    let c = Comparison::build(&a, &b, None).unwrap();
    let c6 = c.machine.iter().find(|d| d.metric == "c6_pct").unwrap();
    assert_eq!(c6.a, Some(0.0), "A's sidecar says disabled: 0 %");
    assert!(c6.delta.unwrap() > 80.0, "{c6:?}");
    // without A's sidecar nothing says C6 was disabled there: unknown
    std::fs::remove_file(noisetop::os::fs::sidecar_path(&a)).unwrap();
    let c = Comparison::build(&a, &b, None).unwrap();
    let c6 = c.machine.iter().find(|d| d.metric == "c6_pct").unwrap();
    assert_eq!((c6.delta, c6.matters), (None, false));
    let text = c.render(Format::Table);
    let row: Vec<&str> = line_of(&text, "c6_pct ").split_whitespace().collect();
    assert_eq!(row[1], "?", "A unknown: {row:?}");
    assert_eq!(row[5], "?", "B − A unknown: {row:?}");
    assert!(!text.contains("yes") || !line_of(&text, "c6_pct ").ends_with("yes"));
}

#[test]
fn equal_per_cpu_differences_share_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = ping_pair(dir.path());
    let c = Comparison::build(&a, &b, None).unwrap();
    let text = c.render(Format::Table);
    let c6 = line_of(&text, "CPUs 0-7  c6_pct");
    let words: Vec<&str> = c6.split_whitespace().collect();
    assert_eq!(
        words,
        ["CPUs", "0-7", "c6_pct", "0", "87.2–87.5", "+87.2…+87.5"]
    );
    let section = text.split("Per CPU:").nth(1).unwrap();
    // a header, a title line and at most three metrics for all 8 CPUs
    assert!(section.lines().count() <= 5, "{section}");
    assert_eq!(
        c.cpu_groups.iter().map(|g| g.cpus.len()).sum::<usize>(),
        8 * 3
    );
}

#[test]
fn long_settings_fit_100_columns_as_the_words_that_differ() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = ping_pair(dir.path());
    let base = "BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=UUID=0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0 ro quiet splash \
                intel_iommu=on iommu=pt hugepagesz=1G hugepages=16 default_hugepagesz=1G transparent_hugepage=never";
    for (path, extra) in [
        (&a, ""),
        (
            &b,
            " isolcpus=managed_irq,domain,2-7 nohz_full=2-7 rcu_nocbs=2-7 processor.max_cstate=1 intel_idle.max_cstate=0",
        ),
    ] {
        let side = noisetop::os::fs::sidecar_path(path);
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
        v["facts"]["cmdline"] = serde_json::json!(format!("{base}{extra}"));
        std::fs::write(&side, v.to_string()).unwrap();
    }
    let text = Comparison::build(&a, &b, None)
        .unwrap()
        .render(Format::Table);
    let settings = text.split("Settings that differ").nth(1).unwrap();
    let settings = settings.split("Machine-wide").next().unwrap();
    for l in settings.lines() {
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    let row = line_of(&text, "kernel command line, words only in");
    assert!(row.contains("(no other word)"), "{row}");
    assert!(row.contains("isolcpus=managed_irq,domain,2-7"), "{row}");
    assert!(text.contains("intel_idle.max_cstate=0"), "{text}");
    assert!(
        !text.contains("BOOT_IMAGE"),
        "the words both have are left out"
    );
}

#[test]
fn the_sentence_names_the_cpus_that_differ() {
    let dir = tempfile::tempdir().unwrap();
    let m = recordings::machine(Flavor::IntelServer, 8);
    let (a, b) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
    recordings::record(&a, &m, 60, 1.0, 1, &recordings::shallow);
    let half = |cpu: u32| {
        if cpu >= 4 {
            recordings::deep(cpu)
        } else {
            recordings::shallow(cpu)
        }
    };
    recordings::record(&b, &m, 60, 1.0, 2, &half);
    let c = Comparison::build(&a, &b, None).unwrap();
    assert_eq!(c.explanation.len(), 1, "{:?}", c.explanation);
    assert!(
        c.explanation[0].starts_with(
            "B's CPUs 4-7 spend 91 % of idle time in C6 (exit latency 133 µs) where A's spend"
        ),
        "{}",
        c.explanation[0]
    );
}
