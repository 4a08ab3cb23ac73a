//! What each key does to the state, called by `State::update`: moves
//! through views, rows, findings and pop-ups, changes the order, filter,
//! columns and pace, pauses, and marks CPUs watched (judging the interval
//! on screen again at once).

use std::time::Duration;

use super::{Effect, Filter, INTERVAL_STEPS_MS, Origin, Overlay, SPEED_STEPS, Sort, State, View};
use crate::tui::keys::Action;

impl State {
    /// Carries out one action; returns what the loop must do beyond the state.
    pub(super) fn on_key(&mut self, a: Action) -> Option<Effect> {
        if self.nav.overlay != Overlay::None {
            return self.on_popup_key(a);
        }
        if let Action::Digit(d) = a {
            self.go_to_digit(d);
            return None;
        }
        self.nav.goto.clear();
        match a {
            Action::Quit => self.pacing.quit = true,
            Action::Back => self.back_out(),
            Action::Help => self.toggle_overlay(Overlay::Help),
            Action::Why => self.toggle_overlay(Overlay::Why),
            Action::Pause => return Some(self.toggle_pause()),
            Action::Up => self.step(0, -1),
            Action::Down => self.step(0, 1),
            Action::Left => self.step(-1, 0),
            Action::Right => self.step(1, 0),
            Action::Filter => {
                self.nav.filter = match self.nav.filter {
                    Filter::All => Filter::Watched,
                    Filter::Watched => Filter::Noisy,
                    Filter::Noisy => Filter::All,
                };
                self.keep_selection();
            }
            Action::Paint => self.nav.paint = self.nav.paint.next(),
            Action::PageUp => self.jump(-(self.page() as i64)),
            Action::PageDown => self.jump(self.page() as i64),
            Action::First => self.jump(i64::MIN / 2),
            Action::Last => self.jump(i64::MAX / 2),
            Action::Detail if self.nav.view == View::Findings => {
                if !self.judged.log.is_empty() {
                    self.nav.overlay = Overlay::Finding;
                    self.nav.popup_scroll = 0;
                }
            }
            Action::Detail => self.toggle_detail(),
            Action::NextView => self.cycle_view(1),
            Action::PrevView => self.cycle_view(View::TABS.len() - 1),
            Action::Slower => return self.step_pace(true),
            Action::Faster => return self.step_pace(false),
            Action::Mark => return self.toggle_mark(),
            Action::NextTask => {
                let n = self.who_ran().map_or(0, |t| t.len());
                self.nav.task_at = if n == 0 {
                    0
                } else {
                    (self.nav.task_at + 1) % n
                };
            }
            Action::Owner => {
                let pid = self.who_ran()?.get(self.nav.task_at)?.pid;
                self.nav.task_at = 0;
                return Some(Effect::Owner(vec![pid]));
            }
            Action::Digit(_) => {}
            Action::Columns => {
                let all = crate::tui::columns::shown(None, &[]);
                self.nav.columns = if self.nav.columns == all {
                    self.nav.chosen_columns.clone()
                } else {
                    all
                };
            }
            Action::Sort => {
                self.nav.sort = match self.nav.sort {
                    Sort::Cpu => Sort::Noise,
                    Sort::Noise => Sort::Busy,
                    Sort::Busy => Sort::Cpu,
                };
            }
        }
        None
    }

    /// Adds a digit to the CPU number being typed and selects that CPU
    /// when it is listed (`12` selects CPU 1, then CPU 12); a number no
    /// CPU starts with begins again from this digit.
    fn go_to_digit(&mut self, d: u8) {
        let order = self.order();
        let max = order.iter().max().copied().unwrap_or(0);
        let goto = &mut self.nav.goto;
        goto.push(char::from(b'0' + d));
        let n: u64 = goto.parse().unwrap_or(u64::MAX);
        if n > u64::from(max) || goto.len() > 1 && goto.starts_with('0') {
            *goto = d.to_string();
        }
        let n: u32 = goto.parse().unwrap_or(0);
        if order.contains(&n) {
            self.nav.selected = Some(n);
        }
    }

    /// Carries out a key while a pop-up is open: the moving keys scroll
    /// it, Enter, Esc and the pop-up's own key close it, `?` and `u`
    /// switch pop-ups, quit and pause keep working, and nothing else
    /// reaches the screen behind it.
    fn on_popup_key(&mut self, a: Action) -> Option<Effect> {
        let page = i64::from(crate::tui::layout::body_rows(self.nav.screen).max(1));
        match a {
            Action::Quit => self.pacing.quit = true,
            Action::Back => self.nav.overlay = Overlay::None,
            Action::Pause => return Some(self.toggle_pause()),
            Action::Help => self.toggle_overlay(Overlay::Help),
            Action::Why => self.toggle_overlay(Overlay::Why),
            Action::Detail if self.nav.overlay == Overlay::Finding => {
                self.nav.overlay = Overlay::None;
            }
            Action::Up => self.scroll_popup(-1),
            Action::Down => self.scroll_popup(1),
            Action::PageUp => self.scroll_popup(-page),
            Action::PageDown => self.scroll_popup(page),
            Action::First => self.scroll_popup(i64::MIN / 2),
            Action::Last => self.scroll_popup(i64::MAX / 2),
            _ => {}
        }
        None
    }

    fn scroll_popup(&mut self, delta: i64) {
        let last = i64::from(crate::tui::popup::max_scroll(self));
        self.nav.popup_scroll =
            (i64::from(self.nav.popup_scroll).saturating_add(delta)).clamp(0, last) as u16;
    }

    fn toggle_overlay(&mut self, o: Overlay) {
        self.nav.overlay = if self.nav.overlay == o {
            Overlay::None
        } else {
            o
        };
        self.nav.popup_scroll = 0;
    }

    /// Moves the selection: in the help it scrolls, in the Findings view
    /// it moves between findings, in the overview it moves in the grid,
    /// elsewhere `dy` moves through the rows.
    fn step(&mut self, dx: i64, dy: i64) {
        if self.nav.view == View::Findings {
            let last = self.judged.log.len().saturating_sub(1) as i64;
            self.nav.finding_at = (self.nav.finding_at as i64 + dy).clamp(0, last) as usize;
        } else if self.nav.view == View::Overview {
            if let Some(c) = crate::tui::overview::step(self, dx, dy) {
                self.nav.selected = Some(c);
            }
        } else if dy != 0 {
            self.move_by(dy);
        }
    }

    /// Moves by a page or to an end: in the help it scrolls the text, in
    /// the Findings view it moves between findings, elsewhere through the
    /// CPUs.
    fn jump(&mut self, delta: i64) {
        if self.nav.view == View::Findings {
            let last = self.judged.log.len().saturating_sub(1) as i64;
            self.nav.finding_at = (self.nav.finding_at as i64)
                .saturating_add(delta)
                .clamp(0, last) as usize;
        } else {
            self.move_by(delta);
        }
    }

    /// Keeps a selection within the rows shown after the filter changed.
    fn keep_selection(&mut self) {
        let order = self.order();
        if self.nav.selected.is_none_or(|c| !order.contains(&c)) {
            self.nav.selected = order.first().copied().or(self.nav.selected);
        }
    }

    /// Esc: closes what is open; on a main view it does nothing, so that
    /// it never ends the program (`q` does).
    fn back_out(&mut self) {
        if self.nav.overlay != Overlay::None {
            self.nav.overlay = Overlay::None;
        } else if self.nav.view == View::Detail {
            self.nav.view = self.nav.back;
        }
    }

    /// Pauses, or resumes and puts the samples held meanwhile on screen.
    fn toggle_pause(&mut self) -> Effect {
        self.pacing.paused = !self.pacing.paused;
        if !self.pacing.paused {
            for s in std::mem::take(&mut self.pacing.held) {
                self.take(s);
            }
        }
        Effect::Paused(self.pacing.paused)
    }

    fn toggle_detail(&mut self) {
        if self.nav.view == View::Detail {
            self.nav.view = self.nav.back;
        } else if self.nav.selected.is_some() {
            self.nav.back = self.nav.view;
            self.nav.view = View::Detail;
        }
    }

    fn cycle_view(&mut self, step: usize) {
        let from = if self.nav.view == View::Detail {
            self.nav.back
        } else {
            self.nav.view
        };
        let i = View::TABS.iter().position(|v| *v == from).unwrap_or(0);
        self.nav.overlay = Overlay::None;
        self.nav.view = View::TABS[(i + step) % View::TABS.len()];
    }

    /// Rows one page move skips: the CPU rows that fit the body; in the
    /// help, its text rows; in the Findings view, the findings that fit
    /// (each takes at least two lines: evidence and fix).
    fn page(&self) -> usize {
        let screen = self.nav.screen;
        let rows = usize::from(crate::tui::layout::body_rows(screen));
        if self.nav.view == View::Findings {
            return (rows.saturating_sub(1) / 2).max(1);
        }
        let n = self.order().len();
        crate::tui::layout::Geometry::of(crate::tui::layout::cpu_rows(screen), screen.width, n)
            .slots()
            .max(1)
    }

    fn move_by(&mut self, delta: i64) {
        let order = self.order();
        if order.is_empty() {
            return;
        }
        let at = self
            .nav
            .selected
            .and_then(|c| order.iter().position(|x| *x == c))
            .unwrap_or(0) as i64;
        let to = at.saturating_add(delta).clamp(0, order.len() as i64 - 1);
        self.nav.selected = Some(order[to as usize]);
    }

    /// Steps the live interval (`+` longer) or the replay speed (`+` slower).
    fn step_pace(&mut self, longer: bool) -> Option<Effect> {
        let p = &mut self.pacing;
        match p.origin {
            Origin::Live => {
                let ms = p.interval.as_millis() as u64;
                let to = if longer {
                    INTERVAL_STEPS_MS.iter().find(|s| **s > ms)
                } else {
                    INTERVAL_STEPS_MS.iter().rev().find(|s| **s < ms)
                };
                let d = Duration::from_millis(*to?);
                p.interval = d;
                Some(Effect::Interval(d))
            }
            Origin::Replay(_) => {
                let sp = p.speed;
                let to = if longer {
                    SPEED_STEPS.iter().rev().find(|s| **s < sp)
                } else {
                    SPEED_STEPS.iter().find(|s| **s > sp)
                };
                p.speed = *to?;
                Some(Effect::Speed(p.speed))
            }
        }
    }

    /// Marks or unmarks the selected CPU as watched and judges the
    /// interval on screen again with the new set.
    fn toggle_mark(&mut self) -> Option<Effect> {
        let cpu = self.nav.selected?;
        let watched = &mut self.judged.watched;
        if let Some(i) = watched.iter().position(|c| *c == cpu) {
            watched.remove(i);
        } else {
            watched.push(cpu);
            watched.sort_unstable();
        }
        if let Some(iv) = self.judged.latest.take() {
            let j = self.judge(&iv);
            self.judged.findings = j.findings;
            self.judged.verdicts = j.verdicts;
            self.judged.latest = Some(iv);
        }
        Some(Effect::Watched(self.judged.watched.clone()))
    }
}
