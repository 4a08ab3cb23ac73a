//! The batch sink: one turbostat-like table per interval, `-` for unknown,
//! and a footer that names each unavailable metric and why.

use std::fmt::Write as _;

use crate::model::interval::{CpuRates, Interval};
use crate::sample::ladder::Status;

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

fn mean(vals: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = vals.flatten().collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn sum(vals: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = vals.flatten().collect();
    (!v.is_empty()).then(|| v.iter().sum())
}

fn max(vals: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    vals.flatten().reduce(f64::max)
}

/// Builds a column from a per-CPU value and how the summary row combines it.
fn col(
    header: &str,
    rows: &[&CpuRates],
    get: impl Fn(&CpuRates) -> Option<f64>,
    combine: fn(&mut dyn Iterator<Item = Option<f64>>) -> Option<f64>,
    fmt: impl Fn(Option<f64>) -> String,
) -> Column {
    let mut it = rows.iter().map(|r| get(r));
    let summary = combine(&mut it);
    let mut cells = vec![fmt(summary)];
    cells.extend(rows.iter().map(|r| fmt(get(r))));
    Column {
        header: header.to_string(),
        cells,
    }
}

fn c_mean(it: &mut dyn Iterator<Item = Option<f64>>) -> Option<f64> {
    mean(it)
}
fn c_sum(it: &mut dyn Iterator<Item = Option<f64>>) -> Option<f64> {
    sum(it)
}
fn c_max(it: &mut dyn Iterator<Item = Option<f64>>) -> Option<f64> {
    max(it)
}

/// Renders the table of one interval for the selected CPUs (all when `None`).
pub fn table(iv: &Interval, cpus: Option<&[u32]>) -> String {
    let rows: Vec<&CpuRates> = iv
        .cpus
        .iter()
        .filter(|c| cpus.is_none_or(|sel| sel.contains(&c.cpu)))
        .collect();
    let mut cols = vec![
        Column {
            header: "CPU".into(),
            cells: std::iter::once("-".to_string())
                .chain(rows.iter().map(|r| r.cpu.to_string()))
                .collect(),
        },
        Column {
            header: "Core".into(),
            cells: std::iter::once("-".to_string())
                .chain(
                    rows.iter()
                        .map(|r| r.core.map_or("-".into(), |c| c.to_string())),
                )
                .collect(),
        },
        col("Avg_MHz", &rows, |r| r.avg_mhz, c_mean, |v| num(v, 0)),
        col("Busy%", &rows, |r| r.busy_pct, c_mean, |v| num(v, 2)),
        col("Bzy_MHz", &rows, |r| r.bzy_mhz, c_mean, |v| num(v, 0)),
        col("TSC_MHz", &rows, |r| r.tsc_mhz, c_mean, |v| num(v, 0)),
        ipc_col(&rows),
    ];
    for name in state_names(&rows, |r| {
        r.idle.iter().map(|s| s.name.to_string()).collect()
    }) {
        let n = name.clone();
        // a state disabled in sysfs on any listed CPU says so in its header
        let off = rows.iter().any(|r| {
            r.idle
                .iter()
                .any(|s| s.name == n && s.disabled == Some(true))
        });
        let mark = if off { "(off)" } else { "" };
        cols.push(col(
            &format!("{}{mark}%", name.replace(char::is_whitespace, "_")),
            &rows,
            move |r| r.idle.iter().find(|s| s.name == n).and_then(|s| s.pct),
            c_mean,
            |v| num(v, 2),
        ));
    }
    for name in state_names(&rows, |r| {
        r.hw_cstates.iter().map(|s| s.0.to_string()).collect()
    }) {
        let n = name.clone();
        cols.push(col(
            &format!("CPU%{}", name.to_lowercase()),
            &rows,
            move |r| r.hw_cstates.iter().find(|s| s.0 == n).and_then(|s| s.1),
            c_mean,
            |v| num(v, 2),
        ));
    }
    cols.push(col("IRQ/s", &rows, |r| r.irq_per_s, c_sum, rate));
    cols.push(col("LOC/s", &rows, |r| r.loc_per_s, c_sum, rate));
    cols.push(col("RES/s", &rows, |r| r.res_per_s, c_sum, rate));
    cols.push(col("CAL/s", &rows, |r| r.cal_per_s, c_sum, rate));
    cols.push(col("DEV/s", &rows, |r| r.dev_per_s, c_sum, rate));
    cols.push(col("SOFTIRQ/s", &rows, |r| r.softirq_per_s, c_sum, rate));
    cols.push(col("CSW/s", &rows, |r| r.csw_per_s, c_sum, rate));
    cols.push(col("MIG/s", &rows, |r| r.mig_per_s, c_sum, rate));
    cols.push(col(
        "Steal%",
        &rows,
        |r| r.time.and_then(|t| t.steal),
        c_mean,
        |v| num(v, 2),
    ));
    cols.push(col(
        "SMI",
        &rows,
        |r| r.smi.map(|s| s as f64),
        c_sum,
        |v| num(v, 0),
    ));
    cols.push(col("CoreTmp", &rows, |r| r.temp_c, c_max, |v| num(v, 0)));
    let pkg_watt = |r: &CpuRates| -> Option<f64> {
        let first = rows.iter().find(|x| x.package == r.package)?.cpu == r.cpu;
        if !first {
            return None;
        }
        let p = iv
            .pkgs
            .iter()
            .find(|p| Some(p.package) == r.package.or(Some(0)))?;
        p.watts
            .iter()
            .find(|(d, _)| d == "pkg")
            .and_then(|(_, w)| *w)
    };
    let mut pw = col("PkgWatt", &rows, pkg_watt, c_sum, |v| num(v, 2));
    // packages are summed once each in the summary, not per CPU
    pw.cells[0] = num(
        sum(iv.pkgs.iter().map(|p| {
            p.watts
                .iter()
                .find(|(d, _)| d == "pkg")
                .and_then(|(_, w)| *w)
        })),
        2,
    );
    cols.push(pw);
    render(&cols)
}

/// IPC per CPU, Δinstructions/Δcycles; the summary row is
/// ΣΔinstructions/ΣΔcycles over the CPUs with both (turbostat's summary).
fn ipc_col(rows: &[&CpuRates]) -> Column {
    let mut c = col("IPC", rows, |r| r.ipc, c_mean, |v| num(v, 2));
    let (i, cycles) = crate::model::interval::total_counts(rows.iter().copied());
    c.cells[0] = num(crate::model::interval::ipc(i, cycles), 2);
    c
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
    use crate::model::interval::IdleRate;
    use crate::os::hw::Stamp;

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
