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

/// A length error of `which`.
fn length(which: Port, expected: usize, got: usize) -> RunError {
    RunError::Length {
        which,
        expected,
        got,
    }
}

/// A type error of `which`.
fn dtype(which: Port, expected: &'static str, got: &'static str) -> RunError {
    RunError::DType {
        which,
        expected,
        got,
    }
}

#[test]
fn each_mismatch_is_named() {
    use {Port::Input as In, Port::Output as Out, TensorMut as M, TensorRef as R};
    let (x, k) = ([1.0f32; 3], [1i64; 2]);
    let (short, k3) = ([1.0f32; 2], [1i64; 3]);
    let (mut y, mut y2, mut yi) = ([7.0f32; 1], [7.0f32; 2], [7i64; 1]);
    let count = |which, expected, got| RunError::Count {
        which,
        expected,
        got,
    };
    let cases = [
        (
            run(&[R::F32(&x)], &mut [M::F32(&mut y)]),
            count("inputs", 2, 1),
        ),
        (
            run(&[R::F32(&x), R::I64(&k)], &mut []),
            count("outputs", 1, 0),
        ),
        (
            run(&[R::F32(&short), R::I64(&k)], &mut [M::F32(&mut y)]),
            length(In(0), 3, 2),
        ),
        (
            run(&[R::F32(&x), R::I64(&k3)], &mut [M::F32(&mut y)]),
            length(In(1), 2, 3),
        ),
        (
            run(&[R::F32(&x), R::F32(&x)], &mut [M::F32(&mut y)]),
            dtype(In(1), "i64", "f32"),
        ),
        (
            run(&[R::F32(&x), R::I64(&k)], &mut [M::F32(&mut y2)]),
            length(Out(0), 1, 2),
        ),
        (
            run(&[R::F32(&x), R::I64(&k)], &mut [M::I64(&mut yi)]),
            dtype(Out(0), "f32", "i64"),
        ),
    ];
    for (got, want) in cases {
        assert_eq!(got, Err(want));
    }
    assert_eq!((y, y2, yi), ([7.0], [7.0; 2], [7]), "nothing written");
}

#[test]
fn run_f32_names_the_port_too() {
    let mut arena = Plain::arena();
    let mut y = [0.0f32; 4];
    assert_eq!(
        Plain::run_f32(arena.as_bytes_mut(), &[&[1.0; 5]], &mut [&mut y]),
        Err(length(Port::Input(0), 4, 5))
    );
    assert_eq!(
        Plain::run_f32(arena.as_bytes_mut(), &[&[1.0; 4]], &mut [&mut y[..3]]),
        Err(length(Port::Output(0), 4, 3))
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
