//! 32-bit RISC-V with the F extension (`tinyonnx_riscv_f`, set by the build script).

// Safety: the declaration matches the routine assembled below: the float ABIs of these
// targets (ilp32f, ilp32d) pass and return an f32 in fa0; it reads no memory.
unsafe extern "C" {
    pub(crate) safe fn tinyonnx_sqrt_rv(x: f32) -> f32;
}

// The FPU's square root, correctly rounded (in the default round-to-nearest-even mode)
// as `libm::sqrtf`, whose software version takes about 500 bytes with its table. A
// routine rather than inline assembly: stable rustc does not enable the `freg` operands
// of `asm!` on these targets.
core::arch::global_asm!(
    ".section .text.tinyonnx_sqrt_rv,\"ax\",@progbits",
    ".global tinyonnx_sqrt_rv",
    ".type tinyonnx_sqrt_rv,@function",
    // The assembler of module-level assembly does not always see the target's F.
    ".option push",
    ".option arch, +f",
    "tinyonnx_sqrt_rv:",
    "    fsqrt.s fa0, fa0",
    "    ret",
    ".option pop",
    ".size tinyonnx_sqrt_rv, . - tinyonnx_sqrt_rv",
);
