//! `--record` as a pipeline sink: every judged sample becomes one interval
//! of rows, tagged with each CPU's verdict and finding ids.

use std::path::Path;
use std::time::Duration;

use crate::machine::Machine;
use crate::noise::VerdictState;
use crate::pipeline::{Sample, Sink};
use crate::record::RecordArgs;
use crate::record::sidecar::RecordMeta;
use crate::record::writer::{OpenMode, RecordError, Recorder, RowTags};

/// The recorder, fed by the pipeline.
pub struct RecordSink {
    rec: Recorder,
}

/// Opens the recorder `--record` asks for (none without it); an existing
/// file without `--force`/`--append`, or a place that cannot be written,
/// is an error here, before sampling starts.
pub fn open(
    args: &RecordArgs,
    machine: &Machine,
    interval: Duration,
    watched: &[u32],
) -> Result<Option<RecordSink>, RecordError> {
    let Some(path) = &args.record else {
        return Ok(None);
    };
    let mode = if args.force {
        OpenMode::Force
    } else if args.append {
        OpenMode::Append
    } else {
        OpenMode::New
    };
    let meta = RecordMeta {
        version: env!("CARGO_PKG_VERSION").to_string(),
        interval_s: interval.as_secs_f64(),
        watched: watched.to_vec(),
        command_line: std::env::args().collect(),
    };
    Ok(Some(RecordSink {
        rec: Recorder::create(path, mode, machine, &meta)?,
    }))
}

/// The verdict and finding ids of every row of a sample.
pub fn tags(s: &Sample) -> Vec<RowTags> {
    let j = &s.judgement;
    let mut out: Vec<RowTags> = s
        .interval
        .cpus
        .iter()
        .map(|r| RowTags {
            cpu: Some(r.cpu),
            verdict: j.verdict(r.cpu).map_or("", |v| v.state.label()).to_string(),
            findings: j.ids_of(r.cpu).into_iter().map(str::to_string).collect(),
        })
        .collect();
    // the machine: noisy when a CPU is, unknown when none could be judged
    let states: Vec<VerdictState> = j.verdicts.iter().map(|v| v.state).collect();
    let machine = if states.contains(&VerdictState::Noisy) {
        VerdictState::Noisy.label()
    } else if states.contains(&VerdictState::Quiet) {
        VerdictState::Quiet.label()
    } else {
        VerdictState::Unknown.label()
    };
    let mut wide: Vec<String> = j
        .findings
        .iter()
        .filter(|f| f.cpus.is_empty())
        .map(|f| f.kind.tag().to_string())
        .collect();
    wide.dedup();
    out.push(RowTags {
        cpu: None,
        verdict: machine.to_string(),
        findings: wide,
    });
    out
}

/// Prints the one-screen summary of the recording, if there is one, when
/// the session ends (to stderr when stdout carries the tables).
pub fn print_summary(args: &RecordArgs, to_stderr: bool) {
    let Some(path) = &args.record else { return };
    if !path.exists() {
        return;
    }
    let text = crate::record::report::summary(path);
    if to_stderr {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
}

/// Sizes as the footer shows them: `812 B`, `48 kB`, `3.1 MB`.
fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1000 => format!("{b} B"),
        b if b < 1_000_000 => format!("{} kB", b / 1000),
        b => format!("{:.1} MB", b as f64 / 1e6),
    }
}

impl RecordSink {
    /// The file written.
    pub fn path(&self) -> &Path {
        self.rec.path()
    }
}

impl Sink for RecordSink {
    fn accept(&mut self, s: &Sample) -> Result<(), String> {
        self.rec.write(&s.interval, &tags(s)).map_err(|e| {
            format!(
                "recording to {} failed: {e}; this interval is not in the file",
                self.rec.path().display()
            )
        })
    }

    fn status(&self) -> Option<String> {
        let name = self
            .rec
            .path()
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        Some(format!(
            "rec {name} {} rows {}",
            self.rec.rows(),
            size(self.rec.bytes())
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::size;

    #[test]
    fn sizes_read_as_the_footer_shows_them() {
        assert_eq!(size(812), "812 B");
        assert_eq!(size(48_123), "48 kB");
        assert_eq!(size(3_140_000), "3.1 MB");
    }
}
