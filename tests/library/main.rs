//! The library's tests: parsers, readers, rules and the interval math
//! called as functions, on the real captures in `../shared/captures`,
//! synthetic trees and the fixtures, and the documents held to the code.
//! No test here starts noisetop.
//!
//! One binary, so that a change to the library links it once. Each module
//! was a test file of its own and keeps its name (`cargo test --test
//! library scenarios::`).

#[path = "../common/docs.rs"]
mod docs;

mod captures_pipeline;
mod captures_procfs;
mod captures_sysfs;
mod check_rules;
mod cost_doc;
mod layering;
mod metric_catalogue;
mod properties;
mod readme_screenshots;
mod scenarios;
mod serve_assets;
mod topology_cpuinfo;
mod x86_captures;
