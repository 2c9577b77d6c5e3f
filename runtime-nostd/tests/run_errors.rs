//! What `Model::run` and `Model::run_f32` return for arguments that do not match the
//! model: each check's error names the port, what the model declares and what it got,
//! and nothing is written.

use tinyonnx::{Model, Port, RunError, TensorMut, TensorRef};

tinyonnx::onnx_model! {
    /// Two inputs of different types and lengths, one output.
    model Two {
        input x: f32[3];
        input k: i64[2];
        output y = Mul(ReduceSum(x, keepdims = 1), Cast(ReduceSum(k, keepdims = 1), to = f32));
    }
}

tinyonnx::onnx_model! {
    model Plain {
        input x: f32[4];
        output y = Relu(x);
    }
}

fn run(ins: &[TensorRef<'_>], outs: &mut [TensorMut<'_>]) -> Result<(), RunError> {
    let mut arena = Two::arena();
    Two::run(arena.as_bytes_mut(), ins, outs)
}

#[test]
fn matching_ports_run() {
    let (x, k) = ([1.0f32, 2.0, 3.0], [2i64, 5]);
    let mut y = [0.0f32; 1];
    let ok = run(
        &[TensorRef::F32(&x), TensorRef::I64(&k)],
        &mut [TensorMut::F32(&mut y)],
    );
    assert_eq!(ok, Ok(()));
    assert_eq!(y, [42.0]);
}

#[test]
fn each_mismatch_is_named() {
    let (x, k) = ([1.0f32; 3], [1i64; 2]);
    let (short, k3) = ([1.0f32; 2], [1i64; 3]);
    let mut y = [7.0f32; 1];
    let mut y2 = [7.0f32; 2];
    let mut yi = [7i64; 1];
    let cases: [(Result<(), RunError>, RunError); 6] = [
        (
            run(&[TensorRef::F32(&x)], &mut [TensorMut::F32(&mut y)]),
            RunError::Count {
                which: "inputs",
                expected: 2,
                got: 1,
            },
        ),
        (
            run(&[TensorRef::F32(&x), TensorRef::I64(&k)], &mut []),
            RunError::Count {
                which: "outputs",
                expected: 1,
                got: 0,
            },
        ),
        (
            run(
                &[TensorRef::F32(&short), TensorRef::I64(&k)],
                &mut [TensorMut::F32(&mut y)],
            ),
            RunError::Length {
                which: Port::Input(0),
                expected: 3,
                got: 2,
            },
        ),
        (
            run(
                &[TensorRef::F32(&x), TensorRef::I64(&k3)],
                &mut [TensorMut::F32(&mut y)],
            ),
            RunError::Length {
                which: Port::Input(1),
                expected: 2,
                got: 3,
            },
        ),
        (
            run(
                &[TensorRef::F32(&x), TensorRef::F32(&x)],
                &mut [TensorMut::F32(&mut y)],
            ),
            RunError::DType {
                which: Port::Input(1),
                expected: "i64",
                got: "f32",
            },
        ),
        (
            run(
                &[TensorRef::F32(&x), TensorRef::I64(&k)],
                &mut [TensorMut::F32(&mut y2)],
            ),
            RunError::Length {
                which: Port::Output(0),
                expected: 1,
                got: 2,
            },
        ),
    ];
    for (got, want) in cases {
        assert_eq!(got, Err(want));
    }
    assert_eq!(
        run(
            &[TensorRef::F32(&x), TensorRef::I64(&k)],
            &mut [TensorMut::I64(&mut yi)]
        ),
        Err(RunError::DType {
            which: Port::Output(0),
            expected: "f32",
            got: "i64",
        })
    );
    assert_eq!((y, y2, yi), ([7.0], [7.0; 2], [7]), "nothing written");
}

#[test]
fn run_f32_names_the_port_too() {
    let mut arena = Plain::arena();
    let mut y = [0.0f32; 4];
    assert_eq!(
        Plain::run_f32(arena.as_bytes_mut(), &[&[1.0; 5]], &mut [&mut y]),
        Err(RunError::Length {
            which: Port::Input(0),
            expected: 4,
            got: 5,
        })
    );
    assert_eq!(
        Plain::run_f32(arena.as_bytes_mut(), &[&[1.0; 4]], &mut [&mut y[..3]]),
        Err(RunError::Length {
            which: Port::Output(0),
            expected: 4,
            got: 3,
        })
    );
    assert_eq!(
        Plain::run_f32(
            arena.as_bytes_mut(),
            &[&[-1.0, 2.0, -3.0, 4.0]],
            &mut [&mut y]
        ),
        Ok(())
    );
    assert_eq!(y, [0.0, 2.0, 0.0, 4.0]);
}

#[test]
fn success_is_the_zero_tag() {
    // `RunError`'s tags start at 1 so that `Ok(())` is a zero (a store and a test of
    // zero in every caller); a change of its representation would lose that silently.
    assert_eq!(size_of::<Result<(), RunError>>(), size_of::<RunError>());
    let ok: Result<(), RunError> = Ok(());
    // Safety: the first byte of `Result<(), RunError>` is `RunError`'s `u8` tag
    // (`repr(u8)`), whose niche holds `Ok`; that byte is written for `Ok(())` too, so
    // reading it reads an initialized `u8`.
    let tag = unsafe { *(&raw const ok).cast::<u8>() };
    assert_eq!(tag, 0);
}
