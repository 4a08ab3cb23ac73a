//! What turbostat and btop users look for first: a summary row over the
//! CPUs listed and package rows in the Cores view, a jump to a CPU by its
//! number, and a time axis under the detail's history.

use crate::testkit::synth::Flavor;
use crate::tui::keys::Action;
use crate::tui::state::View;
use crate::tui::tests::{draw, laptop, played_for, server};

fn lines(s: &crate::tui::state::State, w: u16, h: u16) -> Vec<String> {
    draw(s, w, h)
        .backend()
        .to_string()
        .lines()
        .map(|l| l.trim_matches('"').to_string())
        .collect()
}

#[test]
fn the_cores_view_opens_with_a_summary_row_and_ends_with_package_rows() {
    let s = laptop();
    for (w, h) in [(80, 24), (160, 50)] {
        let l = lines(&s, w, h);
        let all = &l[5];
        assert!(all.starts_with("│  all "), "{w}×{h}: {all}");
        // the generated laptop: Avg 380 20 840 1320 115 240 375 520 MHz,
        // mean 476; Busy 20 1 40 60 5 10 15 20 %, mean 21
        assert!(all.contains(" 476 ") && all.contains(" 21 "), "{all}");
        assert!(
            l[6].contains("   0 "),
            "CPU 0 follows the summary: {}",
            l[6]
        );
        let pkg = l
            .iter()
            .find(|x| x.starts_with("│ pkg 0 "))
            .expect("a package row");
        assert!(pkg.contains("PC6 10 %"), "{pkg}");
    }
}

#[test]
fn digits_jump_to_a_cpu_by_its_number() {
    let mut s = server();
    s = s.with_screen(ratatui::layout::Size::new(80, 24));
    s.update(Action::Digit(1));
    assert_eq!(s.nav().selected(), Some(1));
    s.update(Action::Digit(2));
    assert_eq!(s.nav().selected(), Some(12));
    let top = &lines(&s, 80, 24)[3];
    assert!(top.contains("CPU 12"), "{top}");
    assert!(lines(&s, 80, 24).iter().any(|l| l.starts_with("│   12 ")));
    // 64 is past the last CPU: the 4 starts a new number
    s.update(Action::Digit(6));
    assert_eq!(s.nav().selected(), Some(6));
    s.update(Action::Digit(4));
    assert_eq!(s.nav().selected(), Some(4));
    // any other key ends the number
    s.update(Action::Down);
    assert!(s.nav().goto().is_empty());
    s.update(Action::Digit(3));
    assert_eq!(s.nav().selected(), Some(3));
    // the keys reach the action through the key table
    let k = ratatui::crossterm::event::KeyEvent::new(
        ratatui::crossterm::event::KeyCode::Char('7'),
        ratatui::crossterm::event::KeyModifiers::NONE,
    );
    assert_eq!(crate::tui::keys::action_for(&k), Some(Action::Digit(7)));
}

#[test]
fn the_detail_history_has_a_time_axis_and_scales() {
    // 12 instants a second apart: 11 intervals of history
    let mut s = played_for(Flavor::Vm, 2, 12, &[1], false);
    s.update(Action::Detail);
    assert_eq!(s.nav().view(), View::Detail);
    let l = lines(&s, 80, 24);
    let axis = l.iter().find(|x| x.contains(" now")).expect("a time axis");
    assert!(axis.contains("│-10 s "), "{axis}");
    let text = l.join("\n");
    assert!(text.contains("(scale 0–"), "{text}");
    assert!(text.contains("scale 0–") && text.contains("/s"), "{text}");
}
