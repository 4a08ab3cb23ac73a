//! A recording on a disk that fills up: the intervals that cannot be
//! written are counted, said once on stderr, listed in the sidecar, and
//! the report and compare name the hole they leave in `t_s`; the run exits
//! non-zero. A small tmpfs and a file size limit make the disk full.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::recordings;
use noisetop::record::sidecar::RecordMeta;
use noisetop::record::sidecar::Sidecar;
use noisetop::record::writer::OpenMode;
use noisetop::record::writer::Recorder;
use noisetop::record::writer::RowTags;
use noisetop::testkit::synth::Flavor;

/// A tmpfs of `size`, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(
            st.success(),
            "mounting a tmpfs needs root (tests run as root)"
        );
        Tmpfs { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// Fills the file system with one file until it refuses more.
fn fill(path: &Path) -> PathBuf {
    let filler = path.join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    let block = [0u8; 512];
    while f.write_all(&block).is_ok() {}
    filler
}

fn meta() -> RecordMeta {
    RecordMeta {
        version: "test".into(),
        interval_s: 1.0,
        watched: vec![0],
        command_line: vec!["noisetop".into()],
    }
}

#[test]
fn writes_resume_after_a_full_disk_and_the_hole_is_named() {
    let fs = Tmpfs::mount("1m");
    let csv = fs.path().join("a.csv");
    let m = recordings::machine(Flavor::Vm, 2);
    let mut rng = recordings::Rng::new(7);
    let mut rec = Recorder::create(&csv, OpenMode::New, &m, &meta()).unwrap();
    let tags = [RowTags::default()];
    let mut write = |i: u64| {
        let iv = recordings::interval(&m, i, 1.0, &mut rng, &recordings::deep);
        rec.write(&iv, &tags).is_ok()
    };
    assert!(write(0) && write(1));
    let filler = fill(fs.path());
    // the file's last page may take a few more intervals before it fails
    let mut i = 2;
    while write(i) {
        i += 1;
        assert!(i < 100, "a full tmpfs takes every write");
    }
    let first_lost = i;
    assert!(!write(i + 1) && !write(i + 2), "still full");
    std::fs::remove_file(filler).unwrap();
    assert!(write(i + 3) && write(i + 4) && write(i + 5));
    drop(rec);
    let side = Sidecar::read(&csv).unwrap().unwrap();
    assert_eq!(side.lost.len(), 1, "{:?}", side.lost);
    let lost = &side.lost[0];
    assert_eq!(lost.intervals, 3);
    let (from, to) = (first_lost as f64, first_lost as f64 + 3.0);
    assert!(
        (lost.from_t_s - from).abs() < 1e-6 && (lost.to_t_s - to).abs() < 1e-6,
        "{lost:?}"
    );
    assert!(lost.why.contains("No space left"), "{}", lost.why);
    // every line whole: the half-written interval was cut off
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count() as u64, 1 + (first_lost + 3) * 3);
    let bin = env!("CARGO_BIN_EXE_noisetop");
    let out = Command::new(bin).arg("report").arg(&csv).output().unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    assert!(
        report.contains(&format!(
            "t_s has 1 gap with nothing recorded, 3.00 s in all: {from:.2}–{to:.2} (3.00 s)"
        )),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "3 intervals were sampled but not written (t_s {from:.2}–{to:.2})"
        )),
        "{report}"
    );
    let out = Command::new(bin)
        .arg("compare")
        .arg(&csv)
        .arg(&csv)
        .output()
        .unwrap();
    let cmp = String::from_utf8_lossy(&out.stdout);
    assert!(cmp.contains("t_s has 1 gap"), "{cmp}");
}

/// `--batch --record` past a file size limit: the first failed write is
/// said once on stderr and once as a `#` line, the end says how many were
/// lost, and the exit status is 1.
#[test]
fn a_recording_that_loses_intervals_says_so_once_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_noisetop");
    // how big the sidecar and one interval are on this machine
    let probe = dir.path().join("probe.csv");
    let st = Command::new(bin)
        .args(["--batch", "-i", "20ms", "-n", "2", "--record"])
        .arg(&probe)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let side = std::fs::metadata(noisetop::os::fs::sidecar_path(&probe))
        .unwrap()
        .len();
    let text = std::fs::read_to_string(&probe).unwrap();
    let header = text.lines().next().unwrap().len() as u64 + 1;
    let per = (text.len() as u64 - header) / 2;
    // room for the sidecar (and its lost ranges), a few intervals of CSV
    let limit = side.max(header) + 4096 + 4 * per;
    let n = 2 * (limit / per) + 20;
    let csv = dir.path().join("a.csv");
    // writes past the limit fail with EFBIG; the shell ignores SIGXFSZ,
    // which would kill the writer, and that survives the exec
    let out = Command::new("sh")
        .args(["-c", "trap '' XFSZ; exec prlimit --fsize=\"$0\" -- \"$@\""])
        .arg(limit.to_string())
        .arg(bin)
        .args(["--batch", "-i", "20ms", "-n", &n.to_string(), "--record"])
        .arg(&csv)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let failed: Vec<&str> = stderr.lines().filter(|l| l.contains("failed:")).collect();
    assert_eq!(failed.len(), 1, "{stderr}");
    assert!(
        failed[0].starts_with(&format!(
            "noisetop: recording to {} failed: ",
            csv.display()
        )),
        "{stderr}"
    );
    assert_eq!(
        stdout.lines().filter(|l| l.contains("failed:")).count(),
        1,
        "{stdout}"
    );
    let recorded = std::fs::read_to_string(&csv).unwrap().lines().count() as u64 - 1;
    assert_eq!(
        recorded % 3,
        0,
        "whole intervals of 2 CPUs and the machine row"
    );
    let recorded = recorded / 3;
    let lost = n - recorded;
    assert!(lost >= 1, "recorded {recorded} of {n}");
    let end = format!(
        "noisetop: recording to {} lost {lost} intervals (t_s ",
        csv.display()
    );
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with(&end)).count(),
        1,
        "{stderr}"
    );
    let side = Sidecar::read(&csv).unwrap().unwrap();
    assert_eq!(
        side.lost.iter().map(|r| r.intervals).sum::<u64>(),
        lost,
        "{:?}",
        side.lost
    );
}
