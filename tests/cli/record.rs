//! The recording: round trip of a replayed capture, the ping-case pair and
//! its explanation, a pair that differs only by noise, damaged and foreign
//! files, appending and refusing to overwrite, the plot, and the schema
//! section of docs/record.md.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::recordings::{self, Profile};
use noisetop::cmd::record_sink as sink;
use noisetop::model::interval::Interval;
use noisetop::pipeline::{Step, replay};
use noisetop::record::columns::{self, Kind, Schema};
use noisetop::record::diff::Comparison;
use noisetop::record::digest::{Format, Report};
use noisetop::record::reader::Recording;
use noisetop::record::sidecar::RecordMeta;
use noisetop::record::writer::OpenMode;
use noisetop::record::writer::RecordError;
use noisetop::record::writer::Recorder;
use noisetop::record::writer::RowTags;
use noisetop::testkit::synth::{self, Flavor, Spec};

fn meta() -> RecordMeta {
    RecordMeta {
        version: env!("CARGO_PKG_VERSION").into(),
        interval_s: 1.0,
        watched: vec![0],
        command_line: vec!["noisetop".into(), "--record".into(), "x.csv".into()],
    }
}

/// Replays a synthetic capture through the pipeline driver into a
/// recording, tagged as the `--record` sink tags it; returns what was
/// written.
fn record_replay(
    flavor: Flavor,
    cpus: u32,
    instants: u32,
    csv: &Path,
) -> (
    noisetop::model::machine::Machine,
    Vec<(Interval, Vec<RowTags>)>,
) {
    let cap = tempfile::tempdir().unwrap();
    let spec = Spec {
        instants,
        ..Spec::new(flavor, cpus)
    };
    synth::write_capture(cap.path(), &spec).unwrap();
    let replay::Replay {
        instants,
        mut driver,
    } = replay::open(cap.path()).unwrap();
    driver.set_watched(&[0, 1]);
    let m = driver.engine.sampler.machine.clone();
    let mut rec = Recorder::create(csv, OpenMode::New, &m, &meta()).unwrap();
    let mut written = Vec::new();
    for (i, dir) in instants.iter().enumerate() {
        if i > 0 {
            replay::advance(&mut driver, dir).unwrap();
        }
        if let Step::Sample(s) = driver.step() {
            let tags = sink::tags(&s);
            rec.write(&s.interval, &tags).unwrap();
            written.push((s.interval, tags));
        }
    }
    assert_eq!(
        rec.rows(),
        written
            .iter()
            .map(|(iv, _)| iv.cpus.len() as u64 + 1)
            .sum::<u64>()
    );
    assert_eq!(rec.bytes(), std::fs::metadata(csv).unwrap().len());
    (m, written)
}

#[test]
#[expect(
    clippy::float_cmp,
    reason = "the number read is the number written, bit for bit"
)]
fn a_replayed_capture_reads_back_with_every_number_equal() {
    for (flavor, cpus) in [
        (Flavor::IntelServer, 8),
        (Flavor::AmdServer, 8),
        (Flavor::IntelLaptop, 4),
        (Flavor::Vm, 2),
        (Flavor::Arm64, 4),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("rec.csv");
        let (m, written) = record_replay(flavor, cpus, 4, &csv);
        assert_eq!(written.len(), 3, "{flavor:?}");
        let rec = Recording::open(&csv).unwrap();
        assert!(rec.notes.is_empty(), "{flavor:?}: {:?}", rec.notes);
        let schema = Schema::for_machine(&m);
        let mut expected = Vec::new();
        for (iv, tags) in &written {
            for r in iv.cpus.iter().map(Some).chain([None]) {
                expected.push((iv, r, tags));
            }
        }
        let mut k = 0;
        let mut known = 0;
        let pass = rec
            .for_each(|row| {
                let (iv, r, tags) = expected[k];
                k += 1;
                assert_eq!(row.cpu, r.map(|r| r.cpu), "{flavor:?} row {k}");
                assert_eq!(row.time, columns::iso_time(iv.to.wall_ns));
                assert_eq!(row.dt_s, Some(columns::rounded(iv.dt_s)));
                let tag = tags.iter().find(|t| t.cpu == row.cpu).unwrap();
                assert_eq!(row.verdict, tag.verdict);
                assert_eq!(row.finding_ids().collect::<Vec<_>>(), tag.findings);
                for col in &schema.columns {
                    let Kind::Num(f) = col.kind else { continue };
                    let want = match r {
                        Some(r) => columns::cpu_value(f, r, &schema.states),
                        None => columns::machine_value(f, iv, &schema.states),
                    };
                    let got = row.values[rec.col(&col.name).unwrap()];
                    match (want, got) {
                        (None, None) => {}
                        (Some(w), Some(g)) => {
                            known += 1;
                            assert_eq!(g, columns::rounded(w), "{flavor:?} {}", col.name);
                            assert!(
                                (g - w).abs() <= 5e-6 * w.abs() + 1e-12,
                                "{flavor:?} {}: {g} vs {w}",
                                col.name
                            );
                        }
                        _ => panic!("{flavor:?} {}: wrote {want:?}, read {got:?}", col.name),
                    }
                }
            })
            .unwrap();
        assert_eq!(pass.rows as usize, expected.len());
        assert!(pass.notes.is_empty());
        // the figures that make a recording useful are there
        assert!(
            known > 15 * expected.len(),
            "{flavor:?}: only {known} known cells"
        );
    }
}

#[test]
fn t_s_counts_from_the_first_interval_and_rows_come_in_cpu_order() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    record_replay(Flavor::Vm, 2, 4, &csv);
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let cpu_t: Vec<(&str, &str)> = rows.iter().map(|r| (r[3], r[1])).collect();
    assert_eq!(
        cpu_t,
        [
            ("0", "1"),
            ("1", "1"),
            ("all", "1"),
            ("0", "2"),
            ("1", "2"),
            ("all", "2"),
            ("0", "3"),
            ("1", "3"),
            ("all", "3")
        ]
    );
}

fn ping_pair(dir: &Path) -> (PathBuf, PathBuf) {
    let mut a = recordings::machine(Flavor::IntelServer, 8);
    recordings::disable_states(&mut a, &["C1E", "C6"]);
    let b = recordings::machine(Flavor::IntelServer, 8);
    let (pa, pb) = (dir.join("a.csv"), dir.join("b.csv"));
    recordings::record(&pa, &a, 120, 1.0, 1, &recordings::shallow);
    recordings::record(&pb, &b, 120, 1.0, 2, &recordings::deep);
    (pa, pb)
}

#[test]
fn compare_explains_the_ping_case_from_the_data() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = ping_pair(dir.path());
    let c = Comparison::build(&a, &b, None).unwrap();
    assert_eq!(
        c.explanation,
        [
            "B's CPUs spend 91 % of idle time in C6 (exit latency 133 µs) where A's spend 96 % \
          in C1 (2 µs): a wake-up on B can cost up to 131 µs more."
        ]
    );
    // the idle columns differ beyond the spread and come first
    let top: Vec<&str> = c
        .machine
        .iter()
        .take_while(|d| d.matters)
        .map(|d| d.metric.as_str())
        .collect();
    for m in ["c1_pct", "c6_pct", "c1e_pct"] {
        assert!(top.contains(&m), "{m} not among {top:?}");
    }
    // frequency and interrupts are the same profile: within the spread
    for m in ["avg_mhz", "irq_per_s", "csw_per_s", "busy_pct"] {
        let d = c.machine.iter().find(|d| d.metric == m).unwrap();
        assert!(!d.matters, "{m}: {d:?}");
    }
    let settings: Vec<(&str, &str, &str)> = c
        .settings
        .iter()
        .map(|s| (s.setting.as_str(), s.a.as_str(), s.b.as_str()))
        .collect();
    assert_eq!(
        settings,
        [
            ("idle state C1E", "disabled, 10 µs", "enabled, 10 µs"),
            ("idle state C6", "disabled, 133 µs", "enabled, 133 µs")
        ]
    );
    // per CPU, and limited to two CPUs
    assert_eq!(c.cpus.len(), 8);
    let two = Comparison::build(&a, &b, Some(&[2, 3])).unwrap();
    assert_eq!(two.compared_cpus, [2, 3]);
    assert!(
        two.explanation[0].starts_with("B's CPUs 2-3 spend 91 % of idle time in C6"),
        "{}",
        two.explanation[0]
    );
    // the text output carries the same sentence
    let text = c.render(Format::Table);
    assert!(
        text.contains("a wake-up on B can cost up to 131 µs more."),
        "{text}"
    );
    // and swapping the sides swaps the names
    let r = Comparison::build(&b, &a, None).unwrap();
    assert!(r.explanation[0].starts_with("A's CPUs spend 91 % of idle time in C6"));
}

#[test]
fn compare_calls_noise_noise() {
    let dir = tempfile::tempdir().unwrap();
    let m = recordings::machine(Flavor::IntelServer, 8);
    let (a, b) = (dir.path().join("a.csv"), dir.path().join("b.csv"));
    recordings::record(&a, &m, 120, 1.0, 7, &recordings::deep);
    recordings::record(&b, &m, 120, 1.0, 8, &recordings::deep);
    let c = Comparison::build(&a, &b, None).unwrap();
    assert_eq!(
        c.conclusion,
        "No metric differs beyond the run-to-run spread within each side: as far as these \
         recordings tell, A and B behave the same."
    );
    assert!(c.machine.iter().all(|d| !d.matters));
    assert!(c.cpus.is_empty(), "{:?}", c.cpus);
    assert!(c.settings.is_empty());
    assert!(c.explanation[0].starts_with("Idle exit latency does not differ"));
    // a real shift of the same size as the noise on one side is found
    let busier = |c: u32| Profile {
        busy: 20.0,
        ..recordings::deep(c)
    };
    recordings::record(&b, &m, 120, 1.0, 8, &busier);
    let c = Comparison::build(&a, &b, None).unwrap();
    let top: Vec<&str> = c
        .machine
        .iter()
        .take_while(|d| d.matters)
        .map(|d| d.metric.as_str())
        .collect();
    assert!(
        top.contains(&"busy_pct") && top.contains(&"avg_mhz"),
        "{top:?}"
    );
}

#[test]
fn compare_works_across_cpu_counts_and_idle_states() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.csv");
    let b = dir.path().join("b.csv");
    record_replay(Flavor::IntelServer, 8, 3, &a);
    record_replay(Flavor::IntelLaptop, 4, 3, &b);
    let c = Comparison::build(&a, &b, None).unwrap();
    assert_eq!(c.compared_cpus, [0, 1, 2, 3]);
    assert_eq!(c.only_a, [4, 5, 6, 7]);
    assert!(
        c.settings
            .iter()
            .any(|s| s.setting == "idle state C10" && s.a == "absent")
    );
    assert!(
        c.settings
            .iter()
            .any(|s| s.setting == "CPUs" && s.a == "8" && s.b == "4")
    );
    for f in [Format::Table, Format::Md, Format::Json] {
        assert!(!c.render(f).is_empty());
    }
    let json: serde_json::Value = serde_json::from_str(&c.render(Format::Json)).unwrap();
    assert_eq!(json["only_a"], serde_json::json!([4, 5, 6, 7]));
}

#[test]
fn report_gives_quantiles_means_and_findings() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let m = recordings::machine(Flavor::IntelServer, 4);
    let flat = |_: u32| Profile {
        jitter: 0.0,
        ..recordings::deep(0)
    };
    recordings::record(&csv, &m, 100, 1.0, 3, &flat);
    let r = Report::build(&csv).unwrap();
    assert_eq!(r.cpus, 4);
    assert_eq!(r.intervals, 100);
    assert_eq!(r.duration_s, Some(100.0));
    let cpu0 = r.rows.iter().find(|e| e.cpu == "0").unwrap();
    let q = cpu0.bzy_mhz.unwrap();
    assert_eq!(
        (q.min, q.median, q.p99, q.max),
        (2800.0, 2800.0, 2800.0, 2800.0)
    );
    assert!((cpu0.means["c6_pct"].unwrap() - 87.36).abs() < 1e-9);
    assert_eq!(cpu0.verdicts["noisy"], 10);
    assert_eq!(cpu0.verdicts["quiet"], 90);
    let all = r.rows.iter().find(|e| e.cpu == "all").unwrap();
    // the machine row sums rates over the CPUs
    assert_eq!(all.means["irq_per_s"], Some(1200.0));
    // two packages of 100 W ± 2 %
    assert!((all.means["pkg_watt"].unwrap() - 200.0).abs() < 4.0);
    let f = &r.findings[0];
    assert_eq!(
        (f.id.as_str(), f.intervals, f.cpus.as_slice()),
        ("irq-on-watched", 10, &[0][..])
    );
    assert_eq!((f.first_t_s, f.last_t_s), (6.0, 96.0));
    assert_eq!(f.first, "2023-11-14T22:13:26.000Z");
    let text = r.render(Format::Table);
    assert!(text.contains("irq-on-watched"), "{text}");
    assert!(text.contains("C6 133 µs"), "{text}");
    let md = r.render(Format::Md);
    assert!(md.contains("| CPU |"), "{md}");
    let json: serde_json::Value = serde_json::from_str(&r.render(Format::Json)).unwrap();
    assert_eq!(json["intervals"], 100);
}

#[test]
fn report_of_a_one_hour_quantile_is_by_nearest_rank() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let m = recordings::machine(Flavor::Vm, 1);
    recordings::record(&csv, &m, 200, 1.0, 5, &recordings::deep);
    let rec = Recording::open(&csv).unwrap();
    let mut v = Vec::new();
    let col = rec.col("busy_pct").unwrap();
    rec.for_each(|r| {
        if r.cpu == Some(0) {
            v.push(r.values[col].unwrap());
        }
    })
    .unwrap();
    v.sort_by(f64::total_cmp);
    let r = Report::build(&csv).unwrap();
    let q = r
        .rows
        .iter()
        .find(|e| e.cpu == "0")
        .unwrap()
        .busy_pct
        .unwrap();
    // f32 storage: within a part in 10^7
    let near = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs();
    assert!(near(q.median, v[99]), "{} {}", q.median, v[99]);
    assert!(near(q.p99, v[197]), "{} {}", q.p99, v[197]);
    assert!(near(q.min, v[0]) && near(q.max, v[199]));
}

fn small_recording(dir: &Path) -> PathBuf {
    let csv = dir.join("r.csv");
    record_replay(Flavor::Vm, 2, 4, &csv);
    csv
}

fn rewrite(csv: &Path, f: impl Fn(usize, &str) -> Option<String>) {
    let text = std::fs::read_to_string(csv).unwrap();
    let out: Vec<String> = text
        .lines()
        .enumerate()
        .filter_map(|(i, l)| f(i, l))
        .collect();
    std::fs::write(csv, out.join("\n") + "\n").unwrap();
}

#[test]
fn a_last_line_cut_short_is_skipped_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let csv = small_recording(dir.path());
    let text = std::fs::read_to_string(&csv).unwrap();
    // a crash in the middle of the last row: no line end, half the fields
    std::fs::write(&csv, &text[..text.len() - 60]).unwrap();
    let r = Report::build(&csv).unwrap();
    assert_eq!(r.intervals, 2);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("is cut short") && n.contains("ignored")),
        "{:?}",
        r.notes
    );
}

#[test]
fn extra_and_missing_columns_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let csv = small_recording(dir.path());
    rewrite(&csv, |i, l| {
        Some(if i == 0 {
            format!("{l},host_note")
        } else {
            format!("{l},x")
        })
    });
    let r = Report::build(&csv).unwrap();
    assert!(
        r.notes.iter().any(|n| n.contains("ignored: host_note")),
        "{:?}",
        r.notes
    );
    // drop the csw_per_s column everywhere
    let head = std::fs::read_to_string(&csv).unwrap();
    let k = head
        .lines()
        .next()
        .unwrap()
        .split(',')
        .position(|c| c == "csw_per_s")
        .unwrap();
    rewrite(&csv, |_, l| {
        let mut f: Vec<&str> = l.split(',').collect();
        f.remove(k);
        Some(f.join(","))
    });
    let r = Report::build(&csv).unwrap();
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("missing, shown as unknown: csw_per_s")),
        "{:?}",
        r.notes
    );
    assert!(r.rows.iter().all(|e| !e.means.contains_key("csw_per_s")));
}

fn read_error(csv: &Path) -> String {
    let e = Report::build(csv).unwrap_err().to_string();
    assert!(e.starts_with(&csv.display().to_string()), "{e}");
    e
}

#[test]
fn damaged_and_foreign_files_get_clear_messages() {
    let dir = tempfile::tempdir().unwrap();
    let csv = small_recording(dir.path());
    // a row in the middle with too many fields
    rewrite(&csv, |i, l| {
        Some(if i == 2 {
            format!("{l},1,2")
        } else {
            l.to_string()
        })
    });
    assert!(
        read_error(&csv).contains("line 3: "),
        "{}",
        read_error(&csv)
    );
    // a number that is not one
    let csv = small_recording(&dir.path().join("b").tap_mkdir());
    rewrite(&csv, |i, l| {
        Some(if i == 1 {
            l.replacen(",2450", ",fast", 1)
        } else {
            l.to_string()
        })
    });
    let e = read_error(&csv);
    assert!(
        e.contains("line 2: ") && e.contains("\"fast\", not a number"),
        "{e}"
    );
    // another schema version in the sidecar
    let csv = small_recording(&dir.path().join("c").tap_mkdir());
    let side = noisetop::os::fs::sidecar_path(&csv);
    let text = std::fs::read_to_string(&side).unwrap();
    std::fs::write(
        &side,
        text.replace("\"schema_version\": 1", "\"schema_version\": 2"),
    )
    .unwrap();
    let e = read_error(&csv);
    assert!(
        e.contains("written with recording schema 2; this noisetop reads schema 1"),
        "{e}"
    );
    // another tool's CSV, turbostat's tab-separated output, an empty file, binary
    let other = dir.path().join("other.csv");
    for (text, says) in [
        (
            &b"name,age\nada,36\n"[..],
            "lacks the columns time, t_s, dt_s, cpu",
        ),
        (
            b"Core\tCPU\tAvg_MHz\tBusy%\n-\t-\t12\t0.5\n",
            "lacks the columns",
        ),
        (b"", "the file is empty"),
        (b"\x00\xff\xfe\x01garbage\n\x02", "lacks the columns"),
    ] {
        std::fs::write(&other, text).unwrap();
        let e = read_error(&other);
        assert!(e.contains(says), "{e}");
    }
    let e = Report::build(&dir.path().join("nope.csv"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot open"), "{e}");
}

trait TapMkdir {
    fn tap_mkdir(self) -> PathBuf;
}

impl TapMkdir for PathBuf {
    fn tap_mkdir(self) -> PathBuf {
        std::fs::create_dir_all(&self).unwrap();
        self
    }
}

#[test]
fn an_existing_file_is_kept_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    std::fs::write(&csv, "mine\n").unwrap();
    let m = recordings::machine(Flavor::Vm, 2);
    let e = Recorder::create(&csv, OpenMode::New, &m, &meta())
        .err()
        .unwrap();
    assert!(matches!(e, RecordError::Exists(_)));
    assert!(
        e.to_string()
            .ends_with(": the file exists (--force overwrites it, --append adds to it)")
    );
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "mine\n");
    let rec = Recorder::create(&csv, OpenMode::Force, &m, &meta()).unwrap();
    assert_eq!(rec.rows(), 0);
    assert!(
        std::fs::read_to_string(&csv)
            .unwrap()
            .starts_with("time,t_s,dt_s,cpu,")
    );
    // an unwritable place is an error at start
    let e = Recorder::create(
        Path::new("/proc/no/such/dir/r.csv"),
        OpenMode::New,
        &m,
        &meta(),
    )
    .err()
    .unwrap();
    assert!(
        e.to_string()
            .starts_with("cannot write /proc/no/such/dir/r.csv: "),
        "{e}"
    );
}

#[test]
fn append_goes_on_with_a_matching_schema_and_refuses_another() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let m = recordings::machine(Flavor::IntelServer, 4);
    let mut rng = recordings::Rng::new(1);
    let ivs: Vec<Interval> = (0..4)
        .map(|i| recordings::interval(&m, i, 1.0, &mut rng, &recordings::deep))
        .collect();
    {
        let mut r = Recorder::create(&csv, OpenMode::New, &m, &meta()).unwrap();
        r.write(&ivs[0], &[]).unwrap();
        r.write(&ivs[1], &[]).unwrap();
    }
    let size = std::fs::metadata(&csv).unwrap().len();
    {
        let mut r = Recorder::create(&csv, OpenMode::Append, &m, &meta()).unwrap();
        assert_eq!(r.bytes(), size);
        r.write(&ivs[3], &[]).unwrap();
        assert_eq!(r.rows(), 5);
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.matches("time,t_s").count(), 1);
    let rec = Recording::open(&csv).unwrap();
    let mut ts = Vec::new();
    rec.for_each(|r| {
        if r.cpu.is_none() {
            ts.push(r.t_s);
        }
    })
    .unwrap();
    // t_s goes on from the first session's start, across the gap
    assert_eq!(ts, [1.0, 2.0, 4.0]);
    // another machine's idle states: refused, file untouched
    let other = recordings::machine(Flavor::Vm, 4);
    let e = Recorder::create(&csv, OpenMode::Append, &other, &meta())
        .err()
        .unwrap();
    let msg = e.to_string();
    assert!(
        msg.contains("its columns are not this machine's; it lacks haltpoll_idle_pct, haltpoll_idle_per_s; it has c1_pct, c1_per_s, c1e_pct, c1e_per_s, c6_pct, c6_per_s that this machine does not"),
        "{msg}"
    );
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), text);
}

#[test]
fn the_file_loads_with_pythons_csv_module_and_pandas() {
    let dir = tempfile::tempdir().unwrap();
    let csv = small_recording(dir.path());
    let script = r#"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 9, len(rows)
assert rows[2]["cpu"] == "all"
float(rows[0]["busy_pct"]); float(rows[0]["t_s"])
assert rows[0]["pkg_pc6_pct"] == ""
try:
    import pandas
except ImportError:
    print("pandas absent: skipped")
    sys.exit(0)
df = pandas.read_csv(sys.argv[1])
assert df["busy_pct"].dtype.kind in "if", df["busy_pct"].dtype
assert df["t_s"].dtype.kind in "if"
assert df["irq_per_s"].dtype.kind in "if", df["irq_per_s"].dtype
assert df["pkg_pc6_pct"].isna().all() and df["pkg_pc6_pct"].dtype.kind == "f"
print("pandas ok", len(df))
"#;
    let Ok(out) = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&csv)
        .output()
    else {
        println!("python3 absent: skipped");
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn plots_render_as_png_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let m = recordings::machine(Flavor::IntelServer, 16);
    recordings::record(&csv, &m, 60, 1.0, 4, &recordings::deep);
    let png = dir.path().join("p.png");
    noisetop::record::plot::plot(&csv, &png).unwrap();
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let svg = dir.path().join("p.svg");
    noisetop::record::plot::plot(&csv, &svg).unwrap();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.starts_with("<svg") && text.contains("Avg_MHz"),
        "{}",
        &text[..200]
    );
    let e = noisetop::record::plot::plot(&csv, &dir.path().join("p.jpg")).unwrap_err();
    assert!(e.to_string().contains("drawn as .svg or .png"));
}

/// The sample and column table of docs/record.md match what the recorder
/// writes.
#[test]
fn the_record_page_matches_the_recorder() {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/record.md"))
            .unwrap();
    let section = page
        .split("## Recording (--record)")
        .nth(1)
        .expect("docs/record.md has a `## Recording (--record)` section");
    let section = section.split("\n## ").next().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    record_replay(Flavor::Vm, 2, 3, &csv);
    let sample = std::fs::read_to_string(&csv).unwrap();
    assert!(
        section.contains(&format!("```csv\n{sample}```")),
        "the sample in docs/record.md differs from what is written now:\n{sample}"
    );
}

/// The column table of docs/record.md is the schema's (with one idle
/// state, `C6`); `UPDATE_DOCS=1 cargo test --test record` writes it anew.
#[test]
fn the_record_pages_column_table_is_the_schemas() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/record.md");
    let page = std::fs::read_to_string(&path).unwrap();
    let (open, close) = ("<!-- record-columns -->\n", "<!-- /record-columns -->");
    let a = page
        .find(open)
        .expect("docs/record.md has the column markers")
        + open.len();
    let b = page.find(close).unwrap();
    let mut table = String::from("| column | turbostat | meaning |\n|---|---|---|\n");
    for c in &Schema::with_states(vec!["C6".into()]).columns {
        let ts = c
            .turbostat
            .as_ref()
            .map_or(String::new(), |t| format!("`{t}`"));
        table.push_str(&format!("| `{}` | {ts} | {} |\n", c.name, c.about).replace("|  |", "| |"));
    }
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, format!("{}{table}{}", &page[..a], &page[b..])).unwrap();
        return;
    }
    assert_eq!(
        &page[a..b],
        table,
        "docs/record.md's columns are stale: UPDATE_DOCS=1 cargo test --test record"
    );
}

/// Draws docs/record.md's picture from a generated hour of a 64-CPU server:
/// `cargo test --release --test cli record::readme_plot -- --ignored`.
#[test]
#[ignore = "writes assets/record-plot.png"]
fn readme_plot() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("server-hour.csv");
    let m = recordings::machine(Flavor::IntelServer, 64);
    recordings::record_with(
        &csv,
        &m,
        3600,
        1.0,
        1,
        &recordings::server_hour,
        &recordings::server_hour_findings,
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::create_dir_all(root.join("assets")).unwrap();
    noisetop::record::plot::plot(&csv, &root.join("assets/record-plot.png")).unwrap();
    noisetop::record::plot::plot(&csv, &dir.path().join("p.svg")).unwrap();
    let svg = std::fs::metadata(dir.path().join("p.svg")).unwrap().len();
    println!("svg: {svg} bytes");
}

/// Nothing is held back in the process: each `write` has put the whole
/// interval in the file when it returns, so a kill at any point after it
/// loses nothing.
#[test]
fn every_interval_is_in_the_file_when_write_returns() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let m = recordings::machine(Flavor::IntelServer, 4);
    let mut rng = recordings::Rng::new(3);
    let mut rec = Recorder::create(&csv, OpenMode::New, &m, &meta()).unwrap();
    for i in 0..5 {
        let iv = recordings::interval(&m, i, 1.0, &mut rng, &recordings::deep);
        rec.write(&iv, &[]).unwrap();
        // read through another handle, as after a kill
        let text = std::fs::read_to_string(&csv).unwrap();
        assert_eq!(text.lines().count() as u64, 1 + 5 * (i + 1));
        assert!(text.ends_with('\n'));
        assert_eq!(rec.bytes(), text.len() as u64);
    }
    std::mem::forget(rec);
    assert_eq!(Report::build(&csv).unwrap().intervals, 5);
}

#[test]
fn a_device_that_is_full_is_an_error_at_start() {
    let m = recordings::machine(Flavor::Vm, 2);
    if !Path::new("/dev/full").exists() {
        println!("/dev/full absent: skipped");
        return;
    }
    let e = Recorder::create(Path::new("/dev/full"), OpenMode::Force, &m, &meta())
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        "/dev/full: not a regular file; a recording is a file, with its machine facts in FILE.json beside it"
    );
}

#[test]
fn the_summary_on_quit_shows_the_machine_and_the_noisiest_cpus() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let m = recordings::machine(Flavor::IntelServer, 64);
    recordings::record_with(
        &csv,
        &m,
        30,
        1.0,
        1,
        &recordings::server_hour,
        &recordings::server_hour_findings,
    );
    let s = noisetop::record::digest::summary(&csv);
    assert!(s.contains("48 quieter CPUs not shown"), "{s}");
    let freq: Vec<&str> = s
        .split("Frequency and load")
        .nth(1)
        .unwrap()
        .lines()
        .skip(2)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    // the machine, then CPU 2 (interrupt findings) and the busiest by interrupts
    assert_eq!(freq.len(), 17, "{freq:?}");
    assert_eq!(&freq[..4], ["all", "0", "1", "2"]);
    let e = noisetop::record::digest::summary(&dir.path().join("none.csv"));
    assert!(e.starts_with("cannot summarise the recording: "), "{e}");
}

/// The header's span runs from the first interval's start to the last
/// one's end, and its length agrees with the times shown; JSON gives
/// seconds to the millisecond the recording holds, not float noise.
#[test]
fn report_spans_from_the_first_start_to_the_last_end() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let m = recordings::machine(Flavor::Vm, 1);
    // a second as a real clock measures it: a little short
    recordings::record(&csv, &m, 5, 0.999_998_76, 5, &recordings::deep);
    let r = Report::build(&csv).unwrap();
    let text = r.render(Format::Table);
    let head = text.lines().nth(1).unwrap();
    assert!(
        head.ends_with(
            "5 intervals of 1.00 s · 2023-11-14T22:13:19.999Z → 2023-11-14T22:13:24.999Z (5.00 s)"
        ),
        "{head}"
    );
    let json: serde_json::Value = serde_json::from_str(&r.render(Format::Json)).unwrap();
    assert_eq!(json["duration_s"], serde_json::json!(5.0));
    assert_eq!(json["interval_s"], serde_json::json!(1.0));
    // the first row's time (written to the millisecond, 22:13:20.999)
    // less its length
    assert_eq!(json["first"], "2023-11-14T22:13:19.999Z");
}

/// A session that records ends with the recording's summary, as the
/// docs/record.md says (on stderr after tables); `--quiet` leaves it out.
#[test]
fn the_summary_at_the_end_is_said_and_quiet_leaves_it_out() {
    let dir = tempfile::tempdir().unwrap();
    let cap = dir.path().join("cap");
    synth::write_capture(
        &cap,
        &Spec {
            instants: 3,
            ..Spec::new(Flavor::Vm, 2)
        },
    )
    .unwrap();
    // one file name in two folders: the tables name the file
    let run = |sub: &str, quiet: bool| {
        let into = dir.path().join(sub);
        std::fs::create_dir(&into).unwrap();
        let mut c = Command::new(env!("CARGO_BIN_EXE_noisetop"));
        c.arg("replay").arg(&cap).arg("--batch").arg("--record");
        c.arg(into.join("r.csv"));
        if quiet {
            c.arg("--quiet");
        }
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (tables, said) = run("a", false);
    assert!(said.starts_with("noisetop report: "), "{said}");
    assert!(
        !tables.contains("noisetop report: "),
        "the summary is not in the tables"
    );
    let (quiet_tables, nothing) = run("b", true);
    assert_eq!(nothing, "");
    assert_eq!(quiet_tables, tables);
    assert!(dir.path().join("b/r.csv").is_file());
}
