//! The quantized models against ONNX Runtime running the same files, held to the
//! quantized contract (README, "int8"): an output that a `DequantizeLinear` of a fixed
//! scale produces is counted in quantization steps: equal, one step apart (a rounding tie
//! broken the other way after a different order of float operations), or more (a
//! failure); at most 1 % of its elements may be one step apart. Labels must be equal.
//! A float output (the dynamic model's) must meet the float contract.

use std::path::Path;

use tinyonnx_proto::{Message, ModelProto, TensorProto};
use tinyonnx_tests::{Provider, Values, compare_values, run_ort_values, seeded_values, tolerance};

/// The step of graph output `name`: the scale of the `DequantizeLinear` that makes it
/// (through Identity nodes), when that scale is one constant value.
fn step_of(model: &ModelProto, name: &str) -> Option<f32> {
    let graph = model.graph.as_ref()?;
    let mut name = name.to_string();
    loop {
        let node = graph
            .node
            .iter()
            .find(|n| n.output.first() == Some(&name))?;
        match node.op_type.as_deref()? {
            "Identity" => name = node.input.first()?.clone(),
            "DequantizeLinear" => {
                let scale = node.input.get(1)?;
                let t: &TensorProto = graph
                    .initializer
                    .iter()
                    .find(|t| t.name.as_ref() == Some(scale))?;
                return match (
                    t.float_data.as_slice(),
                    t.raw_data.as_deref().unwrap_or_default(),
                ) {
                    ([s], _) => Some(*s),
                    ([], raw) if raw.len() == 4 => {
                        Some(f32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]))
                    }
                    _ => None,
                };
            }
            _ => return None,
        }
    }
}

#[test]
fn quantized_models_match_onnx_runtime_within_one_step() {
    let provider = Provider::from_env().unwrap();
    let mut failures = Vec::new();
    println!(
        "{:<28} {:>8} {:>10} {:>10} {:>22}",
        "model", "params", "MACs", "arena", "elements equal / 1 step"
    );
    for &(ref example, file, scale) in tinyonnx_imported::QUANTIZED {
        let info = &example.info;
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let bytes = std::fs::read(&path).unwrap();
        let model = ModelProto::decode(&bytes[..]).unwrap();
        let mut sess = tinyonnx_tests::session_from_file(&path, provider).unwrap();
        let (mut equal, mut one, mut total) = (0usize, 0usize, 0usize);
        // Seeded inputs in (-scale, scale): for the digits (pixels in 0..=16) the
        // calibrated range and the negative values no image has.
        for seed in 1..=50 {
            let inputs = seeded_values(info, seed, scale).unwrap();
            let expected = run_ort_values(&mut sess, info, &inputs)
                .unwrap_or_else(|e| panic!("{}: {e}", info.name));
            let ours = tinyonnx_tests::run_ours(example, &inputs).unwrap();
            for (k, (a, b)) in ours.iter().zip(&expected).enumerate() {
                let out = &info.outputs[k].name;
                match (a, b, step_of(&model, out)) {
                    (Values::F32(a), Values::F32(b), Some(step)) => {
                        for (x, y) in a.iter().zip(b) {
                            let steps = ((x - y) / step).abs().round();
                            total += 1;
                            match steps as u32 {
                                0 => equal += 1,
                                1 => one += 1,
                                _ => failures.push(format!(
                                    "{} output `{out}` seed {seed}: {x} against {y}, {steps} steps of {step}",
                                    info.name
                                )),
                            }
                        }
                    }
                    _ => {
                        let d = compare_values(a, b);
                        if d.max_scaled > tolerance(a) {
                            failures.push(format!(
                                "{} output `{out}` seed {seed}: max abs diff {:.3e} (scaled {:.3e})",
                                info.name, d.max_abs, d.max_scaled
                            ));
                        }
                    }
                }
            }
        }
        if one * 100 > total {
            failures.push(format!(
                "{}: {one} of {total} quantized elements are one step from ONNX Runtime's (more than 1 %)",
                info.name
            ));
        }
        println!(
            "{:<28} {:>8} {:>10} {:>10} {:>14} / {:>5}",
            info.name, info.params, info.macs, info.arena_bytes, equal, one
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
