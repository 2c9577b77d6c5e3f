include!("../common/build_support.rs");

fn main() {
    configure("memory-riscv32.x");
}
