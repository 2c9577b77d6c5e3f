//! The 8-bit products on AVX-512 VNNI. `VPDPBUSD` adds to each i32 lane the four
//! products of four unsigned bytes with four signed bytes, which is one group of the
//! `tinyonnx_layout::q8` packing for one column: a 512-bit load of a panel holds four
//! groups of its four columns (lane `4 i + c`: group `i`, column `c`), multiplied with
//! the row's sixteen activations of those groups, each spread over its group's four
//! lanes. Signed activations are offset by 128 into unsigned ones, and `128 * colsum`
//! taken off after. Sums wrap, as the portable kernel's.
//!
//! Without VNNI, AVX2 (`panel_sums_avx2`): each group's sixteen weight bytes widened to
//! 16 bits (`VPMOVSXBW`) and multiplied with the group's four activations, widened and
//! repeated for the four columns, by `VPMADDWD`, which adds pairs of products into i32
//! lanes exactly (ONNX Runtime's uint8 kernel there adds pairs in 16 bits with
//! saturation: twice the products an instruction, not the definition's sums). A
//! convolution's sixteen output positions at a time (`position_sums`, one weight word
//! broadcast against a group of sixteen patches) have the same two variants.

use core::arch::x86_64::{
    __m256i, __m512i, _mm_add_epi32, _mm_cvtepi8_epi16, _mm_cvtepu8_epi16, _mm_cvtsi32_si128,
    _mm_loadu_si128, _mm_storeu_si128, _mm_unpacklo_epi64, _mm256_add_epi32, _mm256_and_si256,
    _mm256_broadcastq_epi64, _mm256_castsi256_si128, _mm256_cvtepi8_epi16,
    _mm256_extracti128_si256, _mm256_hadd_epi32, _mm256_loadu_si256, _mm256_madd_epi16,
    _mm256_set1_epi16, _mm256_set1_epi32, _mm256_setzero_si256, _mm256_slli_epi16,
    _mm256_srai_epi16, _mm256_srli_epi16, _mm256_storeu_si256, _mm512_castsi128_si512,
    _mm512_dpbusd_epi32, _mm512_extracti32x4_epi32, _mm512_loadu_si512, _mm512_maskz_loadu_epi32,
    _mm512_permutexvar_epi32, _mm512_set_epi32, _mm512_set1_epi8, _mm512_set1_epi32,
    _mm512_setzero_si512, _mm512_storeu_si512, _mm512_xor_si512,
};

use tinyonnx_layout::q8;

/// Panels a pass keeps in registers (eight accumulators).
const BLOCK: usize = 8;

/// The raw sums `sum_r x[r] * w[r][c]` of the first `panels` panels of `w` over the
/// `k` bytes of `x` (`signed`: they are i8, else u8), handed to `each(panel, sums)`.
/// `colsum[j]`: the sum of stored column `j` (0 where it has none).
///
/// # Panics
/// When `x` holds fewer than `k` bytes or `w` fewer than `panels` panels of
/// `q8::groups(k)` groups of 16 bytes.
///
/// # Safety
/// The CPU must have AVX-512F, BW and VNNI ([`super::cpu::vnni`]).
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub unsafe fn panel_sums(
    x: &[u8],
    k: usize,
    signed: bool,
    w: &[i8],
    panels: usize,
    colsum: &[i32],
    mut each: impl FnMut(usize, [i32; q8::PANEL]),
) {
    check_lengths(x, k, w, panels);
    blocks(panels, |p, n| {
        // Safety: the CPU has the features (this function's contract); `x` and `w` hold
        // what `block` reads (checked above) and `p + n <= panels`.
        unsafe {
            match n {
                BLOCK => block::<BLOCK>(x, k, signed, w, p, colsum, &mut each),
                4 => block::<4>(x, k, signed, w, p, colsum, &mut each),
                2 => block::<2>(x, k, signed, w, p, colsum, &mut each),
                _ => block::<1>(x, k, signed, w, p, colsum, &mut each),
            }
        }
    });
}

/// Panics unless `x` holds `k` bytes and `w` `panels` panels of `q8::groups(k)` groups.
fn check_lengths(x: &[u8], k: usize, w: &[i8], panels: usize) {
    assert!(x.len() >= k, "q8 panel sums: x too short");
    assert!(
        panels
            .checked_mul(q8::groups(k) * 4 * q8::PANEL)
            .is_some_and(|l| l <= w.len()),
        "q8 panel sums: w too short"
    );
}

/// The `L` activations of `x` from `from` on, zeros past `k` (their weights are zero):
/// a whole run as one fixed-size load, only the last, cut one copied by length (a
/// copy of variable length is a call: per group, it tripled the AVX2 products' time).
#[inline(always)]
fn activations<const L: usize>(x: &[u8], from: usize, k: usize) -> [u8; L] {
    let run = x.get(from..(from + L).min(k)).unwrap_or_default();
    <[u8; L]>::try_from(run).unwrap_or_else(|_| {
        let mut bytes = [0u8; L];
        bytes[..run.len()].copy_from_slice(run);
        bytes
    })
}

/// Calls `run(first panel, n)` over `panels` panels in blocks of `n` = [`BLOCK`], then
/// the rest in blocks of four, two and one (a convolution's group has few panels).
#[inline(always)]
fn blocks(panels: usize, mut run: impl FnMut(usize, usize)) {
    let mut p = 0;
    for n in [BLOCK, 4, 2, 1] {
        while p + n <= panels {
            run(p, n);
            p += n;
        }
    }
}

/// Panels `p0..p0 + N` of [`panel_sums`].
///
/// # Safety
/// As [`panel_sums`] after its checks, and `p0 + N` at most its `panels`.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[inline]
unsafe fn block<const N: usize>(
    x: &[u8],
    k: usize,
    signed: bool,
    w: &[i8],
    p0: usize,
    colsum: &[i32],
    each: &mut impl FnMut(usize, [i32; q8::PANEL]),
) {
    let groups = q8::groups(k);
    let panel = groups * 4 * q8::PANEL;
    // Lane 4 i + c takes the activations of group i.
    let spread = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    let offset = _mm512_set1_epi8(-128);
    let mut acc: [__m512i; N] = [_mm512_setzero_si512(); N];
    let mut g = 0;
    while g < groups {
        let take = (groups - g).min(4);
        // The row's bytes of these groups.
        let bytes = activations::<16>(x, 4 * g, k);
        // Safety: `bytes` holds the 16 bytes the load reads.
        let xv = unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) };
        let mut xv = _mm512_permutexvar_epi32(spread, _mm512_castsi128_si512(xv));
        if signed {
            xv = _mm512_xor_si512(xv, offset);
        }
        let mask: u16 = if take == 4 {
            u16::MAX
        } else {
            (1 << (4 * take)) - 1
        };
        for (q, a) in acc.iter_mut().enumerate() {
            let at = (p0 + q) * panel + g * 4 * q8::PANEL;
            // Safety: the lanes the mask keeps are the `take` groups of panel `p0 + q`
            // from group `g`, inside `w` (the contract: the panel's `panel` bytes);
            // masked lanes are not read.
            let wv = unsafe { _mm512_maskz_loadu_epi32(mask, w.as_ptr().add(at).cast()) };
            *a = _mm512_dpbusd_epi32(*a, xv, wv);
        }
        g += 4;
    }
    for (q, a) in acc.iter().enumerate() {
        let s = _mm_add_epi32(
            _mm_add_epi32(
                _mm512_extracti32x4_epi32::<0>(*a),
                _mm512_extracti32x4_epi32::<1>(*a),
            ),
            _mm_add_epi32(
                _mm512_extracti32x4_epi32::<2>(*a),
                _mm512_extracti32x4_epi32::<3>(*a),
            ),
        );
        let mut sums = [0i32; q8::PANEL];
        // Safety: `sums` holds the four i32 the store writes.
        unsafe { _mm_storeu_si128(sums.as_mut_ptr().cast(), s) };
        let pi = p0 + q;
        if signed {
            for (c, v) in sums.iter_mut().enumerate() {
                let cs = colsum.get(pi * q8::PANEL + c).copied().unwrap_or(0);
                *v = v.wrapping_sub(cs.wrapping_mul(128));
            }
        }
        each(pi, sums);
    }
}

/// [`panel_sums`] on AVX2 for CPUs without VNNI: the same sums, exactly (no offset of
/// signed activations, so no column sums).
///
/// # Panics
/// As [`panel_sums`].
///
/// # Safety
/// The CPU must have AVX2 ([`super::cpu::avx2`]).
#[target_feature(enable = "avx2")]
pub unsafe fn panel_sums_avx2(
    x: &[u8],
    k: usize,
    signed: bool,
    w: &[i8],
    panels: usize,
    mut each: impl FnMut(usize, [i32; q8::PANEL]),
) {
    check_lengths(x, k, w, panels);
    blocks(panels, |p, n| {
        // Safety: the CPU has AVX2 (this function's contract); `x` and `w` hold what
        // `block_avx2` reads (checked above) and `p + n <= panels`.
        unsafe {
            match n {
                BLOCK => block_avx2::<BLOCK>(x, k, signed, w, p, &mut each),
                4 => block_avx2::<4>(x, k, signed, w, p, &mut each),
                2 => block_avx2::<2>(x, k, signed, w, p, &mut each),
                _ => block_avx2::<1>(x, k, signed, w, p, &mut each),
            }
        }
    });
}

/// Panels `p0..p0 + N` of [`panel_sums_avx2`].
///
/// # Safety
/// As [`panel_sums_avx2`] after its checks, and `p0 + N` at most its `panels`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn block_avx2<const N: usize>(
    x: &[u8],
    k: usize,
    signed: bool,
    w: &[i8],
    p0: usize,
    each: &mut impl FnMut(usize, [i32; q8::PANEL]),
) {
    let groups = q8::groups(k);
    let panel = groups * 4 * q8::PANEL;
    let mut acc: [__m256i; N] = [_mm256_setzero_si256(); N];
    for g in 0..groups {
        // The group's four activations as 16-bit values repeated for the four columns.
        let xv = _mm_cvtsi32_si128(i32::from_le_bytes(activations::<4>(x, 4 * g, k)));
        let xv = if signed {
            _mm_cvtepi8_epi16(xv)
        } else {
            _mm_cvtepu8_epi16(xv)
        };
        let xv = _mm256_broadcastq_epi64(xv);
        for (q, a) in acc.iter_mut().enumerate() {
            let at = (p0 + q) * panel + g * 4 * q8::PANEL;
            // Safety: the group's 16 bytes of panel `p0 + q` lie inside the panel, which
            // is inside `w` (the contract).
            let wv = unsafe { _mm_loadu_si128(w.as_ptr().add(at).cast()) };
            // Lanes 2c and 2c + 1: column c's products of rows (0, 1) and (2, 3).
            *a = _mm256_add_epi32(*a, _mm256_madd_epi16(xv, _mm256_cvtepi8_epi16(wv)));
        }
    }
    for (q, a) in acc.iter().enumerate() {
        // Pairs added: columns (0, 1, 0, 1) in the low half, (2, 3, 2, 3) in the high.
        let h = _mm256_hadd_epi32(*a, *a);
        let s = _mm_unpacklo_epi64(_mm256_castsi256_si128(h), _mm256_extracti128_si256::<1>(h));
        let mut sums = [0i32; q8::PANEL];
        // Safety: `sums` holds the four i32 the store writes.
        unsafe { _mm_storeu_si128(sums.as_mut_ptr().cast(), s) };
        each(p0 + q, sums);
    }
}

/// Output positions one pass of [`position_sums`] takes: one per 32-bit lane.
pub const POSITIONS: usize = 16;

/// The raw sums of [`POSITIONS`] patches (a convolution's output positions) with each
/// of the first `n` columns of `w` (packed as for [`panel_sums`], `groups` groups of four
/// rows), handed to `each(column, sums)` with lane `p` for patch `p`. `patches` holds
/// the patches by groups of four bytes, bytes `64 g + 4 p..64 g + 4 p + 4` group `g` of
/// patch `p`, unsigned (signed activations offset by 128 by the caller, which then takes
/// `128 * colsum` off). One `VPDPBUSD` multiplies a group of the sixteen patches with one
/// column's four weights broadcast: a weight is read once per sixteen positions (through
/// [`panel_sums`], once per position), the accumulators of eight columns stay in
/// registers, and each column's sums come out in position order.
///
/// # Panics
/// When `patches` holds fewer than `groups * 64` bytes or `w` fewer than the panels of
/// `n` columns.
///
/// # Safety
/// The CPU must have AVX-512F, BW and VNNI ([`super::cpu::vnni`]).
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub unsafe fn position_sums(
    patches: &[u8],
    groups: usize,
    w: &[i8],
    n: usize,
    mut each: impl FnMut(usize, &[i32; POSITIONS]),
) {
    // Columns past `n` up to the panels' end hold zero weights: read, not handed on.
    let padded = check_positions(patches, groups, w, n);
    let mut j0 = 0;
    while j0 + 8 <= padded {
        // Safety: the features (this function's contract); `j0 + 8 <= padded` and the
        // lengths asserted above.
        unsafe { columns::<8>(patches, groups, w, (j0, n), &mut each) };
        j0 += 8;
    }
    if j0 < padded {
        // Safety: as above; `padded - j0` is a multiple of `q8::PANEL` below 8.
        unsafe { columns::<{ q8::PANEL }>(patches, groups, w, (j0, n), &mut each) };
    }
}

/// Columns `j0..j0 + C` of [`position_sums`] (those below `n` handed on).
///
/// # Safety
/// As [`position_sums`] after its checks, and `j0 + C` at most its padded columns.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
#[inline]
unsafe fn columns<const C: usize>(
    patches: &[u8],
    groups: usize,
    w: &[i8],
    (j0, n): (usize, usize),
    each: &mut impl FnMut(usize, &[i32; POSITIONS]),
) {
    let panel = groups * 4 * q8::PANEL;
    let mut acc: [__m512i; C] = [_mm512_setzero_si512(); C];
    for g in 0..groups {
        // Safety: `g < groups`: the 64 bytes from `g * 64` lie in `patches`.
        let xv = unsafe { _mm512_loadu_si512(patches.as_ptr().add(g * 64).cast()) };
        for (c, a) in acc.iter_mut().enumerate() {
            let j = j0 + c;
            // Column `j`'s four weights of group `g`: lane `4 g + j % 4` of its panel.
            let at = (j / q8::PANEL) * panel + (g * q8::PANEL + j % q8::PANEL) * 4;
            // Safety: `j` lies in the panels `w` holds (the contract), and the word at
            // `at` inside its panel of `panel` bytes.
            let wd = unsafe { w.as_ptr().add(at).cast::<i32>().read_unaligned() };
            *a = _mm512_dpbusd_epi32(*a, xv, _mm512_set1_epi32(wd));
        }
    }
    for (c, a) in acc.iter().enumerate() {
        if j0 + c < n {
            let mut sums = [0i32; POSITIONS];
            // Safety: `sums` holds the sixteen i32 the store writes.
            unsafe { _mm512_storeu_si512(sums.as_mut_ptr().cast(), *a) };
            each(j0 + c, &sums);
        }
    }
}

/// [`position_sums`] on AVX2 for CPUs without VNNI: the same sums of the same unsigned
/// patches, exactly. A patch's group of four bytes splits into the 16-bit pairs
/// (bytes 0 and 2, bytes 1 and 3), each multiplied with the column's weights of the
/// same rows, sign-extended from the broadcast word, by `VPMADDWD` (pairs of products
/// added into i32 lanes, which they cannot leave: `2 * 255 * 128` fits). Four columns a
/// pass: their eight accumulators (two per column, positions 0-7 and 8-15) and the
/// group's four halves of patches fill the sixteen registers.
///
/// # Panics
/// As [`position_sums`].
///
/// # Safety
/// The CPU must have AVX2 ([`super::cpu::avx2`]).
#[target_feature(enable = "avx2")]
pub unsafe fn position_sums_avx2(
    patches: &[u8],
    groups: usize,
    w: &[i8],
    n: usize,
    mut each: impl FnMut(usize, &[i32; POSITIONS]),
) {
    let padded = check_positions(patches, groups, w, n);
    for j0 in (0..padded).step_by(q8::PANEL) {
        // Safety: the CPU has AVX2 (this function's contract); `j0 + PANEL <= padded`
        // and the lengths checked above.
        unsafe { panel_avx2(patches, groups, w, (j0, n), &mut each) };
    }
}

/// Panics unless `patches` holds `groups` groups of [`POSITIONS`] patches and `w` the
/// panels of `n` columns; returns the columns those panels hold.
fn check_positions(patches: &[u8], groups: usize, w: &[i8], n: usize) -> usize {
    assert!(
        groups
            .checked_mul(4 * POSITIONS)
            .is_some_and(|l| l <= patches.len()),
        "q8 position sums: patches too short"
    );
    let panels = n.div_ceil(q8::PANEL);
    assert!(
        panels
            .checked_mul(groups * 4 * q8::PANEL)
            .is_some_and(|l| l <= w.len()),
        "q8 position sums: w too short"
    );
    panels * q8::PANEL
}

/// Columns `j0..j0 + 4` (one panel) of [`position_sums_avx2`], those below `n` handed on.
///
/// # Safety
/// As [`position_sums_avx2`] after its checks, and `j0 + 4` at most its padded columns.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn panel_avx2(
    patches: &[u8],
    groups: usize,
    w: &[i8],
    (j0, n): (usize, usize),
    each: &mut impl FnMut(usize, &[i32; POSITIONS]),
) {
    let panel = groups * 4 * q8::PANEL;
    let low = _mm256_set1_epi16(0xff);
    let mut acc = [[_mm256_setzero_si256(); 2]; q8::PANEL];
    for g in 0..groups {
        // Positions 0-7 and 8-15: bytes 0 and 2 of each patch's group (`even`), 1 and 3
        // (`odd`), as 16-bit values.
        let half = |h: usize| {
            // Safety: `g < groups`: the 32 bytes from `g * 64 + 32 h` lie in `patches`
            // (checked by the caller).
            let v = unsafe { _mm256_loadu_si256(patches.as_ptr().add(g * 64 + 32 * h).cast()) };
            (_mm256_and_si256(v, low), _mm256_srli_epi16::<8>(v))
        };
        let (lo, hi) = (half(0), half(1));
        for (c, a) in acc.iter_mut().enumerate() {
            let at = (j0 / q8::PANEL) * panel + (g * q8::PANEL + c) * 4;
            // Safety: column `j0 + c` lies in the panels `w` holds (the contract), and
            // the word at `at` inside its panel of `panel` bytes.
            let wd = unsafe { w.as_ptr().add(at).cast::<i32>().read_unaligned() };
            let wv = _mm256_set1_epi32(wd);
            let even = _mm256_srai_epi16::<8>(_mm256_slli_epi16::<8>(wv));
            let odd = _mm256_srai_epi16::<8>(wv);
            for (s, x) in a.iter_mut().zip([lo, hi]) {
                let p = _mm256_add_epi32(_mm256_madd_epi16(x.0, even), _mm256_madd_epi16(x.1, odd));
                *s = _mm256_add_epi32(*s, p);
            }
        }
    }
    for (c, a) in acc.iter().enumerate() {
        if j0 + c < n {
            let mut sums = [0i32; POSITIONS];
            // Safety: `sums` holds the sixteen i32 the two stores write.
            unsafe {
                _mm256_storeu_si256(sums.as_mut_ptr().cast(), a[0]);
                _mm256_storeu_si256(sums.as_mut_ptr().add(8).cast(), a[1]);
            }
            each(j0 + c, &sums);
        }
    }
}

/// Sixteen patches in the order [`position_sums`] reads, from their values value by
/// value: `row(e)` holds value `e` of each patch (lane `q`: patch `q`), for `e` below
/// `4 * groups`; byte `64 (e / 4) + 4 q + e % 4` of `out` gets it, xor `flip`. Four
/// rows at a time through a 4 x 16 byte transpose (two rounds of unpacking).
///
/// # Panics
/// When `out` holds fewer than `64 * groups` bytes.
#[inline(always)]
pub fn interleave16(row: impl Fn(usize) -> [u8; 16], groups: usize, flip: u8, out: &mut [u8]) {
    use core::arch::x86_64::{
        __m128i, _mm_set1_epi8, _mm_unpackhi_epi8, _mm_unpackhi_epi16, _mm_unpacklo_epi8,
        _mm_unpacklo_epi16, _mm_xor_si128,
    };
    let out = &mut out[..64 * groups];
    // Safety: SSE2 is part of the x86-64 baseline, on every CPU this code runs on (the
    // blocks below: the same, and the loads and stores touch the sixteen bytes of
    // `bytes` and `dst`).
    let flip = unsafe { _mm_set1_epi8(flip as i8) };
    let load = |e: usize| -> __m128i {
        let bytes = row(e);
        // Safety: as above.
        unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) }
    };
    for (g, chunk) in out.chunks_exact_mut(64).enumerate() {
        let (r0, r1, r2, r3) = (
            load(4 * g),
            load(4 * g + 1),
            load(4 * g + 2),
            load(4 * g + 3),
        );
        // Safety: as above.
        let quads = unsafe {
            let (lo01, hi01) = (_mm_unpacklo_epi8(r0, r1), _mm_unpackhi_epi8(r0, r1));
            let (lo23, hi23) = (_mm_unpacklo_epi8(r2, r3), _mm_unpackhi_epi8(r2, r3));
            [
                _mm_unpacklo_epi16(lo01, lo23),
                _mm_unpackhi_epi16(lo01, lo23),
                _mm_unpacklo_epi16(hi01, hi23),
                _mm_unpackhi_epi16(hi01, hi23),
            ]
        };
        for (dst, v) in chunk.chunks_exact_mut(16).zip(quads) {
            // Safety: as above.
            unsafe { _mm_storeu_si128(dst.as_mut_ptr().cast(), _mm_xor_si128(v, flip)) };
        }
    }
}
