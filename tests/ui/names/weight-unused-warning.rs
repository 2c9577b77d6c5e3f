#![deny(deprecated)]

tinyonnx::onnx_model! {
    model M {
        input x: f32[1, 4];
        input unused: f32[2];
        weight w: f32[4] = zeros;
        output y = Relu(x);
    }
}

fn main() {}
