tinyonnx::onnx_model! {
    model M {
        input arena: f32[1, 4];
        output y = Relu(arena);
    }
}

fn main() {}
