tinyonnx::onnx_model! {
    model Big {
        input x: f32[1, 256];
        output y = linear(x, 256);
    }
}

// A board with 64 KiB of flash for weights: 256 x 257 f32 weights need 263,168 bytes.
const _: () = tinyonnx::assert_fits(&Big::INFO, 65_536, 65_536);

fn main() {}
