//! The recording: `--record FILE.csv` writes every interval as CSV rows
//! (one per CPU, one for the machine) with the machine facts in a JSON
//! sidecar; `report` and `compare` read recordings back.
//!
//! `columns` is the schema, `writer` and `sidecar` write, `reader` reads a
//! row at a time, `stats` gathers what `report`, `compare` and `plot` show.

mod args;
pub mod columns;
pub mod compare;
pub mod plot;
pub mod reader;
pub mod report;
pub mod sidecar;
pub mod sink;
pub mod stats;
pub mod table;
pub mod writer;

pub use args::{RecordArgs, SummaryArgs};
pub use reader::{ReadError, Recording, Row};
pub use sidecar::{RecordMeta, Sidecar};
pub use writer::{OpenMode, RecordError, Recorder, RowTags};
