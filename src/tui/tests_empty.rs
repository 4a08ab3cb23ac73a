//! Every empty view says why and what to do, and a tree of one instant
//! (another machine's files under `--root`) shows what one read can show
//! and says "one instant: rates need two" instead of going stale.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::os::capture::Captured;
use crate::os::fs::{Fs, Roots};
use crate::pipeline::{Driver, Msg, Step};
use crate::sample::engine::Engine;
use crate::sample::sampler::Sampler;
use crate::testkit::synth::{self, Flavor, Spec};
use crate::tui::keys::Action;
use crate::tui::state::{Change, Filter, Origin, State, View};
use crate::tui::tests::{draw, view, vm, with_filters};
use crate::tui::theme::Theme;

/// Opens one instant of a generated laptop tree as the dashboard does a
/// foreign `--root`: its hardware is the frozen stand-in, one sample comes.
fn one_instant_of(tree: &Path) -> State {
    let why = "the tree is another machine's".to_string();
    let e = Engine::new(Sampler::new(
        Fs::new(Roots::under(tree)),
        Captured::foreign(&why),
    ));
    let mut d = Driver::new(e);
    let Step::Ready(statuses) = d.step() else {
        panic!("a first snapshot")
    };
    let mut s = State::new(
        d.engine.sampler.machine.clone(),
        Origin::Live,
        Duration::from_secs(1),
        Theme { color: false },
    );
    s.set_foreign(Some(why));
    s.update_feed(Msg::Ready {
        statuses,
        next_at: None,
    });
    if let Step::Sample(sample) = d.step() {
        s.update_feed(Msg::Sample(sample));
    }
    s
}

fn laptop_instant() -> State {
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec {
        instants: 1,
        ..Spec::new(Flavor::IntelLaptop, 8)
    };
    synth::write_capture(dir.path(), &spec).unwrap();
    one_instant_of(&dir.path().join("0000"))
}

fn text(s: &State, w: u16, h: u16) -> String {
    draw(s, w, h).backend().to_string()
}

#[test]
fn one_instant_says_rates_need_two_and_never_goes_stale() {
    let mut s = laptop_instant();
    let t0 = Instant::now();
    s.set_arrived(Some(t0));
    s.update(Change::Tick(t0 + Duration::from_secs(30)));
    assert_eq!(s.stale_for(), None, "no second read is coming: not stale");
    let cores = text(&s, 80, 24);
    assert!(!cores.contains("STALE"), "{cores}");
    assert!(
        cores.lines().next().unwrap().contains("one instant"),
        "{cores}"
    );
    assert!(text(&s, 160, 50).contains("one instant: rates need two"));
    // the kernel's last word on the clock, where a rate cannot be had
    // (the generated laptop's CPU 2 runs at base + 200 MHz)
    assert!(cores.contains("cur 2100 MHz"), "{cores}");
    // settings are judged from one read; without them nothing can be
    s.set_findings(Vec::new());
    s.set_log(crate::tui::log::FindingLog::default());
    let t = text(&s, 80, 24);
    let ticker = t.lines().nth(22).unwrap();
    assert!(
        ticker.contains("one instant: no rates to judge"),
        "{ticker}"
    );
}

#[test]
fn one_instant_cstates_view_names_sysfs_states_with_their_latencies() {
    let s = view(laptop_instant(), View::Cstates);
    let t = text(&s, 80, 24);
    assert!(t.contains("one instant: rates need two"), "{t}");
    assert!(!t.contains("no C-state figures"), "{t}");
    // the laptop's C1E: exit 10 µs, target 20 µs (cpuidle state2)
    let c1e = t.lines().find(|l| l.contains(" C1E ")).unwrap_or_default();
    assert!(c1e.contains(" 10 ") && c1e.contains(" 20 "), "{t}");
    let irqs = text(&view(laptop_instant(), View::Interrupts), 80, 24);
    assert!(irqs.contains("one instant: rates need two"), "{irqs}");
}

#[test]
fn one_instant_views_at_80x24_and_40x10() {
    let s = laptop_instant();
    with_filters(|| {
        for v in [View::Cores, View::Interrupts, View::Cstates] {
            for (w, h) in [(80, 24), (40, 10)] {
                let t = text(&view(s.clone(), v), w, h);
                insta::assert_snapshot!(format!("one_instant_{v:?}_{w}x{h}"), t);
            }
        }
    });
}

#[test]
fn only_watched_with_nothing_watched_says_so_and_what_to_do() {
    let mut s = vm();
    s.set_watched(Vec::new());
    s = s.with_filter(Filter::Watched);
    assert!(s.order().is_empty());
    for v in [View::Cores, View::Overview, View::Interrupts, View::Cstates] {
        let t = text(&view(s.clone(), v), 80, 24);
        assert!(t.contains("none is watched"), "{v:?}\n{t}");
        assert!(t.contains("f shows all CPUs"), "{v:?}\n{t}");
    }
    s = s.with_filter(Filter::Noisy);
    s.set_findings(Vec::new());
    s.set_verdicts(Vec::new());
    if s.order().is_empty() {
        let t = text(&s, 80, 24);
        assert!(t.contains("no CPU has a finding"), "{t}");
    }
    s.update(Action::Filter);
    assert_eq!(s.nav().filter(), Filter::All);
    assert!(!text(&s, 80, 24).contains("none is watched"));
}

#[test]
fn interrupts_all_at_zero_say_so_instead_of_a_bare_header() {
    let mut s = view(vm(), View::Interrupts);
    let iv = s.latest_mut().unwrap();
    for r in iv.irqs.iter_mut().chain(iv.softirqs.iter_mut()) {
        r.total = 0.0;
        for v in &mut r.per_cpu {
            *v = Some(0.0);
        }
    }
    let t = text(&s, 80, 24);
    assert!(t.contains("sources were at 0/s over this interval"), "{t}");
}

#[test]
fn no_finding_with_metrics_unavailable_is_not_called_quiet() {
    let mut s = vm();
    s.set_findings(Vec::new());
    s.set_log(crate::tui::log::FindingLog::default());
    let missing = s
        .judged()
        .statuses()
        .iter()
        .filter(|st| st.rung.is_none())
        .count();
    assert!(missing > 0, "the VM lacks MSRs, RAPL, hwmon");
    let t = text(&s, 80, 24);
    assert!(
        t.contains(&format!("in what could be measured ({missing} metrics")),
        "{t}"
    );
    let t = text(&view(s, View::Findings), 160, 50);
    assert!(t.contains("metrics unavailable, u: why"), "{t}");
}
