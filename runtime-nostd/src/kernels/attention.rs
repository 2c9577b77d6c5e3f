//! Transformer building blocks: `RotaryEmbedding`.

/// `RotaryEmbedding` of `x` holding `[batch, heads, seq, head]` (`heads_first`) or
/// `[batch, seq, heads, head]`: the first `rd` values of each head vector turn by the
/// angle of its position, pairs `(i, i + rd/2)` or, `interleaved`, `(2i, 2i + 1)`:
/// `(c x1 - s x2, s x1 + c x2)` with `c, s` from row `p` of the caches (`rd / 2`
/// values a row), `p = pos[b, s]` or, without `pos`, `b * seq + s`. A position outside
/// the caches' `rows` gives NaN for that head vector. `g` is `[batch, heads, seq, head,
/// rd, rows]`.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub fn rotary_embedding(
    x: &[f32],
    cos: &[f32],
    sin: &[f32],
    pos: Option<&[i64]>,
    y: &mut [f32],
    g: [usize; 6],
    heads_first: bool,
    interleaved: bool,
) {
    let [batch, heads, seq, head, rd, rows] = g;
    let half = rd / 2;
    let (x, y) = (
        &x[..batch * heads * seq * head],
        &mut y[..batch * heads * seq * head],
    );
    for b in 0..batch {
        for s in 0..seq {
            let row = match pos {
                Some(p) => usize::try_from(p[b * seq + s]).ok().filter(|&r| r < rows),
                None => Some(b * seq + s),
            };
            for h in 0..heads {
                let at = if heads_first {
                    ((b * heads + h) * seq + s) * head
                } else {
                    ((b * seq + s) * heads + h) * head
                };
                let (xv, yv) = (&x[at..at + head], &mut y[at..at + head]);
                yv[rd..].copy_from_slice(&xv[rd..]);
                let Some(row) = row else {
                    yv[..rd].fill(f32::NAN);
                    continue;
                };
                let (c, sn) = (&cos[row * half..][..half], &sin[row * half..][..half]);
                for i in 0..half {
                    let (i1, i2) = if interleaved {
                        (2 * i, 2 * i + 1)
                    } else {
                        (i, i + half)
                    };
                    let (x1, x2) = (xv[i1], xv[i2]);
                    yv[i1] = c[i] * x1 - sn[i] * x2;
                    yv[i2] = sn[i] * x1 + c[i] * x2;
                }
            }
        }
    }
}
