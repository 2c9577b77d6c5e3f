//! The seed architectures of tinyonnx, written with `onnx_model!`.
//!
//! [`MODELS`] lists them for the tools: `cargo xtask export` writes their ONNX files and
//! the cross-check tests run each against ONNX Runtime.

#![no_std]

use tinyonnx::{Model, ModelInfo, RunF32, RunFn, RunTracedFn, onnx_model};

mod cnn;
mod control;
pub mod custom;
mod digits;
mod lstm;
mod resnet;
mod torch_lstm;
mod transformer;
mod zoo;

pub use cnn::{
    Cnn, CnnWinograd, Conv3x3Int8, DepthwiseInt8, DepthwiseStrided, DepthwiseU8, PointwiseInt8,
};
pub use control::{IfGate, LoopCell, ScanRnn};
pub use custom::CustomZoo;
pub use digits::{Digits, DigitsConv, DigitsConvInt8, DigitsInt8, DigitsNearest};
pub use lstm::{GruClassifier, LstmBatchFirst, LstmClassifier};
pub use resnet::ResNet;
pub use torch_lstm::TorchLstm;
pub use transformer::{TransformerBlock, TransformerSugar};
pub use zoo::{
    Classify, ConvTransposeZoo, ConvZoo, DtypeZoo, EinsumZoo, FunctionZoo, LstmZoo, MathZoo,
    MoveZoo, Pipeline, ReduceAttrZoo, ReduceZoo, RnnZoo, ScheduleZoo, ShapeZoo, Standardize,
    SugarZoo,
};

onnx_model! {
    /// Linear regression: 8 features to 1 value, one Gemm with bias.
    pub model LinearRegression {
        opset = 17;
        model_version = 1;
        domain = "org.tinyonnx.examples";
        meta author = "tinyonnx";
        meta license = "MIT OR Apache-2.0";
        meta "training.note" = "untrained: seeded Glorot weights";
        /// Eight features per row.
        input x: f32[batch, 8];
        weight w: f32[8, 1] = glorot_uniform(seed = 42);
        weight b: f32[1] = [0.5];
        /// The predicted value.
        output y = Gemm(x, w, b);
    }
}

onnx_model! {
    /// Multi-layer perceptron for 28x28 digits: 784 -> 256 -> 128 -> 10, Relu, Softmax.
    pub model Mlp {
        opset = 17;
        input x: f32[batch, 784];
        let h1 = relu(linear(x, 256, init = he_normal(seed = 1), name = "fc1"));
        let h2 = relu(linear(h1, 128, init = he_normal(seed = 2), name = "fc2"));
        output probs = softmax(linear(h2, 10, init = glorot_uniform(seed = 3), name = "fc3"), axis = -1);
    }
}

onnx_model! {
    /// The MLP with raw ONNX operators and explicit weights, batch 4 on the device.
    pub model MlpRaw {
        opset = 17;
        dim batch = 4;
        input x: f32[batch, 784];
        weight w1: f32[784, 256] = he_uniform(seed = 11);
        weight b1: f32[256] = uniform(low = -0.05, high = 0.05, seed = 12);
        weight w2: f32[128, 256] = he_normal(seed = 13);
        weight b2: f32[128] = zeros;
        weight w3: f32[128, 10] = glorot_normal(seed = 14);
        weight b3: f32[10] = constant(0.1);
        let h1 = Relu(Gemm(x, w1, b1));
        let h2 = Tanh(Gemm(h1, w2, b2, transB = 1, alpha = 0.5, beta = 2.0));
        let z = Add(MatMul(h2, w3), b3);
        output probs = Softmax(Sigmoid(Sub(Mul(z, z), Div(z, b3))), axis = 1);
    }
}

/// An example model: its constants and a uniform way to run it.
#[derive(Debug, Clone, Copy)]
pub struct Example {
    /// The model's constants.
    pub info: ModelInfo,
    /// The model serialized as ONNX.
    pub onnx: &'static [u8],
    /// `Model::run_f32` of the model (an error for models with other dtypes).
    pub run: RunF32,
    /// `Model::run` of the model: any dtypes.
    pub run_typed: RunFn,
    /// `Model::run_traced` of the model: every intermediate reported.
    pub run_traced: RunTracedFn,
}

impl Example {
    /// Whether every input and output is f32 (what `run` and the benchmarks take).
    pub fn is_f32(&self) -> bool {
        self.info
            .inputs
            .iter()
            .chain(self.info.outputs)
            .all(|t| t.dtype == "f32")
    }
}

/// The [`Example`] of a model type.
pub const fn example<M: Model>() -> Example {
    Example {
        info: M::INFO,
        onnx: M::ONNX,
        run: M::run_f32,
        run_typed: M::run,
        run_traced: M::run_traced,
    }
}

/// Every example model: the seed architectures, then models that cover the rest of the
/// operators and their attributes.
pub const MODELS: &[Example] = &[
    example::<LinearRegression>(),
    example::<Mlp>(),
    example::<MlpRaw>(),
    example::<Cnn>(),
    example::<CnnWinograd>(),
    example::<ResNet>(),
    example::<LstmClassifier>(),
    example::<LstmBatchFirst>(),
    example::<GruClassifier>(),
    example::<TransformerBlock>(),
    example::<TransformerSugar>(),
    example::<Digits>(),
    example::<DigitsInt8>(),
    example::<DigitsConv>(),
    example::<DigitsConvInt8>(),
    example::<DepthwiseInt8>(),
    example::<DepthwiseU8>(),
    example::<DepthwiseStrided>(),
    example::<PointwiseInt8>(),
    example::<Conv3x3Int8>(),
    example::<DigitsNearest>(),
    example::<TorchLstm>(),
    example::<ConvZoo>(),
    example::<LstmZoo>(),
    example::<ShapeZoo>(),
    example::<SugarZoo>(),
    example::<ScheduleZoo>(),
    example::<MathZoo>(),
    example::<ReduceZoo>(),
    example::<ReduceAttrZoo>(),
    example::<MoveZoo>(),
    example::<RnnZoo>(),
    example::<ConvTransposeZoo>(),
    example::<EinsumZoo>(),
    example::<DtypeZoo>(),
    example::<FunctionZoo>(),
    example::<CustomZoo>(),
    example::<Standardize>(),
    example::<Classify>(),
    example::<Pipeline>(),
    example::<IfGate>(),
    example::<LoopCell>(),
    example::<ScanRnn>(),
];
