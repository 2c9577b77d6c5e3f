//! Sets `tinyonnx_fpv5` for Armv8-M Mainline with a single-precision FPU (Cortex-M33,
//! M55): its FPv5 has `VSEL`, branch-free selects that make the portable form of
//! `kernels::math::max_nan` the fast one there. rustc does not expose the FPU's version
//! to `cfg` on these targets. Sets `tinyonnx_riscv_f` for 32-bit RISC-V with single-precision
//! floats (see below), and `tinyonnx_fma_rows` where `kernels::arch` has the packed
//! products' panel routines (`rows8`, `rows8x2`): Arm with the `fma-vfp4` feature, those
//! RISC-V cores with the `fma-rvf` feature (both features opt in to fused
//! multiply-adds), `tinyonnx_soft_float` for cores without an FPU, and
//! `tinyonnx_mcu_fpu` for the microcontrollers (bare-metal targets) with one: the
//! kernels' and the generated code's choices for those cores test this one cfg.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tinyonnx_fpv5)");
    println!("cargo::rustc-check-cfg=cfg(tinyonnx_riscv_f)");
    println!("cargo::rustc-check-cfg=cfg(tinyonnx_fma_rows)");
    println!("cargo::rustc-check-cfg=cfg(tinyonnx_soft_float)");
    println!("cargo::rustc-check-cfg=cfg(tinyonnx_mcu_fpu)");
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.starts_with("thumbv8m.main") && target.ends_with("eabihf") {
        println!("cargo::rustc-cfg=tinyonnx_fpv5");
    }
    // 32-bit RISC-V with the F extension (`riscv32imafc`, `riscv32gc`) and so a
    // float-register ABI: stable rustc does not give `target_feature = "f"` to `cfg`.
    let riscv_f = target.strip_prefix("riscv32").map(|isa| {
        let isa = isa.split('-').next().unwrap_or_default();
        isa.contains('f') || isa.contains('g')
    });
    if riscv_f == Some(true) {
        println!("cargo::rustc-cfg=tinyonnx_riscv_f");
        if feature("FMA_RVF") {
            println!("cargo::rustc-cfg=tinyonnx_fma_rows");
        }
    }
    // No FPU: 32-bit RISC-V without F, Arm with the soft-float ABI (`thumbv6m`,
    // `thumbv7m`, the `-eabi` targets).
    let arm = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "arm");
    let soft_float = riscv_f == Some(false) || (arm && !target.ends_with("eabihf"));
    if soft_float {
        println!("cargo::rustc-cfg=tinyonnx_soft_float");
    }
    let bare_metal = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "none");
    if bare_metal && !soft_float {
        println!("cargo::rustc-cfg=tinyonnx_mcu_fpu");
    }
    if arm && feature("FMA_VFP4") {
        println!("cargo::rustc-cfg=tinyonnx_fma_rows");
    }
    println!("cargo::rerun-if-changed=build.rs");
}

/// Whether the crate is built with the feature `name` (upper case, `_` for `-`).
fn feature(name: &str) -> bool {
    std::env::var_os(format!("CARGO_FEATURE_{name}")).is_some()
}
