//! Max pooling's 3x3 stride-2 windows (ResNet's stem) with AVX-512, chosen by
//! [`crate::kernels::pool::max_pool2d`].

/// The longest input row (after the left padding) and the most outputs twice over a
/// row of [`max_pool_3x3s2_avx512`] takes: its row buffer is on the stack.
pub(crate) const MAX_ROW: usize = 1024;

/// [`crate::kernels::pool::max_pool2d`] for 3x3 windows at stride 2 (ResNet's stem pooling) with 512-bit
/// registers: per output row the window rows' column maxima go into a row buffer
/// behind `PL` values of -inf (and -inf after it), so every output is the max of three
/// adjacent buffer values `2 ox .. 2 ox + 3` with no edge cases; two-source permutes
/// pick the even, odd and next even values of 32 for 16 outputs at a time. NaN
/// propagates, as in the other paths: `maxps` keeps a NaN running value, and a NaN new
/// value is put in by mask.
///
/// # Safety
/// The CPU must have AVX-512F; `PL + W <= MAX_ROW` and `2 OW <= MAX_ROW`.
#[target_feature(enable = "avx512f,avx,fma")]
pub(crate) unsafe fn max_pool_3x3s2_avx512<
    const NC: usize,
    const H: usize,
    const W: usize,
    const OH: usize,
    const OW: usize,
    const PT: usize,
    const PL: usize,
>(
    x: &[f32],
    y: &mut [f32],
) {
    use core::arch::x86_64::{
        __m512, _CMP_UNORD_Q, _mm512_cmp_ps_mask, _mm512_loadu_ps, _mm512_mask_mov_ps,
        _mm512_mask_storeu_ps, _mm512_maskz_loadu_ps, _mm512_max_ps, _mm512_permutex2var_ps,
        _mm512_set1_ps, _mm512_setr_epi32,
    };
    // `max(m, v)` lane by lane with NaN propagated: `maxps(v, m)` returns `m` when
    // either is NaN (so a NaN `m` stays), then the lanes where `v` is NaN take `v`.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn max_nan(m: __m512, v: __m512) -> __m512 {
        _mm512_mask_mov_ps(
            _mm512_max_ps(v, m),
            _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v),
            v,
        )
    }
    // Outputs read buffer values up to `2 (OW rounded up to 16) + 34`.
    let mut buf = [f32::NEG_INFINITY; MAX_ROW + 64];
    assert!(PL + W <= MAX_ROW && 2 * OW <= MAX_ROW, "row too long");
    let x = &x[..NC * H * W];
    let y = &mut y[..NC * OH * OW];
    let lanes = |n: usize| -> u16 { if n >= 16 { u16::MAX } else { (1u16 << n) - 1 } };
    let evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    let odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    let low = _mm512_set1_ps(f32::NEG_INFINITY);
    for (xp, yp) in x.chunks_exact(H * W).zip(y.chunks_exact_mut(OH * OW)) {
        for (oh, yrow) in yp.chunks_exact_mut(OW).enumerate() {
            let rows = [0, 1, 2].map(|kh| (2 * oh + kh).wrapping_sub(PT));
            let mut i = 0;
            while i < W {
                let mask = lanes(W - i);
                let mut m = low;
                for &ih in &rows {
                    if ih < H {
                        let row = &xp[ih * W..(ih + 1) * W];
                        // Safety: the lanes in `mask` are inside `row`.
                        let v = unsafe { _mm512_maskz_loadu_ps(mask, row.as_ptr().add(i)) };
                        m = max_nan(m, v);
                    }
                }
                // Safety: lanes `PL + i ..` in `mask` end at `PL + W <= MAX_ROW`.
                unsafe { _mm512_mask_storeu_ps(buf.as_mut_ptr().add(PL + i), mask, m) };
                i += 16;
            }
            let mut o = 0;
            while o < OW {
                // Safety: `2 o + 34 <= 2 OW + 32 <= MAX_ROW + 64` (`o < OW`, a multiple
                // of 16); the store's lanes are inside `yrow`.
                unsafe {
                    let at = buf.as_ptr().add(2 * o);
                    let (a, b) = (_mm512_loadu_ps(at), _mm512_loadu_ps(at.add(16)));
                    let (c, d) = (_mm512_loadu_ps(at.add(2)), _mm512_loadu_ps(at.add(18)));
                    let mut m = max_nan(low, _mm512_permutex2var_ps(a, evens, b));
                    m = max_nan(m, _mm512_permutex2var_ps(a, odds, b));
                    m = max_nan(m, _mm512_permutex2var_ps(c, evens, d));
                    _mm512_mask_storeu_ps(yrow.as_mut_ptr().add(o), lanes(OW - o), m);
                }
                o += 16;
            }
        }
    }
}
