"""Writes the ONNX backend node test cases (the ones `onnx.backend.test.case.node`
builds; the onnx wheel no longer ships them) as the backend test layout: one directory
per case with model.onnx and test_data_set_N/{input,output}_K.pb, plus index.tsv with
each case's operators and default-domain opset.

usage: node_cases.py OUT_DIR
"""

import os
import shutil
import sys

import ml_dtypes
import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.case import node


def tensor(value, name):
    if isinstance(value, onnx.TensorProto):
        return value
    return numpy_helper.from_array(np.asarray(value), name)


def main(out):
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    rows = []
    for case in node.collect_testcases(None):
        model = case.model
        graph = model.graph
        opset = next(
            (o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0
        )
        ops = sorted({n.op_type for n in graph.node})
        # Sequence, map and optional values have no tensor file; the runner refuses
        # such cases by their types, so only their model is written.
        tensors_only = all(
            v.type.HasField("tensor_type") for v in list(graph.input) + list(graph.output)
        )
        case_dir = os.path.join(out, case.name)
        os.makedirs(case_dir)
        with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
            f.write(model.SerializeToString())
        if tensors_only:
            for i, (inputs, outputs) in enumerate(case.data_sets):
                d = os.path.join(case_dir, f"test_data_set_{i}")
                os.makedirs(d)
                for kind, values, infos in (
                    ("input", inputs, graph.input),
                    ("output", outputs, graph.output),
                ):
                    for j, v in enumerate(values):
                        with open(os.path.join(d, f"{kind}_{j}.pb"), "wb") as f:
                            f.write(tensor(v, infos[j].name).SerializeToString())
        rows.append(f"{case.name}\t{opset}\t{','.join(ops)}\t{int(tensors_only)}")
    with open(os.path.join(out, "index.tsv"), "w") as f:
        f.write(
            f"# onnx {onnx.__version__} ml_dtypes {ml_dtypes.__version__}: "
            "case, opset, operators, tensors only\n"
        )
        f.write("\n".join(rows) + "\n")
    print(f"{len(rows)} node cases in {out}")


if __name__ == "__main__":
    main(sys.argv[1])
