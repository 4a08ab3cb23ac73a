//! Colours and text styles. With `NO_COLOR` set every style drops its
//! colours and keeps only bold, dim and reverse, so the screen still reads.

use ratatui::style::{Color, Modifier, Style};

use crate::noise::Severity;

/// The styles of one run: coloured or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Whether colours are used (false under `NO_COLOR`).
    pub color: bool,
}

impl Theme {
    /// Picks colours unless `no_color` is set (the `NO_COLOR` convention:
    /// any non-empty value turns colour off).
    pub fn new(no_color: Option<&str>) -> Self {
        Theme {
            color: no_color.is_none_or(str::is_empty),
        }
    }

    fn fg(self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    /// Plain text.
    pub fn text(self) -> Style {
        Style::new()
    }

    /// Less important text: labels, units, zero rates.
    pub fn dim(self) -> Style {
        if self.color {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new().add_modifier(Modifier::DIM)
        }
    }

    /// Titles and column headers.
    pub fn title(self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    /// Something that is off or unknown and matters (a missing metric).
    pub fn warn(self) -> Style {
        self.fg(Color::Yellow)
    }

    /// Something that is fine ("quiet").
    pub fn good(self) -> Style {
        self.fg(Color::Green)
    }

    /// The style of a finding's severity.
    pub fn severity(self, s: Severity) -> Style {
        match s {
            Severity::Info => self.fg(Color::Blue),
            Severity::Warn => self.fg(Color::Yellow).add_modifier(Modifier::BOLD),
            Severity::Crit => self.fg(Color::Red).add_modifier(Modifier::BOLD),
        }
    }

    /// The selected row or column: a grey background that keeps the bars'
    /// colours; reverse video without colour.
    pub fn selected(self) -> Style {
        if self.color {
            Style::new().bg(Color::Indexed(238))
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }

    /// A watched (benchmark) CPU's number.
    pub fn watched(self) -> Style {
        self.fg(Color::Magenta).add_modifier(Modifier::BOLD)
    }

    /// The frequency bar, coloured by the busy clock against the base: below
    /// half the base (parked), below base, at base, above base (turbo).
    pub fn freq(self, bzy_mhz: Option<f64>, base_mhz: Option<f64>) -> Style {
        let (Some(f), Some(b)) = (bzy_mhz, base_mhz) else {
            return self.fg(Color::Green);
        };
        if f < 0.5 * b {
            self.fg(Color::Blue)
        } else if f < 0.97 * b {
            self.fg(Color::Cyan)
        } else if f <= 1.03 * b {
            self.fg(Color::Green)
        } else {
            self.fg(Color::Yellow)
        }
    }

    /// The base-frequency mark on the bar.
    pub fn base_mark(self) -> Style {
        self.fg(Color::White)
    }

    /// C-state bar segment `i`: 0 is C0 (busy), then idle states shallow to deep.
    pub fn cstate(self, i: usize) -> Style {
        const SHADES: [Color; 5] = [
            Color::Green,
            Color::Yellow,
            Color::LightBlue,
            Color::Blue,
            Color::Magenta,
        ];
        self.fg(SHADES[i.min(SHADES.len() - 1)])
    }

    /// A rate cell in the interrupt matrix, hotter is louder.
    pub fn heat(self, per_s: Option<f64>) -> Style {
        match per_s {
            Some(v) if v >= 1000.0 => self.fg(Color::Red).add_modifier(Modifier::BOLD),
            Some(v) if v >= 100.0 => self.fg(Color::Yellow),
            Some(v) if v >= 0.5 => self.text(),
            _ => self.dim(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_keeps_only_modifiers() {
        let t = Theme::new(Some("1"));
        assert!(!t.color);
        assert_eq!(
            t.severity(Severity::Crit),
            Style::new().add_modifier(Modifier::BOLD)
        );
        assert_eq!(t.freq(Some(3000.0), Some(2000.0)), Style::new());
        assert_eq!(t.dim(), Style::new().add_modifier(Modifier::DIM));
        // an empty NO_COLOR does not count, as no-color.org says
        assert!(Theme::new(Some("")).color);
        assert!(Theme::new(None).color);
    }

    #[test]
    fn frequency_colour_by_busy_clock_against_base() {
        let t = Theme::new(None);
        assert_eq!(t.freq(Some(900.0), Some(2000.0)).fg, Some(Color::Blue));
        assert_eq!(t.freq(Some(1500.0), Some(2000.0)).fg, Some(Color::Cyan));
        assert_eq!(t.freq(Some(2000.0), Some(2000.0)).fg, Some(Color::Green));
        assert_eq!(t.freq(Some(2900.0), Some(2000.0)).fg, Some(Color::Yellow));
    }
}
