include!("../common/build_support.rs");

fn main() {
    // The NVIC's interrupt lines of QEMU mps2-an386: `num-irq` 32 in hw/arm/mps2.c.
    configure_arm("memory-m4f.x", 32);
}
