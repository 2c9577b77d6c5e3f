//! Every example's forward pass depends on its inputs only: the same outputs from an
//! arena and output buffers of zeros and from ones of stale bytes, and from `run` and
//! `run_traced`. A kernel that read memory it had not written (its scratch, or its
//! output before writing it) would show here; under Miri (`cargo xtask miri`, a few
//! small models) so would any undefined behaviour on the way.

use tinyonnx::{TensorInfo, TensorMut, TensorRef, typed_testing};
use tinyonnx_examples::{Example, MODELS};

/// The models Miri runs: small ones that together cover the packed products, the
/// convolutions, recurrent layers, movement, control flow, custom kernels and integer
/// dtypes (the interpreter is about 10^4 times slower than a native run).
#[cfg(miri)]
const UNDER_MIRI: &[&str] = &[
    "LinearRegression",
    "Digits",
    // Its ONNX bytes built from `include_bytes!` (Miri runs no assembly).
    "DigitsNearest",
    "CustomZoo",
    "Standardize",
    "Classify",
    "IfGate",
    "LoopCell",
    "ScanRnn",
    "ReduceAttrZoo",
    "ConvZoo",
    "ConvTransposeZoo",
    "LstmZoo",
    "RnnZoo",
    "MoveZoo",
    "DtypeZoo",
];

/// One port's buffer of its declared element type.
enum Buf {
    F32(Vec<f32>),
    F64(Vec<f64>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    I8(Vec<i8>),
    U8(Vec<u8>),
    Bool(Vec<bool>),
}

impl Buf {
    /// A buffer of every byte `fill` (bool: `fill != 0`).
    fn new(t: &TensorInfo, fill: u8) -> Buf {
        let n = t.numel();
        match t.dtype {
            "f32" => Buf::F32(vec![f32::from_ne_bytes([fill; 4]); n]),
            "f64" => Buf::F64(vec![f64::from_ne_bytes([fill; 8]); n]),
            "i64" => Buf::I64(vec![i64::from_ne_bytes([fill; 8]); n]),
            "i32" => Buf::I32(vec![i32::from_ne_bytes([fill; 4]); n]),
            "i8" => Buf::I8(vec![fill as i8; n]),
            "u8" => Buf::U8(vec![fill; n]),
            "bool" => Buf::Bool(vec![fill != 0; n]),
            other => panic!("unknown dtype {other}"),
        }
    }

    fn as_mut(&mut self) -> TensorMut<'_> {
        match self {
            Buf::F32(v) => TensorMut::F32(v),
            Buf::F64(v) => TensorMut::F64(v),
            Buf::I64(v) => TensorMut::I64(v),
            Buf::I32(v) => TensorMut::I32(v),
            Buf::I8(v) => TensorMut::I8(v),
            Buf::U8(v) => TensorMut::U8(v),
            Buf::Bool(v) => TensorMut::Bool(v),
        }
    }

    /// The values as bits, so that NaN compares equal to itself.
    fn bits(&self) -> Vec<u64> {
        match self {
            Buf::F32(v) => v.iter().map(|x| u64::from(x.to_bits())).collect(),
            Buf::F64(v) => v.iter().map(|x| x.to_bits()).collect(),
            Buf::I64(v) => v.iter().map(|&x| x as u64).collect(),
            Buf::I32(v) => v.iter().map(|&x| x as u64).collect(),
            Buf::I8(v) => v.iter().map(|&x| x as u64).collect(),
            Buf::U8(v) => v.iter().map(|&x| u64::from(x)).collect(),
            Buf::Bool(v) => v.iter().map(|&x| u64::from(x)).collect(),
        }
    }
}

fn as_ref(b: &mut Buf) -> TensorRef<'_> {
    b.as_mut().into_ref()
}

/// Runs `m` on seeded inputs with an arena and output buffers filled with `fill`
/// (through `run_traced` when `traced`), returning the outputs' bits.
fn outputs(m: &Example, fill: u8, traced: bool) -> Vec<Vec<u64>> {
    let mut inputs: Vec<Buf> = m.info.inputs.iter().map(|t| Buf::new(t, 0)).collect();
    let mut state = 7;
    for b in &mut inputs {
        state = typed_testing::fill(state, b.as_mut(), 1.0);
    }
    let inputs: Vec<TensorRef<'_>> = inputs.iter_mut().map(as_ref).collect();
    let mut outs: Vec<Buf> = m.info.outputs.iter().map(|t| Buf::new(t, fill)).collect();
    // u128 words: 16-byte aligned on the hosts the tests run on.
    let mut words = vec![u128::from_ne_bytes([fill; 16]); m.info.arena_bytes.div_ceil(16)];
    let len = m.info.arena_bytes;
    // Safety: the u128s are plain bytes, borrowed exclusively for the slice's life.
    let arena = unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), len) };
    {
        let mut views: Vec<TensorMut<'_>> = outs.iter_mut().map(Buf::as_mut).collect();
        if traced {
            let mut seen = 0usize;
            (m.run_traced)(arena, &inputs, &mut views, &mut |_, _| seen += 1).unwrap();
        } else {
            (m.run_typed)(arena, &inputs, &mut views).unwrap();
        }
    }
    outs.iter().map(Buf::bits).collect()
}

#[test]
fn outputs_do_not_depend_on_stale_arena_bytes() {
    let mut ran = 0;
    for m in MODELS {
        #[cfg(miri)]
        if !UNDER_MIRI.contains(&m.info.name) {
            continue;
        }
        let zeroed = outputs(m, 0x00, false);
        assert_eq!(zeroed, outputs(m, 0xFF, false), "{}", m.info.name);
        assert_eq!(zeroed, outputs(m, 0x5A, true), "{} traced", m.info.name);
        ran += 1;
    }
    assert!(ran >= 8, "ran {ran} models");
}
