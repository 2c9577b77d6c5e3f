tinyonnx::onnx_model! {
    model M {
        input a: f32[3, 4];
        input b: f32[5, 6];
        output y = Einsum(a, b, equation = "ij,jk->ik");
    }
}

fn main() {}
