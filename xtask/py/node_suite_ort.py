"""The emitted ONNX of every node case tinyonnx passes, checked outside tinyonnx: onnx's
full check (shapes and types inferred), then ONNX Runtime on the case's data sets,
compared with the stored outputs as the suite compares tinyonnx's (rtol 1e-3, atol
1e-7; integers and bools exact; a 16-bit float output rounded to its type first).

usage: node_suite_ort.py CASES_DIR EMITTED_DIR < case names
prints one line per case: `name<TAB>ok` or `name<TAB>fail<TAB>why`.
"""

import glob
import os
import sys

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

PORT_TYPES = {
    "tensor(float)": np.float32,
    "tensor(double)": np.float64,
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
    "tensor(int16)": np.int16,
    "tensor(int8)": np.int8,
    "tensor(uint64)": np.uint64,
    "tensor(uint32)": np.uint32,
    "tensor(uint16)": np.uint16,
    "tensor(uint8)": np.uint8,
    "tensor(bool)": np.bool_,
}
SIXTEEN = {onnx.TensorProto.FLOAT16: np.float16, onnx.TensorProto.BFLOAT16: ml_dtypes.bfloat16}


def tensors(data_set, kind):
    paths = glob.glob(os.path.join(data_set, f"{kind}_*.pb"))
    paths.sort(key=lambda p: int(p.rsplit("_", 1)[1][:-3]))
    return [onnx.load_tensor(p) for p in paths]


def carried(a, port_type):
    """A stored input in the element type the emitted port carries it in (narrow formats
    widen: floats to f32, the small integers to i8/u8)."""
    want = PORT_TYPES[port_type]
    if a.dtype.kind not in "biuf" or (a.dtype.kind == "f" and a.dtype.itemsize < 4):
        a = a.astype(np.float32)
    if a.dtype.kind == "V" or str(a.dtype) in ("int4", "uint4", "int2", "uint2"):
        a = a.astype(np.int64)
    return a.astype(want)


def check(cases, emitted, name):
    path = os.path.join(emitted, name + ".onnx")
    model = onnx.load(path)
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:  # noqa: BLE001 - any refusal is the finding
        return "onnx.checker: " + str(e).splitlines()[0][:200]
    so = ort.SessionOptions()
    so.log_severity_level = 4
    try:
        session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001
        return "ONNX Runtime load: " + str(e).splitlines()[0][:200]
    sets = sorted(glob.glob(os.path.join(cases, name, "test_data_set_*")))
    for data_set in sets:
        given = tensors(data_set, "input")
        by_name = {t.name: t for t in given}
        feed = {}
        for k, port in enumerate(session.get_inputs()):
            t = by_name.get(port.name, given[k] if k < len(given) else None)
            if t is None:
                return f"no data for input {port.name}"
            feed[port.name] = carried(numpy_helper.to_array(t), port.type)
        try:
            got = session.run(None, feed)
        except Exception as e:  # noqa: BLE001
            return "ONNX Runtime run: " + str(e).splitlines()[0][:200]
        for k, want_t in enumerate(tensors(data_set, "output")):
            want = numpy_helper.to_array(want_t)
            ours = np.asarray(got[k])
            sixteen = SIXTEEN.get(want_t.data_type)
            if sixteen is not None:
                ours = ours.astype(sixteen)
            if want.dtype.kind not in "biuf" or (want.dtype.kind == "f" and want.dtype.itemsize < 4):
                want = want.astype(np.float32)
                ours = ours.astype(np.float32)
            try:
                if want.dtype.kind == "f" or ours.dtype.kind == "f":
                    np.testing.assert_allclose(
                        ours.astype(np.float64), want.astype(np.float64), rtol=1e-3, atol=1e-7
                    )
                else:
                    np.testing.assert_array_equal(ours.astype(np.int64), want.astype(np.int64))
            except AssertionError as e:
                lines = [l.strip() for l in str(e).splitlines() if l.strip()]
                return f"{os.path.basename(data_set)} output {k}: " + " ".join(lines[1:3])[:200]
    return None


def main():
    cases, emitted = sys.argv[1], sys.argv[2]
    for name in sys.stdin.read().split():
        try:
            why = check(cases, emitted, name)
        except Exception as e:  # noqa: BLE001 - reported per case, never the end of the run
            why = "error: " + str(e).splitlines()[0][:200] if str(e) else repr(e)
        line = f"{name}\tok" if why is None else f"{name}\tfail\t{why}"
        print(line.replace("\n", " "), flush=True)


if __name__ == "__main__":
    main()
