//! The Cores view's optional figure columns, one table: each column's
//! name (as `--show`/`--hide` and the header spell it), width and value.
//! A new column is one more row here; the wide header and rows, and the
//! width they leave the bars, follow from the table.

use crate::model::interval::CpuRates;
use crate::tui::fmt;

/// One optional column.
pub struct Column {
    /// The header text, and the name `--show`/`--hide` take (any case).
    pub name: &'static str,
    /// Columns it takes, its leading space included.
    pub width: usize,
    /// Its figure for a CPU (or the summary row); `·` when unknown.
    pub value: fn(Option<&CpuRates>) -> String,
}

fn rate(r: Option<&CpuRates>, f: fn(&CpuRates) -> Option<f64>) -> String {
    fmt::rate(r.and_then(f))
}

/// Every optional column, in screen order.
pub const COLUMNS: &[Column] = &[
    Column {
        name: "IRQ/s",
        width: 5,
        value: |r| rate(r, |r| r.irq_per_s),
    },
    Column {
        name: "LOC/s",
        width: 6,
        value: |r| rate(r, |r| r.loc_per_s),
    },
    Column {
        name: "CSW/s",
        width: 6,
        value: |r| rate(r, |r| r.csw_per_s),
    },
    Column {
        name: "MIG/s",
        width: 6,
        value: |r| rate(r, |r| r.mig_per_s),
    },
    Column {
        name: "SIRQ",
        width: 6,
        value: |r| rate(r, |r| r.softirq_per_s),
    },
    Column {
        name: "stl%",
        width: 5,
        value: |r| fmt::pct(r.and_then(|r| r.time?.steal), 1),
    },
    Column {
        name: "IPC",
        width: 5,
        value: |r| fmt::pct(r.and_then(|r| r.ipc), 2),
    },
];

/// Parses a `--show`/`--hide` list (`LOC/s,MIG/s`; the `/s` may be left
/// out) into column indexes; an unknown name is a usage error that lists
/// the known ones.
pub fn parse(list: &str) -> Result<Vec<usize>, String> {
    list.split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| {
            COLUMNS
                .iter()
                .position(|c| {
                    c.name.eq_ignore_ascii_case(n)
                        || c.name.trim_end_matches("/s").eq_ignore_ascii_case(n)
                })
                .ok_or_else(|| {
                    let known: Vec<&str> = COLUMNS.iter().map(|c| c.name).collect();
                    format!("no column {n:?}; the columns are {}", known.join(", "))
                })
        })
        .collect()
}

/// The columns shown from `--show` (only these) and `--hide` (all but these).
pub fn shown(show: Option<&[usize]>, hide: &[usize]) -> Vec<usize> {
    (0..COLUMNS.len())
        .filter(|i| show.is_none_or(|s| s.contains(i)) && !hide.contains(i))
        .collect()
}

/// Columns the shown ones take together.
pub fn width(shown: &[usize]) -> usize {
    shown.iter().map(|i| COLUMNS[*i].width).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_in_any_case_with_or_without_per_second() {
        assert_eq!(parse("LOC/s,mig"), Ok(vec![1, 3]));
        assert_eq!(parse("stl%, sirq"), Ok(vec![5, 4]));
        assert_eq!(parse("ipc"), Ok(vec![6]));
        let e = parse("IPS").unwrap_err();
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
    }

    #[test]
    fn ipc_shows_two_decimals_and_unknown_as_a_dot() {
        let ipc = COLUMNS[6].value;
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
