//! One differential suite over every kernel variant. Each case runs on every path this
//! build can run on this CPU (portable, AVX and FMA, AVX-512: `arch::paths`, switched
//! per thread) and is compared with a naive reference written here in `f64`, never
//! with another of our kernels, so a variant and the portable kernel cannot agree on a
//! shared mistake. Inputs hold no NaN here; what NaN does is the operators' business
//! (the ONNX Runtime cross-checks), not a variant's.
//!
//! Which variant a case reaches on a path: `gemm_packed` takes the AVX-512 tiles (12,
//! 8, 4 rows by 4 panels), the 256-bit ones (6 x 2, 4 x 2, 2 x 4, 1 x 8) or the
//! portable blocks; `conv2d_packed` the AVX-512 direct kernel where its ring fits, else
//! im2col into those products (and `im2col` with the microcontrollers' shared gathering,
//! the sizes as values, on every path); `conv3x3_winograd` the 512-bit transforms and paired
//! products, the 256-bit transforms, or the portable ones; `max_pool2d` the AVX-512
//! 3x3 stride-2 kernel, the rows-first host kernel (three window rows or more) or the
//! tap-by-tap loop (and `max_pool_inside`, the boards' loop where no window reaches
//! the padding, on every path). `conv2d_avx512` and `gemm_pairs` are also called
//! directly on the AVX-512 path, whatever the dispatch would pick. `gemm_dot` has one
//! variant everywhere (a fused multiply-add on the Arm boards only).

extern crate std;

use std::vec::Vec;

use super::arch::{Path, on_every_path};
use super::conv::{conv2d, conv2d_packed};
use super::packed::{NR, Strided, gemm_packed};
use super::pool::max_pool2d;
use super::winograd::{BY_LANE, conv3x3_winograd, scratch_len, winograd};

/// Deterministic values in [-1, 1] without NaN.
fn values(n: usize, step: f32) -> Vec<f32> {
    (0..n).map(|i| (i as f32 * step).sin()).collect()
}

/// `got` against `want` within `1e-5` relative to the larger of `|want|` and 1.
fn check(got: &[f32], want: &[f64], path: Path, what: &str) {
    assert_eq!(got.len(), want.len(), "{what} on {path:?}");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let tol = 1e-5 * w.abs().max(1.0);
        assert!(
            (f64::from(g) - w).abs() <= tol,
            "{what} on {path:?}, element {i}: {g} vs {w}"
        );
    }
}

/// A convolution's geometry, as the kernels' const parameters name it.
#[derive(Debug, Clone, Copy)]
struct Conv {
    n: usize,
    c: usize,
    h: usize,
    w: usize,
    m: usize,
    g: usize,
    kh: usize,
    kw: usize,
    oh: usize,
    ow: usize,
    sh: usize,
    sw: usize,
    dh: usize,
    dw: usize,
    pt: usize,
    pl: usize,
}

impl Conv {
    /// `y = act(b + x * w)` by the definition: every output, every tap, in `f64`.
    fn reference(&self, x: &[f32], w: &[f32], b: &[f32], relu: bool) -> Vec<f64> {
        let s = *self;
        let (cg, mg) = (s.c / s.g, s.m / s.g);
        let mut y = Vec::with_capacity(s.n * s.m * s.oh * s.ow);
        for n in 0..s.n {
            for m in 0..s.m {
                let g = m / mg;
                for oh in 0..s.oh {
                    for ow in 0..s.ow {
                        let mut acc = f64::from(b[m]);
                        for ci in 0..cg {
                            let c = g * cg + ci;
                            for kh in 0..s.kh {
                                for kw in 0..s.kw {
                                    let ih = (oh * s.sh + kh * s.dh) as isize - s.pt as isize;
                                    let iw = (ow * s.sw + kw * s.dw) as isize - s.pl as isize;
                                    if ih < 0 || iw < 0 || ih >= s.h as isize || iw >= s.w as isize
                                    {
                                        continue;
                                    }
                                    let xv =
                                        x[((n * s.c + c) * s.h + ih as usize) * s.w + iw as usize];
                                    let wv = w[((m * cg + ci) * s.kh + kh) * s.kw + kw];
                                    acc += f64::from(xv) * f64::from(wv);
                                }
                            }
                        }
                        y.push(if relu { acc.max(0.0) } else { acc });
                    }
                }
            }
        }
        y
    }

    fn inputs(&self) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let s = *self;
        let x = values(s.n * s.c * s.h * s.w, 0.37);
        let w = values(s.m * s.c / s.g * s.kh * s.kw, 0.73);
        let b = (0..s.m).map(|i| i as f32 * 0.1 - 0.4).collect();
        (x, w, b)
    }
}

/// `gemm_packed` over every row-block and panel-block shape: `m` from 1 to 25, `n`
/// from 1 to 40 (partial panels), `k` past the AVX-512 tile's unrolling, with and
/// without init (a bias per column or per row) and Relu, stored row-major and
/// transposed.
#[test]
fn gemm_packed_on_every_path() {
    const LDA: usize = 10;
    let a = values(25 * LDA, 0.37);
    let b = values(9 * 40, 0.91);
    let c: Vec<f32> = (0..40).map(|i| i as f32 * 0.1 - 0.5).collect();
    on_every_path(|path| {
        for m in 1..=25 {
            for k in [1, 3, 9] {
                for n in 1..=40 {
                    let relu = n % 2 == 0;
                    let init = (n % 3 != 0).then(|| Strided {
                        values: &c,
                        rows: n % 3 - 1,
                        cols: 2 - n % 3,
                    });
                    let bp = pack(k, n, &b);
                    for (y_rs, y_cs) in [(1, m), (n, 1)] {
                        let mut y = std::vec![f32::NAN; m * n];
                        gemm_packed((m, k, n), &a, LDA, &bp, init, &mut y, (y_rs, y_cs), relu);
                        let mut want = std::vec![0.0f64; m * n];
                        for r in 0..m {
                            for j in 0..n {
                                let mut s =
                                    init.map_or(0.0, |i| f64::from(c[r * i.rows + j * i.cols]));
                                for kk in 0..k {
                                    s += f64::from(a[r * LDA + kk]) * f64::from(b[kk * n + j]);
                                }
                                want[r * y_rs + j * y_cs] = if relu { s.max(0.0) } else { s };
                            }
                        }
                        let what = std::format!("m={m} k={k} n={n} strides ({y_rs}, {y_cs})");
                        check(&y, &want, path, &what);
                    }
                }
            }
        }
    });
}

/// `gemm_dot` (one variant on every core: few columns, `B` transposed) for `n` from 1 to
/// 4, `m` from 1 to 5, `K` from 1 to 17, with and without init and Relu.
#[test]
fn gemm_dot_on_every_shape() {
    fn case<const K: usize>() {
        let a = values(5 * K, 0.37);
        let bt = values(4 * K, 0.91);
        let c: Vec<f32> = (0..20).map(|i| i as f32 * 0.1 - 0.5).collect();
        for m in 1..=5 {
            for n in 1..=4 {
                let relu = n % 2 == 0;
                let init = (m % 3 != 0).then(|| Strided {
                    values: &c,
                    rows: (m % 3 - 1) * n,
                    cols: 1,
                });
                let mut y = std::vec![f32::NAN; m * n];
                super::dot::gemm_dot::<K>((m, n), &a, &bt, init, &mut y, relu);
                let mut want = std::vec![0.0f64; m * n];
                for r in 0..m {
                    for j in 0..n {
                        let mut s = init.map_or(0.0, |i| f64::from(c[r * i.rows + j * i.cols]));
                        for kk in 0..K {
                            s += f64::from(a[r * K + kk]) * f64::from(bt[j * K + kk]);
                        }
                        want[r * n + j] = if relu { s.max(0.0) } else { s };
                    }
                }
                check(
                    &y,
                    &want,
                    Path::Portable,
                    &std::format!("m={m} K={K} n={n}"),
                );
            }
        }
    }
    case::<1>();
    case::<3>();
    case::<8>();
    case::<17>();
}

/// A constant `B` with a narrow remainder (`tinyonnx_layout::narrow_cols_within`, up to
/// the FPU microcontrollers' `NARROW_MAX_FPU` columns): the whole
/// panels through `gemm_packed`, the last `R` columns through `gemm_narrow`, as the
/// compiler emits them, for `n` = `R`, `NR + R`, `2 NR + R`, `m` from 1 to 5, `k` from 1
/// to 19, with and without a bias row and Relu.
#[test]
fn narrow_blocks_beside_panels() {
    fn case<const R: usize>() {
        for full in [0, NR, 2 * NR] {
            let n = full + R;
            assert_eq!(
                tinyonnx_layout::narrow_cols_within(n, tinyonnx_layout::NARROW_MAX_FPU),
                R
            );
            for k in [1, 4, 19] {
                for m in 1..=5 {
                    let relu = (m + k) % 2 == 0;
                    let a = values(m * k, 0.37);
                    let b = values(k * n, 0.91);
                    let bias: Vec<f32> = (0..n).map(|i| i as f32 * 0.1 - 0.5).collect();
                    let init = (m != 2).then(|| Strided {
                        values: &bias,
                        rows: 0,
                        cols: 1,
                    });
                    let panels = pack(k, full, &{
                        let mut v = Vec::new();
                        for kk in 0..k {
                            v.extend_from_slice(&b[kk * n..kk * n + full]);
                        }
                        v
                    });
                    let rest: Vec<f32> = (0..k)
                        .flat_map(|kk| b[kk * n + full..kk * n + n].iter().copied())
                        .collect();
                    let mut y = std::vec![f32::NAN; m * n];
                    gemm_packed((m, k, full), &a, k, &panels, init, &mut y, (n, 1), relu);
                    super::dot::gemm_narrow::<R>((m, k, n, full), &a, &rest, init, &mut y, relu);
                    let mut want = std::vec![0.0f64; m * n];
                    for r in 0..m {
                        for j in 0..n {
                            let mut s = init.map_or(0.0, |_| f64::from(bias[j]));
                            for kk in 0..k {
                                s += f64::from(a[r * k + kk]) * f64::from(b[kk * n + j]);
                            }
                            want[r * n + j] = if relu { s.max(0.0) } else { s };
                        }
                    }
                    check(
                        &y,
                        &want,
                        Path::Portable,
                        &std::format!("m={m} k={k} n={n}"),
                    );
                }
            }
        }
    }
    case::<1>();
    case::<2>();
    case::<3>();
    case::<4>();
    case::<5>();
    case::<6>();
    case::<7>();
}

/// `B[k, n]` (row-major) in panels of `NR` columns, the last one padded with zeros.
fn pack(k: usize, n: usize, b: &[f32]) -> Vec<f32> {
    let mut out = std::vec![0.0; super::packed::packed_len(k, n)];
    for p in 0..n.div_ceil(NR) {
        for kk in 0..k {
            for j in 0..NR.min(n - p * NR) {
                out[(p * k + kk) * NR + j] = b[kk * n + p * NR + j];
            }
        }
    }
    out
}

/// `gemm_pairs` (AVX-512 only): row blocks of 12, 8, 4 and 1, pairs of panels two at
/// a time and alone, a last pair half empty.
#[cfg(target_arch = "x86_64")]
#[test]
fn gemm_pairs_on_avx512() {
    use super::arch::x86_64::packed::gemm_pairs;
    const W: usize = 2 * NR;
    on_every_path(|path| {
        if path != Path::Avx512 {
            return;
        }
        for (m, k, n) in [(1, 3, 16), (13, 5, 40), (25, 9, 64), (4, 1, 8), (9, 7, 33)] {
            let a = values(m * k, 0.37);
            let b = values(k * n, 0.91);
            let pairs = n.div_ceil(W);
            let mut bp = std::vec![0.0f32; pairs * k * W];
            for q in 0..pairs {
                for kk in 0..k {
                    for j in 0..W.min(n - q * W) {
                        bp[(q * k + kk) * W + j] = b[kk * n + q * W + j];
                    }
                }
            }
            let y_rs = pairs * W;
            let mut y = std::vec![f32::NAN; m * y_rs];
            // Safety: this path runs only where the CPU has AVX-512F.
            unsafe { gemm_pairs((m, k, n), (&a, k), &bp, (&mut y, y_rs)) };
            let mut got = Vec::new();
            let mut want = Vec::new();
            for r in 0..m {
                for j in 0..n {
                    got.push(y[r * y_rs + j]);
                    want.push(
                        (0..k)
                            .map(|kk| f64::from(a[r * k + kk]) * f64::from(b[kk * n + j]))
                            .sum(),
                    );
                }
            }
            check(&got, &want, path, &std::format!("pairs m={m} k={k} n={n}"));
        }
    });
}

/// A convolution case: the portable direct kernel, the packed one (im2col, or the
/// AVX-512 direct kernel where its ring fits in tiles of `PB` positions) and, on the
/// AVX-512 path, the direct kernel itself, each against [`Conv::reference`].
macro_rules! conv_case {
    ($n:literal, $c:literal, $h:literal, $w:literal, $m:literal, $g:literal,
     $kh:literal, $kw:literal, $oh:literal, $ow:literal, $sh:literal, $sw:literal,
     $dh:literal, $dw:literal, $pt:literal, $pl:literal; $pb:literal, $relu:literal) => {{
        let s = Conv {
            n: $n, c: $c, h: $h, w: $w, m: $m, g: $g, kh: $kh, kw: $kw, oh: $oh, ow: $ow,
            sh: $sh, sw: $sw, dh: $dh, dw: $dw, pt: $pt, pl: $pl,
        };
        let (x, w, b) = s.inputs();
        let want = s.reference(&x, &w, &b, $relu);
        let len = want.len();
        on_every_path(|path| {
            let what = std::format!("{s:?} relu {}", $relu);
            let mut y = std::vec![f32::NAN; len];
            conv2d::<$n, $c, $h, $w, $m, $g, $kh, $kw, $oh, $ow, $sh, $sw, $dh, $dw, $pt, $pl, $relu>(
                &x, &w, Some(&b), &mut y,
            );
            check(&y, &want, path, &std::format!("conv2d {what}"));
            let k = $c / $g * $kh * $kw;
            let mut patches = std::vec![f32::NAN; tinyonnx_layout::patch_len(k, $pb)];
            let mut y = std::vec![f32::NAN; len];
            conv2d_packed::<
                $n, $c, $h, $w, $m, $g, $kh, $kw, $oh, $ow, $sh, $sw, $dh, $dw, $pt, $pl, $pb, $relu,
            >(&x, &w, Some(&b), &mut y, &mut patches);
            check(&y, &want, path, &std::format!("conv2d_packed PB {} {what}", $pb));
            // The microcontrollers' shared body (sizes as values), here on the host.
            let mut y = std::vec![f32::NAN; len];
            super::conv::im2col::<
                $n, $c, $h, $w, $m, $g, $kh, $kw, $oh, $ow, $sh, $sw, $dh, $dw, $pt, $pl, $pb,
            >((&x, &w, Some(&b)), (&mut y, &mut patches), $relu, true);
            check(&y, &want, path, &std::format!("im2col shared PB {} {what}", $pb));
            // The copies with sizes as values (the microcontrollers' without an FPU).
            let call = super::conv::ConvCall {
                sizes: super::conv::ConvGeometry {
                    n: $n, c: $c, h: $h, w: $w, m: $m, g: $g, kh: $kh, kw: $kw, oh: $oh,
                    ow: $ow, sh: $sh, sw: $sw, dh: $dh, dw: $dw, pt: $pt, pl: $pl,
                },
                block: $pb,
                relu: $relu,
            };
            let mut y = std::vec![f32::NAN; len];
            super::conv::conv2d_sized(&call, &x, &w, Some(&b), &mut y);
            check(&y, &want, path, &std::format!("conv2d_sized {what}"));
            let mut y = std::vec![f32::NAN; len];
            super::conv::conv2d_packed_sized(&call, &x, &w, Some(&b), &mut y, &mut patches);
            check(&y, &want, path, &std::format!("conv2d_packed_sized PB {} {what}", $pb));
            #[cfg(target_arch = "x86_64")]
            if path == Path::Avx512 && tinyonnx_layout::direct::applies($g, $ow) {
                let ring_len = tinyonnx_layout::direct::ring_len(
                    ($c, $g), ($kh, $dh, $sh), ($ow, $kw, $sw, $dw),
                );
                let mut ring = std::vec![f32::NAN; ring_len];
                // The outputs past `len` are untouched by the masked stores.
                let mut y = std::vec![f32::NAN; len + 16];
                // Safety: this path runs only where the CPU has AVX-512F, AVX and FMA.
                unsafe {
                    super::arch::x86_64::direct::conv2d_avx512::<
                        $n, $c, $h, $w, $m, $kh, $kw, $oh, $ow, $sh, $sw, $dh, $dw, $pt, $pl, $relu,
                    >(&x, &w, Some(&b), &mut y, &mut ring);
                }
                check(&y[..len], &want, path, &std::format!("conv2d_avx512 {what}"));
                assert!(y[len..].iter().all(|v| v.is_nan()), "conv2d_avx512 {what}: stored past the end");
            }
        });
    }};
}

/// Groups, strides, dilations, asymmetric windows and padding, rows of 8, 16, 17, 32
/// and 40 positions (the direct kernel's register tilings), tiles that split rows.
#[test]
#[rustfmt::skip]
fn convolutions_on_every_path() {
    //          N  C   H   W   M  G KH KW OH  OW SH SW DH DW PT PL  PB  relu
    conv_case!(2, 8, 20, 20, 16, 1, 3, 3, 20, 20, 1, 1, 1, 1, 1, 1; 48, true);
    conv_case!(1, 8, 20, 20, 12, 1, 3, 3, 10, 10, 2, 2, 1, 1, 1, 1; 32, false);
    conv_case!(1, 8, 20, 20, 8, 2, 2, 3, 18, 16, 1, 1, 2, 2, 0, 1; 16, true);
    conv_case!(1, 8, 2, 3, 16, 1, 1, 1, 2, 3, 1, 1, 1, 1, 0, 0; 6, false);
    conv_case!(2, 8, 1, 1, 6, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0; 1, true);
    conv_case!(1, 6, 9, 12, 6, 6, 3, 3, 5, 12, 2, 1, 1, 1, 1, 1; 16, false);
    conv_case!(2, 4, 40, 40, 14, 1, 3, 3, 40, 40, 1, 1, 1, 1, 1, 1; 320, true);
    conv_case!(1, 4, 15, 16, 12, 1, 3, 3, 15, 16, 1, 1, 1, 1, 1, 1; 64, true);
    conv_case!(1, 4, 31, 32, 9, 1, 3, 3, 15, 16, 2, 2, 1, 1, 0, 1; 64, false);
    conv_case!(1, 4, 8, 8, 14, 1, 3, 3, 8, 8, 1, 1, 1, 1, 1, 1; 64, true);
    conv_case!(1, 4, 7, 8, 13, 1, 3, 3, 7, 8, 1, 1, 1, 1, 1, 1; 32, false);
    conv_case!(1, 4, 15, 16, 12, 1, 3, 3, 7, 8, 2, 2, 1, 1, 0, 1; 32, false);
    conv_case!(1, 4, 16, 16, 8, 1, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1; 64, false);
    conv_case!(1, 4, 17, 17, 4, 1, 3, 3, 17, 17, 1, 1, 1, 1, 1, 1; 64, false);
    conv_case!(1, 3, 40, 40, 13, 1, 5, 5, 20, 20, 2, 2, 1, 1, 2, 2; 64, true);
    conv_case!(1, 4, 40, 40, 8, 1, 3, 3, 13, 19, 3, 2, 1, 1, 0, 0; 64, false);
    conv_case!(1, 4, 30, 40, 12, 1, 2, 3, 29, 36, 1, 1, 2, 2, 1, 0; 64, false);
    conv_case!(1, 4, 33, 33, 12, 1, 3, 3, 17, 17, 2, 2, 1, 1, 1, 1; 64, true);
    conv_case!(1, 4, 20, 40, 4, 1, 1, 3, 20, 17, 1, 3, 1, 1, 0, 2; 64, false);
    conv_case!(1, 4, 40, 40, 8, 1, 1, 1, 20, 20, 2, 2, 1, 1, 0, 0; 64, false);
    // Depthwise (one channel a group), as the boards' direct kernel runs it.
    conv_case!(1, 6, 9, 9, 6, 6, 3, 3, 9, 9, 1, 1, 1, 1, 1, 1; 32, true);
}

/// `U = G g Gt` of each `[M][C][3][3]` kernel as `[16][M][C]` (F(2x2, 3x3)'s `G`).
fn winograd_kernel(w: &[f32], m: usize, c: usize) -> Vec<f32> {
    let g = [
        [1.0, 0.0, 0.0],
        [0.5, 0.5, 0.5],
        [0.5, -0.5, 0.5],
        [0.0, 0.0, 1.0],
    ];
    let mut u = std::vec![0.0; 16 * m * c];
    for (mc, k) in w.chunks_exact(9).enumerate() {
        let mut gk = [[0.0f64; 3]; 4];
        for (a, row) in gk.iter_mut().enumerate() {
            for (j, v) in row.iter_mut().enumerate() {
                *v = (0..3).map(|i| g[a][i] * f64::from(k[3 * i + j])).sum();
            }
        }
        for e in 0..16 {
            let (a, b) = (e / 4, e % 4);
            u[e * m * c + mc] = (0..3).map(|j| gk[a][j] * g[b][j]).sum::<f64>() as f32;
        }
    }
    u
}

/// A Winograd case: blocks of `TB` tiles in passes of `R` element rows.
macro_rules! winograd_case {
    ($n:literal, $c:literal, $h:literal, $w:literal, $m:literal, $oh:literal, $ow:literal,
     $pt:literal, $pl:literal; $tb:literal, $r:literal) => {{
        let s = Conv {
            n: $n, c: $c, h: $h, w: $w, m: $m, g: 1, kh: 3, kw: 3, oh: $oh, ow: $ow,
            sh: 1, sw: 1, dh: 1, dw: 1, pt: $pt, pl: $pl,
        };
        let (x, w, b) = s.inputs();
        let want = s.reference(&x, &w, &b, true);
        let u = winograd_kernel(&w, $m, $c);
        on_every_path(|path| {
            let mut y = std::vec![f32::NAN; want.len()];
            let mut scratch = std::vec![f32::NAN; scratch_len($c, $m, $oh, $ow, $tb, $r)];
            conv3x3_winograd::<$n, $c, $h, $w, $m, $oh, $ow, $pt, $pl, $tb, $r, true>(
                &x, &u, Some(&b), &mut y, &mut scratch,
            );
            // The transforms add rounding of their own: 1e-5 relative as the others,
            // on sums of up to 72 products.
            check(&y, &want, path, &std::format!("winograd {s:?} TB {} R {}", $tb, $r));
            // The transforms' other form (a tile at a time on the microcontrollers, on
            // arrays of lanes elsewhere) adds in the same order: the same bits.
            let mut other = std::vec![f32::NAN; want.len()];
            winograd::<$n, $c, $h, $w, $m, $oh, $ow, $pt, $pl, $tb, $r, true, { !BY_LANE }>(
                &x, &u, Some(&b), &mut other, &mut scratch,
            );
            assert!(
                y.iter().zip(&other).all(|(a, b)| a.to_bits() == b.to_bits()),
                "winograd {s:?} TB {} R {}: the two transform forms differ on {path:?}",
                $tb,
                $r
            );
        });
    }};
}

/// Whole panels and panels across tile rows, odd panel counts (a half-empty last pair
/// of the 512-bit output transform), blocks ending inside a pair, half tiles at the
/// bottom and right, no padding and asymmetric padding, 1, 2 and 4 element rows a pass.
#[test]
#[rustfmt::skip]
fn winograd_on_every_path() {
    winograd_case!(2, 8, 40, 40, 12, 40, 40, 1, 1; 48, 4);
    winograd_case!(1, 6, 9, 23, 5, 9, 23, 1, 1; 24, 4);
    winograd_case!(1, 6, 9, 11, 5, 9, 11, 1, 1; 24, 4);
    winograd_case!(1, 5, 9, 23, 6, 9, 23, 1, 1; 32, 4);
    winograd_case!(1, 5, 9, 11, 13, 9, 11, 1, 1; 16, 4);
    winograd_case!(1, 5, 9, 23, 7, 7, 21, 0, 0; 16, 1);
    winograd_case!(1, 4, 4, 5, 6, 4, 4, 2, 0; 8, 2);
    winograd_case!(2, 8, 40, 40, 12, 40, 40, 1, 1; 48, 1);
    winograd_case!(1, 8, 12, 12, 8, 12, 12, 1, 1; 16, 2);
}

/// A max-pooling case over `NC` planes against the max of each window's inputs
/// (padding never wins, NaN propagates); NaN and infinities among the inputs.
macro_rules! pool_case {
    ($nc:literal, $h:literal, $w:literal, $kh:literal, $kw:literal, $oh:literal,
     $ow:literal, $sh:literal, $sw:literal, $dh:literal, $dw:literal, $pt:literal,
     $pl:literal) => {{
        let x: Vec<f32> = (0..$nc * $h * $w)
            .map(|i| match i % 29 {
                11 if i % 3 == 0 => f32::NAN,
                17 => f32::INFINITY,
                23 => f32::NEG_INFINITY,
                _ => (i as f32 * 0.37).cos(),
            })
            .collect();
        let mut want = Vec::new();
        for p in 0..$nc {
            for oh in 0..$oh {
                for ow in 0..$ow {
                    let mut v = f64::NEG_INFINITY;
                    for kh in 0..$kh {
                        for kw in 0..$kw {
                            let ih = (oh * $sh + kh * $dh) as isize - $pt as isize;
                            let iw = (ow * $sw + kw * $dw) as isize - $pl as isize;
                            if ih >= 0 && iw >= 0 && ih < $h as isize && iw < $w as isize {
                                let xv = f64::from(x[(p * $h + ih as usize) * $w + iw as usize]);
                                v = if xv.is_nan() || v.is_nan() { f64::NAN } else { v.max(xv) };
                            }
                        }
                    }
                    want.push(v);
                }
            }
        }
        // With the Relu the plan moves after a pool: max(v, 0), NaN kept.
        let want_relu: Vec<f64> = want.iter().map(|&v| if v < 0.0 { 0.0 } else { v }).collect();
        on_every_path(|path| {
            let mut y = std::vec![f32::NAN; want.len()];
            max_pool2d::<$nc, $h, $w, $kh, $kw, $oh, $ow, $sh, $sw, $dh, $dw, $pt, $pl, false>(&x, &mut y);
            let mut kernels = std::vec![("max_pool2d", y, &want)];
            let mut y = std::vec![f32::NAN; want.len()];
            max_pool2d::<$nc, $h, $w, $kh, $kw, $oh, $ow, $sh, $sw, $dh, $dw, $pt, $pl, true>(&x, &mut y);
            kernels.push(("max_pool2d with Relu", y, &want_relu));
            // The microcontrollers' loop where every window lies inside, here on the host.
            if $pt == 0 && $pl == 0 && ($oh - 1) * $sh + ($kh - 1) * $dh < $h
                && ($ow - 1) * $sw + ($kw - 1) * $dw < $w
            {
                for (relu, want) in [(false, &want), (true, &want_relu)] {
                    let mut y = std::vec![f32::NAN; want.len()];
                    super::pool::max_pool_inside::<$kh, $kw, $sh, $sw, $dh, $dw>(($h, $w, $oh, $ow), &x, &mut y, relu);
                    kernels.push((if relu { "max_pool_inside with Relu" } else { "max_pool_inside" }, y, want));
                }
            }
            for (kernel, y, want) in kernels {
                for (i, (&g, &w)) in y.iter().zip(want).enumerate() {
                    let same = (g.is_nan() && w.is_nan()) || f64::from(g) == w;
                    assert!(same, "{kernel} {}x{} over {}x{} on {path:?}, element {i}: {g} != {w}", $kh, $kw, $h, $w);
                }
            }
        });
    }};
}

/// The AVX-512 3x3 stride-2 kernel (rows of up to 70 inputs, pad 1 and 0), the
/// rows-first host kernel (3x3 stride 1, dilation), the tap-by-tap loop (2x2), and the
/// microcontrollers' window-by-window loop on the four cases without padding.
#[test]
#[rustfmt::skip]
fn max_pooling_on_every_path() {
    //         NC  H   W KH KW OH  OW SH SW DH DW PT PL
    pool_case!(2,  9, 22, 3, 3, 5, 11, 2, 2, 1, 1, 1, 1);
    pool_case!(2,  9, 22, 3, 3, 4, 10, 2, 2, 1, 1, 0, 0);
    pool_case!(3,  7, 70, 3, 3, 4, 35, 2, 2, 1, 1, 1, 1);
    pool_case!(3,  6, 33, 3, 3, 2, 16, 2, 2, 1, 1, 0, 0);
    pool_case!(3,  5, 64, 3, 3, 3, 32, 2, 2, 1, 1, 1, 1);
    pool_case!(2,  9, 22, 2, 2, 4, 11, 2, 2, 1, 1, 0, 0);
    pool_case!(2,  9, 12, 3, 3, 9, 12, 1, 1, 1, 1, 1, 1);
    pool_case!(1, 10, 10, 3, 2, 6,  9, 1, 1, 2, 1, 0, 0);
}

/// The 8-bit panel sums on AVX-512 VNNI and on AVX2 (each where the CPU has it) against
/// the definition, `sum_r x[r] * w[r][c]` in wrapping i32, over `k` from 1 to 70 (groups
/// and chunks of four groups cut anywhere), 1 to 40 columns (blocks of eight panels and
/// the rest), signed and unsigned activations at the ends of their ranges.
#[cfg(target_arch = "x86_64")]
#[test]
fn q8_panel_sums_on_vnni_and_avx2() {
    use super::arch::x86_64::{cpu, q8 as x86};
    use tinyonnx_layout::q8;
    for vnni in [true, false] {
        if !(if vnni { cpu::vnni() } else { cpu::avx2() }) {
            continue;
        }
        for k in [1usize, 3, 4, 5, 15, 16, 17, 33, 64, 70] {
            for n in [1usize, 3, 4, 5, 16, 31, 33, 40] {
                for signed in [false, true] {
                    let x: Vec<u8> = (0..k).map(|i| (i * 97 + 13) as u8).collect();
                    let b: Vec<i8> = (0..k * n).map(|i| (i * 53 + 7) as u8 as i8).collect();
                    let mut packed = std::vec![0i8; q8::packed_len(k, n)];
                    let mut colsum = std::vec![0i32; n];
                    for r in 0..k {
                        for c in 0..n {
                            packed[q8::index(k, r, c)] = b[r * n + c];
                            colsum[c] += i32::from(b[r * n + c]);
                        }
                    }
                    let mut got = std::vec![i32::MIN; n.div_ceil(q8::PANEL) * q8::PANEL];
                    let panels = n.div_ceil(q8::PANEL);
                    let each = |p: usize, sums: [i32; q8::PANEL]| {
                        got[p * q8::PANEL..(p + 1) * q8::PANEL].copy_from_slice(&sums);
                    };
                    // Safety: the CPU has the routine's features (checked above); `x`
                    // holds `k` bytes and `packed` every panel of `n` columns.
                    unsafe {
                        if vnni {
                            x86::panel_sums(&x, k, signed, &packed, panels, &colsum, each);
                        } else {
                            x86::panel_sums_avx2(&x, k, signed, &packed, panels, each);
                        }
                    }
                    for c in 0..n {
                        let want = (0..k).fold(0i32, |s, r| {
                            let xv = if signed {
                                i32::from(x[r] as i8)
                            } else {
                                i32::from(x[r])
                            };
                            s.wrapping_add(xv * i32::from(b[r * n + c]))
                        });
                        assert_eq!(
                            got[c], want,
                            "vnni={vnni} k={k} n={n} signed={signed} column {c}"
                        );
                    }
                }
            }
        }
    }
}

/// The sixteen-position 8-bit sums on AVX-512 VNNI and on AVX2 (each where the CPU has
/// it) against the definition, `sum_r patch[q][r] * w[r][c]` in wrapping i32 for each
/// of the sixteen patches `q`: 1 to 30 groups of four rows, 1 to 21 columns (blocks of
/// eight columns, a last panel, columns past `n` not handed on), bytes at both ends of
/// their ranges.
#[cfg(target_arch = "x86_64")]
#[test]
fn q8_position_sums_on_vnni_and_avx2() {
    use super::arch::x86_64::{
        cpu,
        q8::{self as x86, POSITIONS},
    };
    use tinyonnx_layout::q8;
    for vnni in [true, false] {
        if !(if vnni { cpu::vnni() } else { cpu::avx2() }) {
            continue;
        }
        for groups in [1usize, 2, 5, 18, 30] {
            let k = 4 * groups;
            for n in [1usize, 3, 4, 5, 8, 12, 13, 21] {
                // Byte `64 g + 4 q + e % 4`: value `4 g + e % 4` of patch `q`.
                let patches: Vec<u8> = (0..64 * groups)
                    .map(|i| match i % 7 {
                        0 => 255,
                        1 => 0,
                        _ => (i * 89 + 5) as u8,
                    })
                    .collect();
                let b: Vec<i8> = (0..k * n)
                    .map(|i| match i % 5 {
                        0 => -128,
                        1 => 127,
                        _ => (i * 53 + 7) as u8 as i8,
                    })
                    .collect();
                let mut packed = std::vec![0i8; q8::packed_len(k, n)];
                for r in 0..k {
                    for c in 0..n {
                        packed[q8::index(k, r, c)] = b[r * n + c];
                    }
                }
                let mut got = std::vec![[i32::MIN; POSITIONS]; n];
                let mut handed = std::vec![0usize; n];
                let each = |c: usize, sums: &[i32; POSITIONS]| {
                    got[c] = *sums;
                    handed[c] += 1;
                };
                // Safety: the CPU has the routine's features (checked above); the
                // routines check the lengths.
                unsafe {
                    if vnni {
                        x86::position_sums(&patches, groups, &packed, n, each);
                    } else {
                        x86::position_sums_avx2(&patches, groups, &packed, n, each);
                    }
                }
                for c in 0..n {
                    assert_eq!(handed[c], 1, "vnni={vnni} groups={groups} n={n} column {c}");
                    for q in 0..POSITIONS {
                        let want = (0..k).fold(0i32, |s, r| {
                            let x = i32::from(patches[64 * (r / 4) + 4 * q + r % 4]);
                            s.wrapping_add(x * i32::from(b[r * n + c]))
                        });
                        assert_eq!(
                            got[c][q], want,
                            "vnni={vnni} groups={groups} n={n} column {c} patch {q}"
                        );
                    }
                }
            }
        }
    }
}

/// The 8-bit `QLinearAdd` in integers (`add_units`: the host and the cores without an
/// FPU) and in f32 fused multiply-adds (`add_fused`, here through `libm`; RISC-V F runs
/// it with `FMADD.S`) against std's fused multiply-add, on every pair of 8-bit values:
/// parameters as real models have them (scales 0.002 to 0.05, zero points anywhere) and
/// at the edges (a fixed part of 0, ratios of 2^-20 and 2^10, a fixed part of 2^-100
/// beside ratios near 1, which no 64-bit unit holds and the compiler refuses).
#[test]
fn quantized_add_in_integers_and_floats() {
    use super::quant::{add_fused, add_units};
    use tinyonnx_layout::qadd::units;
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut uniform = |lo: f32, hi: f32| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        lo + (hi - lo) * ((seed >> 40) as f32 / (1u64 << 24) as f32)
    };
    let mut params = std::vec![
        (0.5f32, 0.25f32, 0.0f32),
        (2f32.powi(-20), 2f32.powi(10), 3.0)
    ];
    for _ in 0..24 {
        let (sa, sb, sy) = (
            uniform(0.002, 0.05),
            uniform(0.002, 0.05),
            uniform(0.002, 0.05),
        );
        let (za, zb, zy) = (
            uniform(-128.0, 127.0).round(),
            uniform(-128.0, 127.0).round(),
            uniform(-128.0, 127.0).round(),
        );
        let (ra, rb) = (sa / sy, sb / sy);
        params.push((ra, rb, zy - ra.mul_add(za, rb * zb)));
    }
    assert!(units(1.0, 1.0, 2f32.powi(-100)).is_none());
    let a: Vec<i8> = (0..65536).map(|i| (i % 256) as u8 as i8).collect();
    let b: Vec<i8> = (0..65536).map(|i| (i / 256) as u8 as i8).collect();
    let (ua, ub): (Vec<u8>, Vec<u8>) = (
        a.iter().map(|&v| v as u8).collect(),
        b.iter().map(|&v| v as u8).collect(),
    );
    for (ra, rb, fixed) in params {
        let u = units(ra, rb, fixed).expect("units of a real model's parameters");
        let want = |x: i32, y: i32, (lo, hi): (i32, i32)| {
            let t = (x as f32).mul_add(ra, (y as f32).mul_add(rb, fixed));
            (t.round_ties_even() as i32).clamp(lo, hi)
        };
        let (mut s_units, mut s_fused) = (std::vec![0i8; 65536], std::vec![0i8; 65536]);
        add_units(&a, &b, &mut s_units, &u);
        add_fused(&a, &b, &mut s_fused, (ra, rb, fixed));
        let (mut u_units, mut u_fused) = (std::vec![0u8; 65536], std::vec![0u8; 65536]);
        add_units(&ua, &ub, &mut u_units, &u);
        add_fused(&ua, &ub, &mut u_fused, (ra, rb, fixed));
        for i in 0..65536 {
            let w = want(a[i].into(), b[i].into(), (-128, 127));
            let what =
                |path: &str| std::format!("{path} i8 {} + {} with {ra}, {rb}, {fixed}", a[i], b[i]);
            assert_eq!(i32::from(s_units[i]), w, "{}", what("units"));
            assert_eq!(i32::from(s_fused[i]), w, "{}", what("fused"));
            let w = want(ua[i].into(), ub[i].into(), (0, 255));
            assert_eq!(i32::from(u_units[i]), w, "units u8 {} + {}", ua[i], ub[i]);
            assert_eq!(i32::from(u_fused[i]), w, "fused u8 {} + {}", ua[i], ub[i]);
        }
    }
}
