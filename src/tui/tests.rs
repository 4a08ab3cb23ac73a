//! Whole-screen snapshots of every view at 80×24 and 160×50 on synthetic
//! captures (an 8-CPU Intel laptop, a 64-CPU Intel server, and a KVM guest
//! like the build machine with its unavailable metrics), plus checks that
//! hold for every size: no panic, `NO_COLOR`, the selection stays visible.

use std::sync::OnceLock;
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;

use crate::pipeline::{Driver, Msg, replay};
use crate::testkit::synth::{self, Flavor, Spec};
use crate::tui::keys::Action;
use crate::tui::state::{Origin, Overlay, SelfIpis, Sort, State, View};
use crate::tui::theme::Theme;

/// Plays every interval of a synthetic capture into a fresh state.
fn played(flavor: Flavor, cpus: u32, watched: &[u32], color: bool) -> State {
    played_for(flavor, cpus, 4, watched, color)
}

/// Plays a generated capture of `instants` instants through the replay feed.
pub(crate) fn played_for(
    flavor: Flavor,
    cpus: u32,
    instants: u32,
    watched: &[u32],
    color: bool,
) -> State {
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec {
        flavor,
        cpus,
        instants,
        interval_ms: 1000,
    };
    synth::write_capture(dir.path(), &spec).unwrap();
    let (instants, engine) = crate::pipeline::replay::open_engine(dir.path()).unwrap();
    let mut s = State::new(
        engine.sampler.machine.clone(),
        Origin::Replay("capture".into()),
        Duration::from_secs(1),
        Theme { color },
    )
    .with_watched(watched.to_vec());
    let (tx, rx) = std::sync::mpsc::sync_channel(16);
    replay::replay_into(
        &instants,
        Driver::new(engine).watching(watched),
        None,
        &mut [],
        &tx,
    );
    drop(tx);
    for m in rx {
        s.update_feed(m);
    }
    s
}

pub(super) fn laptop() -> State {
    static S: OnceLock<State> = OnceLock::new();
    S.get_or_init(|| played(Flavor::IntelLaptop, 8, &[2, 3], true))
        .clone()
}

pub(super) fn server() -> State {
    static S: OnceLock<State> = OnceLock::new();
    // the default budget reads a 64-CPU server in three rounds: seven
    // instants give every CPU two reads, so every CPU has C-state figures
    S.get_or_init(|| played_for(Flavor::IntelServer, 64, 7, &[2, 3, 4, 5], true))
        .clone()
}

pub(super) fn vm() -> State {
    static S: OnceLock<State> = OnceLock::new();
    S.get_or_init(|| played(Flavor::Vm, 2, &[1], true)).clone()
}

pub(super) fn draw(s: &State, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut s = s.clone();
    s = s.with_screen(ratatui::layout::Size::new(w, h));
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| f.render_widget(&s, f.area())).unwrap();
    t
}

/// Runs `f` with the filters for what changes from run to run: clock
/// times and the kernel release.
pub(super) fn with_filters(f: impl FnOnce()) {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"\b\d\d:\d\d:\d\d\b", "hh:mm:ss");
    settings.add_filter(r"kernel \d[^ │]*", "kernel [release]");
    settings.bind(f);
}

/// Snapshots one state at both sizes, volatile text filtered.
fn snap(name: &str, s: &State) {
    with_filters(|| {
        for (w, h) in [(80, 24), (160, 50)] {
            let text = draw(s, w, h).backend().to_string();
            insta::assert_snapshot!(format!("{name}_{w}x{h}"), text);
        }
    });
}

pub(super) fn view(mut s: State, v: View) -> State {
    s = s.with_view(v);
    s
}

/// Selects the second CPU in row order and opens its detail view.
fn detail(mut s: State) -> State {
    s.update(Action::Down);
    s.update(Action::Detail);
    s
}

#[test]
fn laptop_views() {
    let s = laptop();
    snap("laptop_cores", &s);
    snap("laptop_overview", &view(s.clone(), View::Overview));
    snap("laptop_interrupts", &view(s.clone(), View::Interrupts));
    snap("laptop_cstates", &view(s.clone(), View::Cstates));
    snap("laptop_findings", &view(s.clone(), View::Findings));
    snap("laptop_detail", &detail(s.clone()));
    let mut help = s;
    help.update(Action::Help);
    snap("laptop_help", &help);
}

#[test]
fn server_views() {
    let s = server();
    snap("server_cores", &s);
    snap("server_overview", &view(s.clone(), View::Overview));
    snap("server_interrupts", &view(s.clone(), View::Interrupts));
    snap("server_cstates", &view(s.clone(), View::Cstates));
    snap("server_findings", &view(s.clone(), View::Findings));
    snap("server_detail", &detail(s.clone()));
    let mut noisy = s;
    noisy.update(Action::Sort);
    assert_eq!(noisy.nav().sort(), Sort::Noise);
    snap("server_cores_noisiest", &noisy);
}

#[test]
fn cstates_view_names_the_window_of_cpus_read_every_sample() {
    // a 64-CPU server read in three rounds, CPU 2 watched (read every sample)
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec {
        instants: 7,
        ..Spec::new(Flavor::IntelServer, 64)
    };
    synth::write_capture(dir.path(), &spec).unwrap();
    crate::os::capture::write_budget(&dir.path().join("0000"), 448, &[2]).unwrap();
    let (instants, engine) = crate::pipeline::replay::open_engine(dir.path()).unwrap();
    let mut s = State::new(
        engine.sampler.machine.clone(),
        Origin::Replay("capture".into()),
        Duration::from_secs(1),
        Theme { color: false },
    )
    .with_watched(vec![2]);
    let (tx, rx) = std::sync::mpsc::sync_channel(16);
    replay::replay_into(
        &instants,
        Driver::new(engine).watching(&[2]),
        None,
        &mut [],
        &tx,
    );
    drop(tx);
    for m in rx {
        s.update_feed(m);
    }
    let t = draw(&view(s, View::Cstates), 160, 50);
    let text = t.backend().to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[5].contains("cpuidle: last 3 s"), "{}", lines[5]);
    let row = |start: &str| {
        lines
            .iter()
            .find(|l| l.contains(start))
            .copied()
            .unwrap_or_default()
    };
    // the watched CPU's row is marked ▸
    let (two, three) = (row("│▸   2 "), row("│    3 "));
    assert!(two.contains("cpuidle: last 1 s"), "{two}");
    assert!(!three.is_empty() && !three.contains("cpuidle"), "{three}");
}

#[test]
fn vm_views_show_what_is_unavailable() {
    let s = vm();
    snap("vm_cores", &s);
    snap("vm_overview", &view(s.clone(), View::Overview));
    snap("vm_interrupts", &view(s.clone(), View::Interrupts));
    snap("vm_cstates", &view(s.clone(), View::Cstates));
    snap("vm_findings", &view(s.clone(), View::Findings));
    snap("vm_detail", &detail(s.clone()));
    let mut why = s;
    why.update(Action::Why);
    assert_eq!(why.nav().overlay(), Overlay::Why);
    snap("vm_why", &why);
}

#[test]
fn header_of_the_vm_lists_its_unavailable_metrics() {
    let t = draw(&vm(), 160, 50);
    let line: String = (0..160)
        .map(|x| t.backend().buffer()[(x, 2)].symbol().to_string())
        .collect();
    // a KVM guest has no MSRs, no hwmon, no thermal_throttle and no RAPL
    for m in ["HW C-states", "SMI", "temperature", "throttling", "power"] {
        assert!(line.contains(m), "{m} missing from {line:?}");
    }
}

#[test]
fn every_view_renders_at_any_size_without_panicking() {
    let states = [laptop(), server(), vm()];
    for s in &states {
        for v in View::ALL {
            for (w, h) in [
                (1, 1),
                (10, 3),
                (20, 5),
                (79, 23),
                (81, 25),
                (150, 40),
                (300, 120),
            ] {
                let mut x = view(s.clone(), v);
                x.set_overlay(if w > 100 { Overlay::Help } else { Overlay::Why });
                draw(&x, w, h);
            }
        }
    }
    // before any sample, with no machine facts at all
    let dir = tempfile::tempdir().unwrap();
    let m = crate::model::machine::Machine::read(&mut crate::os::fs::Fs::new(
        crate::os::fs::Roots::under(dir.path()),
    ));
    let empty = State::new(
        m,
        Origin::Live,
        Duration::from_secs(1),
        Theme { color: true },
    );
    for v in View::ALL {
        draw(&view(empty.clone(), v), 80, 24);
    }
}

#[test]
fn no_color_draws_no_colour_at_all() {
    let s = played(Flavor::IntelLaptop, 8, &[2, 3], false);
    for v in View::ALL {
        let t = draw(&view(s.clone(), v), 160, 50);
        let coloured = t
            .backend()
            .buffer()
            .content()
            .iter()
            .filter(|c| c.fg != Color::Reset || c.bg != Color::Reset)
            .count();
        assert_eq!(coloured, 0, "{v:?}");
    }
    // and the coloured theme does colour
    let t = draw(&laptop(), 160, 50);
    assert!(
        t.backend()
            .buffer()
            .content()
            .iter()
            .any(|c| c.fg != Color::Reset)
    );
}

#[test]
fn the_selection_stays_on_screen_while_paging_through_64_cpus() {
    let mut s = server();
    s = s.with_screen(ratatui::layout::Size::new(80, 24));
    // from the first row (the watched CPUs' first is selected at start)
    s.set_selected(Some(0));
    for _ in 0..40 {
        s.update(Action::Down);
    }
    assert_eq!(s.nav().selected(), Some(40));
    let text = draw(&s, 80, 24).backend().to_string();
    // under the summary row, rows 30-44 make the third page of 15
    assert!(
        text.contains("   40 ") && text.contains("   30 ") && !text.contains("   29 "),
        "{text}"
    );
    s.update(Action::PageDown);
    assert_eq!(s.nav().selected(), Some(55), "a page is 15 rows at 80×24");
    s.update(Action::Last);
    assert_eq!(s.nav().selected(), Some(63));
    s.update(Action::PageDown);
    assert_eq!(s.nav().selected(), Some(63), "the last CPU stays selected");
    s.update(Action::First);
    assert_eq!(s.nav().selected(), Some(0));
}

#[test]
fn marking_a_cpu_watches_it_and_tags_its_noise_at_once() {
    let mut s = laptop();
    assert!(!s.is_watched(5));
    while s.nav().selected() != Some(5) {
        s.update(Action::Down);
    }
    s.update(Action::Mark);
    assert!(s.is_watched(5));
    // the synthetic laptop's CPU5 throttles and has disk and network queues
    assert!(s.tags_of(5).count() > 0, "{:?}", s.judged().findings());
    s.update(Action::Mark);
    assert!(!s.is_watched(5));
}

#[test]
fn held_samples_apply_in_order_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec {
        flavor: Flavor::Vm,
        cpus: 2,
        instants: 4,
        interval_ms: 1000,
    };
    synth::write_capture(dir.path(), &spec).unwrap();
    let (instants, engine) = crate::pipeline::replay::open_engine(dir.path()).unwrap();
    let mut s = State::new(
        engine.sampler.machine.clone(),
        Origin::Live,
        Duration::from_secs(1),
        Theme { color: true },
    );
    let (tx, rx) = std::sync::mpsc::sync_channel(16);
    replay::replay_into(&instants, Driver::new(engine), None, &mut [], &tx);
    drop(tx);
    let msgs: Vec<Msg> = rx.into_iter().collect();
    s.update_feed(msgs[0].clone()); // Ready
    s.update_feed(msgs[1].clone()); // interval 1
    s.update(Action::Pause);
    s.update_feed(msgs[2].clone());
    s.update_feed(msgs[3].clone());
    assert_eq!(s.pacing().held().len(), 2);
    assert_eq!(
        s.judged().history().cpu(0).unwrap().avg.len(),
        1,
        "frozen while paused"
    );
    s.update(Action::Pause);
    assert!(s.pacing().held().is_empty());
    assert_eq!(s.judged().history().cpu(0).unwrap().avg.len(), 3);
    let Msg::Sample(last) = &msgs[3] else {
        panic!("{:?}", msgs[3])
    };
    assert_eq!(s.judged().latest(), Some(&last.interval));
}

#[test]
fn the_footer_says_the_ipis_sent_to_watched_cpus_where_they_are_counted() {
    let footer = |s: &State| {
        let t = draw(s, 160, 50).backend().to_string();
        t.lines().last().unwrap_or_default().to_string()
    };
    let mut s = vm();
    assert!(!footer(&s).contains("IPI"), "a replay counts none");
    s.set_own_ipis(SelfIpis::Counted { sent: 0, woke: 0 });
    assert!(
        footer(&s).contains("% CPU, 0 IPI to watched"),
        "{}",
        footer(&s)
    );
    s.set_own_ipis(SelfIpis::Counted { sent: 0, woke: 24 });
    assert!(
        footer(&s).contains("% CPU, 0 IPI (+24 wake-ups) to watched"),
        "{}",
        footer(&s)
    );
    s.set_own_ipis(SelfIpis::Uncounted);
    assert!(
        footer(&s).contains("% CPU, · IPI to watched"),
        "{}",
        footer(&s)
    );
    s.set_watched(Vec::new());
    assert!(
        !footer(&s).contains("IPI"),
        "nothing watched: nothing to say"
    );
}
