//! The pictures of the README and docs/dashboard.md are what `cargo run
//! --release --example screenshot -- assets/` draws: each is drawn again
//! here through the same code (`noisetop::cmd::shot`) and must equal the
//! committed file byte for byte. What the pages say they show is checked
//! on the same screens. The overview reads `../shared/captures`; where it
//! is absent that picture is skipped with a message (the capture of the
//! other two is in the repository).

use std::path::Path;

use noisetop::cmd::shot::{PICTURES, Picture, screen, svg, text};

const COMMAND: &str = "cargo run --release --example screenshot -- assets/";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn picture(file: &str) -> Picture {
    *PICTURES
        .iter()
        .find(|p| p.file == file)
        .unwrap_or_else(|| panic!("{file} is not one of the pictures"))
}

/// The picture's screen, or `None` (said) when its tree is absent.
fn drawn(p: &Picture) -> Option<ratatui::buffer::Buffer> {
    if !repo().join(p.tree).is_dir() {
        eprintln!("{} absent: {} not checked", p.tree, p.file);
        return None;
    }
    Some(screen(p, repo()).unwrap_or_else(|e| panic!("{}: {e:#}", p.file)))
}

#[test]
fn the_committed_pictures_are_what_the_documented_command_draws() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let page = std::fs::read_to_string(repo().join("docs/dashboard.md")).unwrap();
    assert!(page.contains(COMMAND), "docs/dashboard.md names {COMMAND}");
    // the product's face: the Cores view, first in the README
    let first = readme.split("![").nth(1).expect("a picture in the README");
    let shown = first.split("](").nth(1).and_then(|t| t.split(')').next());
    assert_eq!(
        shown,
        Some("assets/cores.svg"),
        "the README's first picture"
    );
    for p in &PICTURES {
        assert!(
            readme.contains(&format!("(assets/{})", p.file))
                || page.contains(&format!("(../assets/{})", p.file)),
            "the README or docs/dashboard.md shows assets/{}",
            p.file
        );
        let Some(b) = drawn(p) else { continue };
        let want = svg(&b);
        let have = std::fs::read_to_string(repo().join("assets").join(p.file))
            .unwrap_or_else(|e| panic!("assets/{}: {e}", p.file));
        if have != want {
            let line = have
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .map_or_else(|| "its length".into(), |n| format!("line {}", n + 1));
            panic!(
                "assets/{} is not what the code draws now (first difference: {line}); \
                 run `{COMMAND}` and commit the result",
                p.file
            );
        }
    }
}

#[test]
fn the_same_tree_draws_the_same_bytes() {
    let p = picture("dashboard.svg");
    let a = svg(&drawn(&p).unwrap());
    let b = svg(&drawn(&p).unwrap());
    assert_eq!(a, b);
    // nothing of the checkout's place on disk reaches the picture
    let here = repo().display().to_string();
    assert!(!a.contains(&here), "{here} in the picture");
}

/// What the README and docs/dashboard.md say of the Cores view: the
/// 2-vCPU capture at its end, CPU 1 selected and watched, its owner the
/// benchmark and gzip named beside it, the finding that names gzip with
/// the command that moves it.
#[test]
fn the_cores_picture_shows_what_the_pages_say() {
    let p = picture("cores.svg");
    let screen = text(&drawn(&p).unwrap());
    for want in [
        "replay assets/captures/vm-2cpu-intruder 90/90",
        "end of capture",
        "┌ Cores │",
        "watching 1",
        "▸   1 ",
        "owner stress-ng-cpu[",
        "· gzip[",
        "CRIT intruder",
        "CPU 1: gzip[",
        "(the CPU belongs to stress-ng-cpu[",
        "→ taskset -apc 0 ",
        "MHz via kernel",
    ] {
        assert!(screen.contains(want), "{want:?} not on\n{screen}");
    }
}

/// What docs/dashboard.md says of the detail picture: CPU 1 of the 2-vCPU
/// capture, its benchmark the owner, gzip named as the intruder with the
/// command that moves it, the interrupt sources named, 90 intervals.
#[test]
fn the_dashboard_picture_shows_what_the_readme_says() {
    let p = picture("dashboard.svg");
    let instants = noisetop::os::capture::instants(&repo().join(p.tree)).unwrap();
    assert_eq!(instants.len(), 91, "90 intervals");
    let screen = text(&drawn(&p).unwrap());
    for want in [
        "replay assets/captures/vm-2cpu-intruder 90/90",
        "end of capture",
        "no cpufreq",
        "MHz via kernel",
        "Detail",
        " Avg_MHz ",
        " Busy ",
        " C-state mix ",
        " IRQ/s ",
        " CSW/s ",
        "CPU 1 · core 1",
        "-89 s",
        "now",
        "who ran",
        "▸gzip[",
        "LOC Local timer interrupts",
        "virtio1-req.0",
        "CRIT intruder",
        "CPU 1: gzip[",
        "the CPU belongs to",
        "stress-ng-cpu[",
        "→ taskset -apc 0 ",
        "2 CPUs",
    ] {
        assert!(screen.contains(want), "{want:?} not on\n{screen}");
    }
}

/// What docs/dashboard.md says of the overview: the EPYC's 96 CPUs in two
/// packages, one instant, painted by each CPU's current clock, which is
/// above the top clock on every CPU.
#[test]
fn the_overview_picture_shows_what_the_readme_says() {
    let p = picture("overview.svg");
    let Some(b) = drawn(&p) else { return };
    let screen = text(&b);
    for want in [
        "2p 48c 96t",
        "one instant",
        "foreign tree",
        "Overview",
        "cur MHz",
        "96 of 96 CPUs",
        "pkg 0",
        "pkg 1",
    ] {
        assert!(screen.contains(want), "{want:?} not on\n{screen}");
    }
    // every CPU's cell at the top level: cur is above the 2300 MHz top
    let cells = screen
        .lines()
        .filter(|l| l.contains("pkg "))
        .fold(0, |n, l| n + l.chars().filter(|c| *c == '█').count());
    assert_eq!(cells, 96, "{screen}");
    let root = noisetop::os::fs::Roots::under(&repo().join(p.tree));
    let m = noisetop::model::machine::Machine::read(&mut noisetop::os::fs::Fs::new(root));
    let cur: Vec<u64> = m.cpufreq.iter().filter_map(|f| f.cur_khz).collect();
    assert_eq!(cur.len(), 96);
    let (lo, hi) = (cur.iter().min().unwrap(), cur.iter().max().unwrap());
    assert_eq!((lo / 1000, hi / 1000), (2891, 2894), "the page's range");
    assert_eq!(m.max_mhz, Some(2300.0));
}

/// docs/dashboard.md's account of the capture: one-second intervals, and a gzip
/// job that came to CPU 1 four times (four processes each traced running
/// at least 100 ms in a window), the benchmark the owner throughout.
#[test]
fn the_capture_is_what_the_readme_says() {
    let dir = repo().join(picture("dashboard.svg").tree);
    let instants = noisetop::os::capture::instants(&dir).unwrap();
    let mut gzips: Vec<u32> = Vec::new();
    let mut last_ns: Option<u64> = None;
    for d in &instants {
        let c = noisetop::os::capture::Captured::load(d).unwrap();
        if let Some(before) = last_ns {
            let dt = c.stamp.mono_ns - before;
            assert!(
                dt.abs_diff(1_000_000_000) < 10_000_000,
                "{}: {dt} ns",
                d.display()
            );
        }
        last_ns = Some(c.stamp.mono_ns);
        if d == &instants[0] {
            // the window before the first snapshot is no interval
            continue;
        }
        let t = noisetop::pipeline::kept_trace::read(d)
            .unwrap()
            .expect("a kept window");
        let cpu1 = t.cpu(1).expect("CPU 1 traced");
        assert_eq!(
            cpu1.owner.as_ref().map(|o| o.comm.as_str()),
            Some("stress-ng-cpu"),
            "{}",
            d.display()
        );
        assert!(cpu1.owner_given);
        for i in &cpu1.intruders {
            if i.task.comm == "gzip" && i.ns >= 100_000_000 && !gzips.contains(&i.task.pid) {
                gzips.push(i.task.pid);
            }
        }
    }
    assert_eq!(gzips.len(), 4, "{gzips:?}");
}
