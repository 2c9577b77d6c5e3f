include!("../common/build_support.rs");

fn main() {
    configure("memory-riscv32f.x");
}
