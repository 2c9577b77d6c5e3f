"""Trains two small scikit-learn classifiers on the datasets scikit-learn ships and
converts them with skl2onnx, as a user of skl2onnx would: a scaler and a multi-layer
perceptron in a pipeline, probabilities without ZipMap. Usage: sklearn_models.py DIR.

- sklearn_breast_cancer_mlp.onnx: 30 tabular features (Wisconsin breast cancer), two
  classes, the label and the probabilities out.
- sklearn_digits_mlp.onnx: 8x8 images of digits as 64 features, ten classes, and three
  quantized versions of it (below).
"""

import logging
import os
import sys
import warnings

import numpy as np
from skl2onnx import to_onnx
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

warnings.filterwarnings("ignore")
# The quantizer logs advice on pre-processing at WARNING for every call.
logging.getLogger().setLevel(logging.ERROR)
out = sys.argv[1]


def save(model, name):
    """Writes `model` as `name`.onnx in `out` (whole or not at all); returns the path."""
    path = os.path.join(out, name + ".onnx")
    with open(path + ".partial", "wb") as f:
        f.write(model.SerializeToString())
    os.replace(path + ".partial", path)
    return path


for name, load, hidden in [
    ("sklearn_breast_cancer_mlp", load_breast_cancer, (16,)),
    ("sklearn_digits_mlp", load_digits, (32, 16)),
]:
    X, y = load(return_X_y=True)
    X = X.astype(np.float32)
    clf = make_pipeline(
        StandardScaler(), MLPClassifier(hidden_layer_sizes=hidden, max_iter=300, random_state=0)
    ).fit(X, y)
    model = to_onnx(
        clf,
        X[:1],
        options={id(clf): {"zipmap": False}},
        target_opset={"": 15, "ai.onnx.ml": 3},
    )
    save(model, name)
    print(f"{name}: training accuracy {clf.score(X, y):.3f}")

# The digits model quantized by ONNX Runtime's own tool, the three ways its users run it,
# calibrated on the first 200 training images (MinMax, deterministic):
# - _qdq: static, QDQ format, int8 activations and weights per tensor;
# - _qdq_pc: static, QDQ, uint8 activations (the tool's default) and int8 weights per
#   output channel;
# - _dynamic: weights int8, activations quantized at run time (DynamicQuantizeLinear ->
#   MatMulInteger).
# All three keep the weights to 7 bits (`reduce_range`), as the tool's documentation
# advises for x86-64 without VNNI: ONNX Runtime's kernel there (which int8 activations
# reach too, shifted to uint8) adds pairs of u8 x s8 products in 16 bits with
# saturation, so a full-range weight gives it, not the ONNX definition, a different sum.
from onnxruntime.quantization import (  # noqa: E402
    CalibrationDataReader,
    QuantFormat,
    QuantType,
    quantize_dynamic,
    quantize_static,
)

X, _ = load_digits(return_X_y=True)
X = X.astype(np.float32)
src = os.path.join(out, "sklearn_digits_mlp.onnx")


class Rows(CalibrationDataReader):
    """Calibration samples for the input `name`, one a call."""

    def __init__(self, name, samples):
        self.rows = iter([{name: v} for v in samples])

    def get_next(self):
        return next(self.rows, None)


def write(name, quantize):
    path = os.path.join(out, name + ".onnx")
    quantize(path + ".partial.onnx")
    os.replace(path + ".partial.onnx", path)
    print(f"{name}: quantized")


for suffix, per_channel, activations in [
    ("qdq", False, QuantType.QInt8),
    ("qdq_pc", True, QuantType.QUInt8),
]:
    write(
        f"sklearn_digits_mlp_{suffix}",
        lambda p: quantize_static(
            src,
            p,
            Rows("X", [X[i : i + 1] for i in range(200)]),
            quant_format=QuantFormat.QDQ,
            per_channel=per_channel,
            activation_type=activations,
            weight_type=QuantType.QInt8,
            reduce_range=True,
        ),
    )
write(
    "sklearn_digits_mlp_dynamic",
    lambda p: quantize_dynamic(src, p, weight_type=QuantType.QInt8, reduce_range=True),
)

# The MLP shape CMSIS-NN's int8 figures are measured on (784-256-128-10, Relu, as
# PyTorch exports `nn.Linear`: Gemm with transB = 1), with seeded weights, quantized
# static in QDQ (int8 per tensor, 7-bit weights as above), calibrated on seeded inputs
# in [0, 1): a benchmark of the integer kernels against ONNX Runtime, not a trained model.
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

rng = np.random.default_rng(784)
nodes, inits, prev = [], [], "x"
for i, (k, n) in enumerate([(784, 256), (256, 128), (128, 10)]):
    w = (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)
    b = (0.1 * rng.standard_normal(n)).astype(np.float32)
    inits += [numpy_helper.from_array(w, f"fc{i}.weight"), numpy_helper.from_array(b, f"fc{i}.bias")]
    nodes.append(helper.make_node("Gemm", [prev, f"fc{i}.weight", f"fc{i}.bias"], [f"fc{i}"], transB=1))
    prev = f"fc{i}"
    if n != 10:
        nodes.append(helper.make_node("Relu", [prev], [f"relu{i}"]))
        prev = f"relu{i}"
graph = helper.make_graph(
    nodes,
    "mlp",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 784])],
    [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 10])],
    inits,
)
mlp = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
mlp_src = save(mlp, "mlp_784_256_128_10")
calibration = rng.random((64, 784), dtype=np.float32)


write(
    "mlp_784_256_128_10_qdq",
    lambda p: quantize_static(
        mlp_src,
        p,
        Rows("x", [calibration[i : i + 1] for i in range(len(calibration))]),
        quant_format=QuantFormat.QDQ,
        activation_type=QuantType.QInt8,
        weight_type=QuantType.QInt8,
        reduce_range=True,
    ),
)

# The same MLP in the quantizer's operator format: its Gemms become com.microsoft.QGemm.
write(
    "mlp_784_256_128_10_qop",
    lambda p: quantize_static(
        mlp_src,
        p,
        Rows("x", [calibration[i : i + 1] for i in range(len(calibration))]),
        quant_format=QuantFormat.QOperator,
        activation_type=QuantType.QInt8,
        weight_type=QuantType.QInt8,
        reduce_range=True,
    ),
)

# A small CNN of the shape microcontroller image models have (28x28 grey input, two 3x3
# convolutions with Relu and 2x2 max pooling, a linear classifier), seeded weights,
# quantized static in QDQ: int8 activations, int8 weights per output channel (7-bit as
# above), calibrated on seeded inputs in [0, 1). ONNX Runtime runs its convolutions as
# QLinearConv; a benchmark of the integer convolution, not a trained model.
rng = np.random.default_rng(28)
cnn_nodes, cnn_inits, prev = [], [], "x"
for i, (c, m) in enumerate([(1, 8), (8, 16)]):
    w = (rng.standard_normal((m, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)
    b = (0.05 * rng.standard_normal(m)).astype(np.float32)
    cnn_inits += [
        numpy_helper.from_array(w, f"conv{i}.weight"),
        numpy_helper.from_array(b, f"conv{i}.bias"),
    ]
    cnn_nodes += [
        helper.make_node("Conv", [prev, f"conv{i}.weight", f"conv{i}.bias"], [f"conv{i}"]),
        helper.make_node("Relu", [f"conv{i}"], [f"relu{i}"]),
        helper.make_node(
            "MaxPool", [f"relu{i}"], [f"pool{i}"], kernel_shape=[2, 2], strides=[2, 2]
        ),
    ]
    prev = f"pool{i}"
w = (rng.standard_normal((10, 400)) / 20).astype(np.float32)
cnn_inits += [
    numpy_helper.from_array(w, "fc.weight"),
    numpy_helper.from_array(np.zeros(10, np.float32), "fc.bias"),
]
cnn_nodes += [
    helper.make_node("Flatten", [prev], ["flat"]),
    helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], transB=1),
]
graph = helper.make_graph(
    cnn_nodes,
    "cnn",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 28, 28])],
    [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
    cnn_inits,
)
cnn = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
cnn_src = save(cnn, "cnn_28x28")
cnn_calibration = rng.random((32, 1, 1, 28, 28), dtype=np.float32)


write(
    "cnn_28x28_qdq",
    lambda p: quantize_static(
        cnn_src,
        p,
        Rows("x", cnn_calibration),
        quant_format=QuantFormat.QDQ,
        per_channel=True,
        activation_type=QuantType.QInt8,
        weight_type=QuantType.QInt8,
        reduce_range=True,
    ),
)
# The same CNN in the operator format (QLinearConv, com.microsoft.QGemm), per channel.
write(
    "cnn_28x28_qop",
    lambda p: quantize_static(
        cnn_src,
        p,
        Rows("x", cnn_calibration),
        quant_format=QuantFormat.QOperator,
        per_channel=True,
        activation_type=QuantType.QInt8,
        weight_type=QuantType.QInt8,
        reduce_range=True,
    ),
)
# A block of the operators whose quantized forms the operator format writes in ONNX
# Runtime's com.microsoft domain: a residual Add, a Sigmoid gate (Mul), LeakyRelu,
# AveragePool beside MaxPool joined by Concat, GlobalAveragePool, a Gemm; seeded
# weights, quantized static in the operator format (QLinearAdd, QLinearSigmoid,
# QLinearMul, QLinearLeakyRelu, QLinearAveragePool, QLinearConcat,
# QLinearGlobalAveragePool, QGemm), calibrated on seeded inputs in [-1, 1).
import onnx  # noqa: E402

blocks_rng = np.random.default_rng(11)


def seeded(name, shape, s):
    return numpy_helper.from_array(
        (blocks_rng.standard_normal(shape) * s).astype(np.float32), name
    )


blocks_graph = helper.make_graph(
    [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c0"], ["r0"]),
        helper.make_node("Conv", ["r0", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c1", "r0"], ["res"]),
        helper.make_node("Sigmoid", ["res"], ["gate"]),
        helper.make_node("Mul", ["res", "gate"], ["swish"]),
        helper.make_node("LeakyRelu", ["swish"], ["lr"], alpha=0.1),
        helper.make_node("AveragePool", ["lr"], ["ap"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("MaxPool", ["lr"], ["mp"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Concat", ["ap", "mp"], ["cat"], axis=1),
        helper.make_node("GlobalAveragePool", ["cat"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"]),
        helper.make_node("Gemm", ["flat", "wf", "bf"], ["y"], transB=1),
    ],
    "qop_blocks",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
    [
        seeded("w0", [8, 4, 3, 3], 0.3),
        seeded("b0", [8], 0.1),
        seeded("w1", [8, 8, 3, 3], 0.2),
        seeded("b1", [8], 0.1),
        seeded("wf", [5, 16], 0.3),
        seeded("bf", [5], 0.1),
    ],
)
blocks = helper.make_model(blocks_graph, opset_imports=[helper.make_opsetid("", 17)])
blocks.ir_version = 8
onnx.checker.check_model(blocks, full_check=True)
blocks_src = save(blocks, "qop_blocks_f32")
blocks_calibration = blocks_rng.random((32, 1, 4, 8, 8), dtype=np.float32) * 2 - 1


write(
    "qop_blocks",
    lambda p: quantize_static(
        blocks_src,
        p,
        Rows("x", blocks_calibration),
        quant_format=QuantFormat.QOperator,
        per_channel=True,
        activation_type=QuantType.QInt8,
        weight_type=QuantType.QInt8,
        reduce_range=True,
    ),
)
# A classifier head as the operator format writes its Softmax (com.microsoft
# QLinearSoftmax, output scale 1/256): seeded weights, calibrated on seeded inputs in
# [-1, 1). (A Where between quantized tensors makes the quantizer write a graph that
# reads a tensor it removed; QLinearWhere's file is written by hand below.)
head_graph = helper.make_graph(
    [
        helper.make_node("Gemm", ["x", "wh", "bh"], ["h"], transB=1),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Gemm", ["r", "wo", "bo"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["y"], axis=-1),
    ],
    "qop_head",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
    [
        seeded("wh", [24, 16], 0.3),
        seeded("bh", [24], 0.1),
        seeded("wo", [10, 24], 0.3),
        seeded("bo", [10], 0.1),
    ],
)
head = helper.make_model(head_graph, opset_imports=[helper.make_opsetid("", 17)])
head.ir_version = 8
onnx.checker.check_model(head, full_check=True)
head_src = save(head, "qop_head_f32")
head_calibration = blocks_rng.random((32, 1, 16), dtype=np.float32) * 2 - 1


write(
    "qop_head",
    lambda p: quantize_static(
        head_src,
        p,
        Rows("x", head_calibration),
        quant_format=QuantFormat.QOperator,
        activation_type=QuantType.QInt8,
        weight_type=QuantType.QInt8,
        reduce_range=True,
    ),
)
def scalar(name, v, dtype):
    return numpy_helper.from_array(np.array(v, dtype=dtype), name)


# com.microsoft's QLinearWhere as the quantizer's operator format writes it (condition,
# then each operand's value, scale and zero point, then the output's), by hand: int8
# with the output in x's parameters (ONNX Runtime copies those bytes) and in others,
# uint8, and an operand broadcast over the condition's shape.
where_graph = helper.make_graph(
    [
        helper.make_node("Greater", ["x", "cut"], ["cond"]),
        helper.make_node("Not", ["cond"], ["ncond"]),
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        helper.make_node("QuantizeLinear", ["y", "sy", "zy"], ["yq"]),
        helper.make_node(
            "QLinearWhere",
            ["cond", "xq", "sx", "zx", "yq", "sy", "zy", "sx", "zx"],
            ["zq"],
            domain="com.microsoft",
        ),
        helper.make_node(
            "QLinearWhere",
            ["cond", "yq", "sy", "zy", "xq", "sx", "zx", "sz", "zz"],
            ["wq"],
            domain="com.microsoft",
        ),
        helper.make_node("DequantizeLinear", ["wq", "sz", "zz"], ["w"]),
        helper.make_node("QuantizeLinear", ["x", "su", "zu"], ["xu"]),
        helper.make_node("QuantizeLinear", ["y", "sv", "zv"], ["yu"]),
        helper.make_node(
            "QLinearWhere",
            ["ncond", "xu", "su", "zu", "yu", "sv", "zv", "sw", "zw"],
            ["uq"],
            domain="com.microsoft",
        ),
    ],
    "qop_where",
    [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8]),
        helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 1]),
    ],
    [
        helper.make_tensor_value_info("zq", TensorProto.INT8, [2, 3, 8]),
        helper.make_tensor_value_info("w", TensorProto.FLOAT, [2, 3, 8]),
        helper.make_tensor_value_info("uq", TensorProto.UINT8, [2, 3, 8]),
    ],
    [
        scalar("cut", 0.25, np.float32),
        scalar("sx", 0.0087, np.float32),
        scalar("zx", 3, np.int8),
        scalar("sy", 0.0113, np.float32),
        scalar("zy", -5, np.int8),
        scalar("sz", 0.0131, np.float32),
        scalar("zz", 1, np.int8),
        scalar("su", 0.0079, np.float32),
        scalar("zu", 128, np.uint8),
        scalar("sv", 0.0093, np.float32),
        scalar("zv", 100, np.uint8),
        scalar("sw", 0.0107, np.float32),
        scalar("zw", 120, np.uint8),
    ],
)
where_model = helper.make_model(
    where_graph,
    opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
)
where_model.ir_version = 8
onnx.checker.check_model(where_model, full_check=True)
save(where_model, "qop_where")

# The same CNN by `quantize_dynamic`: int8 weights, activations quantized at run time
# (DynamicQuantizeLinear -> ConvInteger and MatMulInteger, float in between).
write(
    "cnn_28x28_dynamic",
    lambda p: quantize_dynamic(cnn_src, p, weight_type=QuantType.QInt8, reduce_range=True),
)

# Control flow as exporters write it (torch.onnx traces a Python loop over a tensor's
# rows into Scan; a fixed-count loop into Loop): a Scan carrying a running state over the
# rows of x, and a Loop of four trips carrying h, each with per-step outputs. The
# importer maps them onto the same nodes as the language's `for` (and the If below onto
# its `if`).
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

F = TensorProto.FLOAT
scan_body = helper.make_graph(
    [
        helper.make_node("Tanh", ["x_t"], ["t"]),
        helper.make_node("Add", ["s_in", "t"], ["s_out"]),
        helper.make_node("Mul", ["s_out", "x_t"], ["y_t"]),
    ],
    "scan_body",
    [helper.make_tensor_value_info("s_in", F, [3]), helper.make_tensor_value_info("x_t", F, [3])],
    [helper.make_tensor_value_info("s_out", F, [3]), helper.make_tensor_value_info("y_t", F, [3])],
)
loop_body = helper.make_graph(
    [
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        helper.make_node("Cast", ["i"], ["i_f"], to=F),
        helper.make_node("Mul", ["h_in", "half"], ["h_half"]),
        helper.make_node("Sin", ["i_f"], ["si"]),
        helper.make_node("Add", ["h_half", "si"], ["h_sum"]),
        helper.make_node("Add", ["h_sum", "s_final"], ["h_out"]),
        helper.make_node("Relu", ["h_out"], ["step"]),
    ],
    "loop_body",
    [
        helper.make_tensor_value_info("i", TensorProto.INT64, []),
        helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
        helper.make_tensor_value_info("h_in", F, [3]),
    ],
    [
        helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
        helper.make_tensor_value_info("h_out", F, [3]),
        helper.make_tensor_value_info("step", F, [3]),
    ],
)
# And If on the data (torch.onnx's export of a branch on a tensor's value): whether
# h_final's sum passes a threshold picks a branch, each reading the enclosing graph's
# values; a second If on the opposite condition with the branches swapped makes every
# run take one then branch and one else branch.
def doubled(tag):
    return helper.make_graph(
        [helper.make_node("Mul", ["h_final", "two"], [f"doubled_{tag}"])],
        f"doubled_{tag}",
        [],
        [helper.make_tensor_value_info(f"doubled_{tag}", F, [3])],
    )


def reflected(tag):
    return helper.make_graph(
        [
            helper.make_node("Neg", ["h_final"], [f"negated_{tag}"]),
            helper.make_node("Add", [f"negated_{tag}", "s_final"], [f"reflected_{tag}"]),
        ],
        f"reflected_{tag}",
        [],
        [helper.make_tensor_value_info(f"reflected_{tag}", F, [3])],
    )


control = helper.make_graph(
    [
        helper.make_node("Scan", ["s0", "x"], ["s_final", "ys"], body=scan_body, num_scan_inputs=1),
        helper.make_node("Loop", ["trips", "", "h0"], ["h_final", "steps"], body=loop_body),
        helper.make_node("ReduceSum", ["h_final"], ["total"], keepdims=0),
        helper.make_node("Greater", ["total", "threshold"], ["above"]),
        helper.make_node("Not", ["above"], ["below"]),
        helper.make_node(
            "If", ["above"], ["gated"], then_branch=doubled("a"), else_branch=reflected("a")
        ),
        helper.make_node(
            "If", ["below"], ["swapped"], then_branch=reflected("b"), else_branch=doubled("b")
        ),
    ],
    "control_flow",
    [helper.make_tensor_value_info("x", F, [5, 3]), helper.make_tensor_value_info("h0", F, [3])],
    [
        helper.make_tensor_value_info("ys", F, [5, 3]),
        helper.make_tensor_value_info("h_final", F, [3]),
        helper.make_tensor_value_info("steps", F, [4, 3]),
        helper.make_tensor_value_info("gated", F, [3]),
        helper.make_tensor_value_info("swapped", F, [3]),
    ],
    [
        numpy_helper.from_array(np.zeros(3, np.float32), "s0"),
        numpy_helper.from_array(np.array(4, np.int64), "trips"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
        numpy_helper.from_array(np.array(2.0, np.float32), "two"),
        numpy_helper.from_array(np.array(2.0, np.float32), "threshold"),
    ],
)
control_model = helper.make_model(control, opset_imports=[helper.make_opsetid("", 17)])
control_model.ir_version = 8
onnx.checker.check_model(control_model, full_check=True)
path = os.path.join(out, "control_flow.onnx")
onnx.save(control_model, path + ".partial.onnx")
os.replace(path + ".partial.onnx", path)
print("control_flow: written")

# Loops ended by the data, as torch.onnx writes a Python `while` (M = INT64_MAX, the
# condition computed by the body) and a loop over a count only the data gives (M read
# when the model runs): both carry values only, so their outputs keep one shape.
I64 = TensorProto.INT64
grow_body = helper.make_graph(
    [
        helper.make_node("Abs", ["g_in"], ["g_abs"]),
        helper.make_node("Mul", ["g_abs", "rate"], ["g_scaled"]),
        helper.make_node("Add", ["g_scaled", "nudge"], ["g_out"]),
        helper.make_node("Add", ["n_in", "one"], ["n_out"]),
        helper.make_node("ReduceSum", ["g_out"], ["g_total"], keepdims=0),
        helper.make_node("Less", ["g_total", "limit"], ["more"]),
    ],
    "grow_body",
    [
        helper.make_tensor_value_info("i", I64, []),
        helper.make_tensor_value_info("go", TensorProto.BOOL, []),
        helper.make_tensor_value_info("g_in", F, [4]),
        helper.make_tensor_value_info("n_in", I64, []),
    ],
    [
        helper.make_tensor_value_info("more", TensorProto.BOOL, []),
        helper.make_tensor_value_info("g_out", F, [4]),
        helper.make_tensor_value_info("n_out", I64, []),
    ],
)
count_body = helper.make_graph(
    [
        helper.make_node("Identity", ["go2"], ["go2_out"]),
        helper.make_node("Cast", ["j"], ["j_f"], to=F),
        helper.make_node("Sin", ["acc_in"], ["acc_sin"]),
        helper.make_node("Mul", ["j_f", "tenth"], ["j_tenth"]),
        helper.make_node("Add", ["acc_sin", "j_tenth"], ["acc_out"]),
    ],
    "count_body",
    [
        helper.make_tensor_value_info("j", I64, []),
        helper.make_tensor_value_info("go2", TensorProto.BOOL, []),
        helper.make_tensor_value_info("acc_in", F, [4]),
    ],
    [
        helper.make_tensor_value_info("go2_out", TensorProto.BOOL, []),
        helper.make_tensor_value_info("acc_out", F, [4]),
    ],
)
# A Loop of three trips with a per-iteration output whose body runs the while loop
# above (nested: the inner loop's counter and condition stay its own).
nested_body = helper.make_graph(
    [
        helper.make_node("Cast", ["t"], ["t_f"], to=F),
        helper.make_node("Mul", ["t_f", "tenth"], ["t_tenth"]),
        helper.make_node("Add", ["v_in", "t_tenth"], ["v_start"]),
        helper.make_node("Abs", ["v_start"], ["v_abs"]),
        helper.make_node("ReduceSum", ["v_abs"], ["v_total"], keepdims=0),
        helper.make_node("Less", ["v_total", "limit"], ["v_go"]),
        helper.make_node(
            "Loop", ["forever", "v_go", "v_start", "zero"], ["v_out", "v_rounds"], body=grow_body
        ),
        helper.make_node("Cast", ["v_rounds"], ["v_rounds_f"], to=F),
        helper.make_node("Mul", ["v_out", "v_rounds_f"], ["v_row"]),
        helper.make_node("Identity", ["nest_go"], ["nest_go_out"]),
    ],
    "nested_body",
    [
        helper.make_tensor_value_info("t", I64, []),
        helper.make_tensor_value_info("nest_go", TensorProto.BOOL, []),
        helper.make_tensor_value_info("v_in", F, [4]),
    ],
    [
        helper.make_tensor_value_info("nest_go_out", TensorProto.BOOL, []),
        helper.make_tensor_value_info("v_out", F, [4]),
        helper.make_tensor_value_info("v_row", F, [4]),
    ],
)
while_graph = helper.make_graph(
    [
        helper.make_node("Abs", ["x"], ["x_abs"]),
        helper.make_node("ReduceSum", ["x_abs"], ["x_total"], keepdims=0),
        helper.make_node("Less", ["x_total", "limit"], ["start"]),
        helper.make_node(
            "Loop", ["forever", "start", "x", "zero"], ["grown", "rounds"], body=grow_body
        ),
        helper.make_node("Mul", ["x_total", "three"], ["x_three"]),
        helper.make_node("Floor", ["x_three"], ["x_floor"]),
        helper.make_node("Cast", ["x_floor"], ["count"], to=I64),
        helper.make_node("Loop", ["count", "", "x"], ["counted"], body=count_body),
        helper.make_node("Loop", ["trips3", "", "x"], ["nested", "nested_rows"], body=nested_body),
    ],
    "while_loops",
    [helper.make_tensor_value_info("x", F, [4])],
    [
        helper.make_tensor_value_info("grown", F, [4]),
        helper.make_tensor_value_info("rounds", I64, []),
        helper.make_tensor_value_info("counted", F, [4]),
        helper.make_tensor_value_info("nested", F, [4]),
        helper.make_tensor_value_info("nested_rows", F, [3, 4]),
    ],
    [
        numpy_helper.from_array(np.array(np.iinfo(np.int64).max, np.int64), "forever"),
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array(1, np.int64), "one"),
        numpy_helper.from_array(np.array(1.1, np.float32), "rate"),
        numpy_helper.from_array(np.array(0.05, np.float32), "nudge"),
        numpy_helper.from_array(np.array(2.0, np.float32), "limit"),
        numpy_helper.from_array(np.array(3.0, np.float32), "three"),
        numpy_helper.from_array(np.array(0.1, np.float32), "tenth"),
        numpy_helper.from_array(np.array(3, np.int64), "trips3"),
    ],
)
while_model = helper.make_model(while_graph, opset_imports=[helper.make_opsetid("", 17)])
while_model.ir_version = 8
onnx.checker.check_model(while_model, full_check=True)
path = os.path.join(out, "while_loops.onnx")
onnx.save(while_model, path + ".partial.onnx")
os.replace(path + ".partial.onnx", path)
print("while_loops: written")
