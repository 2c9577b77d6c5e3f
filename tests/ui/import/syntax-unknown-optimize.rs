tinyonnx::onnx_model! {
    pub model Net = import("../../../../tests/ui/import/opset5.onnx", optimize(tiny));
}

fn main() {}
