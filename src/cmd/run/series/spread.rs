//! Statistics of one figure over the runs of a series: mean ± standard
//! deviation, median, min and max, and the median absolute deviation that
//! outliers are judged by.

use serde::Serialize;

/// The median absolute deviation times this estimates the standard
/// deviation of normally spread values (1/Φ⁻¹(3/4)), while the outliers
/// themselves hardly move it.
pub const MAD_TO_SD: f64 = 1.4826;

/// One figure over runs, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// Runs counted.
    pub runs: usize,
    /// Mean, s.
    pub mean_s: f64,
    /// Sample standard deviation (divided by runs − 1, as pyperf,
    /// hyperfine and Python's `statistics.stdev` give it), s; 0 for one run.
    pub sd_s: f64,
    /// Median, s.
    pub median_s: f64,
    /// Least, s.
    pub min_s: f64,
    /// Greatest, s.
    pub max_s: f64,
}

/// The spread of `v`; `None` for no value.
pub fn spread(v: &[f64]) -> Option<Spread> {
    let n = v.len();
    let median_s = median(v)?;
    let mean_s = v.iter().sum::<f64>() / n as f64;
    // two passes: the sum of squares about the mean loses nothing to
    // cancellation, as Σx² − n·mean² would for close timings
    let sd_s = if n > 1 {
        let ss: f64 = v.iter().map(|x| (x - mean_s).powi(2)).sum();
        (ss / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    Some(Spread {
        runs: n,
        mean_s,
        sd_s,
        median_s,
        min_s: v.iter().copied().fold(f64::INFINITY, f64::min),
        max_s: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// The median: the middle value, or the mean of the two middle ones.
pub fn median(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let mid = s.len() / 2;
    Some(if s.len().is_multiple_of(2) {
        f64::midpoint(s[mid - 1], s[mid])
    } else {
        s[mid]
    })
}

/// The median absolute deviation from the median (not scaled).
pub fn mad(v: &[f64]) -> Option<f64> {
    let m = median(v)?;
    let dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
    median(&dev)
}

impl Spread {
    /// The standard deviation as a share of the mean, %; `None` for a mean
    /// of 0.
    pub fn sd_pct(&self) -> Option<f64> {
        (self.mean_s > 0.0).then(|| 100.0 * self.sd_s / self.mean_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_of_five_timings_is_exact() {
        let s = spread(&[0.30, 0.32, 0.31, 0.50, 0.30]).unwrap();
        assert_eq!(s.runs, 5);
        assert!((s.mean_s - 0.346).abs() < 1e-12, "{}", s.mean_s);
        // deviations −0.046 −0.026 −0.036 0.154 −0.046: squares sum to
        // 0.02992, over 4 is 0.00748
        assert!((s.sd_s - 0.00748f64.sqrt()).abs() < 1e-12, "{}", s.sd_s);
        assert_eq!((s.median_s, s.min_s, s.max_s), (0.31, 0.30, 0.50));
        assert!((s.sd_pct().unwrap() - 100.0 * 0.00748f64.sqrt() / 0.346).abs() < 1e-9);
    }

    #[test]
    fn an_even_count_takes_the_middle_two_and_one_run_has_no_spread() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        let one = spread(&[0.25]).unwrap();
        assert_eq!(
            (one.sd_s, one.median_s, one.min_s, one.max_s),
            (0.0, 0.25, 0.25, 0.25)
        );
        assert_eq!(spread(&[]), None);
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn the_mad_ignores_the_outlier_it_helps_to_find() {
        let v = [1.0, 1.02, 0.99, 1.01, 2.0];
        assert_eq!(median(&v), Some(1.01));
        // about 1.01: 0.01 0.01 0.02 0 0.99 → sorted 0 0.01 0.01 0.02 0.99
        let m = mad(&v).unwrap();
        assert!((m - 0.01).abs() < 1e-12, "{m}");
    }
}
