include!("../common/build_support.rs");

fn main() {
    configure("memory-m33.x");
}
