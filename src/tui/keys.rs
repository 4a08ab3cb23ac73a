//! The one key table: each binding maps keys to an `Action`; the footer and
//! the help screen are generated from the same table, so they cannot drift.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// What a key asks the dashboard to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Leave noisetop.
    Quit,
    /// Close the help or the detail view; quit from a main view.
    Back,
    /// Freeze the screen (live) or stop the playback (replay).
    Pause,
    /// Select the previous CPU.
    Up,
    /// Select the next CPU.
    Down,
    /// Select one page up.
    PageUp,
    /// Select one page down.
    PageDown,
    /// Select the first CPU.
    First,
    /// Select the last CPU.
    Last,
    /// Open the detail view of the selected CPU (or leave it).
    Detail,
    /// Show the next view.
    NextView,
    /// Show the previous view.
    PrevView,
    /// Lengthen the interval (replay: play slower).
    Slower,
    /// Shorten the interval (replay: play faster).
    Faster,
    /// Add the selected CPU to the watched set, or take it out.
    Mark,
    /// Change the order of the CPUs.
    Sort,
    /// Show why metrics are unavailable.
    Why,
    /// Show the help.
    Help,
}

/// One row of the key table.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    /// The keys, as (code, needs Ctrl).
    pub keys: &'static [(KeyCode, bool)],
    /// How the footer and help name the keys.
    pub shown: &'static str,
    /// What the keys do, in two or three words.
    pub what: &'static str,
    /// The action.
    pub action: Action,
    /// Whether the footer lists it (the help lists every binding).
    pub in_footer: bool,
}

const fn b(
    keys: &'static [(KeyCode, bool)],
    shown: &'static str,
    what: &'static str,
    action: Action,
    in_footer: bool,
) -> Binding {
    Binding {
        keys,
        shown,
        what,
        action,
        in_footer,
    }
}

/// Every key binding, in the order the footer and help list them.
pub const BINDINGS: &[Binding] = &[
    b(
        &[(KeyCode::Char('q'), false), (KeyCode::Char('c'), true)],
        "q",
        "quit",
        Action::Quit,
        true,
    ),
    b(
        &[(KeyCode::Esc, false)],
        "esc",
        "back / quit",
        Action::Back,
        false,
    ),
    b(
        &[(KeyCode::Char(' '), false)],
        "space",
        "pause",
        Action::Pause,
        true,
    ),
    b(
        &[(KeyCode::Up, false), (KeyCode::Char('k'), false)],
        "↑/k",
        "previous CPU",
        Action::Up,
        false,
    ),
    b(
        &[(KeyCode::Down, false), (KeyCode::Char('j'), false)],
        "↓/j",
        "next CPU",
        Action::Down,
        false,
    ),
    b(
        &[(KeyCode::PageUp, false)],
        "pgup",
        "page up",
        Action::PageUp,
        false,
    ),
    b(
        &[(KeyCode::PageDown, false)],
        "pgdn",
        "page down",
        Action::PageDown,
        false,
    ),
    b(
        &[(KeyCode::Home, false), (KeyCode::Char('g'), false)],
        "home/g",
        "first CPU",
        Action::First,
        false,
    ),
    b(
        &[(KeyCode::End, false), (KeyCode::Char('G'), false)],
        "end/G",
        "last CPU",
        Action::Last,
        false,
    ),
    b(
        &[(KeyCode::Enter, false)],
        "⏎",
        "detail",
        Action::Detail,
        true,
    ),
    b(
        &[(KeyCode::Tab, false)],
        "tab",
        "view",
        Action::NextView,
        true,
    ),
    b(
        &[(KeyCode::BackTab, false)],
        "shift-tab",
        "previous view",
        Action::PrevView,
        false,
    ),
    b(
        &[(KeyCode::Char('+'), false), (KeyCode::Char('='), false)],
        "+",
        "longer interval",
        Action::Slower,
        false,
    ),
    b(
        &[(KeyCode::Char('-'), false)],
        "-",
        "shorter interval",
        Action::Faster,
        false,
    ),
    b(
        &[(KeyCode::Char('m'), false)],
        "m",
        "watch CPU",
        Action::Mark,
        true,
    ),
    b(
        &[(KeyCode::Char('s'), false)],
        "s",
        "sort",
        Action::Sort,
        true,
    ),
    b(
        &[(KeyCode::Char('u'), false)],
        "u",
        "why unavailable",
        Action::Why,
        true,
    ),
    b(
        &[(KeyCode::Char('?'), false), (KeyCode::F(1), false)],
        "?",
        "help",
        Action::Help,
        true,
    ),
];

/// Maps a key event to its action; releases and repeats of other kinds
/// than a press are ignored.
pub fn action_for(ev: &KeyEvent) -> Option<Action> {
    if ev.kind != KeyEventKind::Press {
        return None;
    }
    let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
    BINDINGS
        .iter()
        .find(|bd| {
            bd.keys
                .iter()
                .any(|&(code, c)| code == ev.code && c == ctrl)
        })
        .map(|bd| bd.action)
}

/// The footer's key hints, `(keys, what)`; `+`/`-` share one hint.
pub fn footer_hints() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&str, &str)> = BINDINGS
        .iter()
        .filter(|bd| bd.in_footer)
        .map(|bd| (bd.shown, bd.what))
        .collect();
    // the interval pair reads better as one hint, before "?"
    let at = out.len().saturating_sub(1);
    out.insert(at, ("+/-", "interval"));
    out.insert(1, ("↑↓", "select"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn keys_of_the_issue_map_to_their_actions() {
        let cases = [
            (KeyCode::Char('q'), Action::Quit),
            (KeyCode::Esc, Action::Back),
            (KeyCode::Char(' '), Action::Pause),
            (KeyCode::Up, Action::Up),
            (KeyCode::Char('k'), Action::Up),
            (KeyCode::Down, Action::Down),
            (KeyCode::Char('j'), Action::Down),
            (KeyCode::Enter, Action::Detail),
            (KeyCode::Tab, Action::NextView),
            (KeyCode::Char('+'), Action::Slower),
            (KeyCode::Char('-'), Action::Faster),
            (KeyCode::Char('m'), Action::Mark),
            (KeyCode::Char('s'), Action::Sort),
            (KeyCode::Char('?'), Action::Help),
        ];
        for (code, want) in cases {
            assert_eq!(action_for(&press(code)), Some(want), "{code:?}");
        }
        assert_eq!(action_for(&press(KeyCode::Char('x'))), None);
    }

    #[test]
    fn ctrl_c_quits_and_plain_c_does_nothing() {
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(action_for(&ctrl_c), Some(Action::Quit));
        assert_eq!(action_for(&press(KeyCode::Char('c'))), None);
    }

    #[test]
    fn releases_are_ignored() {
        let mut ev = press(KeyCode::Char('q'));
        ev.kind = KeyEventKind::Release;
        assert_eq!(action_for(&ev), None);
    }

    #[test]
    fn no_key_is_bound_twice() {
        let mut seen = Vec::new();
        for bd in BINDINGS {
            for k in bd.keys {
                assert!(!seen.contains(k), "{k:?} bound twice");
                seen.push(*k);
            }
        }
    }

    #[test]
    fn footer_lists_the_issue_keys_in_order() {
        let text: Vec<String> = footer_hints()
            .iter()
            .map(|(k, w)| format!("{k} {w}"))
            .collect();
        assert_eq!(
            text.join(" · "),
            "q quit · ↑↓ select · space pause · ⏎ detail · tab view · m watch CPU · s sort · u why unavailable · +/- interval · ? help"
        );
    }
}
