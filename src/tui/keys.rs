//! The one key table: each binding maps keys to an `Action`; the footer and
//! the help screen are generated from the same table, so they cannot drift.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// What a key asks the dashboard to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Leave noisetop.
    Quit,
    /// Close a pop-up or the detail view; nothing on a main view (a
    /// newcomer presses Esc to get out of something, not to lose the
    /// program: `q` quits).
    Back,
    /// Freeze the screen (live) or stop the playback (replay).
    Pause,
    /// Select the previous CPU.
    Up,
    /// Select the next CPU.
    Down,
    /// Select the CPU to the left in the overview.
    Left,
    /// Select the CPU to the right in the overview.
    Right,
    /// Show all CPUs, only the watched ones, or only the noisy ones.
    Filter,
    /// Colour the overview by the next metric.
    Paint,
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
    /// Select the next task of the detail's who-ran table.
    NextTask,
    /// Make the selected task of the who-ran table the owner of the
    /// watched CPUs (as `--owner`).
    Owner,
    /// A digit of the CPU number to jump to, typed one after another.
    Digit(u8),
    /// Switch wide rows between every optional column and the chosen ones.
    Columns,
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
    /// The footer's rank for it: 1 is kept longest on a narrow screen,
    /// 0 keeps it out of the footer (the help lists every binding).
    pub in_footer: u8,
}

const fn b(
    keys: &'static [(KeyCode, bool)],
    shown: &'static str,
    what: &'static str,
    action: Action,
    in_footer: u8,
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
        2,
    ),
    b(
        &[(KeyCode::Esc, false)],
        "esc",
        "close the pop-up or the detail (q quits)",
        Action::Back,
        0,
    ),
    b(
        &[(KeyCode::Char(' '), false)],
        "space",
        "pause",
        Action::Pause,
        7,
    ),
    b(
        &[(KeyCode::Up, false), (KeyCode::Char('k'), false)],
        "↑/k",
        "previous CPU",
        Action::Up,
        0,
    ),
    b(
        &[(KeyCode::Down, false), (KeyCode::Char('j'), false)],
        "↓/j",
        "next CPU",
        Action::Down,
        0,
    ),
    b(
        &[(KeyCode::Left, false), (KeyCode::Char('h'), false)],
        "←/h",
        "CPU to the left (overview)",
        Action::Left,
        0,
    ),
    b(
        &[(KeyCode::Right, false), (KeyCode::Char('l'), false)],
        "→/l",
        "CPU to the right (overview)",
        Action::Right,
        0,
    ),
    b(
        &[(KeyCode::PageUp, false)],
        "pgup",
        "page up",
        Action::PageUp,
        0,
    ),
    b(
        &[(KeyCode::PageDown, false)],
        "pgdn",
        "page down",
        Action::PageDown,
        0,
    ),
    b(
        &[(KeyCode::Home, false), (KeyCode::Char('g'), false)],
        "home/g",
        "first CPU",
        Action::First,
        0,
    ),
    b(
        &[(KeyCode::End, false), (KeyCode::Char('G'), false)],
        "end/G",
        "last CPU",
        Action::Last,
        0,
    ),
    b(&[(KeyCode::Enter, false)], "⏎", "detail", Action::Detail, 5),
    b(&[(KeyCode::Tab, false)], "tab", "view", Action::NextView, 3),
    b(
        &[(KeyCode::BackTab, false)],
        "shift-tab",
        "previous view",
        Action::PrevView,
        0,
    ),
    b(
        &[(KeyCode::Char('+'), false), (KeyCode::Char('='), false)],
        "+",
        "longer interval",
        Action::Slower,
        0,
    ),
    b(
        &[(KeyCode::Char('-'), false)],
        "-",
        "shorter interval",
        Action::Faster,
        0,
    ),
    b(
        &[(KeyCode::Char('m'), false)],
        "m",
        "watch CPU",
        Action::Mark,
        4,
    ),
    b(&[(KeyCode::Char('s'), false)], "s", "sort", Action::Sort, 8),
    b(
        &[(KeyCode::Char('f'), false)],
        "f",
        "filter",
        Action::Filter,
        10,
    ),
    b(
        &[(KeyCode::Char('c'), false)],
        "c",
        "colour by",
        Action::Paint,
        11,
    ),
    b(
        &[(KeyCode::Char('u'), false)],
        "u",
        "why unavailable",
        Action::Why,
        9,
    ),
    b(
        &[(KeyCode::Char('t'), false)],
        "t",
        "next task (detail's who ran)",
        Action::NextTask,
        0,
    ),
    b(
        &[(KeyCode::Char('o'), false)],
        "o",
        "make the task the owner",
        Action::Owner,
        0,
    ),
    b(
        &[(KeyCode::Char('w'), false)],
        "w",
        "all columns / chosen (--show, --hide)",
        Action::Columns,
        0,
    ),
    // the digits are matched in `action_for`; this row names them
    b(&[], "0-9", "go to CPU by number", Action::Digit(0), 0),
    b(
        &[(KeyCode::Char('?'), false), (KeyCode::F(1), false)],
        "?",
        "help",
        Action::Help,
        1,
    ),
];

/// Maps a key event to its action; releases and repeats of other kinds
/// than a press are ignored.
pub fn action_for(ev: &KeyEvent) -> Option<Action> {
    if ev.kind != KeyEventKind::Press {
        return None;
    }
    let ctrl = ev.modifiers.contains(KeyModifiers::CONTROL);
    if let (KeyCode::Char(c @ '0'..='9'), false) = (ev.code, ctrl) {
        return Some(Action::Digit(c as u8 - b'0'));
    }
    BINDINGS
        .iter()
        .find(|bd| {
            bd.keys
                .iter()
                .any(|&(code, c)| code == ev.code && c == ctrl)
        })
        .map(|bd| bd.action)
}

/// The footer's key hints, `(keys, what)`, in table order; `+`/`-` share
/// one hint, and so do the arrows.
#[cfg(test)]
pub fn footer_hints() -> Vec<(&'static str, &'static str)> {
    ranked_hints().into_iter().map(|h| (h.0, h.1)).collect()
}

/// The footer's hints with their ranks (1 kept longest).
fn ranked_hints() -> Vec<(&'static str, &'static str, u8)> {
    let mut out: Vec<(&str, &str, u8)> = BINDINGS
        .iter()
        .filter(|bd| bd.in_footer > 0)
        .map(|bd| (bd.shown, bd.what, bd.in_footer))
        .collect();
    // the interval pair reads better as one hint, before "?"
    let at = out.len().saturating_sub(1);
    out.insert(at, ("+/-", "interval", 12));
    out.insert(1, ("↑↓", "select", 6));
    out
}

/// The hints that fit `room` columns when each takes its text plus
/// `pad` columns: the lowest-ranked go first, the rest keep table order.
pub fn hints_that_fit(room: usize, pad: usize) -> Vec<(&'static str, &'static str)> {
    let mut hints = ranked_hints();
    let width = |h: &[(&str, &str, u8)]| -> usize {
        h.iter()
            .map(|(k, w, _)| k.chars().count() + w.chars().count() + pad)
            .sum()
    };
    while width(&hints) > room && !hints.is_empty() {
        let worst = hints
            .iter()
            .enumerate()
            .max_by_key(|(_, h)| h.2)
            .map_or(0, |(i, _)| i);
        hints.remove(worst);
    }
    hints.into_iter().map(|h| (h.0, h.1)).collect()
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
        // plain c picks the overview's colour, it never quits
        assert_eq!(action_for(&press(KeyCode::Char('c'))), Some(Action::Paint));
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
            "q quit · ↑↓ select · space pause · ⏎ detail · tab view · m watch CPU · s sort · f filter · c colour by · u why unavailable · +/- interval · ? help"
        );
    }

    #[test]
    fn a_narrow_footer_keeps_help_view_and_watch() {
        let text = |room| -> String {
            hints_that_fit(room, 3)
                .iter()
                .map(|(k, w)| format!("{k} {w}"))
                .collect::<Vec<_>>()
                .join(" · ")
        };
        assert_eq!(
            text(60),
            "q quit · ↑↓ select · ⏎ detail · tab view · m watch CPU · ? help"
        );
        assert_eq!(text(39), "q quit · tab view · m watch CPU · ? help");
        assert_eq!(text(8), "? help");
        assert_eq!(text(0), "");
    }
}
