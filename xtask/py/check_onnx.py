"""Checks exported ONNX files with the onnx package, independently of tinyonnx.

For every file: onnx.checker.check_model(full_check=True); then the model's value_info
and output shapes are removed, ONNX's strict shape inference recomputes them, and every
shape tinyonnx wrote must agree with what ONNX inferred: equal dimensions, except where
ONNX infers an unknown dimension (a generated `unk__N` name, or none), which tinyonnx may
know more precisely (a `-1` in a Reshape of a symbolic batch, for instance), or a
tensor whose whole shape ONNX leaves unknown (a Loop's carried values) when the element
types agree. Those are
counted and printed; so are tensors whose shapes ONNX cannot infer because they follow a
custom operator (a domain ONNX does not know). Exits 1 on the first bad file.
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

    # ONNX knows nothing of custom operators (domains other than the default and the
    # model's functions): what it cannot infer after them counts as unknown, not wrong.
    functions = {(f.domain, f.name) for f in model.functions}
    custom = any(
        n.domain not in ("", "ai.onnx") and (n.domain, n.op_type) not in functions
        for n in model.graph.node
    )
    problems = []
    refined = 0
    opaque = 0
    shapeless = 0
    for name, (elem, dims) in ours.items():
        if custom and (name not in theirs or theirs[name][1] is None):
            opaque += 1
            continue
        if name not in theirs:
            problems.append(f"{name}: ONNX inferred nothing for it")
            continue
        t_elem, t_dims = theirs[name]
        if t_dims is None and elem == t_elem:
            # ONNX infers no shape at all (a Loop's carried values: it does not
            # unify them across iterations); the element type still has to agree.
            shapeless += 1
            continue
        agree = elem == t_elem and dims is not None and t_dims is not None and len(dims) == len(t_dims)
        if agree:
            for a, b in zip(dims, t_dims):
                if a == b:
                    continue
                if unknown(b):
                    refined += 1
                    continue
                agree = False
        if not agree:
            problems.append(
                f"{name}: tinyonnx says elem_type {elem} shape {dims}, "
                f"ONNX infers elem_type {t_elem} shape {t_dims}"
            )
    if problems:
        raise SystemExit(f"FAIL {path}:\n  " + "\n  ".join(problems))
    note = f" ({refined} dims ONNX leaves unknown)" if refined else ""
    if shapeless:
        note += f" ({shapeless} tensors whose shape ONNX leaves unknown, element type agrees)"
    if opaque:
        note += f" ({opaque} tensors after custom operators ONNX cannot infer)"
    print(f"ok   {path}: checker (full_check) passed, {len(ours)} tensor shapes agree with ONNX's inference{note}")


def unknown(dim):
    return dim == "?" or (isinstance(dim, str) and dim.startswith("unk__"))


def main():
    print(f"onnx {onnx.__version__}")
    for path in sys.argv[1:]:
        check(path)


if __name__ == "__main__":
    main()
