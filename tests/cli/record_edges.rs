//! Smaller things a field test found in recordings: a static tree's
//! intervals of no length, a recording target that is not a file, an OS
//! error said once, the plot's colours, fixed scales and empty panels, and
//! an idle state the kernel names `C0`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::recordings;
use noisetop::model::machine::Machine;
use noisetop::os::fs::{Fs, Roots};
use noisetop::record::columns::Schema;
use noisetop::testkit::synth::Flavor;

fn noisetop() -> Command {
    Command::new(env!("CARGO_BIN_EXE_noisetop"))
}

fn captures() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/captures");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("../shared/captures absent: skipped");
        None
    }
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn a_static_tree_records_no_interval_of_no_length() {
    let Some(caps) = captures() else { return };
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let out = noisetop()
        .args(["--batch", "-n", "3", "-i", "100ms", "--root"])
        .arg(caps.join("pcp-1152cpu-x86_64"))
        .arg("--record")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let said = stdout
        .lines()
        .filter(|l| l.contains("intervals of no length are not recorded"))
        .count();
    assert_eq!(said, 1, "{stdout}");
    let mut rdr = csv::Reader::from_path(&csv).unwrap();
    let head = rdr.headers().unwrap().clone();
    let dt = head.iter().position(|h| h == "dt_s").unwrap();
    for r in rdr.records() {
        let r = r.unwrap();
        assert!(r[dt].parse::<f64>().unwrap() > 0.0, "{r:?}");
    }
}

#[test]
fn a_target_that_is_not_a_file_is_refused_without_a_sidecar_beside_it() {
    let full = Path::new("/dev/full");
    if !full.exists() {
        eprintln!("/dev/full absent: skipped");
        return;
    }
    // what the old code left behind
    let _ = std::fs::remove_file("/dev/full.json");
    let out = noisetop()
        .args(["--batch", "-n", "1", "--record", "/dev/full"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // a usage error, said before anything starts
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("/dev/full: not a regular file"), "{err}");
    assert!(!Path::new("/dev/full.json").exists());
}

#[test]
fn the_os_error_of_a_target_that_cannot_be_written_is_said_once() {
    let out = noisetop()
        .args(["--batch", "-n", "1", "--record", "/proc/no-such-dir/r.csv"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    assert!(
        err.starts_with("noisetop: cannot write /proc/no-such-dir/r.csv: "),
        "{err}"
    );
}

fn small_recording(dir: &Path) -> PathBuf {
    let m = recordings::machine(Flavor::IntelServer, 4);
    let csv = dir.join("r.csv");
    recordings::record(&csv, &m, 20, 1.0, 5, &recordings::deep);
    csv
}

fn svg(csv: &Path, scale: &str) -> String {
    let out = csv.with_extension(format!("{scale}.svg"));
    let st = noisetop()
        .arg("report")
        .arg(csv)
        .arg("--plot")
        .arg(&out)
        .args(["--scale", scale])
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn the_plot_keeps_red_for_findings_and_can_fix_its_scales() {
    let dir = tempfile::tempdir().unwrap();
    let csv = small_recording(dir.path());
    let auto = svg(&csv, "auto");
    // findings are red, busy time is not
    assert!(auto.contains("fill=\"#E60000\""), "finding marks");
    assert!(auto.contains("fill=\"#F0A528\""), "busy");
    assert!(!auto.contains("#D64541"), "the old red busy");
    // the file's own range, then the fixed one every file shares
    assert!(!auto.contains("\n0 MHz\n") && auto.contains(" MHz\n"));
    let fixed = svg(&csv, "fixed");
    assert!(
        fixed.contains("\n0 MHz\n") && fixed.contains("\n6000 MHz\n"),
        "fixed MHz scale"
    );
    assert!(fixed.contains("\n100000/s\n"), "fixed interrupt scale");
    assert!(!auto.contains("\nno data\n"));
}

#[test]
fn a_panel_without_figures_says_no_data() {
    let dir = tempfile::tempdir().unwrap();
    let csv = small_recording(dir.path());
    // blank every interrupt figure, as a machine without /proc/interrupts has
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let irq = head.iter().position(|h| *h == "irq_per_s").unwrap();
    let mut out = head.join(",") + "\n";
    for l in lines {
        let mut cells: Vec<&str> = l.split(',').collect();
        cells[irq] = "";
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    std::fs::write(&csv, out).unwrap();
    let plot = svg(&csv, "auto");
    assert!(plot.contains("\nno data\n"), "the interrupt panel");
    assert!(plot.contains("\nno interrupt figures\n"));
    assert!(!plot.contains("\n1/s\n"), "no scale over no data");
}

#[test]
#[cfg_attr(no_captures, ignore = "needs ../shared/captures")]
fn an_idle_state_named_c0_is_not_a_busy_column() {
    let Some(caps) = captures() else { return };
    let mut fs = Fs::new(Roots::under(&caps.join("util-linux-nehalem-64cpu")));
    let m = Machine::read(&mut fs);
    let names: Vec<String> = Schema::for_machine(&m)
        .names()
        .iter()
        .map(|s| (*s).to_string())
        .collect();
    assert!(names.contains(&"c0_idle_pct".to_string()), "{names:?}");
    assert!(names.contains(&"c0_idle_per_s".to_string()));
    assert!(!names.iter().any(|n| n == "c0_pct"), "{names:?}");
}

/// Runs noisetop; its exit code, and what it printed on stdout and stderr.
fn refused(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, String) {
    let out = noisetop().args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn report_and_compare_refuse_what_they_cannot_do_before_printing() {
    let dir = tempfile::tempdir().unwrap();
    let csv = small_recording(dir.path());
    let os = std::ffi::OsStr::new;
    // a plot name it cannot draw: said first, no report printed
    let (code, out, err) = refused(&[os("report"), csv.as_os_str(), os("--plot"), os("p.gif")]);
    assert_eq!(code, Some(1));
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("p.gif: the plot is drawn as .svg or .png"),
        "{err}"
    );
    // a header only: nothing to report, as compare says
    let text = std::fs::read_to_string(&csv).unwrap();
    let header = dir.path().join("header.csv");
    std::fs::write(&header, format!("{}\n", text.lines().next().unwrap())).unwrap();
    let (code, _, err) = refused(&[os("report"), header.as_os_str()]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("no interval recorded (a header only): nothing to report"),
        "{err}"
    );
    // CPUs in neither recording: a usage error
    let (code, _, err) = refused(&[
        os("compare"),
        csv.as_os_str(),
        csv.as_os_str(),
        os("--cpus"),
        os("9"),
    ]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("--cpus 9: no such CPU in both recordings"),
        "{err}"
    );
}
