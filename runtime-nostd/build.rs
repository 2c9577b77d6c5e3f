//! Sets `tinyonnx_fpv5` for Armv8-M Mainline with a single-precision FPU (Cortex-M33,
//! M55): its FPv5 has `VSEL`, branch-free selects that make the portable form of
//! `kernels::math::max_nan` the fast one there. rustc does not expose the FPU's version
//! to `cfg` on these targets.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tinyonnx_fpv5)");
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.starts_with("thumbv8m.main") && target.ends_with("eabihf") {
        println!("cargo::rustc-cfg=tinyonnx_fpv5");
    }
    println!("cargo::rerun-if-changed=build.rs");
}
