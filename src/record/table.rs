//! Plain text and Markdown tables for `report` and `compare`.

use std::fmt::Write as _;

/// A table: a header and rows of cells; the first column is left-aligned,
/// the others right-aligned.
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// Column titles.
    pub head: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Starts a table with these titles.
    pub fn new<S: AsRef<str>>(head: &[S]) -> Table {
        Table {
            head: head.iter().map(|s| s.as_ref().to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Renders as aligned text.
    pub fn text(&self) -> String {
        let n = self.head.len();
        let mut w = vec![0; n];
        for r in std::iter::once(&self.head).chain(&self.rows) {
            for (i, c) in r.iter().enumerate().take(n) {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        for r in std::iter::once(&self.head).chain(&self.rows) {
            let mut line = String::new();
            for (i, c) in r.iter().enumerate().take(n) {
                let pad = w[i] - c.chars().count();
                if i == 0 {
                    line.push_str(c);
                    line.push_str(&" ".repeat(pad));
                } else {
                    line.push_str("  ");
                    line.push_str(&" ".repeat(pad));
                    line.push_str(c);
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// Renders as a Markdown table.
    pub fn markdown(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|");
        let mut out = String::new();
        let _ = writeln!(
            out,
            "| {} |",
            self.head
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        out.push('|');
        for i in 0..self.head.len() {
            out.push_str(if i == 0 { " :-- |" } else { " --: |" });
        }
        out.push('\n');
        for r in &self.rows {
            let _ = writeln!(
                out,
                "| {} |",
                r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
            );
        }
        out
    }
}

/// Formats a figure for a table: `?` when unknown, fewer decimals the
/// larger it is.
pub fn num(v: Option<f64>) -> String {
    match v {
        None => "?".to_string(),
        Some(0.0) => "0".to_string(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
    }
}
