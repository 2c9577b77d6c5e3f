tinyonnx::onnx_model! {
    model M {
        optimize = small;
        optimize = speed;
        input x: f32[1, 8, 6, 6];
        block b(x) {
            optimize = size;
            return Relu(x);
        }
        output y = b(x);
    }
}

fn main() {}
