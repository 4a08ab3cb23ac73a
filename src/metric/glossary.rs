//! The columns glossary of `docs/columns.md`, written from the catalogue:
//! where each figure shows, and how it is computed.

use std::fmt::Write as _;

use super::{ALL, Each, Figure, Prom};

/// Backquotes a name; a dash for none.
fn code(s: Option<&str>) -> String {
    s.map_or_else(|| "—".to_string(), |s| format!("`{s}`"))
}

/// The figure's recording columns: its one, its template, or its list.
fn csv(f: &Figure) -> String {
    match f.each {
        Each::One | Each::IdleState => format!("`{}`", f.csv),
        Each::CoreState(l) | Each::PackageState(l) => {
            let names: Vec<String> = l.iter().map(|s| format!("`{}`", s.csv)).collect();
            names.join(" ")
        }
    }
}

fn turbostat(f: &Figure) -> String {
    match f.each {
        Each::CoreState(l) | Each::PackageState(l) => {
            let names: Vec<String> = l.iter().map(|s| format!("`{}`", s.turbostat)).collect();
            names.join(" ")
        }
        Each::One | Each::IdleState => code(f.turbostat),
    }
}

fn prometheus(f: &Figure) -> String {
    match f.prometheus {
        Prom::In { family, labels: "" } => format!("`{family}`"),
        Prom::In { family, labels } if labels.contains('=') => format!("`{family}{{{labels}}}`"),
        Prom::In { family, labels } => format!("`{family}` by `{labels}`"),
        Prom::Counter { family, .. } => format!("`{family}_total`"),
        Prom::No(why) => format!("— ({why})"),
    }
}

/// How the machine's value combines the CPUs', with where a sink does
/// otherwise.
fn machine(f: &Figure) -> String {
    let mut s = f.over_cpus.text().to_string();
    if let Some(b) = f.batch.and_then(|b| b.summary)
        && b.text() != s
    {
        let _ = write!(s, " (`--batch`: {})", b.text());
    }
    if f.tui.is_some_and(|t| !t.summary) {
        s.push_str(" (dashboard: unknown)");
    }
    s
}

/// Escapes the table's cell separator.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Writes the two tables of the glossary: where each figure shows, and how
/// it is computed.
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| figure | unit | dashboard | `--batch` | recording | `report` | Prometheus | turbostat |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for f in ALL {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} | {} | {} |",
            f.name,
            f.unit.text(),
            code(f.tui_header()),
            code(f.batch_header()),
            csv(f),
            code(f.report_header()),
            cell(&prometheus(f)),
            turbostat(f),
        );
    }
    out.push_str(
        "\n| figure | formula | read from | machine (over CPUs) | `report` (over time) |\n\
         |---|---|---|---|---|\n",
    );
    for f in ALL {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            f.name,
            cell(f.formula),
            cell(f.source),
            cell(&machine(f)),
            f.over_time.text(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_figure_has_one_row_in_each_table() {
        let t = markdown_table();
        assert_eq!(t.lines().count(), 2 * (ALL.len() + 2) + 1);
        assert!(t.contains(
            "| `RQwait%` | % | `RQwait%` | `RQwait%` | `rqwait_pct` | `RQwait%` | \
             `noisetop_cpu_rqwait_seconds_total` | — |"
        ));
        assert!(t.contains(
            "| `SOFTIRQ/s` | /s | `SIRQ` | `SOFTIRQ/s` | `softirq_per_s` | `SOFTIRQ` | \
             `noisetop_cpu_softirqs` by `type` | — |"
        ));
        assert!(t.contains("| `IPC` | Δinstructions / Δcycles; unknown over no cycles |"));
        // where a sink combines otherwise, the table says so
        assert!(t.contains("| max (`--batch`: sum) | total |"));
        assert!(t.contains("| /proc/stat | mean (dashboard: unknown) | mean |"));
    }
}
