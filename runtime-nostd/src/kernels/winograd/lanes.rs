//! What the Winograd kernel's portable code and its AVX-512 transforms
//! (`arch::x86_64::winograd`) share: the lane order of a panel of tiles, the blocks
//! and products they pass, the transform matrices' rows.

use tinyonnx_layout::NR;

/// One panel of lanes, one value per tile.
pub(crate) type Lanes = [f32; NR];

/// First tile, tile count and tiles per row of a block.
pub(crate) type Block = (usize, usize, usize);

/// A pass's products: the blocks and their (block, row) strides.
pub(crate) type Products<'a> = (&'a [f32], (usize, usize));

/// The tile (offset from the panel's first) each lane holds. Not in order: this order
/// makes the stride-2 split of a window row one AVX shuffle (`every_other`) and the
/// output interleave two AVX unpacks (`interleave`); the products do not care.
pub(crate) const LANE_TILE: [usize; NR] = [0, 1, 4, 5, 2, 3, 6, 7];

/// The lane each tile (offset from the panel's first) is in: [`LANE_TILE`] inverted.
pub(crate) const TILE_LANE: [usize; NR] = {
    let mut lanes = [0; NR];
    let mut l = 0;
    while l < NR {
        lanes[LANE_TILE[l]] = l;
        l += 1;
    }
    lanes
};

/// `At`: output row `p` of a tile is `At[p]` times the rows of `O A`.
pub(crate) const AT: [[i8; 4]; 2] = [[1, 1, 1, 0], [0, 1, -1, -1]];

/// The window rows `i` (a bit each) `Bt` rows `a0..a0 + r` read: row 0 reads window rows
/// 0 and 2, rows 1 and 2 read 1 and 2, row 3 reads 1 and 3.
pub(crate) const fn window_rows(a0: usize, r: usize) -> u8 {
    const READS: [u8; 4] = [0b0101, 0b0110, 0b0110, 0b1010];
    let mut rows = 0;
    let mut a = a0;
    // (Passes past row 3 are never run but are instantiated: `if R == 1` is not a
    // `const` branch.)
    while a < a0 + r && a < 4 {
        rows |= READS[a];
        a += 1;
    }
    rows
}

/// The tile rows lanes `0..width` of a panel starting at tile `first` fall in: per row
/// `(ty, tx, ls, le)`, lanes `ls..le` holding tiles `(ty, tx..)`.
#[inline(always)]
pub(crate) fn segments(
    first: usize,
    width: usize,
    tiles_w: usize,
) -> impl Iterator<Item = (usize, usize, usize, usize)> {
    let mut ls = 0;
    core::iter::from_fn(move || {
        if ls >= width {
            return None;
        }
        let t = first + ls;
        let (ty, tx) = (t / tiles_w, t % tiles_w);
        let le = width.min(ls + tiles_w - tx);
        let seg = (ty, tx, ls, le);
        ls = le;
        Some(seg)
    })
}

/// `a - b`, `a + b` lane by lane (loops the compiler turns into vector operations;
/// `array::from_fn` would stay a call per lane).
#[inline(always)]
pub(crate) fn sub(a: &Lanes, b: &Lanes) -> Lanes {
    let mut r = *a;
    for (r, b) in r.iter_mut().zip(b) {
        *r -= b;
    }
    r
}

#[inline(always)]
pub(crate) fn add(a: &Lanes, b: &Lanes) -> Lanes {
    let mut r = *a;
    for (r, b) in r.iter_mut().zip(b) {
        *r += b;
    }
    r
}

/// `Bt` times four values: `[r0 - r2, r1 + r2, r2 - r1, r1 - r3]`.
#[inline(always)]
pub(crate) fn bt(r0: &Lanes, r1: &Lanes, r2: &Lanes, r3: &Lanes) -> [Lanes; 4] {
    [sub(r0, r2), add(r1, r2), sub(r2, r1), sub(r1, r3)]
}

/// `At` times four values: `[r0 + r1 + r2, r1 - r2 - r3]`.
#[inline(always)]
pub(crate) fn at_row(r0: &Lanes, r1: &Lanes, r2: &Lanes, r3: &Lanes) -> [Lanes; 2] {
    [add(r0, &add(r1, r2)), sub(&sub(r1, r2), r3)]
}
