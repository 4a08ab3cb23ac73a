//! The owner of a watched CPU on the live dashboard (tmux, 160×50): mark
//! CPU 1, start a busy loop there, and its row names the loop as the owner;
//! a second pinned loop makes one of them an intruder, named on the row;
//! `o` on a task of the detail's who-ran table makes it the owner. Needs
//! CPU 1 quiet (skipped, saying so, where others keep it busy).

use crate::cpu1;
use crate::tmux;

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use tmux::Tmux;

struct Loop(Child);

impl Loop {
    fn start() -> Loop {
        Loop(
            Command::new("taskset")
                .args(["-c", "1", "sh", "-c", "while :; do :; done"])
                .spawn()
                .unwrap(),
        )
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// CPU 1's row of the Cores view.
fn row_of_cpu1(screen: &str) -> Option<String> {
    screen
        .lines()
        .find(|l| {
            l.trim_start_matches(['│', ' ', '▸'])
                .split_whitespace()
                .next()
                == Some("1")
                && l.contains(" │ ")
        })
        .map(str::to_string)
}

/// Waits until CPU 1's row holds every one of `want`; panics with the
/// screen after 30 s (the machine may be loaded).
fn wait_row(t: &Tmux, want: &[String]) -> String {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let s = t.screen();
        if let Some(r) = row_of_cpu1(&s)
            && want.iter().all(|w| r.contains(w.as_str()))
        {
            return r;
        }
        assert!(
            Instant::now() < end,
            "waited for {want:?} on CPU 1's row:\n{s}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_marked_cpu_names_its_owner_and_a_second_loop_is_an_intruder_on_the_row() {
    let _turn = crate::turn::take();
    if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
        eprintln!("skipped: needs CPU 1");
        return;
    }
    // the test's loops must be the only ones there: another busy task
    // would be the owner, rightly
    let busy = cpu1::busy_pct();
    if busy > cpu1::BUSY_LIMIT_PCT {
        eprintln!("CPU 1 busy {busy:.0} %: skipped (this test needs it quiet)");
        return;
    }
    let cmd = format!(
        "{} --interval 500ms; echo EXITED rc=$?; sleep 60",
        env!("CARGO_BIN_EXE_noisetop")
    );
    let Some(t) = Tmux::start("owner", &cmd) else {
        return;
    };
    t.wait_for(&["┌ Cores"]);
    // the detail of an unwatched CPU lists its top tasks, counted in the
    // kernel (sampled from /proc where BPF cannot load), with no owner
    t.keys(&["Enter"]);
    t.wait_for(&["│ Detail", "CPU 0 · core", "who ran (", "longest "]);
    t.keys(&["Escape"]);
    t.wait_for(&["┌ Cores"]);
    // select CPU 1 and mark it
    t.keys(&["j", "m"]);
    let first = Loop::start();
    let a = first.0.id();
    let row = wait_row(&t, &[format!("owner sh[{a}]")]);
    eprintln!("one loop: {row}");
    let second = Loop::start();
    let b = second.0.id();
    // the two share the CPU: whichever ran longer owns it, the other is
    // named as the intruder
    let row = wait_row(
        &t,
        &[format!("sh[{a}]"), format!("sh[{b}]"), "owner sh[".into()],
    );
    eprintln!("two loops: {row}");
    // the detail's who-ran table: `o` makes the selected task the owner,
    // and from then on the other loop is the intruder whatever it runs
    t.keys(&["Enter"]);
    let s = t.wait_for(&["who ran", "▸sh["]);
    let picked: u32 = s
        .split("▸sh[")
        .nth(1)
        .and_then(|x| x.split(']').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("a selected task:\n{s}"));
    assert!(
        picked == a || picked == b,
        "{picked} is one of the loops:\n{s}"
    );
    let other = if picked == a { b } else { a };
    t.keys(&["o", "Escape"]);
    for _ in 0..3 {
        // several intervals in a row: the owner no longer follows who ran longest
        let row = wait_row(&t, &[format!("owner sh[{picked}]"), format!("sh[{other}]")]);
        assert!(!row.contains(&format!("owner sh[{other}]")), "{row}");
        std::thread::sleep(Duration::from_millis(600));
    }
    drop((first, second));
    t.keys(&["q"]);
    t.wait_for(&["EXITED rc=0"]);
}
