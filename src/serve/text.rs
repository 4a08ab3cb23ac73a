//! The two text formats a scraper may ask for: Prometheus' classic text
//! (0.0.4) and `OpenMetrics` 1.0 (counter families named without `_total`,
//! `info` type, `# UNIT`, `# EOF`). One writer emits both; a family's
//! header is written with its first sample, so a metric with nothing to
//! say leaves no empty family behind.

use std::fmt::Write as _;

use super::catalog::{Def, Type};

/// Which exposition format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `text/plain; version=0.0.4`.
    Classic,
    /// `application/openmetrics-text; version=1.0.0`.
    OpenMetrics,
}

impl Format {
    /// Returns the Content-Type header of the format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Classic => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// Builds one exposition.
pub struct Writer {
    format: Format,
    out: String,
    /// The family whose header is due before its first sample.
    pending: Option<Def>,
    /// The family being written.
    current: Option<&'static str>,
    series: usize,
}

impl Writer {
    /// Starts an empty exposition.
    pub fn new(format: Format, capacity: usize) -> Self {
        Writer {
            format,
            out: String::with_capacity(capacity),
            pending: None,
            current: None,
            series: 0,
        }
    }

    /// Starts a family: its samples follow.
    pub fn family(&mut self, d: Def) {
        self.pending = Some(d);
        self.current = None;
    }

    /// Writes one sample of the current family; a value that is not finite
    /// is left out (unknown is absent, never a made-up number).
    pub fn sample(&mut self, labels: &[(&str, &str)], value: f64) {
        if !value.is_finite() {
            return;
        }
        let Some(d) = self.pending else {
            return;
        };
        if self.current != Some(d.name) {
            self.header(&d);
            self.current = Some(d.name);
        }
        let name = d.sample_name();
        self.out.push_str(&name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                self.out.push_str(k);
                self.out.push_str("=\"");
                escape_label(&mut self.out, v);
                self.out.push('"');
            }
            self.out.push('}');
        }
        self.out.push(' ');
        write_value(&mut self.out, value);
        self.out.push('\n');
        self.series += 1;
    }

    /// Writes one histogram of the current family: cumulative counts per
    /// `le` bound (`+Inf` last, equal to `count`), then `_sum` and `_count`.
    pub fn histogram(
        &mut self,
        labels: &[(&str, &str)],
        buckets: &[(&str, u64)],
        sum: f64,
        count: u64,
    ) {
        let Some(d) = self.pending else {
            return;
        };
        if !sum.is_finite() {
            return;
        }
        if self.current != Some(d.name) {
            self.header(&d);
            self.current = Some(d.name);
        }
        let line = |out: &mut String, suffix: &str, extra: Option<(&str, &str)>| {
            out.push_str(d.name);
            out.push_str(suffix);
            let all: Vec<(&str, &str)> = labels.iter().copied().chain(extra).collect();
            if !all.is_empty() {
                out.push('{');
                for (i, (k, v)) in all.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(k);
                    out.push_str("=\"");
                    escape_label(out, v);
                    out.push('"');
                }
                out.push('}');
            }
            out.push(' ');
        };
        for (le, n) in buckets {
            line(&mut self.out, "_bucket", Some(("le", le)));
            write_value(&mut self.out, *n as f64);
            self.out.push('\n');
        }
        line(&mut self.out, "_sum", None);
        write_value(&mut self.out, sum);
        self.out.push('\n');
        line(&mut self.out, "_count", None);
        write_value(&mut self.out, count as f64);
        self.out.push('\n');
        self.series += buckets.len() + 2;
    }

    fn header(&mut self, d: &Def) {
        let (name, kind) = match (self.format, d.kind) {
            (Format::OpenMetrics, Type::Counter) => (d.name.to_string(), "counter"),
            (Format::OpenMetrics, Type::Info) => (d.name.to_string(), "info"),
            (Format::Classic, Type::Counter) => (d.sample_name(), "counter"),
            (Format::Classic, Type::Info) => (d.sample_name(), "gauge"),
            (_, Type::Gauge) => (d.name.to_string(), "gauge"),
            (_, Type::Histogram) => (d.name.to_string(), "histogram"),
        };
        let _ = writeln!(self.out, "# HELP {name} {}", escape_help(d.help));
        let _ = writeln!(self.out, "# TYPE {name} {kind}");
        if let (Format::OpenMetrics, Some(u)) = (self.format, d.unit) {
            let _ = writeln!(self.out, "# UNIT {name} {u}");
        }
    }

    /// Returns how many samples were written.
    pub fn series(&self) -> usize {
        self.series
    }

    /// Ends the exposition (`# EOF` in `OpenMetrics`) and returns it.
    pub fn finish(mut self) -> String {
        if self.format == Format::OpenMetrics {
            self.out.push_str("# EOF\n");
        }
        self.out
    }
}

fn escape_label(out: &mut String, v: &str) {
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

fn escape_help(h: &str) -> String {
    h.replace('\\', "\\\\").replace('\n', "\\n")
}

/// Integers as integers (counts stay exact), other values in Rust's
/// shortest round-trip form, which never uses an exponent.
fn write_value(out: &mut String, v: f64) {
    if v.fract() == 0.0 && v.abs() < 9.007_199_254_740_992e15 {
        let _ = write!(out, "{}", v as i64);
    } else {
        let _ = write!(out, "{v}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::catalog::{BUILD, CPU_BUSY, CPU_CSW, CPU_IDLE_TIME};

    #[test]
    fn classic_and_openmetrics_differ_only_where_the_formats_do() {
        let mut c = Writer::new(Format::Classic, 0);
        let mut o = Writer::new(Format::OpenMetrics, 0);
        for w in [&mut c, &mut o] {
            w.family(CPU_CSW);
            w.sample(&[("cpu", "1")], 1234.0);
            w.family(CPU_BUSY);
            w.sample(&[("cpu", "1")], 0.25);
            w.sample(&[("cpu", "2")], f64::NAN);
            w.family(CPU_IDLE_TIME);
            w.family(BUILD);
            w.sample(&[("version", "a\"b\\c\nd")], 1.0);
        }
        assert_eq!(c.series(), 3);
        let help_csw = CPU_CSW.help;
        let help_busy = CPU_BUSY.help;
        let help_build = BUILD.help;
        assert_eq!(
            c.finish(),
            format!(
                "# HELP noisetop_cpu_context_switches_total {help_csw}\n\
                 # TYPE noisetop_cpu_context_switches_total counter\n\
                 noisetop_cpu_context_switches_total{{cpu=\"1\"}} 1234\n\
                 # HELP noisetop_cpu_busy_ratio {help_busy}\n\
                 # TYPE noisetop_cpu_busy_ratio gauge\n\
                 noisetop_cpu_busy_ratio{{cpu=\"1\"}} 0.25\n\
                 # HELP noisetop_build_info {help_build}\n\
                 # TYPE noisetop_build_info gauge\n\
                 noisetop_build_info{{version=\"a\\\"b\\\\c\\nd\"}} 1\n"
            )
        );
        assert_eq!(
            o.finish(),
            format!(
                "# HELP noisetop_cpu_context_switches {help_csw}\n\
                 # TYPE noisetop_cpu_context_switches counter\n\
                 noisetop_cpu_context_switches_total{{cpu=\"1\"}} 1234\n\
                 # HELP noisetop_cpu_busy_ratio {help_busy}\n\
                 # TYPE noisetop_cpu_busy_ratio gauge\n\
                 # UNIT noisetop_cpu_busy_ratio ratio\n\
                 noisetop_cpu_busy_ratio{{cpu=\"1\"}} 0.25\n\
                 # HELP noisetop_build {help_build}\n\
                 # TYPE noisetop_build info\n\
                 noisetop_build_info{{version=\"a\\\"b\\\\c\\nd\"}} 1\n\
                 # EOF\n"
            )
        );
    }

    #[test]
    fn values_keep_integers_exact_and_fractions_short() {
        let mut s = String::new();
        write_value(&mut s, 18_446_744_073.0);
        s.push(' ');
        write_value(&mut s, 0.000_000_1);
        s.push(' ');
        write_value(&mut s, 2.0e16);
        assert_eq!(s, "18446744073 0.0000001 20000000000000000");
    }
}
