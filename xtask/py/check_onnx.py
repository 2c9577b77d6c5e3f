"""Checks exported ONNX files with the onnx package, independently of tinyonnx.

For every file: onnx.checker.check_model(full_check=True); then the model's value_info
and output shapes are removed, ONNX's strict shape inference recomputes them, and every
shape tinyonnx wrote must equal what ONNX inferred. Exits 1 on the first bad file.
"""

import sys

import onnx
from onnx import shape_inference


def tensor_types(values):
    out = {}
    for vi in values:
        t = vi.type.tensor_type
        dims = []
        for d in t.shape.dim:
            if d.HasField("dim_value"):
                dims.append(d.dim_value)
            elif d.HasField("dim_param"):
                dims.append(d.dim_param)
            else:
                dims.append("?")
        out[vi.name] = (t.elem_type, dims if t.HasField("shape") else None)
    return out


def check(path):
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    ours = tensor_types(list(model.graph.value_info) + list(model.graph.output))

    stripped = onnx.ModelProto()
    stripped.CopyFrom(model)
    del stripped.graph.value_info[:]
    for o in stripped.graph.output:
        o.type.tensor_type.ClearField("shape")
    inferred = shape_inference.infer_shapes(
        stripped, check_type=True, strict_mode=True, data_prop=True
    )
    theirs = tensor_types(list(inferred.graph.value_info) + list(inferred.graph.output))

    problems = []
    for name, (elem, dims) in ours.items():
        if name not in theirs:
            problems.append(f"{name}: ONNX inferred nothing for it")
            continue
        t_elem, t_dims = theirs[name]
        if (elem, dims) != (t_elem, t_dims):
            problems.append(
                f"{name}: tinyonnx says elem_type {elem} shape {dims}, "
                f"ONNX infers elem_type {t_elem} shape {t_dims}"
            )
    if problems:
        raise SystemExit(f"FAIL {path}:\n  " + "\n  ".join(problems))
    print(f"ok   {path}: checker (full_check) passed, {len(ours)} tensor shapes equal ONNX's inference")


def main():
    print(f"onnx {onnx.__version__}")
    for path in sys.argv[1:]:
        check(path)


if __name__ == "__main__":
    main()
