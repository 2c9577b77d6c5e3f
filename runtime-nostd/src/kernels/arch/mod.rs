//! Instruction-set-specific code: CPU detection, intrinsics and assembly, one folder per
//! architecture. The portable kernels in `kernels/<family>.rs` each hold the one place
//! that dispatches here; nothing here imports them (but tests, which compare against
//! them).

#[cfg(target_arch = "arm")]
pub mod arm;
#[cfg(target_arch = "x86_64")]
pub mod x86_64;

/// Runs `f` with the run-time AVX-512 paths switched off on this thread, in a build
/// without AVX-512 on x86-64 (elsewhere they are off, or compiled in, and `f` runs as
/// is).
#[cfg(test)]
pub fn without_avx512(f: impl FnOnce()) {
    #[cfg(target_arch = "x86_64")]
    x86_64::cpu::without_avx512(f);
    #[cfg(not(target_arch = "x86_64"))]
    f();
}
