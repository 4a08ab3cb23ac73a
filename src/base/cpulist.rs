//! Parses and prints the kernel's CPU list syntax (`0-3,8,10-11`, `0-7:2`).

use std::fmt::Write as _;

use thiserror::Error;

/// Most CPU numbers a list may name, repeats included: four ranges of the
/// largest size one range may have, far above any kernel's CPU count.
const MAX_LISTED: usize = 4 << 20;

/// Why a CPU list does not parse; each names the part at fault.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CpuListError {
    /// A `:stride` that is not a number.
    #[error("bad stride in {0:?}")]
    BadStride(String),
    /// A bound that is not a CPU number.
    #[error("not a CPU number in {0:?}")]
    NotACpu(String),
    /// A range whose end is below its start.
    #[error("range runs backwards in {0:?}")]
    Backwards(String),
    /// A range wider than any kernel's CPU count.
    #[error("range too large in {0:?}")]
    TooLarge(String),
    /// More CPU numbers than a list may name.
    #[error("more than {MAX_LISTED} CPUs listed")]
    TooMany,
    /// A list given on the command line that names no CPU.
    #[error("empty CPU list")]
    Empty,
}

/// Parses a kernel CPU list; empty text, `(null)` and white space mean no CPUs.
pub fn parse(text: &str) -> Result<Vec<u32>, CpuListError> {
    let text = text.trim().trim_matches('\0').trim();
    if text.is_empty() || text == "(null)" {
        return Ok(Vec::new());
    }
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (range, stride) = match part.split_once(':') {
            Some((r, s)) => {
                let s: u32 = s
                    .parse()
                    .map_err(|_| CpuListError::BadStride(part.into()))?;
                (r, s.max(1))
            }
            None => (part, 1),
        };
        let (lo, hi) = if let Some((a, b)) = range.split_once('-') {
            (num(a, part)?, num(b, part)?)
        } else {
            let n = num(range, part)?;
            (n, n)
        };
        if hi < lo {
            return Err(CpuListError::Backwards(part.into()));
        }
        if hi - lo > 1 << 20 {
            return Err(CpuListError::TooLarge(part.into()));
        }
        cpus.extend((lo..=hi).step_by(stride as usize));
        // many overlapping large ranges would grow the list without bound
        // before the dedup below
        if cpus.len() > MAX_LISTED {
            return Err(CpuListError::TooMany);
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

fn num(s: &str, part: &str) -> Result<u32, CpuListError> {
    s.trim()
        .parse()
        .map_err(|_| CpuListError::NotACpu(part.into()))
}

/// Formats CPUs as a compact kernel CPU list (`0-3,8`); empty gives `""`.
pub fn format(cpus: &[u32]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out = String::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        if !out.is_empty() {
            out.push(',');
        }
        if start == end {
            let _ = write!(out, "{start}");
        } else {
            let _ = write!(out, "{start}-{end}");
        }
        i += 1;
    }
    out
}

/// A parsed, non-empty CPU list given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<u32>);

/// Parses a CPU list argument; an empty list is an error.
pub fn parse_cpus(s: &str) -> Result<CpuList, CpuListError> {
    let cpus = parse(s)?;
    if cpus.is_empty() {
        return Err(CpuListError::Empty);
    }
    Ok(CpuList(cpus))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ranges_singles_and_newline() {
        assert_eq!(parse("0-3,8,10-11\n").unwrap(), [0, 1, 2, 3, 8, 10, 11]);
    }

    #[test]
    fn parses_overlapping_and_unsorted_lists_once() {
        assert_eq!(parse("1,3-5,9,2-4").unwrap(), [1, 2, 3, 4, 5, 9]);
    }

    #[test]
    fn parses_stride() {
        assert_eq!(parse("0-7:2").unwrap(), [0, 2, 4, 6]);
    }

    #[test]
    fn null_and_padding_mean_empty() {
        assert!(parse("(null)\n").unwrap().is_empty());
        assert!(
            parse(&format!("{}(null)\n", " ".repeat(90)))
                .unwrap()
                .is_empty()
        );
        assert!(parse("\n").unwrap().is_empty());
    }

    #[test]
    fn rejects_garbage() {
        assert_eq!(
            parse("3-x").unwrap_err(),
            CpuListError::NotACpu("3-x".into())
        );
        assert_eq!(
            parse("5-2").unwrap_err().to_string(),
            "range runs backwards in \"5-2\""
        );
        assert!(parse("0-4294967295").is_err());
        assert_eq!(
            parse("0-7:x").unwrap_err().to_string(),
            "bad stride in \"0-7:x\""
        );
        assert_eq!(parse_cpus(" ").unwrap_err().to_string(), "empty CPU list");
    }

    #[test]
    fn many_large_ranges_are_refused_before_they_take_the_memory() {
        let text = vec!["0-1048576"; 64].join(",");
        let e = parse(&text).unwrap_err();
        assert_eq!(e, CpuListError::TooMany);
        assert_eq!(e.to_string(), format!("more than {MAX_LISTED} CPUs listed"));
        assert_eq!(parse("0-1048575,0-1048575").unwrap().len(), 1 << 20);
    }

    #[test]
    fn formats_runs() {
        assert_eq!(format(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(format(&[5]), "5");
        assert_eq!(format(&[]), "");
    }
}
