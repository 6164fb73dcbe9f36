//! Statistics for deskenv's reports and comparisons: pure functions over
//! per-task scores, no I/O.
//!
//! - [`bootstrap_mean`]: the mean with a percentile bootstrap interval
//!   (tasks resampled with replacement; a fixed seed makes it repeatable).
//! - [`paired`]: two runs on the same tasks, the paired difference with a
//!   paired bootstrap interval, the exact McNemar test on success, a
//!   paired (sign-flip) permutation test on scores, and the minimum
//!   detectable difference at a given power.
//! - [`pass_at_k`]: the unbiased pass@k estimator of Chen et al. (2021).
//! - [`wilson`]: the Wilson score interval of a proportion.
//!
//! Distributions come from `statrs`; the resampling RNG is ChaCha8, whose
//! stream is fixed for a seed on every platform.

pub mod paired;

pub use paired::{
    difference_sd, mcnemar_exact, minimum_detectable_difference, paired_difference,
    permutation_test, McNemar, Permutation,
};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Why a statistic could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    #[error("no values: {0} needs at least one")]
    Empty(&'static str),
    #[error(
        "the two runs have {a} and {b} values: a paired statistic needs the same tasks in both"
    )]
    Unpaired { a: usize, b: usize },
    #[error("confidence level {0} is outside (0, 1)")]
    Level(f64),
    #[error("{0} is not a finite number")]
    NotFinite(f64),
    #[error("pass@k with k = {k} of n = {n} samples: k must be in 1..=n, and c = {c} at most n")]
    PassAtK { n: usize, c: usize, k: usize },
    #[error("bootstrap with {0} resamples: at least 100 are needed")]
    Resamples(usize),
}

/// How a bootstrap resamples: `resamples` draws from a ChaCha8 stream
/// seeded with `seed`, a two-sided interval at `level`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bootstrap {
    pub resamples: usize,
    pub seed: u64,
    pub level: f64,
}

impl Default for Bootstrap {
    fn default() -> Self {
        Bootstrap {
            resamples: 10_000,
            seed: DEFAULT_SEED,
            level: 0.95,
        }
    }
}

/// The bootstrap's seed unless one is given (recorded in every report).
pub const DEFAULT_SEED: u64 = 20_260_101;

/// A point estimate with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub lo: f64,
    pub hi: f64,
}

pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The sample standard deviation (n − 1 in the denominator); 0 for one value.
pub fn sample_sd(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    (ss / (xs.len() - 1) as f64).sqrt()
}

fn check(xs: &[f64], what: &'static str, b: &Bootstrap) -> Result<(), StatsError> {
    if xs.is_empty() {
        return Err(StatsError::Empty(what));
    }
    if let Some(x) = xs.iter().find(|x| !x.is_finite()) {
        return Err(StatsError::NotFinite(*x));
    }
    if !(b.level > 0.0 && b.level < 1.0) {
        return Err(StatsError::Level(b.level));
    }
    if b.resamples < 100 {
        return Err(StatsError::Resamples(b.resamples));
    }
    Ok(())
}

/// The mean of `xs` with a percentile bootstrap interval: `b.resamples`
/// means of `xs.len()` values drawn with replacement, and their
/// `(1 − level)/2` and `(1 + level)/2` quantiles (linear interpolation,
/// numpy's default).
pub fn bootstrap_mean(xs: &[f64], b: &Bootstrap) -> Result<Estimate, StatsError> {
    check(xs, "a bootstrap interval", b)?;
    let n = xs.len();
    let mut rng = ChaCha8Rng::seed_from_u64(b.seed);
    let mut means = Vec::with_capacity(b.resamples);
    for _ in 0..b.resamples {
        let mut sum = 0.0;
        for _ in 0..n {
            sum += xs[rng.random_range(0..n)];
        }
        means.push(sum / n as f64);
    }
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - b.level) / 2.0;
    Ok(Estimate {
        value: mean(xs),
        lo: quantile(&means, tail),
        hi: quantile(&means, 1.0 - tail),
    })
}

/// The `q` quantile of sorted `xs`, interpolating linearly between the
/// two nearest ranks.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (i, frac) = (pos.floor() as usize, pos.fract());
    if i + 1 >= sorted.len() {
        return sorted[sorted.len() - 1];
    }
    sorted[i] + frac * (sorted[i + 1] - sorted[i])
}

/// Wilson score interval (95 %) of `k` successes in `n`; (0, 0) for n = 0.
pub fn wilson(k: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 0.0);
    }
    let z = 1.959_964f64;
    let (n, p) = (n as f64, k as f64 / n as f64);
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * ((p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt()) / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The unbiased estimator of pass@k from `n` samples of which `c` passed:
/// 1 − C(n−c, k) / C(n, k), computed as a product so that it stays exact
/// for large n.
pub fn pass_at_k(n: usize, c: usize, k: usize) -> Result<f64, StatsError> {
    if k == 0 || k > n || c > n {
        return Err(StatsError::PassAtK { n, c, k });
    }
    if n - c < k {
        return Ok(1.0);
    }
    let mut fail_all = 1.0;
    for i in (n - c + 1)..=n {
        fail_all *= 1.0 - k as f64 / i as f64;
    }
    Ok(1.0 - fail_all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_like_numpy() {
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&xs, 0.0), 1.0);
        assert_eq!(quantile(&xs, 1.0), 4.0);
        assert!((quantile(&xs, 0.5) - 2.5).abs() < 1e-12);
        assert!((quantile(&xs, 0.25) - 1.75).abs() < 1e-12);
    }

    #[test]
    fn bootstrap_is_repeatable_and_brackets_the_mean() {
        let xs: Vec<f64> = (0..40).map(|i| (i as f64 * 0.737).sin()).collect();
        let b = Bootstrap::default();
        let e1 = bootstrap_mean(&xs, &b).unwrap();
        let e2 = bootstrap_mean(&xs, &b).unwrap();
        assert_eq!(e1, e2);
        assert!(e1.lo < e1.value && e1.value < e1.hi);
        let other = bootstrap_mean(&xs, &Bootstrap { seed: 7, ..b }).unwrap();
        assert_ne!(e1.lo, other.lo);
    }

    #[test]
    fn constant_data_has_a_point_interval() {
        let e = bootstrap_mean(&[1.0; 6], &Bootstrap::default()).unwrap();
        assert_eq!((e.value, e.lo, e.hi), (1.0, 1.0, 1.0));
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let b = Bootstrap::default();
        assert_eq!(
            bootstrap_mean(&[], &b),
            Err(StatsError::Empty("a bootstrap interval"))
        );
        assert!(matches!(
            bootstrap_mean(&[f64::NAN], &b),
            Err(StatsError::NotFinite(_))
        ));
        assert_eq!(
            bootstrap_mean(&[1.0], &Bootstrap { level: 1.0, ..b }),
            Err(StatsError::Level(1.0))
        );
        assert_eq!(
            bootstrap_mean(&[1.0], &Bootstrap { resamples: 5, ..b }),
            Err(StatsError::Resamples(5))
        );
        assert!(pass_at_k(3, 1, 4).is_err());
        assert!(pass_at_k(3, 4, 1).is_err());
        assert!(pass_at_k(3, 1, 0).is_err());
    }

    #[test]
    fn wilson_interval() {
        let (lo, hi) = wilson(5, 10);
        assert!((lo - 0.2366).abs() < 1e-3 && (hi - 0.7634).abs() < 1e-3);
        assert_eq!(wilson(0, 0), (0.0, 0.0));
        let (lo, hi) = wilson(6, 6);
        assert!(lo > 0.5 && hi == 1.0);
    }
}
