//! Two runs on the same tasks: `a[i]` and `b[i]` are task i's score (or
//! success) in run A and in run B.

use super::{bootstrap_mean, check, sample_sd, Bootstrap, Estimate, StatsError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal};

fn same_len<T>(a: &[T], b: &[T]) -> Result<(), StatsError> {
    if a.len() != b.len() {
        return Err(StatsError::Unpaired {
            a: a.len(),
            b: b.len(),
        });
    }
    if a.is_empty() {
        return Err(StatsError::Empty("a paired comparison"));
    }
    Ok(())
}

/// Mean of A − B over the tasks, with a paired bootstrap interval (tasks
/// resampled, each keeping both of its scores).
pub fn paired_difference(a: &[f64], b: &[f64], boot: &Bootstrap) -> Result<Estimate, StatsError> {
    same_len(a, b)?;
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    bootstrap_mean(&d, boot)
}

/// The exact McNemar test: of the tasks where the runs disagree on
/// success, `a_only` succeeded only in A and `b_only` only in B; under
/// "no difference" each disagreement goes either way with probability ½.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct McNemar {
    pub a_only: usize,
    pub b_only: usize,
    /// Two-sided: min(1, 2 · P[X ≤ min(a_only, b_only)]), X ~ Bin(a_only + b_only, ½).
    pub p_value: f64,
}

pub fn mcnemar_exact(a: &[bool], b: &[bool]) -> Result<McNemar, StatsError> {
    same_len(a, b)?;
    let a_only = a.iter().zip(b).filter(|(x, y)| **x && !**y).count();
    let b_only = a.iter().zip(b).filter(|(x, y)| !**x && **y).count();
    let n = (a_only + b_only) as u64;
    let p_value = if n == 0 {
        1.0
    } else {
        let bin = Binomial::new(0.5, n).expect("p = 0.5 is a valid binomial parameter");
        (2.0 * bin.cdf(a_only.min(b_only) as u64)).min(1.0)
    };
    Ok(McNemar {
        a_only,
        b_only,
        p_value,
    })
}

/// A paired permutation test on the mean difference: under "no
/// difference" each task's two scores are exchangeable, so each
/// difference's sign is flipped at random.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Permutation {
    /// Two-sided: the share of sign assignments whose |mean| reaches the
    /// observed one.
    pub p_value: f64,
    /// True when every assignment was enumerated (at most
    /// [`EXACT_LIMIT`] non-zero differences); otherwise `resamples`
    /// random ones, with p = (hits + 1) / (resamples + 1).
    pub exact: bool,
    pub resamples: usize,
}

/// Up to this many non-zero differences the test enumerates all 2^m
/// sign assignments.
pub const EXACT_LIMIT: usize = 20;

pub fn permutation_test(a: &[f64], b: &[f64], boot: &Bootstrap) -> Result<Permutation, StatsError> {
    same_len(a, b)?;
    let d: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(x, y)| x - y)
        .filter(|d| *d != 0.0)
        .collect();
    check(a, "a permutation test", boot)?;
    check(b, "a permutation test", boot)?;
    let observed: f64 = d.iter().sum::<f64>().abs();
    // Sums that differ from the observed one by rounding alone count as
    // reaching it (scipy compares with a relative tolerance too).
    let reaches = |s: f64| s.abs() >= observed * (1.0 - 1e-12) - 1e-12;
    if d.len() <= EXACT_LIMIT {
        let m = d.len();
        let total = 1u64 << m;
        let mut hits = 0u64;
        for signs in 0..total {
            let s: f64 = d
                .iter()
                .enumerate()
                .map(|(i, x)| if signs >> i & 1 == 1 { -x } else { *x })
                .sum();
            hits += reaches(s) as u64;
        }
        return Ok(Permutation {
            p_value: hits as f64 / total as f64,
            exact: true,
            resamples: total as usize,
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(boot.seed);
    let mut hits = 0usize;
    for _ in 0..boot.resamples {
        let s: f64 = d
            .iter()
            .map(|x| if rng.random::<bool>() { -x } else { *x })
            .sum();
        hits += reaches(s) as usize;
    }
    Ok(Permutation {
        p_value: (hits + 1) as f64 / (boot.resamples + 1) as f64,
        exact: false,
        resamples: boot.resamples,
    })
}

/// The smallest true mean difference a paired two-sided test at `alpha`
/// detects with probability `power` over `n` tasks whose differences
/// have standard deviation `sd`: (z₁₋α/₂ + z_power) · sd / √n. None for
/// fewer than two tasks.
pub fn minimum_detectable_difference(sd: f64, n: usize, alpha: f64, power: f64) -> Option<f64> {
    if n < 2 || !(alpha > 0.0 && alpha < 1.0) || !(power > 0.0 && power < 1.0) {
        return None;
    }
    let z = Normal::standard();
    Some((z.inverse_cdf(1.0 - alpha / 2.0) + z.inverse_cdf(power)) * sd / (n as f64).sqrt())
}

/// The standard deviation of the paired differences A − B.
pub fn difference_sd(a: &[f64], b: &[f64]) -> Result<f64, StatsError> {
    same_len(a, b)?;
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    Ok(sample_sd(&d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcnemar_counts_only_disagreements() {
        let a = [true, true, false, true, false];
        let b = [true, false, false, false, true];
        let m = mcnemar_exact(&a, &b).unwrap();
        assert_eq!((m.a_only, m.b_only), (2, 1));
        assert_eq!(mcnemar_exact(&a, &a).unwrap().p_value, 1.0);
        assert!(mcnemar_exact(&a, &b[..4]).is_err());
    }

    #[test]
    fn identical_runs_differ_by_nothing() {
        let a = [0.0, 0.5, 1.0, 1.0];
        let p = permutation_test(&a, &a, &Bootstrap::default()).unwrap();
        assert_eq!(p.p_value, 1.0);
        let d = paired_difference(&a, &a, &Bootstrap::default()).unwrap();
        assert_eq!((d.value, d.lo, d.hi), (0.0, 0.0, 0.0));
    }

    #[test]
    fn many_differences_are_sampled_not_enumerated() {
        let a: Vec<f64> = (0..30).map(|i| (i % 10 != 0) as u8 as f64).collect();
        let b = vec![0.0; 30];
        let p = permutation_test(&a, &b, &Bootstrap::default()).unwrap();
        assert!(!p.exact);
        // 27 differences of +1: exact p = 2 / 2^27, so no random
        // assignment reaches it and p = 1 / 10 001.
        assert!(p.p_value < 0.001, "{p:?}");
    }

    #[test]
    fn mdd_needs_two_tasks() {
        assert_eq!(minimum_detectable_difference(0.5, 1, 0.05, 0.8), None);
        assert_eq!(minimum_detectable_difference(0.0, 9, 0.05, 0.8), Some(0.0));
    }
}
