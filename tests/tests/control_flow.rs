//! Control flow against ONNX Runtime: both branches of an `if` taken on purpose, bodies
//! nested in bodies, integer and bool values carried and stacked, outer tensors and
//! formal inputs returned unchanged, several scanned inputs.

use tinyonnx_examples::{Example, example};
use tinyonnx_tests::{Provider, Values, compare_values, run_ort_values, session, tolerance};

tinyonnx::onnx_model! {
    /// Both branches return an outer tensor or a formal as is, one value twice, and an
    /// i64 count; the condition is a model input.
    model Branches {
        input flag: bool[];
        input x: f32[3, 4];
        weight w: f32[4, 4] = glorot_uniform(seed = 9);
        let shared = MatMul(x, w);
        let (a, b, n) = if flag {
            return (shared, shared, ReduceSum(Cast(Greater(x, 0.0), to = i64), keepdims = 0));
        } else {
            let t = Neg(shared);
            return (t, x, Size(x));
        };
        output out_a = Identity(a);
        output out_b = Relu(b);
        output out_n = Identity(n);
    }
}

tinyonnx::onnx_model! {
    /// A Scan whose body holds an If on the step's values and a Loop of 3 steps that
    /// carries an i64 counter and reads the scan's carried state; the scan also stacks
    /// a bool and an i64 output; two tensors are scanned together, one in reverse.
    model Nested {
        input xs: f32[5, 2, 3];
        input gs: f32[5, 3];
        input h0: f32[2, 3];
        weight w: f32[3, 3] = glorot_uniform(seed = 11);
        let scale = ReduceMean(gs, keepdims = 0);
        let (h, ys, pos, counts) = for (x_t, g_t) in (xs, rev(gs)) with (h = h0) {
            let z = Add(MatMul(x_t, w), Mul(h, g_t));
            let big = Greater(ReduceSum(z, keepdims = 0), 0.0);
            let picked = if big {
                return Tanh(z);
            } else {
                return Mul(Sigmoid(z), scale);
            };
            let (acc, k, steps) = for i in 0..3 with (acc = picked, k = Constant(value_int = 0)) {
                let next = Add(Mul(acc, 0.5), Mul(h, Cast(i, to = f32)));
                return (next, Add(k, i), Cast(Less(i, 1), to = i64));
            };
            return (acc, acc, big, Add(k, ReduceSum(steps, keepdims = 0)));
        };
        output h_last = Identity(h);
        output y = Identity(ys);
        output signs = Identity(pos);
        output count = Identity(counts);
    }
}

tinyonnx::onnx_model! {
    /// A Loop that carries a value it never changes (returned as the formal itself)
    /// and an If whose condition depends on the iteration number.
    model Counter {
        input x: f32[4];
        let (same, total, parity) = for i in 0..6 with (same = x, total = x) {
            let even = Less(i, 3);
            let step = if even {
                return Add(total, same);
            } else {
                return Sub(total, Mul(same, 0.25));
            };
            return (same, step, even);
        };
        output o_same = Identity(same);
        output o_total = Identity(total);
        output o_parity = Identity(parity);
    }
}

tinyonnx::onnx_model! {
    /// Carried values swapped every step (each output is the other formal), and a Scan
    /// that stacks its own slices back.
    model Swap {
        input x: f32[2, 3];
        input y: f32[2, 3];
        input seq: i32[4, 3];
        let (a, b) = for i in 0..3 with (a = x, b = y) {
            return (b, a);
        };
        let (last, copy) = for s_t in seq with (last = Constant(value_ints = [0, 0, 0])) {
            return (Cast(s_t, to = i64), s_t);
        };
        output oa = Identity(a);
        output ob = Identity(b);
        output o_last = Identity(last);
        output o_copy = Identity(copy);
    }
}

const MODELS: &[Example] = &[
    example::<Swap>(),
    example::<Branches>(),
    example::<Nested>(),
    example::<Counter>(),
];

fn check(ex: &Example, inputs: &[Values]) -> Vec<Values> {
    let mut sess = session(ex.onnx, Provider::from_env().unwrap()).unwrap();
    let expected = run_ort_values(&mut sess, &ex.info, inputs).unwrap();
    let ours = tinyonnx_tests::run_ours(ex, inputs).unwrap();
    for (k, (a, b)) in ours.iter().zip(&expected).enumerate() {
        let d = compare_values(a, b);
        assert!(
            d.max_scaled <= tolerance(a),
            "{} output `{}`: scaled diff {:e}\nours {a:?}\nort  {b:?}",
            ex.info.name,
            ex.info.outputs[k].name,
            d.max_scaled
        );
    }
    ours
}

#[test]
fn both_branches_match_onnx_runtime() {
    let ex = example::<Branches>();
    let x: Vec<f32> = (0..12).map(|i| (i as f32 - 5.5) / 3.0).collect();
    let taken = check(&ex, &[Values::Bool(vec![true]), Values::F32(x.clone())]);
    let other = check(&ex, &[Values::Bool(vec![false]), Values::F32(x)]);
    // The branches give different values, so a forward pass that ran the wrong one
    // would fail the comparison above.
    assert_ne!(taken[0], other[0]);
    assert_eq!(taken[2], Values::I64(vec![6]));
    assert_eq!(other[2], Values::I64(vec![12]));
}

#[test]
fn nested_bodies_match_onnx_runtime() {
    for ex in MODELS {
        for seed in [1, 2, 3, 4, 5] {
            let inputs = tinyonnx_tests::seeded_values(&ex.info, seed, 1.0).unwrap();
            check(ex, &inputs);
        }
    }
}

#[test]
fn the_nested_if_takes_both_branches() {
    // Over the seeds, the Scan's per-step condition is true and false at least once
    // each, so both branches of the inner If run.
    let ex = example::<Nested>();
    let (mut t, mut f) = (0, 0);
    for seed in [1, 2, 3, 4, 5] {
        let inputs = tinyonnx_tests::seeded_values(&ex.info, seed, 1.0).unwrap();
        let ours = tinyonnx_tests::run_ours(&ex, &inputs).unwrap();
        let Values::Bool(signs) = &ours[2] else {
            panic!("signs is bool");
        };
        t += signs.iter().filter(|&&s| s).count();
        f += signs.iter().filter(|&&s| !s).count();
    }
    assert!(t > 0 && f > 0, "taken {t}, not taken {f}");
}

#[test]
fn bodies_share_the_one_arena() {
    // The bodies live in their node's scratch region: the arena is planned at compile
    // time and the ONNX holds the subgraphs.
    for ex in MODELS {
        assert!(ex.info.arena_bytes >= ex.info.arena_lower_bound_bytes);
        assert!(ex.info.arena_bytes > 0, "{}", ex.info.name);
    }
}
