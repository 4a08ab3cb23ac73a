//! The probe's sinks: a text table, JSON, and a recording (CSV rows, one
//! per CPU × kind × state, with the whole report and its histograms in the
//! sidecar `FILE.csv.json`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{CtxRow, ProbeReport, Row};
use crate::base::cpulist;

/// The CSV header of a probe recording.
pub const CSV_COLUMNS: [&str; 14] = [
    "cpu",
    "kind",
    "state",
    "tagged_by",
    "count",
    "mean_us",
    "p50_us",
    "p90_us",
    "p99_us",
    "p999_us",
    "max_us",
    "advertised_us",
    "p50_over_advertised",
    "p99_over_advertised",
];

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn row_fields(r: &Row) -> Vec<String> {
    vec![
        r.cpu.to_string(),
        r.kind.name().into(),
        r.state.clone(),
        r.tagged_by.name().into(),
        r.count.to_string(),
        r.mean_us.to_string(),
        r.p50_us.to_string(),
        r.p90_us.to_string(),
        r.p99_us.to_string(),
        r.p999_us.to_string(),
        r.max_us.to_string(),
        opt(r.advertised_us),
        opt(r.p50_over_advertised),
        opt(r.p99_over_advertised),
    ]
}

/// The context-switch figures as rows: the mean (µs) in `mean_us`, the
/// round trips in `count`.
fn ctx_fields(c: &CtxRow) -> Vec<Vec<String>> {
    let row = |kind: &str, state: String, v: f64| {
        let mut f = vec![String::new(); CSV_COLUMNS.len()];
        f[0] = c.cpu.to_string();
        f[1] = kind.into();
        f[2] = state;
        f[4] = c.rounds.to_string();
        f[5] = v.to_string();
        f
    };
    let mut out = vec![
        row("ctx_switch", String::new(), c.switch_us),
        row(
            "pipe_round_trip",
            format!("cpu{}", c.cpu),
            c.one_cpu_round_trip_us,
        ),
        row("pipe_write_read", String::new(), c.pipe_us),
    ];
    if let (Some(hk), Some(v)) = (c.cross_cpu, c.cross_cpu_round_trip_us) {
        let mut f = row("pipe_round_trip", format!("cpu{hk}"), v);
        f[4] = c.cross_rounds.to_string();
        out.push(f);
    }
    out
}

/// Writes the recording: `csv` and its sidecar.
pub fn write_recording(rep: &ProbeReport, csv: &Path) -> std::io::Result<()> {
    let mut w = csv::Writer::from_path(csv)?;
    w.write_record(CSV_COLUMNS)?;
    for r in &rep.rows {
        w.write_record(row_fields(r))?;
    }
    for c in &rep.ctx {
        for f in ctx_fields(c) {
            w.write_record(f)?;
        }
    }
    w.flush()?;
    let side = crate::os::fs::sidecar_path(csv);
    let text = serde_json::to_string_pretty(rep).map_err(std::io::Error::other)?;
    std::fs::write(side, text + "\n")
}

/// Why a probe recording's sidecar cannot be read.
// the JSON error is said in the message, so it is not also a `source` that
// `{:#}` would print a second time
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// The sidecar is not JSON.
    #[error("{} is not JSON: {err}", .path.display())]
    NotJson {
        /// The sidecar.
        path: PathBuf,
        /// What the parser said.
        err: serde_json::Error,
    },
    /// It says it is a probe's but does not hold a probe report.
    #[error("{}: {err}", .path.display())]
    NotAReport {
        /// The sidecar.
        path: PathBuf,
        /// What the parser said.
        err: serde_json::Error,
    },
}

/// Reads a probe recording's sidecar; `Ok(None)` when the file beside
/// `csv` is not a probe's (or there is none).
pub fn read_recording(csv: &Path) -> Result<Option<ProbeReport>, RecordingError> {
    let path = crate::os::fs::sidecar_path(csv);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    let v: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(err) => return Err(RecordingError::NotJson { path, err }),
    };
    if v.get("format").and_then(|f| f.as_str()) != Some(super::FORMAT) {
        return Ok(None);
    }
    serde_json::from_value(v)
        .map(Some)
        .map_err(|err| RecordingError::NotAReport { path, err })
}

/// Where the last probe is kept for the dashboard:
/// `$XDG_STATE_HOME/noisetop/last-probe.json`, else
/// `$HOME/.local/state/noisetop/last-probe.json`.
pub fn last_path() -> Option<std::path::PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".local/state"))
        })?;
    Some(base.join("noisetop/last-probe.json"))
}

/// Keeps `rep` at `path` (its folder made), for the dashboard to show.
pub fn save_last(rep: &ProbeReport, path: &Path) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string(rep).map_err(std::io::Error::other)?;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// The last probe kept at `path`, when there is one that reads.
pub fn load_last_from(path: &Path) -> Option<ProbeReport> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str::<ProbeReport>(&text)
        .ok()
        .filter(|r| r.format == super::FORMAT)
}

/// The last probe of this machine (see [`last_path`]).
pub fn load_last() -> Option<ProbeReport> {
    load_last_from(&last_path()?)
}

/// A latency in µs as the tables print it.
pub fn fmt_us(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The text table.
pub fn text(rep: &ProbeReport) -> String {
    let c = &rep.conditions;
    let mut s = String::new();
    let tagged = match c.tagged_by {
        Some(super::TagMethod::Tracepoint) => "states from the power:cpu_idle tracepoint",
        Some(super::TagMethod::Inferred) => "states inferred from cpuidle usage counters",
        None => "no wake-ups measured",
    };
    let gaps = rep.timer_interval_us.map_or_else(
        || "timer deadlines 0-4 ms apart at random".to_string(),
        |i| format!("timer deadlines every {} µs", fmt_us(i)),
    );
    let _ = writeln!(
        s,
        "Wake-up latency, µs (CPU {}; {} s; {}; {gaps}; {tagged})",
        cpulist::format(&rep.cpus),
        rep.duration_s,
        c.policy
    );
    if rep.rows.is_empty() {
        s.push_str("  no wake-ups measured\n");
    } else {
        let _ = writeln!(
            s,
            "{:>4}  {:<10}  {:<14}  {:<10}  {:>7}  {:>7}  {:>7}  {:>7}  {:>7}  {:>7}  {:>10}  {:>7}",
            "CPU",
            "kind",
            "state",
            "tagged by",
            "count",
            "p50",
            "p90",
            "p99",
            "p99.9",
            "max",
            "advertised",
            "p99/adv"
        );
        for r in &rep.rows {
            let _ = writeln!(
                s,
                "{:>4}  {:<10}  {:<14}  {:<10}  {:>7}  {:>7}  {:>7}  {:>7}  {:>7}  {:>7}  {:>10}  {:>7}",
                r.cpu,
                r.kind.name(),
                r.state,
                r.tagged_by.name(),
                r.count,
                fmt_us(r.p50_us),
                fmt_us(r.p90_us),
                fmt_us(r.p99_us),
                fmt_us(r.p999_us),
                fmt_us(r.max_us),
                r.advertised_us
                    .map_or_else(|| "-".into(), |a| a.to_string()),
                r.p99_over_advertised
                    .map_or_else(|| "-".into(), |v| format!("{v:.1}×")),
            );
        }
        s.push_str(
            "  timer: deadline to the thread running; remote: a housekeeping CPU's time stamp \
             to the woken thread running; round_trip: the stamp to the reply read back; \
             busy: the CPU was not idle when the wake-up was due\n",
        );
    }
    if !rep.ctx.is_empty() {
        let _ = writeln!(
            s,
            "Context switch, µs (lat_ctx's method: two processes pinned to one CPU bounce a byte \
             through two pipes, {} round trips)",
            rep.ctx[0].rounds
        );
        let _ = writeln!(
            s,
            "{:>4}  {:>10}  {:>10}  {:>10}  {:>20}",
            "CPU", "round trip", "pipe w+r", "per switch", "cross-CPU round trip"
        );
        for c in &rep.ctx {
            let cross = match (c.cross_cpu, c.cross_cpu_round_trip_us) {
                (Some(hk), Some(v)) => format!("{} (with CPU {hk})", fmt_us(v)),
                _ => "-".into(),
            };
            let _ = writeln!(
                s,
                "{:>4}  {:>10}  {:>10}  {:>10}  {:>20}",
                c.cpu,
                fmt_us(c.one_cpu_round_trip_us),
                fmt_us(c.pipe_us),
                fmt_us(c.switch_us),
                cross
            );
        }
        s.push_str(
            "  per switch = (round trip − 2 × pipe write+read by one thread) ÷ 2: the pipe's own \
             cost is measured and subtracted\n",
        );
    }
    s.push_str("Conditions:\n");
    let _ = writeln!(
        s,
        "  housekeeping CPU {} (noisetop itself and the wakers); probe threads only on CPU {}",
        cpulist::format(&c.housekeeping),
        cpulist::format(&rep.cpus)
    );
    let _ = writeln!(
        s,
        "  /dev/cpu_dma_latency: {}",
        match c.cpu_dma_latency_us {
            Some(v) if v < crate::os::probe_os::NO_LATENCY_LIMIT_US => format!("held at {v} µs"),
            Some(_) => "no limit held".into(),
            None => "unknown".into(),
        }
    );
    let _ = writeln!(
        s,
        "  disabled idle states: {}",
        if c.disabled_states.is_empty() {
            "none".to_string()
        } else {
            c.disabled_states.join(", ")
        }
    );
    for n in &c.notes {
        let _ = writeln!(s, "  {n}");
    }
    s
}

#[cfg(test)]
pub(crate) mod example {
    use super::*;
    use crate::probe::{Conditions, Kind, TagMethod};

    /// A probe of CPU 1: three timer wake-ups from haltpoll idle and one
    /// context-switch round, as the tests of the probe and its screen use.
    pub(crate) fn example_report() -> ProbeReport {
        ProbeReport {
            format: crate::probe::FORMAT.into(),
            noisetop_version: "0.1.0".into(),
            cpus: vec![1],
            duration_s: 2.0,
            timer_interval_us: None,
            conditions: Conditions {
                policy: "SCHED_FIFO 50".into(),
                fifo: true,
                housekeeping: vec![0],
                tagged_by: Some(TagMethod::Tracepoint),
                cpu_dma_latency_us: Some(2_000_000_000),
                ..Conditions::default()
            },
            rows: vec![Row {
                cpu: 1,
                kind: Kind::Timer,
                state: "haltpoll idle".into(),
                state_index: Some(1),
                tagged_by: TagMethod::Tracepoint,
                count: 3,
                mean_us: 30.0,
                p50_us: 30.0,
                p90_us: 31.0,
                p99_us: 31.0,
                p999_us: 31.0,
                max_us: 31.0,
                advertised_us: Some(1),
                p50_over_advertised: Some(30.0),
                p99_over_advertised: Some(31.0),
                histogram_ns: vec![(29_000, 1), (30_000, 1), (31_000, 1)],
            }],
            ctx: vec![CtxRow {
                cpu: 1,
                rounds: 100,
                one_cpu_round_trip_us: 8.0,
                pipe_us: 1.5,
                switch_us: 2.5,
                cross_cpu: Some(0),
                cross_rounds: 10,
                cross_cpu_round_trip_us: Some(30.0),
            }],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_has_one_row_per_cpu_kind_state_and_reads_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("p.csv");
        let rep = example::example_report();
        write_recording(&rep, &csv).unwrap();
        let text = std::fs::read_to_string(&csv).unwrap();
        assert_eq!(
            text,
            "cpu,kind,state,tagged_by,count,mean_us,p50_us,p90_us,p99_us,p999_us,max_us,\
             advertised_us,p50_over_advertised,p99_over_advertised\n\
             1,timer,haltpoll idle,tracepoint,3,30,30,31,31,31,31,1,30,31\n\
             1,ctx_switch,,,100,2.5,,,,,,,,\n\
             1,pipe_round_trip,cpu1,,100,8,,,,,,,,\n\
             1,pipe_write_read,,,100,1.5,,,,,,,,\n\
             1,pipe_round_trip,cpu0,,10,30,,,,,,,,\n"
        );
        assert_eq!(read_recording(&csv).unwrap(), Some(rep));
        // a sidecar of another kind is not a probe's
        std::fs::write(
            dir.path().join("q.csv.json"),
            "{\"format\": \"noisetop-record\"}",
        )
        .unwrap();
        assert_eq!(read_recording(&dir.path().join("q.csv")).unwrap(), None);
        assert_eq!(read_recording(&dir.path().join("none.csv")).unwrap(), None);
    }

    #[test]
    fn the_last_probe_is_kept_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/noisetop/last-probe.json");
        assert_eq!(load_last_from(&path), None);
        save_last(&example::example_report(), &path).unwrap();
        let back = load_last_from(&path).unwrap();
        assert_eq!(back, example::example_report());
        std::fs::write(&path, "{}").unwrap();
        assert_eq!(load_last_from(&path), None, "not a probe");
    }

    #[test]
    fn the_table_says_the_method_and_the_conditions() {
        let t = text(&example::example_report());
        assert!(
            t.contains("states from the power:cpu_idle tracepoint"),
            "{t}"
        );
        assert!(
            t.contains("   1  timer       haltpoll idle   tracepoint        3     30.0     31.0     31.0     31.0     31.0           1    31.0×"),
            "{t}"
        );
        assert!(
            t.contains("\n   1         8.0         1.5         2.5     30.0 (with CPU 0)\n"),
            "{t}"
        );
        assert!(t.contains("/dev/cpu_dma_latency: no limit held"), "{t}");
        assert!(t.contains("disabled idle states: none"), "{t}");
    }
}
