//! The metric catalogue and its sinks agree: every figure it declares is in
//! the dashboard's columns, the `--batch` table, the recording's header,
//! `report`, the exporter's families and docs/columns.md, by the name the
//! entry gives; and a synthetic laptop replayed through the pipeline shows
//! the run-queue wait its /proc/schedstat was written with (CPU3 50 ms/s,
//! CPU2 2 ms/s: `RQwait%` 5.0 and 0.2) in each of them.

use std::path::Path;
use std::sync::Arc;

use noisetop::cmd::record_sink as sink;
use noisetop::metric::{self, Each, Prom};
use noisetop::model::snapshot::Snapshot;
use noisetop::pipeline::{Sample, Step, replay};
use noisetop::record::columns::Schema;
use noisetop::record::digest::Report;
use noisetop::record::sidecar::RecordMeta;
use noisetop::record::writer::OpenMode;
use noisetop::record::writer::Recorder;
use noisetop::serve::{Detail, Exporter, Shared, catalog};
use noisetop::testkit::synth::{self, Flavor, Spec};

/// Replays three instants of a synthetic 8-CPU laptop, recording them to
/// `csv`: the samples, and the snapshot of the last.
fn laptop(csv: &Path) -> (Vec<Sample>, Snapshot, noisetop::model::machine::Machine) {
    let cap = tempfile::tempdir().unwrap();
    let spec = Spec {
        instants: 3,
        ..Spec::new(Flavor::IntelLaptop, 8)
    };
    synth::write_capture(cap.path(), &spec).unwrap();
    let replay::Replay {
        instants,
        mut driver,
    } = replay::open(cap.path()).unwrap();
    let m = driver.engine.sampler.machine.clone();
    let meta = RecordMeta {
        version: env!("CARGO_PKG_VERSION").into(),
        interval_s: 1.0,
        watched: vec![],
        command_line: vec!["noisetop".into()],
    };
    let mut rec = Recorder::create(csv, OpenMode::New, &m, &meta).unwrap();
    let mut samples = Vec::new();
    for (i, dir) in instants.iter().enumerate() {
        if i > 0 {
            replay::advance(&mut driver, dir).unwrap();
        }
        if let Step::Sample(s) = driver.step() {
            rec.write(&s.interval, &sink::tags(&s)).unwrap();
            samples.push(*s);
        }
    }
    let last = driver.engine.last().unwrap().clone();
    (samples, last, m)
}

/// The names a figure's batch columns take on the laptop, whose CPUs have
/// these states.
fn batch_headers(f: &metric::Figure, idle: &[&str], hw: &[&str]) -> Vec<String> {
    let Some(h) = f.batch_header() else {
        return Vec::new();
    };
    match f.each {
        Each::One => vec![h.to_string()],
        Each::IdleState => idle.iter().map(|s| metric::fill(h, s, "")).collect(),
        Each::CoreState(_) => hw.iter().map(|s| metric::fill(h, s, "")).collect(),
        Each::PackageState(_) => Vec::new(),
    }
}

#[test]
fn every_sink_carries_every_figure_of_the_catalogue() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let (samples, last, m) = laptop(&csv);
    let iv = &samples.last().unwrap().interval;

    // the dashboard: one optional column per entry that has one, by its name
    let tui: Vec<&str> = noisetop::tui::columns::columns()
        .iter()
        .map(|c| c.name)
        .collect();
    let want: Vec<&str> = metric::tui_columns()
        .iter()
        .filter_map(|f| f.tui_header())
        .collect();
    assert_eq!(tui, want);
    assert!(tui.contains(&"RQwait%"), "{tui:?}");

    // --batch: every entry's column, states as the laptop's CPUs have them
    let table = noisetop::output::batch::table(iv, None);
    let head: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    let idle: Vec<String> = iv.cpus[0].idle.iter().map(|s| s.name.to_string()).collect();
    let idle: Vec<&str> = idle.iter().map(String::as_str).collect();
    let hw: Vec<&str> = iv.cpus[0].hw_cstates.iter().map(|s| s.0).collect();
    let mut expected = vec!["CPU".to_string()];
    for f in metric::batch_columns() {
        expected.extend(batch_headers(f, &idle, &hw));
    }
    assert_eq!(head, expected);

    // the recording: every entry's column (one per state of a family)
    let schema = Schema::for_machine(&m);
    let names = schema.names();
    for f in metric::ALL {
        let cols: Vec<String> = match f.each {
            Each::One => vec![f.csv.to_string()],
            Each::IdleState => schema
                .states
                .iter()
                .map(|s| {
                    let stem = noisetop::record::columns::state_stem(s);
                    metric::fill(f.csv, s, &stem)
                })
                .collect(),
            Each::CoreState(l) | Each::PackageState(l) => {
                l.iter().map(|s| s.csv.to_string()).collect()
            }
        };
        for c in cols {
            assert!(names.contains(&c.as_str()), "the recording lacks {c}");
        }
    }
    let header = std::fs::read_to_string(&csv).unwrap();
    assert!(header.starts_with(&names.join(",")));

    // report: every figure of one value is summed up in the JSON; the ones
    // with a column in its table and a value head it by their name
    let report = Report::build(&csv).unwrap();
    let machine = report.rows.iter().find(|r| r.cpu == "all").unwrap();
    let text = report.text(false, None);
    for f in metric::ALL.iter().filter(|f| f.each == Each::One) {
        let v = match f.over_time {
            metric::OverTime::Mean => machine.means.get(f.csv).copied(),
            metric::OverTime::Total => machine.totals.get(f.csv).copied(),
            metric::OverTime::Quantiles | metric::OverTime::None => continue,
        };
        let Some(v) = v else {
            panic!("report's JSON lacks {}", f.csv)
        };
        if let (Some(h), Some(_)) = (f.report_header(), v) {
            assert!(
                text.lines().any(|l| l.split_whitespace().any(|w| w == h)),
                "report's table lacks {h}:\n{text}"
            );
        }
    }

    // serve: every family an entry names is one the exporter writes
    let families: Vec<&str> = catalog::all().iter().map(|d| d.name).collect();
    for f in metric::ALL {
        if let Some(family) = f.prometheus.family() {
            assert!(families.contains(&family), "serve has no {family}");
        }
    }

    // docs/columns.md: a row per entry in each table
    let page = crate::docs::read("docs/columns.md");
    for f in metric::ALL {
        let row = format!("\n| `{}` |", f.name);
        assert_eq!(page.matches(&row).count(), 2, "docs/columns.md: {row}");
    }

    // and the figure added through the catalogue alone, with its values
    let rq = |cpu: u32| iv.cpu(cpu).and_then(|r| r.rq_wait_pct);
    assert_eq!((rq(2), rq(3)), (Some(0.2), Some(5.0)));
    let row = |cpu: &str| {
        table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(cpu))
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    let at = head.iter().position(|h| *h == "RQwait%").unwrap();
    assert_eq!(row("3")[at], "5.00");
    assert_eq!(row("2")[at], "0.20");
    // the machine's: the mean of the eight CPUs' 0, 0.1, 0.2, 5, 0, 0.1, 0.2, 0.3
    assert_eq!(row("-")[at], "0.74");
    let cpu3 = report.rows.iter().find(|r| r.cpu == "3").unwrap();
    let mean = cpu3.means.get("rqwait_pct").copied().flatten().unwrap();
    assert!((mean - 5.0).abs() < 1e-9, "{mean}");
    assert!(text.contains("RQwait%"), "{text}");
    let line = header.lines().nth(1).unwrap();
    let col = names.iter().position(|n| *n == "rqwait_pct").unwrap();
    assert_eq!(
        line.split(',').nth(col),
        Some("0"),
        "CPU 0 waits 0 ms/s: {line}"
    );

    let shared = Arc::new(Shared::default());
    let mut ex = Exporter::new(Arc::clone(&shared), m, &[2, 3], Detail::Watched);
    ex.observe(&last);
    ex.publish(samples.last().unwrap());
    let text = String::from_utf8(shared.latest().unwrap().classic.to_vec()).unwrap();
    // instant 2 is 1 002 s from boot: 50 ms/s × 1002 s and 2 ms/s × 1002 s
    assert!(
        text.contains("\nnoisetop_cpu_rqwait_seconds_total{cpu=\"3\"} 50.1\n"),
        "{text}"
    );
    assert!(text.contains("\nnoisetop_cpu_rqwait_seconds_total{cpu=\"2\"} 2.004\n"));
    assert!(text.contains("# TYPE noisetop_cpu_rqwait_seconds_total counter\n"));
}

#[test]
fn where_the_kernel_has_no_schedstat_the_figure_is_unknown_and_says_why() {
    // a kernel built without CONFIG_SCHEDSTATS, as the build VM's
    let cap = tempfile::tempdir().unwrap();
    synth::write_capture(cap.path(), &Spec::new(Flavor::Vm, 2)).unwrap();
    for i in ["0000", "0001"] {
        std::fs::remove_file(cap.path().join(i).join("proc/schedstat")).unwrap();
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .args(["replay", "--batch"])
        .arg(cap.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines().skip_while(|l| !l.starts_with("CPU "));
    let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let at = head.iter().position(|h| *h == "RQwait%").unwrap();
    for l in lines.take(3) {
        assert_eq!(l.split_whitespace().nth(at), Some("-"), "{l}");
    }
    assert!(
        text.contains(
            "# RQwait%: unavailable: no /proc/schedstat: the kernel was built without \
             CONFIG_SCHEDSTATS (or the capture has none)\n"
        ),
        "{text}"
    );
}

/// `UPDATE_DOCS=1 cargo test --test library metric_catalogue::` writes the tables anew.
#[test]
fn the_columns_page_is_the_catalogue() {
    let path = crate::docs::root().join("docs/columns.md");
    let page = std::fs::read_to_string(&path).unwrap();
    let (open, close) = ("<!-- columns -->\n", "<!-- /columns -->");
    let a = page
        .find(open)
        .expect("docs/columns.md has the columns markers")
        + open.len();
    let b = page.find(close).unwrap();
    let table = metric::markdown_table();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, format!("{}{table}{}", &page[..a], &page[b..])).unwrap();
        return;
    }
    assert_eq!(
        &page[a..b],
        table,
        "docs/columns.md is stale: UPDATE_DOCS=1 cargo test --test library metric_catalogue::"
    );
}

#[test]
fn a_figure_with_a_family_of_its_own_is_written_by_the_exporter_from_its_entry() {
    for f in metric::ALL {
        if let Prom::Counter { family, unit, .. } = f.prometheus {
            let d = catalog::all()
                .into_iter()
                .find(|d| d.name == family)
                .unwrap();
            assert_eq!(d.unit, unit);
            assert_eq!(d.sample_name(), format!("{family}_total"));
        }
    }
}
