//! No word is cut at the screen's edge: every view of every synthetic
//! capture, at 80×24 and 40×10, is read line by line, and the word that
//! touches the right edge (or a box's right border) must be whole — a
//! word the same view shows whole on a wide screen, not a piece of one.

use std::collections::HashSet;

use crate::tui::state::{State, View};
use crate::tui::tests::{draw, laptop, server, view, vm, with_filters};

/// Box-drawing characters: borders, not text.
fn boxy(c: &str) -> bool {
    c.chars()
        .next()
        .is_some_and(|c| ('\u{2500}'..='\u{257f}').contains(&c))
}

/// Every whole word on a screen (split at spaces and borders).
fn words(text: &str) -> HashSet<String> {
    text.lines()
        .flat_map(|l| {
            l.split(|c: char| c == ' ' || c == '"' || boxy(&c.to_string()))
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The last word of line `y` when only spaces follow it up to the right
/// edge or a border: a word cut there would end at the edge.
fn edge_word(t: &ratatui::backend::TestBackend, y: u16) -> Option<String> {
    let buf = t.buffer();
    let w = buf.area.width;
    let sym = |x: u16| buf[(x, y)].symbol().to_string();
    let mut x = w - 1;
    if boxy(&sym(x)) {
        x = x.checked_sub(1)?;
    }
    while sym(x) == " " {
        x = x.checked_sub(1)?;
    }
    let end = sym(x);
    if boxy(&end) || end == "…" {
        return None;
    }
    let mut word = Vec::new();
    loop {
        let c = sym(x);
        if c == " " || boxy(&c) {
            break;
        }
        word.push(c);
        let Some(nx) = x.checked_sub(1) else { break };
        x = nx;
    }
    word.reverse();
    Some(word.concat())
}

/// Returns the words of `s` cut at the edge at `w`×`h`: pieces of a word
/// that the same view shows whole on wide screens.
fn cut_words(s: &State, w: u16, h: u16) -> Vec<(u16, String)> {
    let mut whole = words(&draw(s, 300, 100).backend().to_string());
    whole.extend(words(&draw(s, 160, 50).backend().to_string()));
    let t = draw(s, w, h);
    (0..h)
        .filter_map(|y| Some((y, edge_word(t.backend(), y)?)))
        .filter(|(_, word)| {
            word.chars().any(char::is_alphanumeric)
                && !whole.contains(word)
                && whole.iter().any(|x| x.starts_with(word.as_str()))
        })
        .collect()
}

fn every_view(s: &State) -> Vec<(View, State)> {
    let mut out: Vec<(View, State)> = View::TABS
        .iter()
        .map(|v| (*v, view(s.clone(), *v)))
        .collect();
    // the detail of the second CPU, as a user opens it
    let mut d = s.clone();
    d.update(crate::tui::keys::Action::Down);
    d.update(crate::tui::keys::Action::Detail);
    out.push((View::Detail, d));
    out
}

#[test]
fn no_view_cuts_a_word_at_the_edge_at_80x24_or_40x10() {
    let mut cut = Vec::new();
    for (name, s) in [("laptop", laptop()), ("server", server()), ("vm", vm())] {
        for (v, s) in every_view(&s) {
            for (w, h) in [(80, 24), (40, 10)] {
                for (y, word) in cut_words(&s, w, h) {
                    cut.push(format!("{name} {v:?} {w}×{h} line {y}: {word:?}"));
                }
            }
        }
    }
    assert!(cut.is_empty(), "words cut at the edge:\n{}", cut.join("\n"));
}

#[test]
fn every_view_at_40x10() {
    with_filters(|| {
        for (name, s) in [("laptop", laptop()), ("vm", vm())] {
            for (v, s) in every_view(&s) {
                let text = draw(&s, 40, 10).backend().to_string();
                insta::assert_snapshot!(format!("{name}_{v:?}_40x10"), text);
            }
        }
    });
}
