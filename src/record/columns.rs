//! The recording's CSV schema: every column's name (units in the name), the
//! turbostat column it matches where there is one, and how its value is
//! taken from an interval for a CPU row and for the machine row. The
//! figures' columns are the metric catalogue's, in its order.
//!
//! The fixed columns are the same on every machine; one `<state>_pct` and
//! `<state>_per_s` pair per cpuidle state of the machine sits between the
//! hardware C-states and the interrupts, so two recordings of one machine
//! always have the same header.

use crate::metric::{self, Each, Figure, Inst, Read};
use crate::model::interval::{CpuRates, Interval};
use crate::model::machine::Machine;

/// Version of the CSV layout; a reader refuses another one.
pub const SCHEMA_VERSION: u32 = 1;

/// Significant digits of every recorded number (integers are exact).
pub const DIGITS: i32 = 6;

/// A column whose value is a figure of the catalogue taken from the
/// interval.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The figure.
    pub figure: &'static Figure,
    /// Which of its values.
    pub state: FieldState,
}

/// Which value of a figure a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldState {
    /// Its one value.
    One,
    /// The value of the hardware C-state of this name.
    Named(&'static str),
    /// The value of the cpuidle state with this index in the schema's states.
    Idle(usize),
}

impl PartialEq for Field {
    fn eq(&self, other: &Field) -> bool {
        self.figure.csv == other.figure.csv && self.state == other.state
    }
}

impl Eq for Field {}

impl Field {
    /// Whether the machine row sums the CPUs' values (so that machines of
    /// different sizes compare per CPU).
    pub fn sums_cpus(&self) -> bool {
        matches!(self.figure.over_cpus, metric::Combine::Sum)
    }
}

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `time`: ISO-8601 UTC with milliseconds.
    Time,
    /// `t_s`: seconds since the recording began.
    Elapsed,
    /// `dt_s`: the interval's length.
    Dt,
    /// `cpu`: a CPU number or `all`.
    Cpu,
    /// A number from the interval.
    Num(Field),
    /// `verdict`.
    Verdict,
    /// Why: the verdict's causes, or why it is unknown.
    Why,
    /// The longest-running other tasks, `comm[pid]:ms`, up to three.
    Intruders,
    /// The cgroup of each of them.
    IntruderCgroups,
    /// `findings`: finding ids separated by `;`.
    Findings,
    /// `repetition`: the run of `run --repeat` the interval belongs to.
    Repetition,
}

/// One column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Header name.
    pub name: String,
    /// turbostat's name for the same figure, where it has one.
    pub turbostat: Option<String>,
    /// What it means, with its unit.
    pub about: String,
    /// Where its value comes from.
    pub kind: Kind,
}

/// The column a series of runs tags its intervals with.
pub const REPETITION: &str = "repetition";

/// The columns of a recording of one machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    /// Every column, in file order.
    pub columns: Vec<Column>,
    /// cpuidle state names of the machine, in state order.
    pub states: Vec<String>,
}

/// Turns an idle state's name into its column stem: lower case, anything
/// not a letter or digit becomes `_` (`C1-HSW` → `c1_hsw`).
pub fn state_stem(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        s.push_str("state");
    }
    // old kernels name the polling idle state `C0` (Nehalem): `c0_pct`
    // would read as busy time, which is C0 in turbostat's sense
    if s == "c0" {
        s.push_str("_idle");
    }
    s
}

/// The cpuidle state names of a machine: the first CPU's states in index
/// order, then any name another CPU has that it lacks.
pub fn machine_states(m: &Machine) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, states) in m.idle_states.iter() {
        for st in states {
            if !out.iter().any(|n| n == st.name.as_str()) {
                out.push(st.name.to_string());
            }
        }
    }
    out
}

impl Schema {
    /// Builds the schema for a machine's idle states.
    pub fn for_machine(m: &Machine) -> Schema {
        Schema::with_states(machine_states(m))
    }

    /// Builds the schema for these cpuidle state names.
    pub fn with_states(states: Vec<String>) -> Schema {
        let mut c = Vec::new();
        let mut add = |name: &str, ts: Option<&str>, about: &str, kind: Kind| {
            c.push(Column {
                name: name.to_string(),
                turbostat: ts.map(str::to_string),
                about: about.to_string(),
                kind,
            });
        };
        add(
            "time",
            Some("Time_Of_Day_Seconds"),
            "end of the interval, ISO-8601 UTC (turbostat: seconds since the epoch)",
            Kind::Time,
        );
        add(
            "t_s",
            None,
            "end of the interval, s since the recording began",
            Kind::Elapsed,
        );
        add("dt_s", None, "length of the interval, s", Kind::Dt);
        add(
            "cpu",
            Some("CPU"),
            "CPU number, `all` for the machine row",
            Kind::Cpu,
        );
        let num = |figure, state| Kind::Num(Field { figure, state });
        let figures = metric::ALL;
        let mut k = 0;
        while let Some(f) = figures.get(k) {
            match f.each {
                Each::One => add(f.csv, f.turbostat, f.about, num(f, FieldState::One)),
                Each::CoreState(list) | Each::PackageState(list) => {
                    for s in list {
                        add(
                            s.csv,
                            Some(s.turbostat),
                            f.about,
                            num(f, FieldState::Named(s.state)),
                        );
                    }
                }
                Each::IdleState => {
                    // the figures of one state sit together: `c1_pct`,
                    // `c1_per_s`, then the next state's
                    let run = figures[k..]
                        .iter()
                        .take_while(|g| g.each == Each::IdleState)
                        .count();
                    for (i, s) in states.iter().enumerate() {
                        let stem = state_stem(s);
                        for g in &figures[k..k + run] {
                            add(
                                &metric::fill(g.csv, s, &stem),
                                g.turbostat.map(|t| metric::fill(t, s, &stem)).as_deref(),
                                &metric::fill(g.about, s, &stem),
                                num(g, FieldState::Idle(i)),
                            );
                        }
                    }
                    k += run;
                    continue;
                }
            }
            k += 1;
        }
        add("verdict", None, "the CPU's verdict", Kind::Verdict);
        add(
            "findings",
            None,
            "active finding ids, `;`-separated",
            Kind::Findings,
        );
        add(
            "why",
            None,
            "the verdict's causes (`IRQ eth0 402/s; CSW 1487/s`) or why it is unknown",
            Kind::Why,
        );
        add(
            "intruders",
            None,
            "watched CPUs where who ran was counted or sampled: the other tasks that ran longest, `comm[pid]:ms`, `;`-separated, up to 3",
            Kind::Intruders,
        );
        add(
            "intruder_cgroups",
            None,
            "the cgroup v2 path of each of `intruders`, in the same order, `;`-separated (empty where not known)",
            Kind::IntruderCgroups,
        );
        Schema { columns: c, states }
    }

    /// Adds the `repetition` column at the end: a series of runs tags
    /// each interval with its run's number (only such a recording has it,
    /// so other recordings keep the header they always had).
    #[must_use]
    pub fn with_repetition(mut self) -> Schema {
        self.columns.push(Column {
            name: REPETITION.to_string(),
            turbostat: None,
            about: "the run of `run --repeat` the interval belongs to (1, 2, …)".to_string(),
            kind: Kind::Repetition,
        });
        self
    }

    /// Returns the header names.
    pub fn names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name.as_str()).collect()
    }
}

/// Returns a CPU's value of a field; package fields are the machine row's.
pub fn cpu_value(f: Field, r: &CpuRates, states: &[String]) -> Option<f64> {
    match f.state {
        FieldState::Idle(i) => {
            let name = states.get(i)?;
            let s = r.idle.iter().find(|s| s.name.as_str() == name)?;
            // a disabled state is not entered: its cells stay empty
            if s.disabled == Some(true) {
                return None;
            }
            match f.figure.read {
                Read::IdleState(read) => read(s),
                _ => None,
            }
        }
        FieldState::Named(n) => f.figure.cpu_value(r, Inst::State(n)),
        FieldState::One => f.figure.cpu_value(r, Inst::One),
    }
}

/// Returns the machine row's value of a field.
pub fn machine_value(f: Field, iv: &Interval, states: &[String]) -> Option<f64> {
    match f.state {
        FieldState::Idle(_) => f
            .figure
            .over_cpus
            .values(iv.cpus.iter(), |r| cpu_value(f, r, states)),
        FieldState::Named(n) => {
            f.figure
                .machine_value(iv.cpus.iter(), &iv.pkgs, Inst::State(n), None)
        }
        FieldState::One => f
            .figure
            .machine_value(iv.cpus.iter(), &iv.pkgs, Inst::One, None),
    }
}

/// Writes a number with [`DIGITS`] significant digits, no exponent and no
/// trailing zeros; integers as integers. `None` is the empty cell.
pub fn write_num(out: &mut String, v: f64) {
    use std::fmt::Write as _;
    if !v.is_finite() {
        return;
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        let _ = write!(out, "{}", v as i64);
        return;
    }
    let mag = v.abs().log10().floor() as i32;
    let decimals = (DIGITS - 1 - mag).clamp(0, 12) as usize;
    let start = out.len();
    let _ = write!(out, "{v:.decimals$}");
    if decimals > 0 {
        let trimmed = out[start..]
            .trim_end_matches('0')
            .trim_end_matches('.')
            .len();
        out.truncate(start + trimmed);
    }
    if &out[start..] == "-0" {
        out.truncate(start);
        out.push('0');
    }
}

/// Rounds a number as [`write_num`] writes it.
pub fn rounded(v: f64) -> f64 {
    let mut s = String::new();
    write_num(&mut s, v);
    s.parse().unwrap_or(f64::NAN)
}

/// Formats ns since the epoch as ISO-8601 UTC with milliseconds.
pub fn iso_time(wall_ns: u64) -> String {
    let ms = wall_ns / 1_000_000;
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60,
        ms % 1000
    )
}

/// Reads back what [`iso_time`] writes (`2026-11-28T06:53:44.384Z`, the
/// fraction optional), as ns since the epoch; `None` for other text.
pub fn parse_iso_time(s: &str) -> Option<u64> {
    let s = s.strip_suffix('Z')?;
    let (date, time) = s.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|x| x.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
    let mut t = hms.splitn(3, ':').map(|x| x.parse::<u64>().ok());
    let (h, mi, sec) = (t.next()??, t.next()??, t.next()??);
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let ns_frac = if frac.is_empty() {
        0
    } else if frac.len() <= 9 && frac.bytes().all(|b| b.is_ascii_digit()) {
        frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32)
    } else {
        return None;
    };
    let days = u64::try_from(days_from_civil(y, m as u32, day as u32)).ok()?;
    Some(((days * 86_400 + h * 3600 + mi * 60 + sec) * 1_000_000_000) + ns_frac)
}

/// A civil date to days since 1970-01-01, the inverse of
/// [`civil_from_days`] (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days since 1970-01-01 to a civil date (proleptic Gregorian), after
/// Howard Hinnant's `civil_from_days`.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times_read_back_to_what_was_written() {
        for ns in [
            0,
            1_795_848_824_384_000_000,
            951_782_400_000_000_000,
            4_102_444_799_999_000_000,
        ] {
            assert_eq!(parse_iso_time(&iso_time(ns)), Some(ns), "{}", iso_time(ns));
        }
        assert_eq!(
            parse_iso_time("2026-11-28T06:53:44Z"),
            Some(1_795_848_824_000_000_000)
        );
        for bad in [
            "",
            "2026-11-28 06:53:44Z",
            "2026-13-01T00:00:00Z",
            "2026-11-28T06:53:44.x1Z",
        ] {
            assert_eq!(parse_iso_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn numbers_keep_six_significant_digits_and_no_exponent() {
        let w = |v: f64| {
            let mut s = String::new();
            write_num(&mut s, v);
            s
        };
        assert_eq!(w(2_345.678_901), "2345.68");
        assert_eq!(w(0.000_277_777_7), "0.000277778");
        assert_eq!(w(100.0), "100");
        assert_eq!(w(0.0), "0");
        assert_eq!(w(-1e-14), "0");
        assert_eq!(w(12.5), "12.5");
        assert_eq!(w(f64::NAN), "");
        assert_eq!(w(1_234_567.891), "1234568");
    }

    #[test]
    fn iso_time_is_utc_with_milliseconds() {
        assert_eq!(iso_time(0), "1970-01-01T00:00:00.000Z");
        // 2023-11-14T22:13:20Z is 1_700_000_000 s
        assert_eq!(
            iso_time(1_700_000_000_123_456_789),
            "2023-11-14T22:13:20.123Z"
        );
        assert_eq!(
            iso_time(951_782_400_000_000_000),
            "2000-02-29T00:00:00.000Z"
        );
    }

    #[test]
    fn state_names_become_column_stems() {
        assert_eq!(state_stem("C1-HSW"), "c1_hsw");
        assert_eq!(state_stem("POLL"), "poll");
        assert_eq!(state_stem("C0"), "c0_idle", "an idle state, not busy C0");
        assert_eq!(state_stem("C0E"), "c0e");
        assert_eq!(state_stem(""), "state");
    }
}
