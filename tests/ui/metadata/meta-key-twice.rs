tinyonnx::onnx_model! {
    model M {
        meta author = "Ada";
        meta author = "Grace";
        model_version = -1;
        input x: f32[4];
        output y = Relu(x);
    }
}

fn main() {}
