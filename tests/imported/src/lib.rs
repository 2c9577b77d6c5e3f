//! Models that tools outside this project exported and published, imported at compile
//! time from the files `cargo xtask setup` fetches into `target/xtask/models/` (see
//! `REAL_MODELS` in `xtask/src/setup.rs` for the packages, versions and hashes), and
//! two scikit-learn pipelines it converts there with skl2onnx
//! (`xtask/py/sklearn_models.py`). `no_std`: the board firmware runs them too
//! (`--features imported`).

#![no_std]

use tinyonnx_examples::{Example, example};

tinyonnx::onnx_model! {
    /// PaddleOCR's text direction classifier (PP-OCR mobile v2.0, exported by Paddle2ONNX
    /// at opset 11; from the rapidocr-onnxruntime wheel): a 48x192 crop of a text line
    /// in, the probabilities of upright and upside down out.
    pub model PaddleOcrCls = import(
        "../../target/xtask/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
        shapes(x = [1, 3, 48, 192]),
    );
}

tinyonnx::onnx_model! {
    /// The same classifier compiled for flash over speed: its convolutions share one
    /// copy of each kernel (direct, im2col), which reads its sizes at run time, on
    /// every core.
    pub model PaddleOcrClsSmall = import(
        "../../target/xtask/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
        shapes(x = [1, 3, 48, 192]),
        optimize(size),
    );
}

tinyonnx::onnx_model! {
    /// Silero VAD, the 16 kHz sequence model (PyTorch export, opset 16; from the silero-vad
    /// wheel): 576 samples (512 new and 64 of context) and the LSTM state in, the
    /// speech probability and the new state out.
    pub model SileroVadSequence = import(
        "../../target/xtask/models/silero_vad_16k_sequence.onnx",
        dims(sequence_length = 1),
    );
}

tinyonnx::onnx_model! {
    /// Silero VAD with the 8/16 kHz choice as If nodes on shapes (PyTorch export, opset
    /// 15): the fixed dims decide both at compile time.
    pub model SileroVadOp15 = import(
        "../../target/xtask/models/silero_vad_16k_op15.onnx",
        dims(batch = 1, sequence = 576),
    );
}

tinyonnx::onnx_model! {
    /// Silero VAD as written by spox for OpenVINO (opset 16, static shapes).
    pub model SileroVadOpenVino = import("../../target/xtask/models/silero_vad_openvino_16k.onnx");
}

tinyonnx::onnx_model! {
    /// A scikit-learn pipeline (StandardScaler, then an MLP with 16 hidden units) trained
    /// on the Wisconsin breast cancer data and converted by skl2onnx (opset 15, with
    /// ai.onnx.ml's Scaler and ArrayFeatureExtractor): 30 features in, the label and the
    /// two class probabilities out.
    pub model SklearnBreastCancer = import(
        "../../target/xtask/models/sklearn_breast_cancer_mlp.onnx",
        shapes(X = [1, 30]),
    );
}

tinyonnx::onnx_model! {
    /// The same pipeline (hidden layers 32 and 16) on scikit-learn's 8x8 digits.
    pub model SklearnDigits = import(
        "../../target/xtask/models/sklearn_digits_mlp.onnx",
        shapes(X = [1, 64]),
    );
}

tinyonnx::onnx_model! {
    /// The digits pipeline quantized by ONNX Runtime's `quantize_static` in QDQ format:
    /// int8 activations and weights, one scale per tensor, calibrated on 200 training
    /// images (`xtask/py/sklearn_models.py`).
    pub model SklearnDigitsQdq = import(
        "../../target/xtask/models/sklearn_digits_mlp_qdq.onnx",
        shapes(X = [1, 64]),
    );
}

tinyonnx::onnx_model! {
    /// The same in QDQ with uint8 activations and int8 weights per output channel.
    pub model SklearnDigitsQdqPerChannel = import(
        "../../target/xtask/models/sklearn_digits_mlp_qdq_pc.onnx",
        shapes(X = [1, 64]),
    );
}

tinyonnx::onnx_model! {
    /// The same by `quantize_dynamic`: int8 weights, activations quantized at run time
    /// (DynamicQuantizeLinear, MatMulInteger).
    pub model SklearnDigitsDynamic = import(
        "../../target/xtask/models/sklearn_digits_mlp_dynamic.onnx",
        shapes(X = [1, 64]),
    );
}

tinyonnx::onnx_model! {
    /// The 784-256-128-10 MLP of CMSIS-NN's int8 figures (seeded weights, as PyTorch
    /// exports `nn.Linear`), quantized by `quantize_static` in QDQ format, int8 per
    /// tensor: ONNX Runtime runs its Gemms as com.microsoft.QGemm.
    pub model MlpQdq = import(
        "../../target/xtask/models/mlp_784_256_128_10_qdq.onnx",
    );
}

tinyonnx::onnx_model! {
    /// The same MLP in the quantizer's operator format: three com.microsoft.QGemm
    /// nodes, which the importer writes as the QDQ form the plan runs as integer kernels.
    pub model MlpQop = import(
        "../../target/xtask/models/mlp_784_256_128_10_qop.onnx",
    );
}

tinyonnx::onnx_model! {
    /// The seeded CNN the two below quantize, in f32.
    pub model Cnn28 = import(
        "../../target/xtask/models/cnn_28x28.onnx",
    );
}

tinyonnx::onnx_model! {
    /// A small CNN (28x28 grey input, two 3x3 convolutions with Relu and 2x2 max
    /// pooling, a linear classifier; seeded weights) quantized by `quantize_static` in
    /// QDQ format, int8 weights per output channel: ONNX Runtime runs its convolutions
    /// as QLinearConv.
    pub model CnnQdq = import(
        "../../target/xtask/models/cnn_28x28_qdq.onnx",
    );
}

tinyonnx::onnx_model! {
    /// The same CNN in the operator format: QLinearConv and com.microsoft.QGemm.
    pub model CnnQop = import(
        "../../target/xtask/models/cnn_28x28_qop.onnx",
    );
}

tinyonnx::onnx_model! {
    /// A residual block with a sigmoid gate, LeakyRelu, average and max pooling joined
    /// by Concat, global pooling and a linear layer (seeded weights), quantized in the
    /// operator format: QLinearConv, and com.microsoft's QLinearAdd, QLinearSigmoid,
    /// QLinearMul, QLinearLeakyRelu, QLinearAveragePool, QLinearConcat,
    /// QLinearGlobalAveragePool and QGemm.
    pub model QopBlocks = import("../../target/xtask/models/qop_blocks.onnx");
}

tinyonnx::onnx_model! {
    /// A classifier head (Gemm, Relu, Gemm, Softmax; seeded weights) quantized in the
    /// operator format: QGemm and com.microsoft's QLinearSoftmax.
    pub model QopHead = import("../../target/xtask/models/qop_head.onnx");
}

tinyonnx::onnx_model! {
    /// com.microsoft's QLinearWhere (int8, its output in the first operand's parameters
    /// and in others; uint8; an operand broadcast), written by hand as the quantizer's
    /// operator format writes the node.
    pub model QopWhere = import("../../target/xtask/models/qop_where.onnx");
}

tinyonnx::onnx_model! {
    /// The same CNN by `quantize_dynamic`: int8 weights, activations quantized at run
    /// time (DynamicQuantizeLinear, ConvInteger, MatMulInteger).
    pub model CnnDynamic = import(
        "../../target/xtask/models/cnn_28x28_dynamic.onnx",
    );
}

tinyonnx::onnx_model! {
    /// A Scan carrying a running sum over the rows of `x` and a Loop of four trips
    /// carrying `h` (reading the Scan's result from the enclosing graph), each with
    /// per-step outputs, written with onnx.helper (`xtask/py/sklearn_models.py`).
    pub model ControlFlow = import("../../target/xtask/models/control_flow.onnx");
}

tinyonnx::onnx_model! {
    /// Two Loops the data ends, written with onnx.helper (`xtask/py/sklearn_models.py`):
    /// a `while` as torch.onnx writes one (M = INT64_MAX, a condition the body
    /// computes, an int64 counter carried) and one whose trip count is computed from
    /// the input when the model runs.
    pub model WhileLoops = import("../../target/xtask/models/while_loops.onnx");
}

tinyonnx::onnx_model! {
    /// A head written in the DSL: which of the classifier's two classes wins.
    pub model Upright {
        opset = 13;
        input probs: f32[1, 2];
        output class = ArgMax(probs, axis = 1, keepdims = 0);
    }
}

tinyonnx::onnx_model! {
    /// An imported backbone with a written head, composed into one model.
    pub model PaddleOcrClsWithHead = compose(
        PaddleOcrCls,
        Upright,
        map = [("save_infer_model/scale_0.tmp_1", "probs")],
    );
}

/// Each model with the file it was imported from (relative to this crate).
pub const MODELS: &[(Example, &str)] = &[
    (
        example::<PaddleOcrCls>(),
        "../../target/xtask/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
    ),
    (
        example::<PaddleOcrClsSmall>(),
        "../../target/xtask/models/ch_ppocr_mobile_v2.0_cls_infer.onnx",
    ),
    (
        example::<SileroVadSequence>(),
        "../../target/xtask/models/silero_vad_16k_sequence.onnx",
    ),
    (
        example::<SileroVadOp15>(),
        "../../target/xtask/models/silero_vad_16k_op15.onnx",
    ),
    (
        example::<SileroVadOpenVino>(),
        "../../target/xtask/models/silero_vad_openvino_16k.onnx",
    ),
    (
        example::<SklearnBreastCancer>(),
        "../../target/xtask/models/sklearn_breast_cancer_mlp.onnx",
    ),
    (
        example::<SklearnDigits>(),
        "../../target/xtask/models/sklearn_digits_mlp.onnx",
    ),
    (
        example::<Cnn28>(),
        "../../target/xtask/models/cnn_28x28.onnx",
    ),
    (
        example::<ControlFlow>(),
        "../../target/xtask/models/control_flow.onnx",
    ),
    (
        example::<WhileLoops>(),
        "../../target/xtask/models/while_loops.onnx",
    ),
];

/// The quantized models, with the file each was imported from and the scale of the
/// seeded inputs they are tested on (the range they were calibrated for): their outputs
/// are held to the quantized contract (`tests/quantized.rs`) instead of the float
/// tolerance.
pub const QUANTIZED: &[(Example, &str, f32)] = &[
    (
        example::<SklearnDigitsQdq>(),
        "../../target/xtask/models/sklearn_digits_mlp_qdq.onnx",
        16.0,
    ),
    (
        example::<SklearnDigitsQdqPerChannel>(),
        "../../target/xtask/models/sklearn_digits_mlp_qdq_pc.onnx",
        16.0,
    ),
    (
        example::<SklearnDigitsDynamic>(),
        "../../target/xtask/models/sklearn_digits_mlp_dynamic.onnx",
        16.0,
    ),
    (
        example::<MlpQdq>(),
        "../../target/xtask/models/mlp_784_256_128_10_qdq.onnx",
        1.0,
    ),
    (
        example::<CnnQdq>(),
        "../../target/xtask/models/cnn_28x28_qdq.onnx",
        1.0,
    ),
    (
        example::<MlpQop>(),
        "../../target/xtask/models/mlp_784_256_128_10_qop.onnx",
        1.0,
    ),
    (
        example::<CnnQop>(),
        "../../target/xtask/models/cnn_28x28_qop.onnx",
        1.0,
    ),
    (
        example::<QopBlocks>(),
        "../../target/xtask/models/qop_blocks.onnx",
        1.0,
    ),
    (
        example::<QopHead>(),
        "../../target/xtask/models/qop_head.onnx",
        1.0,
    ),
    (
        example::<QopWhere>(),
        "../../target/xtask/models/qop_where.onnx",
        1.0,
    ),
    (
        example::<CnnDynamic>(),
        "../../target/xtask/models/cnn_28x28_dynamic.onnx",
        1.0,
    ),
];
