//! Weights loaded at compile time from files: safetensors, NumPy `.npy` and `.npz`, and
//! the initializers of an `.onnx` model. Every format is converted to f32 (f16, bf16, f64
//! and integer tensors included); integer tensors also keep their exact values, for
//! weights declared i64. Errors are messages for the checker, which places them
//! on the argument that named the file or tensor; nothing here panics on a bad file.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use tinyonnx_proto::Message;

use crate::data::Data;
use crate::types::DType;

/// A tensor read from a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub shape: Vec<usize>,
    pub values: Vec<f32>,
    /// The exact values when the file stores integers (an i64 above 2^24 is not exact
    /// as an f32).
    pub ints: Option<Vec<i64>>,
    /// Where in the bytes parsed the values' little-endian f32 bytes start, when the
    /// array is stored as exactly those.
    raw_f32_at: Option<usize>,
    /// The file bytes that are the values, for an `.npy` or `.safetensors` array of f32.
    pub file: Option<crate::data::FileSlice>,
}

impl Loaded {
    fn floats(shape: Vec<usize>, values: Vec<f32>) -> Loaded {
        Loaded {
            shape,
            values,
            ints: None,
            raw_f32_at: None,
            file: None,
        }
    }

    fn ints(shape: Vec<usize>, ints: Vec<i64>) -> Loaded {
        Loaded {
            shape,
            values: ints.iter().map(|&v| v as f32).collect(),
            ints: Some(ints),
            raw_f32_at: None,
            file: None,
        }
    }
}

/// Files read during one expansion, by absolute path (each is read once).
#[derive(Debug, Default)]
pub struct Files {
    bytes: HashMap<PathBuf, Vec<u8>>,
}

impl Files {
    /// The absolute path of `path` (relative to the crate's manifest directory).
    pub fn resolve(path: &str) -> PathBuf {
        let p = Path::new(path);
        if p.is_absolute() {
            return p.to_path_buf();
        }
        let base = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .unwrap_or_default();
        base.join(p)
    }

    /// Every file read so far (for the rebuild-on-change dependency).
    pub fn paths(&self) -> Vec<PathBuf> {
        let mut p: Vec<PathBuf> = self.bytes.keys().cloned().collect();
        p.sort();
        p
    }

    /// The bytes of `path`, read once; a file of more than `limit` bytes is refused
    /// before it is read (and reading stops there should it grow meanwhile).
    fn read(&mut self, path: &Path, limit: u64) -> Result<&[u8], String> {
        if !self.bytes.contains_key(path) {
            let not_found = |e: std::io::Error| match e.kind() {
                std::io::ErrorKind::NotFound => format!(
                    "weight file {} not found (paths are relative to the crate's Cargo.toml)",
                    path.display()
                ),
                _ => format!("cannot read weight file {}: {e}", path.display()),
            };
            // Only regular files: a device such as /dev/zero never ends and a named
            // pipe can block the build forever.
            let meta = std::fs::metadata(path).map_err(not_found)?;
            if !meta.is_file() {
                return Err(format!(
                    "weight file {} is not a regular file (a directory, device or pipe)",
                    path.display()
                ));
            }
            let too_big = |len: u64| {
                format!(
                    "weight file {} has {len} bytes, more than the {limit} its tensor can need \
                     (larger files are refused before they are read)",
                    path.display()
                )
            };
            if meta.len() > limit {
                return Err(too_big(meta.len()));
            }
            use std::io::Read;
            let mut data = Vec::new();
            std::fs::File::open(path)
                .and_then(|f| f.take(limit.saturating_add(1)).read_to_end(&mut data))
                .map_err(not_found)?;
            if data.len() as u64 > limit {
                return Err(too_big(data.len() as u64));
            }
            self.bytes.insert(path.to_path_buf(), data);
        }
        Ok(&self.bytes[path])
    }

    /// The bytes of a whole file (an imported `.onnx` model), at most
    /// [`MAX_WEIGHT_FILE`] of them, and its absolute path for messages.
    pub fn read_whole(&mut self, path: &str) -> Result<(String, &[u8]), String> {
        let full = Self::resolve(path);
        let bytes = self.read(&full, MAX_WEIGHT_FILE)?;
        Ok((full.display().to_string(), bytes))
    }

    /// Reads tensor `name` (or the only tensor, when `name` is `None`) from `path`.
    pub fn load(&mut self, path: &str, name: Option<&str>) -> Result<Loaded, String> {
        self.load_bounded(path, name, None)
    }

    /// [`Files::load`] for a tensor of `values` elements: a compressed array that would
    /// inflate to more bytes than that many values of the widest dtype (plus a header)
    /// is refused before it is inflated, so a small zip bomb cannot exhaust memory.
    pub fn load_expecting(
        &mut self,
        path: &str,
        name: Option<&str>,
        values: usize,
    ) -> Result<Loaded, String> {
        let bound = (values as u64)
            .saturating_mul(8)
            .saturating_add(NPY_HEADER_MAX);
        self.load_bounded(path, name, Some(bound))
    }

    fn load_bounded(
        &mut self,
        path: &str,
        name: Option<&str>,
        bound: Option<u64>,
    ) -> Result<Loaded, String> {
        let full = Self::resolve(path);
        let ext = full
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        // A lone .npy array holds one tensor: its file cannot need more than the
        // tensor's values at the widest dtype plus a header. Containers hold many, and
        // ONNX's own limit on a file (protobuf's 2 GiB) bounds them all.
        let limit = match (ext.as_str(), bound) {
            ("npy", Some(b)) => b,
            _ => MAX_WEIGHT_FILE,
        };
        let bytes = self.read(&full, limit)?;
        let shown = full.display().to_string();
        let mut loaded = match ext.as_str() {
            "safetensors" => safetensors_tensor(bytes, name, &shown),
            "npy" => {
                if let Some(n) = name {
                    return Err(format!(
                        "{shown} is a single array; remove `name = \"{n}\"` (names select arrays in .npz, .safetensors and .onnx files)"
                    ));
                }
                npy(bytes).map_err(|e| format!("{shown}: {e}"))
            }
            "npz" => npz_tensor(bytes, name, &shown, bound),
            "onnx" => onnx_tensor(bytes, name, &shown),
            other => Err(format!(
                "cannot load weights from a `.{other}` file: use .safetensors, .npy, .npz or .onnx"
            )),
        }?;
        // Offsets into the file itself (an .npz member's are into the inflated member).
        if ["npy", "safetensors"].contains(&ext.as_str()) {
            loaded.file = loaded.raw_f32_at.map(|at| crate::data::FileSlice {
                path: full.clone(),
                offset: at as u64,
                len: 4 * loaded.values.len() as u64,
            });
        }
        Ok(loaded)
    }
}

/// `name`, or the only name; with the names that exist, nearest first, when it is missing.
fn choose<'a>(names: &'a [String], name: Option<&str>, shown: &str) -> Result<&'a str, String> {
    match name {
        Some(n) => match names.iter().find(|x| *x == n) {
            Some(x) => Ok(x),
            None => {
                let mut sorted: Vec<&String> = names.iter().collect();
                sorted.sort_by_key(|x| (crate::suggest::levenshtein(n, x), x.as_str()));
                let list: Vec<&str> = sorted.iter().take(12).map(|s| s.as_str()).collect();
                let more = if names.len() > 12 {
                    format!(" and {} more", names.len() - 12)
                } else {
                    String::new()
                };
                Err(format!(
                    "{shown} has no tensor `{n}`; it has {}{more}",
                    list.join(", ")
                ))
            }
        },
        None if names.len() == 1 => Ok(&names[0]),
        None => Err(format!(
            "{shown} holds {} tensors: say which with `name = \"...\"` ({})",
            names.len(),
            names
                .iter()
                .take(12)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn safetensors_tensor(bytes: &[u8], name: Option<&str>, shown: &str) -> Result<Loaded, String> {
    use safetensors::Dtype;
    let st = safetensors::SafeTensors::deserialize(bytes)
        .map_err(|e| format!("{shown} is not a valid safetensors file: {e}"))?;
    let mut names: Vec<String> = st.names().into_iter().map(str::to_string).collect();
    names.sort();
    let chosen = choose(&names, name, shown)?.to_string();
    let t = st
        .tensor(&chosen)
        .map_err(|e| format!("{shown}: tensor `{chosen}`: {e}"))?;
    let data = t.data();
    let shape = t.shape().to_vec();
    let ints = |width: usize, f: fn(&[u8]) -> i64| {
        Ok(Loaded::ints(
            shape.clone(),
            data.chunks_exact(width).map(f).collect(),
        ))
    };
    let values: Vec<f32> = match t.dtype() {
        Dtype::I64 => return ints(8, |c| i64::from_le_bytes(c.try_into().expect("8 bytes"))),
        Dtype::I32 => {
            return ints(4, |c| {
                i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            });
        }
        Dtype::I8 => return ints(1, |c| i64::from(c[0] as i8)),
        Dtype::U8 => return ints(1, |c| i64::from(c[0])),
        Dtype::F32 => data
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        Dtype::F64 => data
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")) as f32)
            .collect(),
        Dtype::F16 => data
            .chunks_exact(2)
            .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect(),
        Dtype::BF16 => data
            .chunks_exact(2)
            .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f32())
            .collect(),
        other => {
            return Err(format!(
                "{shown}: tensor `{chosen}` is {other:?}; tinyonnx loads F32, F16, BF16, F64, I64, I32, I8 and U8"
            ));
        }
    };
    let mut loaded = Loaded::floats(shape, values);
    if t.dtype() == Dtype::F32 {
        loaded.raw_f32_at = Some(data.as_ptr() as usize - bytes.as_ptr() as usize);
    }
    Ok(loaded)
}

/// Parses a NumPy `.npy` array (format versions 1 to 3, C order).
pub fn npy(bytes: &[u8]) -> Result<Loaded, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (no \\x93NUMPY magic)".into());
    }
    let (header_len, start): (usize, usize) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(format!("unsupported .npy format version {v}")),
    };
    let header = bytes
        .get(start..start.saturating_add(header_len))
        .ok_or("truncated .npy header")?;
    let header = std::str::from_utf8(header).map_err(|_| "the .npy header is not text")?;
    let field = |key: &str| -> Option<&str> {
        let at = header.find(&format!("'{key}'"))? + key.len() + 2;
        let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
        Some(rest)
    };
    let descr = field("descr")
        .and_then(|r| r.strip_prefix('\''))
        .and_then(|r| r.split('\'').next())
        .ok_or("the .npy header has no descr")?;
    if field("fortran_order").is_some_and(|r| r.starts_with("True")) {
        return Err(
            "Fortran-order arrays are not supported: save with np.ascontiguousarray".into(),
        );
    }
    let shape_text = field("shape")
        .and_then(|r| r.strip_prefix('('))
        .and_then(|r| r.split(')').next())
        .ok_or("the .npy header has no shape")?;
    let shape = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<usize>()
                .map_err(|_| format!("bad dimension `{s}` in the .npy shape"))
        })
        .collect::<Result<Vec<usize>, String>>()?;
    let numel = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n <= crate::types::MAX_DIM)
        .ok_or("the .npy array is too large")?;
    let data = &bytes[start + header_len..];
    enum Convert {
        Float(fn(&[u8]) -> f32),
        Int(fn(&[u8]) -> i64),
    }
    let (size, convert) = match descr {
        "<f4" => (
            4,
            Convert::Float(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        ),
        "<f8" => (
            8,
            Convert::Float(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")) as f32),
        ),
        "<f2" => (
            2,
            Convert::Float(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32()),
        ),
        "<i4" => (
            4,
            Convert::Int(|c| i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]]))),
        ),
        "<i8" => (
            8,
            Convert::Int(|c| i64::from_le_bytes(c.try_into().expect("8 bytes"))),
        ),
        "|i1" => (1, Convert::Int(|c| i64::from(c[0] as i8))),
        "|u1" => (1, Convert::Int(|c| i64::from(c[0]))),
        other => {
            return Err(format!(
                "dtype `{other}` is not supported: tinyonnx loads little-endian f2, f4, f8, i1, u1, i4, i8"
            ));
        }
    };
    let needed = numel
        .checked_mul(size)
        .ok_or_else(|| format!("the header's shape {shape:?} is too large"))?;
    if data.len() < needed {
        return Err(format!(
            "truncated: the header says {shape:?} ({numel} values), the file has {} bytes of data",
            data.len()
        ));
    }
    if data.len() > needed {
        return Err(format!(
            "corrupt: the header says {shape:?} ({needed} bytes of data), the file has {} \
             bytes after its header",
            data.len()
        ));
    }
    let values = data[..numel * size].chunks_exact(size);
    Ok(match convert {
        Convert::Float(f) => Loaded {
            raw_f32_at: (descr == "<f4").then_some(start + header_len),
            ..Loaded::floats(shape, values.map(f).collect())
        },
        Convert::Int(f) => Loaded::ints(shape, values.map(f).collect()),
    })
}

/// The largest .npy header an array may carry inside an .npz (v2 headers can be longer
/// than v1's 64 KiB; none that numpy writes comes near this).
const NPY_HEADER_MAX: u64 = 1 << 20;

/// The largest weight file read: 2 GiB, the size protobuf (and so a single `.onnx` file)
/// is limited to.
pub const MAX_WEIGHT_FILE: u64 = 1 << 31;

fn npz_tensor(
    bytes: &[u8],
    name: Option<&str>,
    shown: &str,
    bound: Option<u64>,
) -> Result<Loaded, String> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| format!("{shown} is not a valid .npz (zip) file: {e}"))?;
    let mut names: Vec<String> = Vec::new();
    for n in archive.file_names() {
        let n = n.map_err(|e| format!("{shown}: unreadable entry name: {e}"))?;
        names.push(n.strip_suffix(".npy").unwrap_or(&n).to_string());
    }
    names.sort();
    let chosen = choose(&names, name, shown)?.to_string();
    let entry_name = if archive.index_for_name(&format!("{chosen}.npy")).is_some() {
        format!("{chosen}.npy")
    } else {
        chosen.clone()
    };
    let mut entry = archive
        .by_name(&entry_name)
        .map_err(|e| format!("{shown}: array `{chosen}`: {e}"))?;
    let bound = bound.unwrap_or(u64::MAX);
    let too_big = |n: u64| {
        format!(
            "{shown}: array `{chosen}` inflates to {n} bytes, more than the {bound} bytes the \
             declared shape can need"
        )
    };
    // The declared size first (nothing inflated yet), then the bytes actually inflated,
    // since a crafted archive can understate it.
    if entry.size() > bound {
        return Err(too_big(entry.size()));
    }
    let mut data = Vec::new();
    (&mut entry)
        .take(bound.saturating_add(1))
        .read_to_end(&mut data)
        .map_err(|e| format!("{shown}: array `{chosen}` cannot be decompressed: {e}"))?;
    if data.len() as u64 > bound {
        return Err(too_big(data.len() as u64));
    }
    npy(&data).map_err(|e| format!("{shown}: array `{chosen}`: {e}"))
}

fn onnx_tensor(bytes: &[u8], name: Option<&str>, shown: &str) -> Result<Loaded, String> {
    let model = tinyonnx_proto::ModelProto::decode(bytes)
        .map_err(|e| format!("{shown} is not a valid ONNX model: {e}"))?;
    let graph = model.graph.unwrap_or_default();
    let mut names: Vec<String> = graph
        .initializer
        .iter()
        .map(|t| t.name.clone().unwrap_or_default())
        .collect();
    names.sort();
    let chosen = choose(&names, name, shown)?.to_string();
    let t = graph
        .initializer
        .iter()
        // An initializer without a name is listed as "", so it is found as "".
        .find(|t| t.name.as_deref().unwrap_or("") == chosen)
        .ok_or_else(|| format!("{shown}: no initializer `{chosen}`"))?;
    if t.data_location == Some(1) || !t.external_data.is_empty() {
        return Err(format!(
            "{shown}: `{chosen}` is stored as external data, which `load` does not read (import the model instead)"
        ));
    }
    // The importer's reader: every element type, raw and typed fields, sizes checked.
    let c = crate::import::proto::tensor(t).map_err(|e| format!("{shown}: `{chosen}` {e}"))?;
    Ok(match c.data {
        Data::F32(values) => Loaded::floats(c.dims, values),
        Data::I64(ints) => Loaded::ints(c.dims, ints),
        Data::Typed {
            dtype: DType::F64,
            values,
        } => Loaded::floats(c.dims, values.iter().map(|&v| v as f32).collect()),
        // i32, i8, u8 and bool: each value exact as an f64.
        Data::Typed { values, .. } => {
            Loaded::ints(c.dims, values.iter().map(|&v| v as i64).collect())
        }
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A version-1 `.npy` file (also used by the crate's other tests).
    pub(crate) fn npy_bytes(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
        let mut header =
            format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend((header.len() as u16).to_le_bytes());
        out.extend(header.as_bytes());
        out.extend(data);
        out
    }

    #[test]
    fn integers_keep_their_exact_values() {
        // 16777217 and 123456789 have no f32: they must not pass through one.
        let big = [16_777_217i64, 123_456_789, -9_007_199_254_740_993];
        let le: Vec<u8> = big.iter().flat_map(|v| v.to_le_bytes()).collect();
        let l = npy(&npy_bytes("<i8", "(3,)", &le)).unwrap();
        assert_eq!(l.ints.as_deref(), Some(&big[..]));
        let npz = npz_file("ints.npz", &[("s", npy_bytes("<i8", "(3,)", &le))]);
        let l = Files::default().load(&npz, Some("s")).unwrap();
        assert_eq!(l.ints.as_deref(), Some(&big[..]));
        let st = temp_file(
            "ints.safetensors",
            &safetensors_bytes(&[("s", "I64", &[3], le.clone())]),
        );
        let l = Files::default().load(&st, Some("s")).unwrap();
        assert_eq!(l.ints.as_deref(), Some(&big[..]));
        use tinyonnx_proto as pb;
        let model = pb::ModelProto {
            graph: Some(pb::GraphProto {
                initializer: vec![
                    pb::TensorProto {
                        dims: vec![3],
                        data_type: Some(7),
                        name: Some("raw".into()),
                        raw_data: Some(le),
                        ..Default::default()
                    },
                    pb::TensorProto {
                        dims: vec![3],
                        data_type: Some(7),
                        name: Some("typed".into()),
                        int64_data: big.to_vec(),
                        ..Default::default()
                    },
                    pb::TensorProto {
                        dims: vec![1],
                        data_type: Some(8),
                        name: Some("text".into()),
                        ..Default::default()
                    },
                ],
                ..Default::default()
            }),
            ..Default::default()
        };
        let path = temp_file("ints.onnx", &model.encode_to_vec());
        let mut files = Files::default();
        for name in ["raw", "typed"] {
            let l = files.load(&path, Some(name)).unwrap();
            assert_eq!(l.ints.as_deref(), Some(&big[..]), "{name}");
        }
        // Element types by their ONNX names, not numbers.
        let err = files.load(&path, Some("text")).unwrap_err();
        assert!(err.contains("STRING"), "{err}");
        // Floats stay floats.
        let f = npy(&npy_bytes("<f4", "(1,)", &1.5f32.to_le_bytes())).unwrap();
        assert_eq!(f.ints, None);
    }

    #[test]
    fn npy_reads_f4_and_reports_truncation() {
        let data: Vec<u8> = [1.0f32, -2.5, 3.0, 0.5]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let l = npy(&npy_bytes("<f4", "(2, 2)", &data)).unwrap();
        assert_eq!(l.shape, vec![2, 2]);
        assert_eq!(l.values, vec![1.0, -2.5, 3.0, 0.5]);
        let err = npy(&npy_bytes("<f4", "(2, 3)", &data)).unwrap_err();
        assert!(err.contains("truncated"), "{err}");
        // Bytes past the data the header describes: corrupt, not ignored.
        let err = npy(&npy_bytes("<f4", "(3,)", &data)).unwrap_err();
        assert!(err.contains("12 bytes of data), the file has 16"), "{err}");
        assert!(npy(b"garbage").unwrap_err().contains("magic"));
    }

    // A device never ends and a named pipe may never be written: both used to hang
    // the build (or grow rustc until the kernel killed it); now each is an error at once.
    #[cfg(unix)]
    #[test]
    fn files_larger_than_their_tensors_can_need_are_refused_unread() {
        // Sparse files: their length costs no disk, and reading one would take minutes
        // and gigabytes.
        let dir = std::env::temp_dir().join(format!("tinyonnx-big-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let npy = dir.join("w.npy");
        std::fs::File::create(&npy)
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
        let mut files = Files::default();
        let err = files
            .load_expecting(npy.to_str().unwrap(), None, 4)
            .unwrap_err();
        let limit = 4 * 8 + NPY_HEADER_MAX;
        assert!(
            err.contains(&format!("has {} bytes, more than the {limit}", 1u64 << 30)),
            "{err}"
        );
        let st = dir.join("w.safetensors");
        std::fs::File::create(&st)
            .unwrap()
            .set_len(MAX_WEIGHT_FILE + 1)
            .unwrap();
        let err = files
            .load_expecting(st.to_str().unwrap(), Some("w"), 4)
            .unwrap_err();
        assert!(err.contains("more than the 2147483648"), "{err}");
        assert!(files.paths().is_empty(), "nothing was read");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn devices_and_pipes_are_refused_before_reading() {
        let started = std::time::Instant::now();
        let mut files = Files::default();
        let err = files.load("/dev/zero", None).unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        let dir = std::env::temp_dir().join(format!("tinyonnx-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("w.npy");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let err = files.load(fifo.to_str().unwrap(), None).unwrap_err();
            assert!(err.contains("not a regular file"), "{err}");
        }
        let _ = std::fs::remove_dir_all(&dir);
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }

    /// An .npz holding `entries` (name, bytes), deflated.
    fn npz_file(name: &str, entries: &[(&str, Vec<u8>)]) -> crate::scratch::TempFile {
        use std::io::Write;
        let mut out = std::io::Cursor::new(Vec::new());
        let mut zip = zip::ZipWriter::new(&mut out);
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (entry, bytes) in entries {
            zip.start_file(*entry, opts).unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap();
        temp_file(name, &out.into_inner())
    }

    #[test]
    fn an_npz_member_larger_than_its_shape_needs_is_not_inflated() {
        let small: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        // 16 MiB of zeros deflate to a few KiB: a small zip bomb for a 4-value weight.
        let bomb = npy_bytes("<f4", "(4194304,)", &vec![0; 16 << 20]);
        let path = npz_file(
            "bomb.npz",
            &[
                ("w.npy", npy_bytes("<f4", "(4,)", &small)),
                ("big.npy", bomb),
            ],
        );
        assert!(std::fs::metadata(&path).unwrap().len() < 1 << 20);
        let mut files = Files::default();
        let w = files.load_expecting(&path, Some("w"), 4).unwrap();
        assert_eq!(w.values, [1.0, 2.0, 3.0, 4.0]);
        let err = files.load_expecting(&path, Some("big"), 4).unwrap_err();
        assert!(
            err.contains("array `big` inflates to 16777344 bytes"),
            "{err}"
        );
        // Without an expected shape the member still loads (tools that read whole files).
        assert_eq!(
            files.load(&path, Some("big")).unwrap().values.len(),
            4 << 20
        );
    }

    #[test]
    fn missing_names_are_listed_nearest_first() {
        let names: Vec<String> = ["fc1.weight", "fc1.bias", "fc2.weight"]
            .map(String::from)
            .to_vec();
        let err = choose(&names, Some("fc2.wieght"), "m.safetensors").unwrap_err();
        assert!(
            err.contains("has no tensor `fc2.wieght`; it has fc2.weight, fc1.weight"),
            "{err}"
        );
    }

    fn temp_file(name: &str, bytes: &[u8]) -> crate::scratch::TempFile {
        crate::scratch::TempFile::new(name, bytes)
    }

    /// A safetensors file written by hand: a u64 header length, a JSON header, the data.
    fn safetensors_bytes(entries: &[(&str, &str, &[usize], Vec<u8>)]) -> Vec<u8> {
        let mut header = String::from("{");
        let mut data: Vec<u8> = Vec::new();
        for (i, (name, dtype, shape, raw)) in entries.iter().enumerate() {
            let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            header.push_str(&format!(
                "{}\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
                if i > 0 { "," } else { "" },
                dims.join(","),
                data.len(),
                data.len() + raw.len()
            ));
            data.extend(raw);
        }
        header.push('}');
        while header.len() % 8 != 0 {
            header.push(' ');
        }
        let mut out = (header.len() as u64).to_le_bytes().to_vec();
        out.extend(header.as_bytes());
        out.extend(data);
        out
    }

    #[test]
    fn safetensors_f16_and_bf16_convert_to_f32() {
        let halfs: Vec<u8> = [1.5f32, -0.25]
            .iter()
            .flat_map(|&v| half::f16::from_f32(v).to_le_bytes())
            .collect();
        let bf: Vec<u8> = [3.0f32, -2.0]
            .iter()
            .flat_map(|&v| half::bf16::from_f32(v).to_le_bytes())
            .collect();
        let bytes = safetensors_bytes(&[("a", "F16", &[2], halfs), ("b", "BF16", &[1, 2], bf)]);
        let path = temp_file("t.safetensors", &bytes);
        let mut files = Files::default();
        assert_eq!(
            files.load(&path, Some("a")).unwrap().values,
            vec![1.5, -0.25]
        );
        let b = files.load(&path, Some("b")).unwrap();
        assert_eq!((b.shape, b.values), (vec![1, 2], vec![3.0, -2.0]));
        assert!(
            files
                .load(&path, None)
                .unwrap_err()
                .contains("holds 2 tensors")
        );
        let ints = safetensors_bytes(&[("i", "I32", &[1], 7i32.to_le_bytes().to_vec())]);
        let l = Files::default()
            .load(&temp_file("i.safetensors", &ints), None)
            .unwrap();
        assert_eq!(l.ints, Some(vec![7]));
        let bools = safetensors_bytes(&[("b", "BOOL", &[1], vec![1])]);
        let err = Files::default()
            .load(&temp_file("b.safetensors", &bools), None)
            .unwrap_err();
        assert!(
            err.contains("tinyonnx loads F32, F16, BF16, F64, I64"),
            "{err}"
        );
    }

    #[test]
    fn onnx_initializers_load_from_raw_and_typed_fields() {
        use tinyonnx_proto as pb;
        let raw = pb::TensorProto {
            dims: vec![2],
            data_type: Some(1),
            name: Some("raw".into()),
            raw_data: Some([0.5f32, 4.0].iter().flat_map(|v| v.to_le_bytes()).collect()),
            ..Default::default()
        };
        let typed = pb::TensorProto {
            dims: vec![1, 3],
            data_type: Some(1),
            name: Some("typed".into()),
            float_data: vec![1.0, 2.0, 3.0],
            ..Default::default()
        };
        let short = pb::TensorProto {
            dims: vec![4],
            data_type: Some(1),
            name: Some("short".into()),
            float_data: vec![1.0],
            ..Default::default()
        };
        // Raw data one byte too long, and one value short.
        let raw_bytes = |name: &str, len: usize| pb::TensorProto {
            dims: vec![2],
            data_type: Some(1),
            name: Some(name.into()),
            raw_data: Some(vec![0; len]),
            ..Default::default()
        };
        let (long, cut) = (raw_bytes("long", 9), raw_bytes("cut", 4));
        let model = pb::ModelProto {
            graph: Some(pb::GraphProto {
                initializer: vec![raw, typed, short, long, cut],
                ..Default::default()
            }),
            ..Default::default()
        };
        let path = temp_file("m.onnx", &model.encode_to_vec());
        let mut files = Files::default();
        assert_eq!(
            files.load(&path, Some("raw")).unwrap().values,
            vec![0.5, 4.0]
        );
        let t = files.load(&path, Some("typed")).unwrap();
        assert_eq!((t.shape, t.values), (vec![1, 3], vec![1.0, 2.0, 3.0]));
        assert!(
            files
                .load(&path, Some("short"))
                .unwrap_err()
                .contains("truncated or corrupt")
        );
        for (name, held) in [("long", 9), ("cut", 4)] {
            let err = files.load(&path, Some(name)).unwrap_err();
            assert!(
                err.contains(&format!("`{name}` is truncated or corrupt: dims [2] need 8 bytes of raw data, it holds {held}")),
                "{err}"
            );
            assert!(err.contains("m.onnx"), "{err}");
        }
        let garbage = temp_file("g.onnx", b"\xff\xff\xff");
        assert!(
            Files::default()
                .load(&garbage, None)
                .unwrap_err()
                .contains("not a valid ONNX model")
        );
    }
}
