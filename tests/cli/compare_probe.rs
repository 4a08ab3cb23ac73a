//! `compare` of two ordinary recordings that carry a probe (the last
//! `noisetop probe` that ended while each was recorded, kept in its
//! sidecar): after the usual comparison, the measured sentence of the two
//! probes, with the exact figures of the probe fixtures' histograms; one
//! side without a probe is said, not guessed; a recorder picks up a probe
//! that ended while it recorded, and not one from before it started.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, UNIX_EPOCH};

use crate::recordings;
use noisetop::record::sidecar::RecordMeta;
use noisetop::record::sidecar::Sidecar;
use noisetop::record::writer::OpenMode;
use noisetop::record::writer::Recorder;
use noisetop::testkit::synth::Flavor;

const SENTENCE: &str = "B's wake-ups from C6: p50 91 µs (advertised 133 µs), A's from C1: p50 2 µs — \
                        89 µs more per wake-up, measured";

fn fixture(name: &str) -> serde_json::Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/probe")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Two recordings of the same synthetic machine; each sidecar carries the
/// probe fixture named, if any.
fn pair(dir: &Path, a: Option<&str>, b: Option<&str>) -> (PathBuf, PathBuf) {
    let m = recordings::machine(Flavor::IntelServer, 4);
    let (pa, pb) = (dir.join("a.csv"), dir.join("b.csv"));
    recordings::record(&pa, &m, 5, 1.0, 1, &recordings::shallow);
    recordings::record(&pb, &m, 5, 1.0, 2, &recordings::shallow);
    for (csv, probe) in [(&pa, a), (&pb, b)] {
        let side = PathBuf::from(format!("{}.json", csv.display()));
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
        assert!(v.get("probe").is_none(), "no probe ended while recording");
        if let Some(p) = probe {
            v["probe"] = fixture(p);
            std::fs::write(&side, serde_json::to_string(&v).unwrap()).unwrap();
        }
    }
    (pa, pb)
}

fn compare(a: &Path, b: &Path, extra: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_noisetop"))
        .arg("compare")
        .arg(a)
        .arg(b)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn two_recordings_with_probes_end_with_the_measured_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = pair(dir.path(), Some("a.csv.json"), Some("b.csv.json"));
    let text = compare(&a, &b, &[]);
    let (ordinary, probes) = text
        .split_once("\nProbes recorded with each side:\n")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(!ordinary.is_empty());
    assert_eq!(probes.lines().next().unwrap(), SENTENCE);
    assert!(
        probes.contains(
            "remote      C6                     0         -         -      1000        91       120         133"
        ),
        "{probes}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&compare(&a, &b, &["--format", "json"])).unwrap();
    assert_eq!(v["probes"]["sentence"], SENTENCE);
    assert_eq!(v["probes"]["b"]["remote"]["C6"]["count"], 1000);
    let md = compare(&a, &b, &["--format", "md"]);
    assert!(
        md.contains(&format!(
            "\n## Probes recorded with each side\n\n```\n{SENTENCE}\n"
        )),
        "{md}"
    );
}

#[test]
fn one_side_without_a_probe_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = pair(dir.path(), None, Some("b.csv.json"));
    let text = compare(&a, &b, &[]);
    assert!(
        text.ends_with(
            "\nProbes recorded with each side:\nB carries a probe and A does not: no wake-up \
             measured on A\n"
        ),
        "{text}"
    );
    let none = dir.path().join("none");
    std::fs::create_dir_all(&none).unwrap();
    let (a, b) = pair(&none, None, None);
    assert!(!compare(&a, &b, &[]).contains("Probes recorded"));
}

/// Records three 1 s intervals from the synthetic start (Unix time
/// 1 700 000 000 s) while the probe file's time is `probe_at_s`; returns
/// whether the sidecar carries the probe.
fn recorded_with_probe_at(dir: &Path, probe_at_s: u64) -> bool {
    let m = recordings::machine(Flavor::IntelServer, 2);
    let file = dir.join("last-probe.json");
    std::fs::write(
        &file,
        serde_json::to_string(&fixture("a.csv.json")).unwrap(),
    )
    .unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(UNIX_EPOCH + Duration::from_secs(probe_at_s))
        .unwrap();
    let csv = dir.join(format!("rec{probe_at_s}.csv"));
    let meta = RecordMeta {
        version: "test".into(),
        interval_s: 1.0,
        watched: vec![1],
        command_line: Vec::new(),
    };
    let mut rec = Recorder::create(&csv, OpenMode::New, &m, &meta).unwrap();
    rec.follow_probe(Some(file));
    let mut rng = recordings::Rng::new(1);
    for i in 0..3 {
        let iv = recordings::interval(&m, i, 1.0, &mut rng, &recordings::shallow);
        rec.write(&iv, &[]).unwrap();
    }
    drop(rec);
    let side = Sidecar::read(&csv).unwrap().unwrap();
    side.probe
        .is_some_and(|p| p.cpus == [1, 2] && p.rows.len() == 4)
}

#[test]
fn a_recording_carries_the_probe_that_ended_while_it_ran() {
    let dir = tempfile::tempdir().unwrap();
    // the recording covers 1 700 000 000 to 1 700 000 003
    assert!(recorded_with_probe_at(dir.path(), 1_700_000_002));
    assert!(!recorded_with_probe_at(dir.path(), 1_699_999_990));
    assert!(!recorded_with_probe_at(dir.path(), 1_700_000_010));
}
