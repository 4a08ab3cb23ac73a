//! The batch sink: one turbostat-like table per interval, `-` for unknown,
//! and a footer that names each unavailable metric and why.

use std::fmt::Write as _;

use crate::interval::{CpuRates, Interval, PkgRates};
use crate::ladder::Status;
use crate::metric::{self, BatchColumn, Each, Figure, Format, Inst, Read};

/// One column: its header and how to get a cell from a CPU's rates.
struct Column {
    header: String,
    cells: Vec<String>,
}

/// Formats a value with `decimals` places, or `-` when unknown.
pub fn num(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.decimals$}"),
        _ => "-".to_string(),
    }
}

/// Formats a per-second rate: whole numbers from 10 up, one decimal below.
pub fn rate(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() && x >= 10.0 => format!("{x:.0}"),
        Some(x) if x.is_finite() => format!("{x:.1}"),
        _ => "-".to_string(),
    }
}

/// Formats a value as the catalogue entry's batch column says.
fn cell(v: Option<f64>, format: Format) -> String {
    match format {
        Format::Decimals(d) => num(v, d),
        Format::Rate => rate(v),
    }
}

/// One column of a figure (or of one of its states): the `-` row
/// combines the rows as the entry says, each row its own value.
fn figure_col(
    header: String,
    f: &Figure,
    b: BatchColumn,
    rows: &[&CpuRates],
    iv: &Interval,
    inst: Inst<'_>,
) -> Column {
    let summary = f.machine_value(rows.iter().copied(), &iv.pkgs, inst, b.summary);
    let mut cells = vec![cell(summary, b.format)];
    cells.extend(rows.iter().map(|r| cell(f.cpu_value(r, inst), b.format)));
    Column { header, cells }
}

/// A package figure: its package's value on the first listed CPU of each
/// package, and the packages combined in the `-` row (each once, not per CPU).
fn package_col(
    f: &Figure,
    b: BatchColumn,
    rows: &[&CpuRates],
    iv: &Interval,
    each: fn(&PkgRates) -> Option<f64>,
) -> Column {
    let own = |r: &CpuRates| -> Option<f64> {
        let first = rows.iter().find(|x| x.package == r.package)?.cpu == r.cpu;
        if !first {
            return None;
        }
        let p = iv
            .pkgs
            .iter()
            .find(|p| Some(p.package) == r.package.or(Some(0)))?;
        each(p)
    };
    let how = b.summary.unwrap_or(f.over_cpus);
    let mut cells = vec![cell(how.values(iv.pkgs.iter(), each), b.format)];
    cells.extend(rows.iter().map(|r| cell(own(r), b.format)));
    Column {
        header: f.header(b.header).to_string(),
        cells,
    }
}

/// Renders the table of one interval for the selected CPUs (all when
/// `None`): the CPU, then every figure the catalogue gives a batch column,
/// in its order.
pub fn table(iv: &Interval, cpus: Option<&[u32]>) -> String {
    let rows: Vec<&CpuRates> = iv
        .cpus
        .iter()
        .filter(|c| cpus.is_none_or(|sel| sel.contains(&c.cpu)))
        .collect();
    let mut cols = vec![Column {
        header: "CPU".into(),
        cells: std::iter::once("-".to_string())
            .chain(rows.iter().map(|r| r.cpu.to_string()))
            .collect(),
    }];
    for f in metric::batch_columns() {
        let Some(b) = f.batch else { continue };
        let template = f.header(b.header);
        match (f.each, f.read) {
            (Each::One, Read::Package { each, .. }) => {
                cols.push(package_col(f, b, &rows, iv, each));
            }
            (Each::One, _) => {
                cols.push(figure_col(template.to_string(), f, b, &rows, iv, Inst::One));
            }
            (Each::IdleState, _) => {
                for name in state_names(&rows, |r| {
                    r.idle.iter().map(|s| s.name.to_string()).collect()
                }) {
                    // a state disabled in sysfs on any listed CPU says so in
                    // its header
                    let off = rows.iter().any(|r| {
                        r.idle
                            .iter()
                            .any(|s| s.name == name && s.disabled == Some(true))
                    });
                    let mark = if off { "(off)" } else { "" };
                    let shown = format!("{}{mark}", name.replace(char::is_whitespace, "_"));
                    let header = metric::fill(template, &shown, "");
                    cols.push(figure_col(header, f, b, &rows, iv, Inst::State(&name)));
                }
            }
            (Each::CoreState(_), _) => {
                for name in state_names(&rows, |r| {
                    r.hw_cstates.iter().map(|s| s.0.to_string()).collect()
                }) {
                    let header = metric::fill(template, &name, "");
                    cols.push(figure_col(header, f, b, &rows, iv, Inst::State(&name)));
                }
            }
            (Each::PackageState(_), _) => {}
        }
    }
    render(&cols)
}

fn state_names(rows: &[&CpuRates], names: impl Fn(&CpuRates) -> Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in rows {
        for n in names(r) {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

fn render(cols: &[Column]) -> String {
    let widths: Vec<usize> = cols
        .iter()
        .map(|c| {
            c.cells
                .iter()
                .map(String::len)
                .chain([c.header.len()])
                .max()
                .unwrap_or(1)
        })
        .collect();
    let nrows = cols.first().map_or(0, |c| c.cells.len());
    let mut out = String::new();
    let line = |out: &mut String, cell: &dyn Fn(usize) -> String| {
        let parts: Vec<String> = widths
            .iter()
            .enumerate()
            .map(|(i, w)| format!("{:>w$}", cell(i)))
            .collect();
        let _ = writeln!(out, "{}", parts.join(" ").trim_end());
    };
    line(&mut out, &|i| cols[i].header.clone());
    for r in 0..nrows {
        line(&mut out, &|i| cols[i].cells[r].clone());
    }
    out
}

/// Renders the footer: the source of each metric and why others are missing.
pub fn footer(statuses: &[Status]) -> String {
    let mut out = String::new();
    for s in statuses {
        match (&s.source, &s.note) {
            (Some(src), None) => {
                let _ = writeln!(out, "# {}: {}", s.metric.label(), src);
            }
            (Some(src), Some(note)) => {
                let _ = writeln!(out, "# {}: {} ({})", s.metric.label(), src, note);
            }
            (None, Some(note)) => {
                let _ = writeln!(out, "# {}: unavailable: {}", s.metric.label(), note);
            }
            (None, None) => {
                let _ = writeln!(out, "# {}: unavailable", s.metric.label());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interval::IdleRate;
    use crate::snapshot::Stamp;

    fn state(name: &str, disabled: Option<bool>) -> IdleRate {
        IdleRate {
            name: name.into(),
            pct: Some(10.0),
            per_s: Some(1.0),
            above_per_s: None,
            below_per_s: None,
            latency_us: Some(1),
            residency_us: Some(1),
            disabled,
        }
    }

    #[test]
    fn a_disabled_idle_state_is_marked_in_its_column_header() {
        let cpu = |n: u32, c6_off: Option<bool>| CpuRates {
            cpu: n,
            idle: vec![state("C1", Some(false)), state("C6", c6_off)].into(),
            ..CpuRates::default()
        };
        let iv = Interval {
            from: Stamp::default(),
            to: Stamp::default(),
            dt_s: 1.0,
            freq_source: None,
            cpus: vec![cpu(0, Some(false)), cpu(1, Some(true))],
            pkgs: Vec::new(),
            irqs: Vec::new(),
            softirqs: Vec::new(),
            gone: Vec::new(),
        };
        let head = table(&iv, None)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        assert!(
            head.contains(" C1% ") && head.contains(" C6(off)% "),
            "{head}"
        );
        // only CPU 0 listed: its C6 is enabled, so no mark
        let head = table(&iv, Some(&[0]))
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        assert!(head.contains(" C6% "), "{head}");
    }
}
