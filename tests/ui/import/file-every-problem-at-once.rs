// Open dims, an unknown operator, a name nothing makes and an If on data whose branches
// differ in shape: all reported in one compile, at the path, each naming its node.
tinyonnx::onnx_model! {
    pub model Net = import(
        "../../../../tests/ui/import/unsupported.onnx",
        dims(N = 1, batch = 2),
        shapes(images = [1, 3, 8, 8]),
    );
}

fn main() {}
