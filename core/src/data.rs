//! Values the compiler knows before the graph exists: tensor values computed or loaded
//! at compile time, and the index that names a tensor. Below `ops` and `ir`, so an
//! operator's rules can fold values without knowing the graph.

use crate::types::DType;

/// Index of a tensor in [`crate::ir::Graph::tensors`].
pub type TensorId = usize;

/// Bytes of a weight file that hold a tensor's values exactly, as little-endian f32
/// (an `.npy` or `.safetensors` array loaded unchanged): the generated code can then
/// have the assembler take them from the file instead of through rustc.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FileSlice {
    /// Absolute.
    pub path: std::path::PathBuf,
    pub offset: u64,
    pub len: u64,
}

/// Row-major tensor values known at compile time.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    F32(Vec<f32>),
    I64(Vec<i64>),
    /// f64, i32, i16, i8, u64, u32, u16, u8 or bool values, each exact as an f64 (bool
    /// as 0 or 1; u64 values are at most 2^53, which the readers check).
    Typed {
        dtype: DType,
        values: Vec<f64>,
    },
}

impl Data {
    /// No values of `dtype`.
    pub fn empty(dtype: DType) -> Data {
        match dtype {
            DType::F32 => Data::F32(Vec::new()),
            DType::I64 => Data::I64(Vec::new()),
            dtype => Data::Typed {
                dtype,
                values: Vec::new(),
            },
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Data::F32(v) => v.len(),
            Data::I64(v) => v.len(),
            Data::Typed { values, .. } => values.len(),
        }
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Little-endian bytes, as in ONNX `raw_data`.
    pub fn le_bytes(&self) -> Vec<u8> {
        match self {
            Data::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Data::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Data::Typed { dtype, values } => values
                .iter()
                .flat_map(|&x| match dtype {
                    DType::F64 => x.to_le_bytes().to_vec(),
                    DType::I32 => (x as i32).to_le_bytes().to_vec(),
                    DType::I8 => (x as i8).to_le_bytes().to_vec(),
                    DType::U8 | DType::Bool => vec![x as u8],
                    DType::I16 => (x as i16).to_le_bytes().to_vec(),
                    DType::U16 => (x as u16).to_le_bytes().to_vec(),
                    DType::U32 => (x as u32).to_le_bytes().to_vec(),
                    DType::U64 => (x as u64).to_le_bytes().to_vec(),
                    DType::F32 | DType::I64 => unreachable!("bug: {dtype} data is not Typed"),
                })
                .collect(),
        }
    }

    /// Every value as an f64 (exact for all but i64 beyond 2^53).
    pub fn to_f64(&self) -> Vec<f64> {
        match self {
            Data::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Data::I64(v) => v.iter().map(|&x| x as f64).collect(),
            Data::Typed { values, .. } => values.clone(),
        }
    }

    /// The values as i64, if they are integers.
    pub fn as_i64(&self) -> Option<&[i64]> {
        match self {
            Data::I64(v) => Some(v),
            Data::F32(_) | Data::Typed { .. } => None,
        }
    }

    /// The values as f32, if they are floats.
    pub fn as_f32(&self) -> Option<&[f32]> {
        match self {
            Data::F32(v) => Some(v),
            Data::I64(_) | Data::Typed { .. } => None,
        }
    }

    /// The element type of the values.
    pub fn dtype(&self) -> DType {
        match self {
            Data::F32(_) => DType::F32,
            Data::I64(_) => DType::I64,
            Data::Typed { dtype, .. } => *dtype,
        }
    }
}
