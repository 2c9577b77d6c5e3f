//! Host latency of the quantized models' forward passes against ONNX Runtime running
//! the original files (CPU, one intra-op thread, its default int8 handling), on the
//! same seeded inputs: the paired
//! timing of `cargo xtask bench`, which runs this in a release build. Both sides are
//! timed through the tests' value conversions. Writes the rows as JSON to the path
//! given as the first argument, if any.

use std::hint::black_box;
use std::path::Path;

use tinyonnx_tests::timing::paired_median_ns;
use tinyonnx_tests::{Oracle, Provider, run_ort_values, seeded_values};

fn main() {
    let provider = Provider::from_env().expect("ORT_DYLIB_PATH names ONNX Runtime");
    println!(
        "{:<28} {:>10} {:>10} {:>7} {:>9}",
        "model", "ours us", "ORT us", "ratio", "min ratio"
    );
    let mut rows = Vec::new();
    for (example, file, scale) in tinyonnx_imported::QUANTIZED {
        let info = &example.info;
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let mut sess = tinyonnx_tests::session_from_file_for(&path, provider, Oracle::Timing)
            .expect("the file loads");
        let inputs = seeded_values(info, 1, *scale).expect("seeded inputs");
        let t = paired_median_ns(
            || {
                tinyonnx_tests::run_ours(example, black_box(&inputs)).expect("our forward pass");
            },
            || {
                run_ort_values(&mut sess, info, black_box(&inputs)).expect("ONNX Runtime runs it");
            },
        );
        println!(
            "{:<28} {:>10.2} {:>10.2} {:>7.2} {:>9.2}",
            info.name,
            t.a_median / 1e3,
            t.b_median / 1e3,
            t.ratio,
            t.min_ratio
        );
        rows.push(format!(
            "  {{\"model\": \"{}\", \"ours_ns\": {:.0}, \"ort_ns\": {:.0}, \"ratio\": {:.3}, \"min_ratio\": {:.3}}}",
            info.name, t.a_median, t.b_median, t.ratio, t.min_ratio
        ));
    }
    if let Some(out) = std::env::args().nth(1) {
        std::fs::write(&out, format!("[\n{}\n]\n", rows.join(",\n"))).expect("the JSON is written");
        println!("wrote {out}");
    }
}
