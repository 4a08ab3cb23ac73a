//! Every column says its unit and every short name on screen is in the
//! help's glossary; a missing base clock draws no base mark in the legend;
//! a finding without a fix never shows an arrow to one.

use crate::tui::keys::Action;
use crate::tui::state::View;
use crate::tui::tests::{draw, laptop, view, vm};

/// The screen's lines, without the quotes the test backend puts around them.
fn text(s: &crate::tui::state::State, w: u16, h: u16) -> String {
    draw(s, w, h)
        .backend()
        .to_string()
        .lines()
        .map(|l| l.trim_matches('"'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The whole help, scrolled through at 160×50.
fn help(s: &crate::tui::state::State) -> String {
    let mut s = s.clone();
    s = s.with_screen(ratatui::layout::Size::new(160, 50));
    s.update(Action::Help);
    let mut all = String::new();
    for _ in 0..10 {
        all.push_str(&text(&s, 160, 50));
        s.update(Action::PageDown);
    }
    all
}

#[test]
fn compact_columns_carry_units_and_the_glossary_names_them() {
    let s = laptop();
    let t = text(&s, 80, 24);
    let head = t.lines().nth(4).unwrap();
    assert!(head.contains("Bsy%"), "{head}");
    assert!(head.contains("MHz 0–4200"), "{head}");
    let footer = t.lines().last().unwrap();
    assert!(footer.contains("MHz via perf"), "{footer}");
    let ticker = t.lines().nth(22).unwrap();
    assert!(ticker.starts_with(" worst of "), "{ticker}");
    let h = help(&s);
    // a glossary entry: the pop-up's border, then the names, comma-separated
    for name in [
        "Bsy%",
        "Bzy",
        "Busy",
        "MHz via",
        "worst of N",
        "IRQ/s",
        "cur",
    ] {
        assert!(
            [
                format!("│ {name} "),
                format!("│ {name},"),
                format!(", {name} ")
            ]
            .iter()
            .any(|p| h.contains(p.as_str())),
            "{name} missing from the glossary"
        );
    }
}

#[test]
fn interrupt_columns_are_per_second_and_the_zero_note_is_not_under_softirqs() {
    let t = text(&view(laptop(), View::Interrupts), 160, 50);
    let head = t.lines().nth(4).unwrap();
    assert!(head.contains("all/s"), "{head}");
    let lines: Vec<&str> = t.lines().collect();
    let soft = lines
        .iter()
        .position(|l| l.starts_with("│softirqs "))
        .expect("a softirqs heading");
    let note = lines
        .iter()
        .position(|l| l.contains("interrupt sources at 0/s not listed"))
        .expect("the note");
    assert!(
        note < soft,
        "the note of interrupt sources sits above the softirqs"
    );
}

#[test]
fn an_unknown_base_clock_draws_no_base_mark_in_the_legend() {
    let s = vm();
    assert!(s.judged().machine().base_mhz.is_none());
    for (w, h) in [(80, 24), (160, 50)] {
        let t = text(&s, w, h);
        assert!(!t.contains("┆ base"), "{t}");
    }
    assert!(!help(&s).contains("┆ base"));
    assert!(help(&laptop()).contains("┆ base"), "a known base is marked");
}

#[test]
fn a_finding_without_a_fix_shows_no_arrow() {
    let mut s = laptop();
    let mut f = s.judged().findings().to_vec();
    for x in &mut f {
        x.fix = None;
    }
    let mut log = crate::tui::log::FindingLog::default();
    log.record(&f, 0);
    s.set_log(log);
    let t = text(&view(s, View::Findings), 160, 50);
    assert!(!t.contains("→ no usual fix"), "{t}");
    assert!(
        t.contains("no usual fix: the evidence says where to look"),
        "{t}"
    );
}
