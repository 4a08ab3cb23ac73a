//! Pop-ups scroll with the keys their border advertises, keys do not
//! reach the screen behind them, and they leave no stray column of that
//! screen at their sides.

use crate::tui::keys::{Action, action_for};
use crate::tui::state::{Overlay, State, View};
use crate::tui::tests::{draw, server, vm};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

fn key(s: &mut State, code: KeyCode) {
    let a = action_for(&KeyEvent::new(code, KeyModifiers::NONE)).expect("a bound key");
    s.update(a);
}

fn opened(mut s: State, o: Overlay) -> State {
    s = s.with_screen(ratatui::layout::Size::new(80, 24));
    match o {
        Overlay::Help => s.update(Action::Help),
        Overlay::Why => s.update(Action::Why),
        Overlay::Finding => {
            s = s.with_view(View::Findings);
            s.update(Action::Detail)
        }
        Overlay::None => None,
    };
    assert_eq!(s.nav().overlay(), o);
    s
}

#[test]
fn the_why_popup_scrolls_with_the_keys_it_advertises_and_the_selection_stays() {
    let mut s = opened(vm(), Overlay::Why);
    s = s.with_screen(ratatui::layout::Size::new(80, 14));
    let cpu = s.nav().selected();
    let top = draw(&s, 80, 14).backend().to_string();
    assert!(top.contains("↑↓ scroll"), "{top}");
    assert!(top.contains("rows 1–"), "{top}");
    key(&mut s, KeyCode::Down);
    assert_eq!(s.nav().popup_scroll(), 1);
    assert!(draw(&s, 80, 14).backend().to_string().contains("rows 2–"));
    key(&mut s, KeyCode::Char('j'));
    assert_eq!(s.nav().popup_scroll(), 2);
    key(&mut s, KeyCode::Up);
    assert_eq!(s.nav().popup_scroll(), 1);
    key(&mut s, KeyCode::End);
    let last = crate::tui::popup::max_scroll(&s);
    assert!(last > 0);
    assert_eq!(s.nav().popup_scroll(), last);
    key(&mut s, KeyCode::Home);
    assert_eq!(s.nav().popup_scroll(), 0);
    key(&mut s, KeyCode::PageDown);
    let page = crate::tui::layout::body_rows(s.nav().screen());
    assert_eq!(s.nav().popup_scroll(), last.min(page));
    assert_eq!(
        s.nav().selected(),
        cpu,
        "the CPU behind the pop-up stays selected"
    );
    key(&mut s, KeyCode::Esc);
    assert_eq!(s.nav().overlay(), Overlay::None);
    assert!(!s.pacing().quit());
}

#[test]
fn keys_do_not_reach_the_screen_behind_a_popup() {
    for o in [Overlay::Help, Overlay::Why, Overlay::Finding] {
        let mut s = opened(server(), o);
        let before = (
            s.nav().selected(),
            s.nav().view(),
            s.nav().sort(),
            s.nav().filter(),
            s.nav().paint(),
            s.judged().watched().to_vec(),
            s.pacing().interval(),
            s.pacing().speed(),
        );
        for code in [
            KeyCode::Char('m'),
            KeyCode::Char('s'),
            KeyCode::Char('f'),
            KeyCode::Char('c'),
            KeyCode::Char('+'),
            KeyCode::Char('-'),
            KeyCode::Tab,
            KeyCode::BackTab,
            KeyCode::Down,
            KeyCode::PageDown,
            KeyCode::End,
            KeyCode::Left,
            KeyCode::Right,
        ] {
            key(&mut s, code);
        }
        let after = (
            s.nav().selected(),
            s.nav().view(),
            s.nav().sort(),
            s.nav().filter(),
            s.nav().paint(),
            s.judged().watched().to_vec(),
            s.pacing().interval(),
            s.pacing().speed(),
        );
        assert_eq!(before, after, "{o:?}");
        assert_eq!(s.nav().overlay(), o, "{o:?} stays open");
    }
}

#[test]
fn a_popup_leaves_no_stray_column_of_the_screen_behind_it() {
    for (w, h) in [(80, 24), (84, 30), (40, 10)] {
        for o in [Overlay::Help, Overlay::Why, Overlay::Finding] {
            let mut s = opened(vm(), o);
            s = s.with_screen(ratatui::layout::Size::new(w, h));
            let t = draw(&s, w, h);
            let buf = t.backend().buffer();
            // the pop-up's rows: from its top corner down to its bottom one
            let rows: Vec<u16> = (0..h)
                .filter(|y| (0..w).any(|x| matches!(buf[(x, *y)].symbol(), "┌" | "└")))
                .collect();
            let (top, bottom) = (rows[0], rows[rows.len() - 1]);
            for y in top..=bottom {
                let line: String = (0..w).map(|x| buf[(x, y)].symbol()).collect();
                let first = line.chars().position(|c| "│┌└".contains(c));
                let last = line.chars().rev().position(|c| "│┐┘".contains(c));
                let (Some(first), Some(last)) = (first, last) else {
                    panic!("{o:?} {w}×{h}: no border on {line:?}");
                };
                // either the whole width, or a margin of three columns or more
                for m in [first, last] {
                    assert!(m == 0 || m >= 3, "{o:?} {w}×{h}: stray column in {line:?}");
                }
            }
        }
    }
}

#[test]
fn a_long_glossary_entry_goes_on_under_its_text() {
    for (w, h) in [(160, 50), (80, 24)] {
        let mut s = opened(vm(), Overlay::Help);
        s = s.with_screen(ratatui::layout::Size::new(w, h));
        // scrolled to the end: the columns glossary, whose long entries wrap
        s.set_popup_scroll(crate::tui::popup::max_scroll(&s));
        let screen = draw(&s, w, h).backend().to_string();
        let rows: Vec<Vec<char>> = screen
            .lines()
            .map(|l| l.trim_matches('"').chars().collect())
            .collect();
        let top = rows
            .iter()
            .position(|r| {
                r.iter()
                    .collect::<String>()
                    .contains("keys · legend · columns")
            })
            .expect("the help popup");
        let left = rows[top]
            .iter()
            .position(|&c| c == '┌')
            .expect("its corner");
        let body: Vec<&Vec<char>> = rows[top + 1..]
            .iter()
            .take_while(|r| r.get(left) == Some(&'│'))
            .collect();
        assert!(body.len() > 5, "{screen}");
        // every row of text starts one column in: a name, or, going on, the
        // blank under the name
        for r in &body {
            assert_eq!(
                r.get(left + 1),
                Some(&' '),
                "a row starts at the popup's edge at {w}x{h}:\n{screen}"
            );
        }
        // and the glossary shows some entry going on under its text
        let indent: String = " ".repeat(13);
        assert!(
            body.iter().any(|r| {
                let text: String = r[left + 1..].iter().collect();
                text.starts_with(&indent) && text.trim_start().starts_with(char::is_alphanumeric)
            }),
            "no wrapped entry at {w}x{h}:\n{screen}"
        );
    }
}
