//! The Cores view's optional figure columns: each column's name (as
//! `--show`/`--hide` and the header spell it), width and value, from the
//! metric catalogue's dashboard columns. A new column is one more
//! catalogue entry; the wide header and rows, and the width they leave the
//! bars, follow from it.

use std::sync::LazyLock;

use crate::metric::{self, Figure, Format, Inst};
use crate::model::interval::CpuRates;
use crate::tui::fmt;

/// One optional column.
pub struct Column {
    /// The header text, and the name `--show`/`--hide` take (any case).
    pub name: &'static str,
    /// Columns it takes, its leading space included.
    pub width: usize,
    /// Whether it is on screen unless `--show`/`--hide` say otherwise (a
    /// column that is not shows in the CPU's detail).
    pub by_default: bool,
    figure: &'static Figure,
    format: Format,
    summary: bool,
}

impl Column {
    /// Its figure for a CPU; `·` when unknown.
    pub fn value(&self, r: Option<&CpuRates>) -> String {
        self.show(r.and_then(|r| self.figure.cpu_value(r, Inst::One)))
    }

    /// Its figure for the summary row of `rows`, combined as the catalogue
    /// says (or unknown where the entry keeps the summary out).
    pub fn summary(&self, rows: &[&CpuRates]) -> String {
        let v = self.summary.then(|| {
            self.figure
                .machine_value(rows.iter().copied(), &[], Inst::One, None)
        });
        self.show(v.flatten())
    }

    fn show(&self, v: Option<f64>) -> String {
        match self.format {
            Format::Rate => fmt::rate(v),
            Format::Decimals(d) => fmt::pct(v, d),
        }
    }
}

static COLUMNS: LazyLock<Vec<Column>> = LazyLock::new(|| {
    metric::tui_columns()
        .into_iter()
        .filter_map(|f| {
            let t = f.tui?;
            Some(Column {
                name: f.header(t.header),
                width: t.width,
                by_default: t.shown,
                figure: f,
                format: t.format,
                summary: t.summary,
            })
        })
        .collect()
});

/// Every optional column, in screen order: the catalogue's figures with a
/// dashboard column.
pub fn columns() -> &'static [Column] {
    &COLUMNS
}

/// A `--show`/`--hide` name that is no column; its words list the known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no column {0:?}; the columns are {known}", known = known_names())]
pub struct UnknownColumn(pub String);

fn known_names() -> String {
    let known: Vec<&str> = columns().iter().map(|c| c.name).collect();
    known.join(", ")
}

/// Parses a `--show`/`--hide` list (`LOC/s,MIG/s`; the `/s` may be left
/// out) into column indexes; an unknown name is a usage error that lists
/// the known ones.
pub fn parse(list: &str) -> Result<Vec<usize>, UnknownColumn> {
    list.split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| {
            columns()
                .iter()
                .position(|c| {
                    c.name.eq_ignore_ascii_case(n)
                        || c.name.trim_end_matches("/s").eq_ignore_ascii_case(n)
                })
                .ok_or_else(|| UnknownColumn(n.to_string()))
        })
        .collect()
}

/// The columns shown from `--show` (only these) and `--hide` (those
/// shown by default but these).
pub fn shown(show: Option<&[usize]>, hide: &[usize]) -> Vec<usize> {
    (0..columns().len())
        .filter(|&i| match show {
            Some(s) => s.contains(&i),
            None => columns()[i].by_default,
        })
        .filter(|i| !hide.contains(i))
        .collect()
}

/// Columns the shown ones take together.
pub fn width(shown: &[usize]) -> usize {
    shown
        .iter()
        .filter_map(|i| columns().get(*i))
        .map(|c| c.width)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_in_any_case_with_or_without_per_second() {
        assert_eq!(parse("LOC/s,mig"), Ok(vec![1, 3]));
        assert_eq!(parse("stl%, sirq"), Ok(vec![5, 4]));
        assert_eq!(parse("ipc"), Ok(vec![6]));
        assert_eq!(parse("rqwait%"), Ok(vec![7]));
        let e = parse("IPS").unwrap_err();
        assert_eq!(e, UnknownColumn("IPS".into()));
        let e = e.to_string();
        assert!(
            e.contains("no column \"IPS\"") && e.contains("LOC/s") && e.contains("IPC"),
            "{e}"
        );
    }

    #[test]
    fn show_keeps_only_its_columns_and_hide_takes_out() {
        assert_eq!(shown(None, &[]), vec![0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(shown(None, &[1, 3]), vec![0, 2, 4, 5, 6]);
        assert_eq!(shown(Some(&[0, 2]), &[]), vec![0, 2]);
        assert_eq!(width(&[0, 1, 2, 3, 4, 5, 6]), 39);
        // RQwait% is shown when asked for
        assert_eq!(shown(Some(&[0, 7]), &[7]), vec![0]);
        assert_eq!(shown(Some(&[0, 7]), &[]), vec![0, 7]);
        assert_eq!(width(&[0, 7]), 13, "RQwait% takes 8");
    }

    #[test]
    fn ipc_shows_two_decimals_and_unknown_as_a_dot() {
        let ipc = |r: Option<&CpuRates>| columns()[6].value(r);
        let r = |ipc| CpuRates {
            ipc,
            ..CpuRates::default()
        };
        assert_eq!(ipc(Some(&r(Some(1.5)))), "1.50");
        assert_eq!(ipc(Some(&r(Some(0.456)))), "0.46");
        assert_eq!(ipc(Some(&r(None))), "·");
        assert_eq!(ipc(None), "·");
    }
}
