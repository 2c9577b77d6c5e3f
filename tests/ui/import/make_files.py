"""Writes the broken ONNX files the import ui cases read (run with the project venv's
python from this directory; the files are committed, this records how they were made)."""

import onnx
from onnx import TensorProto, helper

# A valid classifier, cut to half its bytes: a truncated download.
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])
w = helper.make_tensor("w", TensorProto.FLOAT, [4, 2], [0.5] * 8)
g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g", [x], [y], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
data = m.SerializeToString()
open("truncated.onnx", "wb").write(data[: len(data) // 2])

# Open dims, an operator tinyonnx lacks, a name nothing makes, an If on data whose
# branches differ in shape: every problem reported in one compile.
x = helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, "H", "W"])
flag = helper.make_tensor_value_info("flag", TensorProto.BOOL, [])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
z = helper.make_tensor_value_info("z", TensorProto.FLOAT, None)
# The If's branches give values of different shapes: which one the data picks decides
# the output's shape, which no static plan holds.
then_g = helper.make_graph(
    [helper.make_node("Constant", [], ["t"], value_floats=[1.0, 2.0])],
    "then",
    [],
    [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)],
)
else_g = helper.make_graph(
    [helper.make_node("Constant", [], ["e"], value_floats=[1.0, 2.0, 3.0])],
    "else",
    [],
    [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
)
nodes = [
    helper.make_node("Unique", ["image"], ["n"], name="norm1"),
    helper.make_node("Add", ["n", "bias"], ["y"], name="add_bias"),
    helper.make_node("If", ["flag"], ["z"], name="branch", then_branch=then_g, else_branch=else_g),
]
g = helper.make_graph(nodes, "g", [x, flag], [y, z])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)], ir_version=7)
open("unsupported.onnx", "wb").write(m.SerializeToString())

# Opset 5 (before what tinyonnx imports).
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 5)], ir_version=3)
open("opset5.onnx", "wb").write(m.SerializeToString())
