tinyonnx::onnx_model! {
    pub model Net = import("models/does_not_exist.onnx");
}

fn main() {}
