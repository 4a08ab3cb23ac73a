//! The metric catalogue: every per-CPU and per-package figure declared
//! once, with its name, unit, formula and source, turbostat's name for it,
//! its CSV column, its Prometheus family, how it combines over CPUs and
//! over time, how it is read from an interval, and how each sink shows it.
//!
//! The sinks enumerate [`ALL`]: the recording's columns
//! (`record::columns`), the dashboard's optional columns (`tui::columns`),
//! the batch table (`output::batch`), the tables of `report`, the
//! exporter's catalogue (`serve::catalog`) and the columns glossary in
//! `docs/columns.md`. A figure a sink shows differently from the others
//! (a shorter header, fewer decimals, another summary) says so in its
//! entry, never in the sink. Adding a figure is one entry in
//! `figures` plus its collection (the kernel file, the snapshot field
//! and the interval's delta).

mod figures;
mod glossary;

pub use figures::ALL;
pub use glossary::markdown_table;

use crate::model::interval::{CpuRates, IdleRate, PkgRates};
use crate::model::snapshot::Snapshot;

/// The unit a figure is given in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// An identity (core or package id), not a quantity.
    Id,
    /// Megahertz.
    Mhz,
    /// Percent.
    Pct,
    /// Events per second.
    PerS,
    /// A plain ratio (instructions per cycle).
    Ratio,
    /// Events in the interval.
    Count,
    /// Degrees Celsius.
    Celsius,
    /// Watts.
    Watt,
    /// Seconds.
    Seconds,
}

impl Unit {
    /// Says the unit as the glossary writes it.
    pub fn text(self) -> &'static str {
        match self {
            Unit::Id => "id",
            Unit::Mhz => "MHz",
            Unit::Pct => "%",
            Unit::PerS => "/s",
            Unit::Ratio => "ratio",
            Unit::Count => "per interval",
            Unit::Celsius => "°C",
            Unit::Watt => "W",
            Unit::Seconds => "s",
        }
    }

    /// The end every CSV column of this unit has (`_pct`, `_per_s`);
    /// empty where the name alone says it (`smi`, `ipc`).
    pub fn csv_suffix(self) -> &'static str {
        match self {
            Unit::Mhz => "_mhz",
            Unit::Pct => "_pct",
            Unit::PerS => "_per_s",
            Unit::Celsius => "_c",
            Unit::Watt => "_watt",
            Unit::Seconds => "_s",
            Unit::Id | Unit::Ratio | Unit::Count => "",
        }
    }
}

/// Which values one entry stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Each {
    /// One value per CPU (or per machine, for a package figure).
    One,
    /// One per hardware core C-state. The recording has a column for each
    /// of these, on every machine; the batch table one per state a CPU has.
    CoreState(&'static [State]),
    /// One per cpuidle state of the machine.
    IdleState,
    /// One per package C-state; the recording has a column for each.
    PackageState(&'static [State]),
}

/// A hardware C-state a counter may exist for, and its names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct State {
    /// The state as the counters name it (`C6`, `PC10`).
    pub state: &'static str,
    /// Its recording column.
    pub csv: &'static str,
    /// turbostat's column.
    pub turbostat: &'static str,
}

/// The machine's value of a figure, from its packages.
pub type PackagesRead = fn(&[PkgRates]) -> Option<f64>;

/// How a value is read from an interval.
#[derive(Debug, Clone, Copy)]
pub enum Read {
    /// A value of each CPU.
    Cpu(fn(&CpuRates) -> Option<f64>),
    /// A value of each of a CPU's hardware C-states, by name.
    CpuState(fn(&CpuRates, &str) -> Option<f64>),
    /// A value of each cpuidle state of a CPU.
    IdleState(fn(&IdleRate) -> Option<f64>),
    /// A value of each package (`each`) and of the machine (`all`, the
    /// packages combined as [`Combine::Packages`] says).
    Package {
        /// One package's value.
        each: fn(&PkgRates) -> Option<f64>,
        /// The machine's value.
        all: fn(&[PkgRates]) -> Option<f64>,
    },
    /// A value of the machine for each package C-state, by name.
    PackageState(fn(&[PkgRates], &str) -> Option<f64>),
}

/// How the CPUs' values make the machine's (the recording's `all` row,
/// the batch table's `-` row, the dashboard's summary row).
#[derive(Debug, Clone, Copy)]
pub enum Combine {
    /// An identity: the machine has none.
    None,
    /// Mean of the CPUs whose value is known.
    Mean,
    /// Sum over the CPUs whose value is known.
    Sum,
    /// Highest value.
    Max,
    /// A ratio of sums over the CPUs, not a combination of their ratios;
    /// the words say which.
    Ratio(
        &'static str,
        fn(&mut dyn Iterator<Item = &CpuRates>) -> Option<f64>,
    ),
    /// Not a per-CPU figure: the packages' values, combined as the words say.
    Packages(&'static str),
}

impl Combine {
    /// Says it in words for the glossary.
    pub fn text(&self) -> &'static str {
        match self {
            Combine::None => "—",
            Combine::Mean => "mean",
            Combine::Sum => "sum",
            Combine::Max => "max",
            Combine::Ratio(how, _) | Combine::Packages(how) => how,
        }
    }

    /// Combines the values `read` takes from each of `rows`.
    pub fn values<'a, T: 'a>(
        &self,
        rows: impl Iterator<Item = &'a T>,
        read: impl Fn(&T) -> Option<f64>,
    ) -> Option<f64> {
        let known = rows.filter_map(read);
        match self {
            Combine::Mean => {
                let (n, s) = known.fold((0u32, 0.0), |(n, s), v| (n + 1, s + v));
                (n > 0).then(|| s / f64::from(n))
            }
            Combine::Sum => known.fold(None, |acc: Option<f64>, v| Some(acc.unwrap_or(0.0) + v)),
            Combine::Max => known.reduce(f64::max),
            Combine::None | Combine::Ratio(..) | Combine::Packages(_) => None,
        }
    }
}

/// How `report` sums up a recording's rows of a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverTime {
    /// Not summed up: an identity.
    None,
    /// Mean over the intervals.
    Mean,
    /// min / median / p99 / max over the intervals.
    Quantiles,
    /// Sum over the intervals: events counted per interval.
    Total,
}

impl OverTime {
    /// Says it in words for the glossary.
    pub fn text(self) -> &'static str {
        match self {
            OverTime::None => "—",
            OverTime::Mean => "mean",
            OverTime::Quantiles => "min/median/p99/max",
            OverTime::Total => "total",
        }
    }
}

/// How a number is written in a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A fixed number of decimals.
    Decimals(usize),
    /// A rate: whole from 10 up, one decimal below (the dashboard's also
    /// shortens thousands to `k`).
    Rate,
}

/// How the dashboard's Cores view shows a figure: one of the optional
/// columns of its wide rows (`--show`/`--hide`).
#[derive(Debug, Clone, Copy)]
pub struct TuiColumn {
    /// The header, and the name `--show`/`--hide` take; `None`: the
    /// figure's name.
    pub header: Option<&'static str>,
    /// Columns it takes, its leading space included.
    pub width: usize,
    /// How its cells are written.
    pub format: Format,
    /// Place among the optional columns (saved choices are kept by it).
    pub rank: u8,
    /// Whether the summary row shows the CPUs combined; `false` leaves it
    /// unknown.
    pub summary: bool,
    /// Whether it is on screen unless `--show`/`--hide` say otherwise; one
    /// that is not shows in the CPU's detail instead.
    pub shown: bool,
}

/// How `--batch` shows a figure: one column of its table.
#[derive(Debug, Clone, Copy)]
pub struct BatchColumn {
    /// The header (a template for a state family: `{state}`, `{lower}`);
    /// `None`: the figure's name.
    pub header: Option<&'static str>,
    /// How its cells are written.
    pub format: Format,
    /// Place in the table.
    pub rank: u8,
    /// How its `-` row combines the CPUs when not as the figure does.
    pub summary: Option<Combine>,
}

/// Where the exporter carries a figure.
#[derive(Debug, Clone, Copy)]
pub enum Prom {
    /// In this family, written by the exporter's own code from the
    /// kernel's counters; `labels` pick the figure's series.
    In {
        /// The family name.
        family: &'static str,
        /// The series of the family that carry it (empty: every one).
        labels: &'static str,
    },
    /// A family of its own, written from the catalogue: one counter per
    /// CPU since boot, in its base unit.
    Counter {
        /// The family name (its samples end in `_total`).
        family: &'static str,
        /// The base unit the name ends in.
        unit: Option<&'static str>,
        /// Every CPU, or the detailed ones only.
        every_cpu: bool,
        /// One line: what it is and where it comes from.
        help: &'static str,
        /// The counter of one CPU in a snapshot.
        total: fn(&Snapshot, u32) -> Option<f64>,
    },
    /// Not exported, and why.
    No(&'static str),
}

impl Prom {
    /// The family name, where it has one.
    pub fn family(&self) -> Option<&'static str> {
        match self {
            Prom::In { family, .. } | Prom::Counter { family, .. } => Some(family),
            Prom::No(_) => None,
        }
    }
}

/// One figure, or one family of figures (one per C-state).
#[derive(Debug, Clone, Copy)]
pub struct Figure {
    /// Its name with its unit, as the tables head it (`IRQ/s`, `RQwait%`);
    /// a template for a state family (`{state}%`, `CPU%{lower}`).
    pub name: &'static str,
    /// Its unit.
    pub unit: Unit,
    /// The recording's column: `{stem}` stands for an idle state's stem.
    pub csv: &'static str,
    /// turbostat's column, where it has one (`{state}` as in `name`).
    pub turbostat: Option<&'static str>,
    /// What it means, with its unit, as the recording's column table says.
    pub about: &'static str,
    /// How it is computed.
    pub formula: &'static str,
    /// What it is read from.
    pub source: &'static str,
    /// Which values the entry stands for.
    pub each: Each,
    /// How it is read from an interval.
    pub read: Read,
    /// How the CPUs' values make the machine's.
    pub over_cpus: Combine,
    /// Where no CPU has it, the machine's value from the packages (the
    /// cores' power from the package counters).
    pub fallback: Option<PackagesRead>,
    /// How `report` sums it up over a recording.
    pub over_time: OverTime,
    /// Whether `compare` sets two recordings' values side by side
    /// (identities and bookkeeping are not).
    pub compared: bool,
    /// Its column in the dashboard.
    pub tui: Option<TuiColumn>,
    /// Its column in `--batch`.
    pub batch: Option<BatchColumn>,
    /// Its column in `report`'s table of rates; `Some("")`: the figure's
    /// name. (State families have their own table.)
    pub report: Option<&'static str>,
    /// Where the exporter carries it.
    pub prometheus: Prom,
}

impl Figure {
    /// The header a sink shows: its own where the entry gives one, else
    /// the figure's name.
    pub fn header(&self, own: Option<&'static str>) -> &'static str {
        own.unwrap_or(self.name)
    }

    /// The dashboard's header.
    pub fn tui_header(&self) -> Option<&'static str> {
        self.tui.map(|t| self.header(t.header))
    }

    /// The batch table's header (a template for a state family).
    pub fn batch_header(&self) -> Option<&'static str> {
        self.batch.map(|b| self.header(b.header))
    }

    /// `report`'s header.
    pub fn report_header(&self) -> Option<&'static str> {
        self.report
            .map(|h| if h.is_empty() { self.name } else { h })
    }

    /// A CPU's value of the figure, or of one of its states.
    pub fn cpu_value(&self, r: &CpuRates, inst: Inst<'_>) -> Option<f64> {
        match (self.read, inst) {
            (Read::Cpu(f), _) => f(r),
            (Read::CpuState(f), Inst::State(n)) => f(r, n),
            (Read::IdleState(f), Inst::State(n)) => {
                r.idle.iter().find(|s| s.name.as_str() == n).and_then(f)
            }
            _ => None,
        }
    }

    /// The machine's value over `rows`, as [`Figure::over_cpus`] (or
    /// `how`, where a sink combines otherwise) says; `pkgs` are the
    /// interval's packages.
    pub fn machine_value<'a>(
        &self,
        rows: impl Iterator<Item = &'a CpuRates> + Clone,
        pkgs: &[PkgRates],
        inst: Inst<'_>,
        how: Option<Combine>,
    ) -> Option<f64> {
        let v = match (self.read, how.unwrap_or(self.over_cpus), inst) {
            (Read::Package { all, .. }, _, _) => all(pkgs),
            (Read::PackageState(f), _, Inst::State(n)) => f(pkgs, n),
            (_, Combine::Ratio(_, f), _) => f(&mut rows.clone()),
            (_, c, _) => c.values(rows, |r| self.cpu_value(r, inst)),
        };
        v.or_else(|| self.fallback.and_then(|f| f(pkgs)))
    }
}

/// Which value of an entry: its one value, or one state's (by name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inst<'a> {
    /// The figure's one value.
    One,
    /// The value of the state of this name.
    State(&'a str),
}

/// Replaces the placeholders of a state family's template: `{state}` the
/// state's name, `{lower}` it in lower case, `{stem}` its column stem.
pub fn fill(template: &str, state: &str, stem: &str) -> String {
    template
        .replace("{state}", state)
        .replace("{lower}", &state.to_ascii_lowercase())
        .replace("{stem}", stem)
}

/// The entry whose recording column is `csv` (a state family's columns
/// end as its template does: `c6_pct` is `{stem}_pct`'s).
pub fn by_csv(csv: &str, idle_stems: &[String]) -> Option<&'static Figure> {
    ALL.iter().find(|f| match f.each {
        Each::One => f.csv == csv,
        Each::CoreState(list) | Each::PackageState(list) => list.iter().any(|s| s.csv == csv),
        Each::IdleState => idle_stems.iter().any(|stem| fill(f.csv, "", stem) == csv),
    })
}

/// The entries with a dashboard column, in screen order.
pub fn tui_columns() -> Vec<&'static Figure> {
    let mut v: Vec<&'static Figure> = ALL.iter().filter(|f| f.tui.is_some()).collect();
    v.sort_by_key(|f| f.tui.map(|t| t.rank));
    v
}

/// The entries with a batch column, in table order.
pub fn batch_columns() -> Vec<&'static Figure> {
    let mut v: Vec<&'static Figure> = ALL.iter().filter(|f| f.batch.is_some()).collect();
    v.sort_by_key(|f| f.batch.map(|b| b.rank));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_csv_column_ends_as_its_unit_says_and_names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for f in ALL {
            let cols: Vec<&str> = match f.each {
                Each::One | Each::IdleState => vec![f.csv],
                Each::CoreState(l) | Each::PackageState(l) => l.iter().map(|s| s.csv).collect(),
            };
            for c in cols {
                assert!(seen.insert(c), "{c} twice");
                assert!(c.ends_with(f.unit.csv_suffix()), "{c}: {:?}", f.unit);
            }
            assert!(!f.about.is_empty() && !f.formula.is_empty() && !f.source.is_empty());
            match f.unit {
                Unit::Pct => assert!(f.name.contains('%'), "{}", f.name),
                Unit::PerS => assert!(f.name.ends_with("/s"), "{}", f.name),
                _ => {}
            }
        }
    }

    #[test]
    fn combining_leaves_unknown_values_out_and_nothing_known_unknown() {
        let v = [Some(1.0), None, Some(4.0)];
        let m = |c: Combine| c.values(v.iter(), |x| *x);
        assert_eq!(m(Combine::Mean), Some(2.5));
        assert_eq!(m(Combine::Sum), Some(5.0));
        assert_eq!(m(Combine::Max), Some(4.0));
        assert_eq!(m(Combine::None), None);
        let none: [Option<f64>; 2] = [None, None];
        assert_eq!(Combine::Sum.values(none.iter(), |x| *x), None);
        assert_eq!(Combine::Mean.values(none.iter(), |x| *x), None);
    }

    #[test]
    fn templates_name_each_state() {
        assert_eq!(fill("CPU%{lower}", "C6", "c6"), "CPU%c6");
        assert_eq!(fill("{stem}_per_s", "C1-HSW", "c1_hsw"), "c1_hsw_per_s");
        assert_eq!(fill("{state}%", "C1-HSW", "c1_hsw"), "C1-HSW%");
        let f = by_csv("c1_hsw_pct", &["poll".into(), "c1_hsw".into()]).map(|f| f.name);
        assert_eq!(f, Some("{state}%"));
        assert_eq!(
            by_csv("pkg_pc10_pct", &[]).map(|f| f.name),
            Some("Pkg%{lower}")
        );
        assert_eq!(by_csv("nothing", &[]).map(|f| f.name), None);
    }
}
