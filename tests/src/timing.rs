//! Paired timing of two functions (ours and ONNX Runtime's), for `cargo xtask bench`
//! and the quantized models' benchmark in `tests/imported`: samples alternate so that a
//! slow stretch of a shared machine hits both.

use std::time::{Duration, Instant};

/// Calls of `f` that last about `target` (after a warm-up of at least 200 ms).
pub fn calibrate(f: &mut impl FnMut(), target: Duration) -> u64 {
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed() < Duration::from_millis(200) || calls < 3 {
        f();
        calls += 1;
    }
    let per_call = start.elapsed().as_secs_f64() / calls as f64;
    ((target.as_secs_f64() / per_call).ceil() as u64).max(1)
}

/// Nanoseconds per call of a batch of `calls`.
pub fn sample(f: &mut impl FnMut(), calls: u64) -> f64 {
    let t = Instant::now();
    for _ in 0..calls {
        f();
    }
    t.elapsed().as_secs_f64() * 1e9 / calls as f64
}

/// Timings of two functions sampled alternately (nanoseconds per call).
#[derive(Debug)]
pub struct Paired {
    pub a_median: f64,
    pub b_median: f64,
    /// The median of the per-sample ratios a / b.
    pub ratio: f64,
    /// The fastest sample of a over the fastest of b.
    pub min_ratio: f64,
}

/// Median time per call of `a` and of `b`, the median of their per-sample ratios and the
/// ratio of their fastest samples: `SAMPLES` samples each of at least `MIN_SAMPLE`,
/// alternating a and b so that a slow stretch of the machine hits both.
pub fn paired_median_ns(mut a: impl FnMut(), mut b: impl FnMut()) -> Paired {
    const SAMPLES: usize = 31;
    const MIN_SAMPLE: Duration = Duration::from_millis(15);
    let (na, nb) = (calibrate(&mut a, MIN_SAMPLE), calibrate(&mut b, MIN_SAMPLE));
    let mut sa = Vec::with_capacity(SAMPLES);
    let mut sb = Vec::with_capacity(SAMPLES);
    let mut ratios = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let ta = sample(&mut a, na);
        let tb = sample(&mut b, nb);
        sa.push(ta);
        sb.push(tb);
        ratios.push(ta / tb);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (a_median, b_median) = (median(&mut sa), median(&mut sb));
    Paired {
        a_median,
        b_median,
        ratio: median(&mut ratios),
        // Sorted by `median`.
        min_ratio: sa[0] / sb[0],
    }
}
