//! The weight-file readers on mutated files: a valid `.npy`, `.npz`, `.safetensors` and
//! `.onnx` file each, with bytes flipped, cut, repeated and overwritten, must load or be
//! refused with an error, never panic. `TINYONNX_FUZZ_SECONDS` sets the budget (default 3).

use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use tinyonnx_core::init::SplitMix64;
use tinyonnx_core::weights::Files;
use tinyonnx_proto::Message;

#[path = "fuzz/bytes.rs"]
mod bytes;
use bytes::mutate;

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn npy(values: &[f32]) -> Vec<u8> {
    let mut header = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}",
        values.len()
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(f32_bytes(values));
    out
}

fn npz(values: &[f32]) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut out);
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("w.npy", opts).unwrap();
    zip.write_all(&npy(values)).unwrap();
    zip.finish().unwrap();
    out.into_inner()
}

fn safetensors(values: &[f32]) -> Vec<u8> {
    let header = format!(
        "{{\"w\":{{\"dtype\":\"F32\",\"shape\":[{}],\"data_offsets\":[0,{}]}}}}",
        values.len(),
        4 * values.len()
    );
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend(header.as_bytes());
    out.extend(f32_bytes(values));
    out
}

fn onnx(values: &[f32]) -> Vec<u8> {
    use tinyonnx_proto as pb;
    let t = pb::TensorProto {
        dims: vec![values.len() as i64],
        data_type: Some(1),
        name: Some("w".into()),
        raw_data: Some(f32_bytes(values)),
        ..Default::default()
    };
    pb::ModelProto {
        graph: Some(pb::GraphProto {
            initializer: vec![t],
            ..Default::default()
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

#[test]
fn mutated_weight_files_never_panic() {
    let seconds: u64 = std::env::var("TINYONNX_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let values = [0.5f32, -1.0, 2.0, 4.0];
    let seeds = [
        ("npy", npy(&values)),
        ("npz", npz(&values)),
        ("safetensors", safetensors(&values)),
        ("onnx", onnx(&values)),
    ];
    let dir = std::env::temp_dir().join(format!("tinyonnx-fuzz-readers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Every seed loads as written.
    for (ext, bytes) in &seeds {
        let path = dir.join(format!("seed.{ext}"));
        std::fs::write(&path, bytes).unwrap();
        let got = Files::default()
            .load_expecting(path.to_str().unwrap(), None, 4)
            .unwrap_or_else(|e| panic!("seed .{ext}: {e}"));
        assert_eq!(got.values, values, "seed .{ext}");
    }
    let mut rng = SplitMix64::new(0x5EED);
    let (start, mut tried, mut refused) = (Instant::now(), 0u64, 0u64);
    let mut panics = Vec::new();
    while start.elapsed() < Duration::from_secs(seconds) {
        for (ext, bytes) in &seeds {
            let input = mutate(&mut rng, bytes);
            let path = dir.join(format!("mutated.{ext}"));
            std::fs::write(&path, &input).unwrap();
            let result = catch_unwind(AssertUnwindSafe(|| {
                Files::default().load_expecting(path.to_str().unwrap(), None, 4)
            }));
            match result {
                Ok(Ok(_)) => {}
                Ok(Err(_)) => refused += 1,
                Err(_) => {
                    let keep = dir.join(format!("panic-{}.{ext}", panics.len()));
                    std::fs::write(&keep, &input).unwrap();
                    panics.push(keep.display().to_string());
                }
            }
            tried += 1;
        }
    }
    println!(
        "fuzz readers: {tried} mutated files, {refused} refused with an error, {} panics",
        panics.len()
    );
    assert!(panics.is_empty(), "the readers panicked on: {panics:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Found by the test above: an `.onnx` initializer without a name made the reader panic.
#[test]
fn an_initializer_without_a_name_loads() {
    use tinyonnx_proto as pb;
    let t = pb::TensorProto {
        dims: vec![2],
        data_type: Some(1),
        raw_data: Some(f32_bytes(&[1.5, -3.0])),
        ..Default::default()
    };
    let model = pb::ModelProto {
        graph: Some(pb::GraphProto {
            initializer: vec![t],
            ..Default::default()
        }),
        ..Default::default()
    };
    let dir = std::env::temp_dir().join(format!("tinyonnx-unnamed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("unnamed.onnx");
    std::fs::write(&path, model.encode_to_vec()).unwrap();
    let got = Files::default().load(path.to_str().unwrap(), None).unwrap();
    assert_eq!(got.values, [1.5, -3.0]);
    let _ = std::fs::remove_dir_all(&dir);
}
