tinyonnx::onnx_model! {
    pub model Net = import("../../../../tests/ui/import/opset5.onnx", dimensions(batch = 1));
}

fn main() {}
