//! What the pipeline and its sinks tell the other sinks, as data.
//!
//! A sample's notes are typed so that a sink finds the one it wants by its
//! variant, never by its wording; the words are made here, once, by
//! `Display`, and every sink (the batch report, the dashboard's footer)
//! prints those same words.

use std::fmt;
use std::path::PathBuf;

use super::OwnIpis;
use crate::base::Unavailable;

/// One thing said beside a sample.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// How who ran is attributed changed: the traced CPUs, or why none is.
    WhoRan(String),
    /// The IPIs noisetop sent to the watched CPUs, or why they are not
    /// counted, when that changed.
    OwnIpis(Result<OwnIpis, Unavailable>),
    /// A recorder's file, rows and size, said on every sample.
    Recording {
        /// The file's name, without its directory.
        file: String,
        /// Rows written.
        rows: u64,
        /// Bytes written.
        bytes: u64,
        /// Intervals that could not be written.
        lost: u64,
    },
    /// A recorder could not write; intervals are lost until it can.
    RecordingFailed {
        /// The file written.
        path: PathBuf,
        /// What the write said.
        error: String,
    },
    /// Intervals of no length (a static tree's clock) are not recorded.
    NoLengthNotRecorded {
        /// The file written.
        path: PathBuf,
    },
}

impl fmt::Display for Note {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::WhoRan(said) => write!(f, "who ran: {said}"),
            Note::OwnIpis(r) => f.write_str(&OwnIpis::text(r)),
            Note::Recording {
                file,
                rows,
                bytes,
                lost,
            } => {
                write!(f, "rec {file} {rows} rows {}", size(*bytes))?;
                if *lost > 0 {
                    write!(f, " · {lost} intervals lost")?;
                }
                Ok(())
            }
            Note::RecordingFailed { path, error } => write!(
                f,
                "recording to {} failed: {error}; intervals are lost until it can write again \
                 (counted at the end)",
                path.display()
            ),
            Note::NoLengthNotRecorded { path } => write!(
                f,
                "intervals of no length are not recorded in {}: the tree's clock did not advance",
                path.display()
            ),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorder_says_its_file_rows_and_size() {
        let n = |bytes, lost| Note::Recording {
            file: "run.csv".into(),
            rows: 120,
            bytes,
            lost,
        };
        assert_eq!(n(812, 0).to_string(), "rec run.csv 120 rows 812 B");
        assert_eq!(n(48_123, 0).to_string(), "rec run.csv 120 rows 48 kB");
        assert_eq!(
            n(3_140_000, 2).to_string(),
            "rec run.csv 120 rows 3.1 MB · 2 intervals lost"
        );
    }

    #[test]
    fn a_failed_write_names_the_file_and_the_error() {
        let n = Note::RecordingFailed {
            path: "out/run.csv".into(),
            error: "No space left on device (os error 28)".into(),
        };
        assert_eq!(
            n.to_string(),
            "recording to out/run.csv failed: No space left on device (os error 28); intervals \
             are lost until it can write again (counted at the end)"
        );
    }

    #[test]
    fn who_ran_is_labelled() {
        assert_eq!(
            Note::WhoRan("kept windows on CPU 1".into()).to_string(),
            "who ran: kept windows on CPU 1"
        );
    }
}
