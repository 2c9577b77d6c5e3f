tinyonnx::onnx_model! {
    model M {
        winograd = fast;
        winograd = never;
        input x: f32[1, 8, 6, 6];
        block b(x) {
            winograd = always;
            return Relu(x);
        }
        output y = b(x);
    }
}

fn main() {}
