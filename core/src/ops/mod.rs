//! The operator registry. Each operator lives in its own file, in the folder of its
//! family, as one [`OpSchema`]: its ONNX name, inputs, attributes with defaults, opset
//! range, dtypes, shape and dtype inference, scratch, fusion and its lowering to a
//! kernel call. Adding one touches its file and one line of [`REGISTRY`].

pub mod convolution;
pub mod elementwise;
pub mod graph;
pub mod linalg;
pub mod norm;
pub mod recurrent;
pub mod reduction;
pub mod schema;
pub mod shape;

pub use graph::{control, custom};
pub use schema::*;

/// Every operator the DSL knows under its ONNX name.
pub static REGISTRY: &[&OpSchema] = &[
    &elementwise::binary::ADD,
    &elementwise::binary::SUB,
    &elementwise::binary::MUL,
    &elementwise::binary::DIV,
    &elementwise::binary::POW,
    &elementwise::binary::MIN,
    &elementwise::binary::MAX,
    &elementwise::binary::EQUAL,
    &elementwise::binary::LESS,
    &elementwise::binary::GREATER,
    &elementwise::binary::LESS_OR_EQUAL,
    &elementwise::binary::GREATER_OR_EQUAL,
    &elementwise::binary::AND,
    &elementwise::binary::OR,
    &elementwise::binary::XOR,
    &elementwise::cast::CAST,
    &elementwise::select::WHERE,
    &reduction::arg::ARG_MAX,
    &reduction::arg::ARG_MIN,
    &shape::shape_size::SHAPE,
    &shape::shape_size::SIZE,
    &elementwise::math::ABS,
    &elementwise::math::NEG,
    &elementwise::math::NOT,
    &elementwise::math::EXP,
    &elementwise::math::LOG,
    &elementwise::math::SQRT,
    &elementwise::math::RECIPROCAL,
    &elementwise::math::FLOOR,
    &elementwise::math::CEIL,
    &elementwise::math::CLIP,
    &elementwise::math::ERF,
    &linalg::gemm::GEMM,
    &linalg::matmul::MATMUL,
    &linalg::einsum::EINSUM,
    &elementwise::unary::IDENTITY,
    &elementwise::unary::RELU,
    &elementwise::unary::SIGMOID,
    &elementwise::unary::TANH,
    &elementwise::unary::GELU,
    &elementwise::math::LEAKY_RELU,
    &elementwise::math::ELU,
    &elementwise::math::SELU,
    &elementwise::math::HARD_SIGMOID,
    &elementwise::math::SOFTPLUS,
    &elementwise::math::SOFTSIGN,
    &reduction::softmax::SOFTMAX,
    &reduction::softmax::LOG_SOFTMAX,
    &convolution::conv::CONV,
    &convolution::conv_transpose::CONV_TRANSPOSE,
    &norm::batchnorm::BATCH_NORMALIZATION,
    &convolution::pool::MAX_POOL,
    &convolution::pool::AVERAGE_POOL,
    &convolution::pool::GLOBAL_AVERAGE_POOL,
    &convolution::pool::GLOBAL_MAX_POOL,
    &reduction::reduce::REDUCE_SUM,
    &reduction::reduce::REDUCE_MEAN,
    &reduction::reduce::REDUCE_MAX,
    &reduction::reduce::REDUCE_MIN,
    &reduction::reduce::REDUCE_PROD,
    &shape::reshape::FLATTEN,
    &shape::reshape::RESHAPE,
    &shape::reshape::SQUEEZE,
    &shape::reshape::UNSQUEEZE,
    &shape::reshape::DROPOUT,
    &shape::transpose::TRANSPOSE,
    &shape::concat::CONCAT,
    &shape::movement::SLICE,
    &shape::movement::SPLIT,
    &shape::movement::EXPAND,
    &shape::movement::TILE,
    &shape::movement::PAD,
    &shape::movement::GATHER,
    &shape::movement::GATHER_ELEMENTS,
    &shape::movement::SCATTER_ELEMENTS,
    &norm::instance_norm::INSTANCE_NORMALIZATION,
    &recurrent::lstm::LSTM,
    &recurrent::rnn::GRU,
    &recurrent::rnn::RNN,
    &norm::layernorm::LAYER_NORMALIZATION,
    &shape::constant::CONSTANT,
];

/// Looks an operator up by its exact ONNX name.
pub fn lookup(name: &str) -> Option<&'static OpSchema> {
    REGISTRY.iter().copied().find(|op| op.op_type == name)
}
