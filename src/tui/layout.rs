//! The screen's fixed geometry: the header, body, findings pane and footer
//! heights, and how CPU rows lay out in the body. The state asks it how
//! far a page goes; the views ask it where to draw.

use ratatui::layout::Size;

/// Header lines.
pub const HEADER_ROWS: u16 = 3;
/// Height of the findings pane on tall screens (borders included).
pub const PANE_ROWS: u16 = 7;
/// From this height the findings pane replaces the one-line ticker.
pub const TALL_FROM: u16 = 30;

/// Rows of the findings area for a screen height.
pub fn pane_rows(height: u16) -> u16 {
    if height >= TALL_FROM { PANE_ROWS } else { 1 }
}

/// Rows left for CPU lines in the body box (borders and column header off).
pub fn body_rows(screen: Size) -> u16 {
    screen
        .height
        .saturating_sub(HEADER_ROWS + pane_rows(screen.height) + 1 + 3)
}

/// Rows the Cores view gives the summary row (all CPUs) above the CPUs.
pub const SUMMARY_ROWS: u16 = 1;

/// CPU rows of the Cores view: the body's rows less the summary row.
pub fn cpu_rows(screen: Size) -> u16 {
    body_rows(screen).saturating_sub(SUMMARY_ROWS)
}

/// Width from which rows carry every figure.
pub const WIDE_FROM: u16 = 150;
/// Narrowest compact column (inside the borders).
pub const COMPACT_MIN: u16 = 60;

/// How CPU rows are laid out in the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Rows carry every figure.
    pub wide: bool,
    /// Columns of rows side by side.
    pub columns: u16,
    /// CPU rows per column.
    pub rows: u16,
}

impl Geometry {
    /// Chooses the layout for `rows` CPU lines in a `width`-wide screen
    /// showing `n` CPUs.
    /// Every column beats every CPU at once: from `WIDE_FROM` rows carry
    /// all figures, side by side only where two wide rows fit; narrower,
    /// two compact columns when the CPUs do not fit one.
    pub fn of(rows: u16, width: u16, n: usize) -> Self {
        let inner = width.saturating_sub(2);
        let more = n > rows as usize;
        let (wide, columns) = if width >= WIDE_FROM {
            (true, if more && inner > 2 * WIDE_FROM { 2 } else { 1 })
        } else if more && inner >= 2 * (COMPACT_MIN + 1) + 20 {
            (false, 2)
        } else {
            (false, 1)
        };
        Geometry {
            wide,
            columns,
            rows,
        }
    }

    /// Returns how many CPU rows fit at once.
    pub fn slots(self) -> usize {
        self.columns as usize * self.rows as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_rows_leave_room_for_header_pane_footer_and_borders() {
        // 24 rows: 3 header, 1 ticker, 1 footer, 2 borders, 1 column header
        assert_eq!(body_rows(Size::new(80, 24)), 16);
        // 50 rows: the findings pane takes 7
        assert_eq!(body_rows(Size::new(160, 50)), 36);
        assert_eq!(body_rows(Size::new(10, 3)), 0);
    }
}
