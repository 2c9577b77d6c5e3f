include!("../common/build_support.rs");

fn main() {
    // The NVIC's interrupt lines of QEMU lm3s6965evb: NUM_IRQ_LINES 64 in hw/arm/stellaris.c.
    configure_arm("memory-m3.x", 64);
}
