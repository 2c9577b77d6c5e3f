tinyonnx::onnx_model! {
    model M {
        input a: f32[3, 4];
        input b: f32[4, 5];
        output y = Einsum(a, b, equation = "ijk,jk->i");
    }
}

fn main() {}
