"""The same models at every opset from 7 to 23, for the importer's opset conversion:
a small network written at opset 7 with the operators whose form later opsets changed
(BatchNormalization's spatial, Pad's, Clip's, Slice's, Split's, Squeeze's, Unsqueeze's
and ReduceSum's attributes that became inputs, Dropout's ratio, Softmax and LogSoftmax
over the flattened trailing axes), converted upward by onnx.version_converter, and the
onnx package's light SqueezeNet (opset 9) likewise. Usage: opset_variants.py DIR;
writes DIR/<model>_opset<N>.onnx for every opset the converter reaches.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, version_converter

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)


def const(name, shape, scale=0.5):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


inits = [
    const("W", [4, 3, 3, 3]),
    const("B", [4]),
    const("bn_scale", [4]),
    const("bn_bias", [4]),
    const("bn_mean", [4]),
    numpy_helper.from_array((rng.random(4) + 0.5).astype(np.float32), "bn_var"),
    numpy_helper.from_array(np.array([1, 16], dtype=np.int64), "flat"),
    const("G", [16, 5]),
    const("C", [5]),
]
nodes = [
    helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
    helper.make_node(
        "BatchNormalization",
        ["c", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
        ["bn"],
        epsilon=1e-5,
        spatial=1,
    ),
    helper.make_node("Relu", ["bn"], ["r"]),
    helper.make_node("Pad", ["r"], ["p"], mode="constant", pads=[0, 0, 1, 1, 0, 0, 1, 1], value=0.5),
    helper.make_node("Clip", ["p"], ["cl"], min=0.1, max=0.8),
    helper.make_node("Slice", ["cl"], ["sl"], starts=[0, 1], ends=[9, 10], axes=[2, 3]),
    helper.make_node("MaxPool", ["sl"], ["mp"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Split", ["mp"], ["s1", "s2"], axis=1, split=[2, 2]),
    helper.make_node("Add", ["s1", "s2"], ["a"]),
    helper.make_node("ReduceSum", ["a"], ["rs"], axes=[1], keepdims=1),
    helper.make_node("Squeeze", ["rs"], ["sq"], axes=[1]),
    helper.make_node("LogSoftmax", ["sq"], ["z"], axis=1),
    helper.make_node("Unsqueeze", ["sq"], ["us"], axes=[1]),
    helper.make_node("Reshape", ["us", "flat"], ["f"]),
    helper.make_node("Gemm", ["f", "G", "C"], ["g"]),
    helper.make_node("Dropout", ["g"], ["d"], ratio=0.5),
    helper.make_node("Softmax", ["d"], ["y"], axis=1),
]
graph = helper.make_graph(
    nodes,
    "opset7_net",
    # IR 3 lists every initializer among the graph inputs too.
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])]
    + [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in inits],
    [
        helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5]),
        helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4, 4]),
    ],
    inits,
)
net = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 7)], ir_version=3)
onnx.checker.check_model(net)

squeezenet = onnx.load(
    os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/light/light_squeezenet.onnx")
)
for name, model, first in [("net", net, 7), ("squeezenet", squeezenet, 9)]:
    for v in range(first, 24):
        m = model if v == first else version_converter.convert_version(model, v)
        # The lowest IR version of the opset, as an exporter of that time wrote it
        # (initializers need not be graph inputs from IR 4).
        m.ir_version = max(3, helper.find_min_ir_version_for([helper.make_opsetid("", v)]))
        onnx.checker.check_model(m)
        onnx.save(m, os.path.join(out, f"{name}_opset{v}.onnx"))
print("wrote", len(os.listdir(out)), "files to", out)
