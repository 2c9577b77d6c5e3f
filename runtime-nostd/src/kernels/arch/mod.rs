//! Instruction-set-specific code: CPU detection, intrinsics and assembly, one folder per
//! architecture. The portable kernels in `kernels/<family>.rs` each hold the one place
//! that dispatches here; nothing here imports them (but tests, which compare against
//! them).

#[cfg(target_arch = "arm")]
pub mod arm;
#[cfg(all(target_arch = "riscv32", tinyonnx_riscv_f))]
pub mod riscv32;
#[cfg(target_arch = "x86_64")]
pub mod x86_64;

/// The packed products' panel routines, on the cores that have them (`tinyonnx_fma_rows`,
/// set by the build script): one row or two against whole panels, in registers.
#[cfg(all(tinyonnx_fma_rows, target_arch = "arm"))]
pub(crate) use arm::{rows8, rows8x2, steps};
#[cfg(all(tinyonnx_fma_rows, target_arch = "riscv32"))]
pub(crate) use riscv32::{rows8, rows8x2, steps};

/// A kernel path a test can run: the portable code, or the run-time choices allowed
/// up to an instruction set. Every path's kernels must agree with the portable ones.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// No run-time SIMD choice (on x86-64 only where the build does not compile AVX in).
    Portable,
    /// AVX and FMA (256-bit tiles), AVX-512 off.
    AvxFma,
    /// Everything the CPU has, AVX-512 included.
    Avx512,
}

/// The paths this build can run on this CPU.
#[cfg(test)]
pub fn paths() -> impl Iterator<Item = Path> {
    [Path::Portable, Path::AvxFma, Path::Avx512]
        .into_iter()
        .filter(|p| match p {
            #[cfg(target_arch = "x86_64")]
            Path::Portable => !cfg!(all(target_feature = "avx", target_feature = "fma")),
            #[cfg(target_arch = "x86_64")]
            Path::AvxFma => {
                !cfg!(all(target_feature = "avx512f", target_feature = "fma"))
                    && x86_64::cpu::avx_fma()
            }
            #[cfg(target_arch = "x86_64")]
            Path::Avx512 => x86_64::cpu::avx512(),
            #[cfg(not(target_arch = "x86_64"))]
            Path::Portable => true,
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        })
}

/// Runs `f` on this thread with the run-time choices limited to `path`.
#[cfg(test)]
pub fn on(path: Path, f: impl FnOnce()) {
    #[cfg(target_arch = "x86_64")]
    x86_64::cpu::with_cap(
        match path {
            Path::Portable => 0,
            Path::AvxFma => 1,
            Path::Avx512 => 2,
        },
        f,
    );
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = path;
        f();
    }
}

/// Runs `f` once on every path this build can run ([`paths`]).
#[cfg(test)]
pub fn on_every_path(mut f: impl FnMut(Path)) {
    for p in paths() {
        on(p, || f(p));
    }
}
