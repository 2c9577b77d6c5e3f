include!("../common/build_support.rs");

fn main() {
    // The NVIC's interrupt lines of QEMU mps2-an505: the SSE-200's 32 and the board's 92
    // (hw/arm/armsse.c, hw/arm/mps2-tz.c).
    configure_arm("memory-m33.x", 124);
}
