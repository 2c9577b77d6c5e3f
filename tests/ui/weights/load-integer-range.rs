// Paths are relative to the compiled crate's Cargo.toml (for this test, trybuild's
// project under target/tests/trybuild/). The file holds int8 weights, negative ones
// among them.
tinyonnx::onnx_model! {
    model M {
        input x: u8[1, 16, 28, 28];
        weight w: u8[32, 16, 3, 3] = load("../../../../examples/data/int8conv/conv3x3_w.npy");
        output y = ConvInteger(x, w);
    }
}

fn main() {}
