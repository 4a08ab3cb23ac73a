//! Where the user is on the screen: the view, the selection, the row
//! order and filter, the columns, the pop-up and its scroll, and the
//! terminal's size that page moves count with. The fields are written
//! only by `State::update` (its parent module) and the settings chosen
//! before the loop starts; the views read them through the methods here.

use ratatui::layout::Size;

use super::{Filter, Overlay, Sort, View};
use crate::tui::overview::Paint;

/// The navigation on screen.
#[derive(Debug, Clone)]
pub struct Navigation {
    /// The view on screen.
    pub(super) view: View,
    /// The view Detail returns to.
    pub(super) back: View,
    /// The selected CPU.
    pub(super) selected: Option<u32>,
    /// Row order.
    pub(super) sort: Sort,
    /// Which CPUs are shown.
    pub(super) filter: Filter,
    /// Only these CPUs are listed (`--cpus`).
    pub(super) only: Option<Vec<u32>>,
    /// The metric the overview colours its cells by.
    pub(super) paint: Paint,
    /// The optional columns of wide rows shown (`--show`/`--hide`), by
    /// index into `columns::COLUMNS`.
    pub(super) columns: Vec<usize>,
    /// The columns `--show`/`--hide` chose (IRQ/s and CSW/s without
    /// them): `w` switches between these and every column.
    pub(super) chosen_columns: Vec<usize>,
    /// The digits typed so far of a CPU number to jump to.
    pub(super) goto: String,
    /// The selected entry of the Findings view (newest first).
    pub(super) finding_at: usize,
    /// The selected row of the detail's who-ran table.
    pub(super) task_at: usize,
    /// The pop-up over the view, if any.
    pub(super) overlay: Overlay,
    /// First line of the pop-up shown (every pop-up scrolls on short screens).
    pub(super) popup_scroll: u16,
    /// The view is still the one noisetop started with: the first draw may
    /// switch to the overview when the CPUs do not fit.
    pub(super) auto_view: bool,
    /// The terminal size the loop last drew at (for page moves).
    pub(super) screen: Size,
}

impl Navigation {
    /// Starts on the Cores view with `selected` selected.
    pub(super) fn new(selected: Option<u32>) -> Self {
        Navigation {
            view: View::Cores,
            back: View::Cores,
            selected,
            sort: Sort::Cpu,
            filter: Filter::All,
            only: None,
            paint: Paint::Busy,
            columns: crate::tui::columns::shown(None, &[]),
            chosen_columns: vec![0, 2],
            goto: String::new(),
            finding_at: 0,
            task_at: 0,
            overlay: Overlay::None,
            popup_scroll: 0,
            auto_view: true,
            screen: Size::new(80, 24),
        }
    }

    /// Returns the view on screen.
    pub fn view(&self) -> View {
        self.view
    }

    /// Returns the view Detail returns to.
    pub fn back(&self) -> View {
        self.back
    }

    /// Returns the selected CPU.
    pub fn selected(&self) -> Option<u32> {
        self.selected
    }

    /// Returns the row order.
    pub fn sort(&self) -> Sort {
        self.sort
    }

    /// Returns which CPUs are shown.
    pub fn filter(&self) -> Filter {
        self.filter
    }

    /// Returns the `--cpus` list, when given.
    pub fn only(&self) -> Option<&[u32]> {
        self.only.as_deref()
    }

    /// Returns the metric the overview colours its cells by.
    pub fn paint(&self) -> Paint {
        self.paint
    }

    /// Returns the optional columns of wide rows shown.
    pub fn columns(&self) -> &[usize] {
        &self.columns
    }

    /// Returns the digits typed so far of a CPU number to jump to.
    pub fn goto(&self) -> &str {
        &self.goto
    }

    /// Returns the selected entry of the Findings view (newest first).
    pub fn finding_at(&self) -> usize {
        self.finding_at
    }

    /// Returns the selected row of the detail's who-ran table.
    pub fn task_at(&self) -> usize {
        self.task_at
    }

    /// Returns the pop-up over the view.
    pub fn overlay(&self) -> Overlay {
        self.overlay
    }

    /// Returns the first line of the pop-up shown.
    pub fn popup_scroll(&self) -> u16 {
        self.popup_scroll
    }

    /// Returns the terminal size the loop last drew at.
    pub fn screen(&self) -> Size {
        self.screen
    }
}
