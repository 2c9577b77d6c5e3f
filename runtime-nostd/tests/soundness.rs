//! Regression tests for undefined behaviour that safe code could reach, written so that
//! Miri (`cargo xtask miri`) checks them too: the arena buffer a caller passes, outputs
//! a custom kernel leaves unwritten, and stack use that grew with the outputs.

use tinyonnx::{CustomKernel, Model, RunError, TensorMut, TensorRef};

tinyonnx::onnx_model! {
    /// Two intermediates of 27 f32 values: an arena of 216 bytes, not a multiple of 16
    /// (an `Arena<216>` is 224 bytes).
    model Odd {
        input x: f32[27];
        let a = Relu(x);
        let b = Neg(a);
        output y = Add(a, b);
    }
}

tinyonnx::onnx_model! {
    /// No intermediate tensor: an arena of 0 bytes.
    model Empty {
        input x: f32[3];
        output y = Relu(x);
    }
}

/// A 16-byte aligned buffer of `n` bytes (inside a larger allocation of u128s), filled
/// with `fill`.
fn aligned(words: &mut Vec<u128>, n: usize, fill: u8) -> &mut [u8] {
    *words = vec![u128::from_ne_bytes([fill; 16]); n.div_ceil(16) + 1];
    let bytes: &mut [u8] = bytemuck_bytes(words);
    &mut bytes[..n]
}

fn bytemuck_bytes(words: &mut [u128]) -> &mut [u8] {
    let len = size_of_val(words);
    // Safety: u128 has no padding and every byte pattern is a valid u8; the slice
    // borrows `words` exclusively for its lifetime.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), len) }
}

#[test]
fn an_arena_of_exactly_arena_bytes_is_used_and_not_read_past() {
    assert_eq!(Odd::ARENA_BYTES, 216);
    let x: Vec<f32> = (0..27).map(|i| i as f32 - 13.0).collect();
    let mut y = [1.0f32; 27];
    let mut words = Vec::new();
    // Exactly 216 bytes: before the fix this buffer was viewed as an `Arena<216>`, a
    // reference to 224 bytes (Miri: out-of-bounds reference).
    let arena = aligned(&mut words, 216, 0xAB);
    Odd::run_f32(arena, &[&x], &mut [&mut y]).unwrap();
    assert!(y.iter().all(|&v| v == 0.0), "{y:?}");
    // One byte short, and misaligned: refused with the sizes.
    let arena = aligned(&mut words, 216, 0);
    assert_eq!(
        Odd::run_f32(&mut arena[..215], &[&x], &mut [&mut y]),
        Err(RunError::Arena {
            needed: 216,
            got: 215
        })
    );
    let arena = aligned(&mut words, 217, 0);
    assert!(matches!(
        Odd::run_f32(&mut arena[1..], &[&x], &mut [&mut y]),
        Err(RunError::Arena { needed: 216, .. })
    ));
}

#[test]
fn the_arena_s_own_bytes_can_be_passed_to_run() {
    let mut arena = Odd::arena();
    let x = [2.0f32; 27];
    let mut y = [1.0f32; 27];
    Odd::run_f32(arena.as_bytes_mut(), &[&x], &mut [&mut y]).unwrap();
    assert_eq!(y, [0.0; 27]);
}

#[test]
fn a_model_without_intermediates_runs_on_an_empty_arena() {
    assert_eq!(Empty::ARENA_BYTES, 0);
    let mut y = [0.0f32; 3];
    Empty::run_f32(&mut [], &[&[-1.0, 0.5, 2.0]], &mut [&mut y]).unwrap();
    assert_eq!(y, [0.0, 0.5, 2.0]);
    let mut y = [0.0f32; 3];
    Empty::run(
        &mut [],
        &[TensorRef::F32(&[1.0, -2.0, 3.0])],
        &mut [TensorMut::F32(&mut y)],
    )
    .unwrap();
    assert_eq!(y, [1.0, 0.0, 3.0]);
}

/// A custom kernel that writes nothing: legal for a safe trait, so the forward pass
/// must not read what it left as an invalid `bool`.
struct Lazy;

impl CustomKernel for Lazy {
    fn run(_: &[TensorRef<'_>], _: &mut [TensorMut<'_>]) {}
}

tinyonnx::onnx_model! {
    model LazyFlags {
        custom Flags(x) -> y { domain = "com.example.test"; kernel = Lazy; y: bool[8]; }
        input x: f32[8];
        let f = Flags(x);
        output y = Not(f);
    }
}

#[test]
fn outputs_a_custom_kernel_leaves_unwritten_read_as_zero() {
    let mut words = Vec::new();
    // Stale bytes that are no valid bool.
    let arena = aligned(&mut words, LazyFlags::ARENA_BYTES, 0x5A);
    let mut y = [false; 8];
    LazyFlags::run(
        arena,
        &[TensorRef::F32(&[1.0; 8])],
        &mut [TensorMut::Bool(&mut y)],
    )
    .unwrap();
    assert_eq!(y, [true; 8]);
}

tinyonnx::onnx_model! {
    /// 8 MiB in and out, nothing in between.
    model Wide {
        input x: f32[2097152];
        output y = Relu(x);
    }
}

#[test]
// Not under Miri: 8 MiB of elements would take it hours, and the stack bound needs
// no Miri (the plain test run checks it).
#[cfg(not(miri))]
fn run_takes_no_stack_for_its_outputs() {
    // The outputs used to be returned by value from the forward pass and copied: 8 MiB
    // on a stack of 256 KiB aborted the process.
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let x: Vec<f32> = (0..2_097_152).map(|i| (i % 7) as f32 - 3.0).collect();
            let mut y = vec![0.0f32; x.len()];
            Wide::run_f32(&mut [], &[&x], &mut [&mut y]).unwrap();
            let mut z = vec![0.0f32; x.len()];
            Wide::run(
                &mut [],
                &[TensorRef::F32(&x)],
                &mut [TensorMut::F32(&mut z)],
            )
            .unwrap();
            let mut seen = 0;
            Wide::run_traced(
                &mut [],
                &[TensorRef::F32(&x)],
                &mut [TensorMut::F32(&mut z)],
                &mut |_, _| seen += 1,
            )
            .unwrap();
            (x, y, z, seen)
        })
        .unwrap();
    let (x, y, z, seen) = handle.join().unwrap();
    assert!(x.iter().zip(&y).all(|(&a, &b)| b == a.max(0.0)));
    assert_eq!(y, z);
    assert_eq!(seen, 1);
}
