//! The recording: `--record FILE.csv` writes every interval as CSV rows
//! (one per CPU, one for the machine) with the machine facts in a JSON
//! sidecar; `report` and `compare` read recordings back.
//!
//! `columns` is the schema, `writer` and `sidecar` write, `reader` reads a
//! row at a time, `stats` gathers what `report`, `compare` and `plot` show.

pub mod columns;
pub mod diff;
pub mod digest;
pub mod plot;
pub mod reader;
pub mod sidecar;
pub(crate) mod stats;
pub(crate) mod table;
pub mod writer;
