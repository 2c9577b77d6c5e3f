"""Checks tinyonnx's operator dtype and attribute rules against the ONNX specification
(onnx.defs).

Reads the JSON `cargo xtask test` writes from the operator registry: per operator, the
lowest opset, the element types of its `T` inputs, the types that need a later opset,
which input is the first `T` input, and each attribute with the opsets tinyonnx gives it.
For every opset from 13 to 23 that tinyonnx accepts the operator at, every element type
tinyonnx accepts there must be allowed by ONNX's schema of that opset for that input, and
an attribute must be in that schema exactly at the opsets tinyonnx gives it (so a model
never carries an attribute its opset lacks, and no valid attribute is refused). Files of
opsets 24 to 28 import as opset 23, so from 24 to 28 each schema must keep its inputs,
outputs and attributes (defaults included) of opset 23; only new element types, new
attributes and new trailing optional inputs (which the importer refuses) may appear. Prints one line per operator;
exits 1 on any disagreement.
"""

import json
import sys

import onnx.defs

# core/src/import/convert.rs: MAX_FILE_OPSET
MAX_FILE_OPSET = 28
# core/src/ops/schema.rs: MAX_OPSET
MAX_OPSET = 23

ONNX_TYPES = {
    "f32": "tensor(float)",
    "f64": "tensor(double)",
    "i64": "tensor(int64)",
    "i32": "tensor(int32)",
    "i8": "tensor(int8)",
    "u8": "tensor(uint8)",
    "bool": "tensor(bool)",
    "i16": "tensor(int16)",
    "u16": "tensor(uint16)",
    "u32": "tensor(uint32)",
    "u64": "tensor(uint64)",
}


def allowed(schema, input_index):
    formal = schema.inputs[min(input_index, len(schema.inputs) - 1)]
    for c in schema.type_constraints:
        if c.type_param_str == formal.type_str:
            return set(c.allowed_type_strs)
    return {formal.type_str}


def main():
    ops = json.load(open(sys.argv[1]))
    bad = 0
    for op in ops:
        checked = 0
        attr_checked = 0
        for opset in range(max(13, op["since"]), MAX_OPSET + 1):
            schema = onnx.defs.get_schema(op["op"], opset)
            ok = allowed(schema, op["t_input"]) if op["t_input"] is not None else set()
            for d in op["dtypes"] if op["t_input"] is not None else []:
                if op["dtype_since"].get(d, 0) > opset:
                    continue
                checked += 1
                if ONNX_TYPES[d] not in ok:
                    print(f"{op['op']}: tinyonnx accepts {d} at opset {opset}, ONNX "
                          f"{schema.since_version} does not ({sorted(ok)})")
                    bad += 1
            for a in op["attrs"]:
                ours = a["since"] <= opset <= a["until"]
                theirs = a["name"] in schema.attributes
                attr_checked += 1
                if ours != theirs:
                    print(f"{op['op']}: attribute {a['name']} at opset {opset}: tinyonnx "
                          f"{'has' if ours else 'lacks'} it, ONNX {schema.since_version} "
                          f"{'has' if theirs else 'lacks'} it")
                    bad += 1
        base = onnx.defs.get_schema(op["op"], MAX_OPSET)
        for opset in range(MAX_OPSET + 1, MAX_FILE_OPSET + 1):
            schema = onnx.defs.get_schema(op["op"], opset)
            # A later opset may append optional inputs and add attributes: a file
            # that uses them is refused (too many inputs, an unknown attribute).
            extra = schema.inputs[len(base.inputs):]
            same_ports = (
                len(schema.inputs) >= len(base.inputs)
                and all(i.option == onnx.defs.OpSchema.FormalParameterOption.Optional
                        for i in extra)
                and len(schema.outputs) == len(base.outputs)
            )
            kept = all(
                n in schema.attributes
                and schema.attributes[n].default_value == a.default_value
                for n, a in base.attributes.items())
            if not (same_ports and kept):
                print(f"{op['op']}: opset {opset} (ONNX {schema.since_version}) changes "
                      f"inputs, outputs or attributes of opset {MAX_OPSET}")
                bad += 1
        print(f"{op['op']:<24} {len(op['dtypes'])} dtypes, {checked} (opset, dtype) pairs "
              f"and {attr_checked} (opset, attribute) pairs agree")
    if bad:
        sys.exit(1)
    print(f"{len(ops)} operators: every dtype and attribute agrees with the ONNX schemas")


main()
