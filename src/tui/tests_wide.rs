//! Wide screens use their width: one set of every column rather than two
//! narrow sets, and the optional columns are the user's to choose.

use crate::tui::tests::{draw, server, with_filters};

fn header(s: &crate::tui::state::State, w: u16, h: u16) -> String {
    let t = draw(s, w, h).backend().to_string();
    t.lines().nth(4).unwrap_or_default().to_string()
}

#[test]
fn a_wide_screen_shows_one_set_of_every_column() {
    let s = server();
    for (w, h) in [(160, 50), (240, 70)] {
        let head = header(&s, w, h);
        for col in [
            "LOC/s",
            "MIG/s",
            "SIRQ",
            "stl%",
            "°C",
            "exit µs",
            "min–max",
            "IRQ/s",
            "CSW/s",
        ] {
            assert!(head.contains(col), "{w}×{h}: {col} missing from {head}");
        }
        assert_eq!(head.matches("CPU").count(), 1, "one set: {head}");
    }
    with_filters(|| {
        insta::assert_snapshot!(
            "server_cores_240x70",
            draw(&s, 240, 70).backend().to_string()
        );
    });
}

#[test]
fn show_and_hide_choose_the_optional_columns() {
    use crate::tui::columns::{parse, shown};
    let mut s = server();
    let wide = header(&s, 160, 50);
    s.set_columns(shown(None, &parse("LOC,MIG/s").unwrap()));
    let head = header(&s, 160, 50);
    assert!(!head.contains("LOC/s") && !head.contains("MIG/s"), "{head}");
    assert!(head.contains("IRQ/s") && head.contains("stl%"), "{head}");
    assert_eq!(
        head.chars().count(),
        wide.chars().count(),
        "the room goes to the bars"
    );
    s.set_columns(shown(Some(&parse("IRQ").unwrap()), &[]));
    let head = header(&s, 160, 50);
    assert!(head.contains("IRQ/s") && !head.contains("CSW/s"), "{head}");
    // o switches between every column and the chosen ones
    let mut s = server();
    s.update(crate::tui::keys::Action::Columns);
    let head = header(&s, 160, 50);
    assert!(head.contains("IRQ/s") && head.contains("CSW/s"), "{head}");
    assert!(!head.contains("LOC/s") && !head.contains("SIRQ"), "{head}");
    s.update(crate::tui::keys::Action::Columns);
    assert_eq!(header(&s, 160, 50), wide);
    let k = ratatui::crossterm::event::KeyEvent::new(
        ratatui::crossterm::event::KeyCode::Char('w'),
        ratatui::crossterm::event::KeyModifiers::NONE,
    );
    assert_eq!(
        crate::tui::keys::action_for(&k),
        Some(crate::tui::keys::Action::Columns)
    );
}

#[test]
fn the_run_queue_wait_shows_when_asked_for() {
    use crate::tui::columns::{parse, shown};
    let s = server();
    assert!(!header(&s, 160, 50).contains("RQwait%"), "not by default");
    let s = s.with_columns(shown(Some(&parse("IRQ,rqwait%").unwrap()), &[]));
    let t = draw(&s, 160, 50).backend().to_string();
    let head = t.lines().nth(4).unwrap_or_default();
    assert!(head.contains("IRQ/s RQwait% │"), "{head}");
    let row = |cpu: &str| {
        t.lines()
            .find(|l| {
                l.trim_start_matches(['"', '│', '▸', ' '])
                    .starts_with(&format!("{cpu} "))
            })
            .unwrap_or_default()
            .to_string()
    };
    // the synthetic server's CPU 3 waits 50 ms a second, CPU 2 2 ms; the
    // summary is the mean of the 64 CPUs' (14.3 % in all)
    assert!(row("3").contains("     5.0 │"), "{}", row("3"));
    assert!(row("2").contains("     0.2 │"), "{}", row("2"));
    assert!(row("all").contains("     0.2 │"), "{}", row("all"));
}
