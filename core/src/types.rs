//! Element types, dimensions and shapes as the checker sees them.

use std::fmt;

/// The largest dimension, element count or size-like attribute tinyonnx accepts. With
/// every factor at most this, the shape arithmetic of the checker cannot overflow on a
/// 64-bit host.
pub const MAX_DIM: usize = 1 << 31;

/// The product of `dims` if it is at most [`MAX_DIM`].
pub fn checked_numel(dims: impl IntoIterator<Item = usize>) -> Option<usize> {
    dims.into_iter()
        .try_fold(1usize, |acc, d| acc.checked_mul(d))
        .filter(|&n| n <= MAX_DIM)
}

/// An element type of the DSL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    F32,
    F64,
    I64,
    I32,
    I8,
    U8,
    Bool,
    I16,
    U16,
    U32,
    U64,
}

impl DType {
    /// Every dtype the DSL knows, in the order error messages list them.
    pub const ALL: [DType; 11] = [
        DType::F32,
        DType::F64,
        DType::I64,
        DType::I32,
        DType::I16,
        DType::I8,
        DType::U64,
        DType::U32,
        DType::U16,
        DType::U8,
        DType::Bool,
    ];

    /// The DSL spelling (`f32`, `bool`, ...), which is also the Rust element type.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::I64 => "i64",
            DType::I32 => "i32",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::Bool => "bool",
            DType::I16 => "i16",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
        }
    }

    /// Parses the DSL spelling.
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// `TensorProto.DataType` of the ONNX specification.
    pub fn onnx_code(self) -> i32 {
        match self {
            DType::F32 => 1,
            DType::U8 => 2,
            DType::I8 => 3,
            DType::I32 => 6,
            DType::I64 => 7,
            DType::Bool => 9,
            DType::F64 => 11,
            DType::U16 => 4,
            DType::I16 => 5,
            DType::U32 => 12,
            DType::U64 => 13,
        }
    }

    /// f32 or f64.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    /// A signed integer type.
    pub fn is_signed_int(self) -> bool {
        matches!(self, DType::I64 | DType::I32 | DType::I16 | DType::I8)
    }

    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            DType::F64 | DType::I64 | DType::U64 => 8,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::I16 | DType::U16 => 2,
            DType::I8 | DType::U8 | DType::Bool => 1,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One dimension: a number, or a name that stays symbolic in the ONNX (`dim_param`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    Fixed(usize),
    Sym(String),
}

impl Dim {
    /// The fixed value, if any.
    pub fn fixed(&self) -> Option<usize> {
        match self {
            Dim::Fixed(n) => Some(*n),
            Dim::Sym(_) => None,
        }
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Fixed(n) => write!(f, "{n}"),
            Dim::Sym(s) => f.write_str(s),
        }
    }
}

/// A shape: one `Dim` per axis, outermost first.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Shape(pub Vec<Dim>);

impl Shape {
    /// A shape of fixed dimensions.
    pub fn fixed(dims: &[usize]) -> Shape {
        Shape(dims.iter().map(|&d| Dim::Fixed(d)).collect())
    }

    /// Number of axes.
    pub fn rank(&self) -> usize {
        self.0.len()
    }

    /// Number of elements when every dimension is fixed.
    pub fn fixed_numel(&self) -> Option<usize> {
        self.0.iter().map(Dim::fixed).product()
    }

    /// One value, as a scalar or a vector of one (`[]` or `[1]`): a per-tensor scale or
    /// zero point.
    pub fn single(&self) -> bool {
        self.rank() <= 1 && self.fixed_numel() == Some(1)
    }

    /// Resolves symbolic dimensions to their device values.
    pub fn resolve(&self, device: &dyn Fn(&str) -> usize) -> Vec<usize> {
        self.0
            .iter()
            .map(|d| match d {
                Dim::Fixed(n) => *n,
                Dim::Sym(s) => device(s),
            })
            .collect()
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

/// The type of a tensor: element type and shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorType {
    pub dtype: DType,
    pub shape: Shape,
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.dtype, self.shape)
    }
}

/// Numpy (multidirectional) broadcasting of two shapes; `None` when they do not broadcast.
pub fn broadcast(a: &Shape, b: &Shape) -> Option<Shape> {
    let rank = a.rank().max(b.rank());
    let mut out = Vec::with_capacity(rank);
    for i in 0..rank {
        let da = dim_from_right(a, rank - 1 - i);
        let db = dim_from_right(b, rank - 1 - i);
        let d = match (da, db) {
            (None, Some(d)) | (Some(d), None) => d.clone(),
            (Some(x), Some(y)) if x == y => x.clone(),
            (Some(Dim::Fixed(1)), Some(d)) | (Some(d), Some(Dim::Fixed(1))) => d.clone(),
            _ => return None,
        };
        out.push(d);
    }
    Some(Shape(out))
}

/// The dimension `k` places from the right (0 = last), if the shape has that many axes.
fn dim_from_right(s: &Shape, k: usize) -> Option<&Dim> {
    if k < s.rank() {
        Some(&s.0[s.rank() - 1 - k])
    } else {
        None
    }
}

/// Strides (in elements) of `input` read as if broadcast to `out`; 0 on broadcast axes.
pub fn broadcast_strides(input: &[usize], out: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; out.len()];
    let mut stride = 1;
    for k in 0..input.len() {
        let axis_in = input.len() - 1 - k;
        let axis_out = out.len() - 1 - k;
        if input[axis_in] != 1 || out[axis_out] == 1 {
            strides[axis_out] = if input[axis_in] == 1 { 0 } else { stride };
        }
        stride *= input[axis_in];
    }
    strides
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_follows_numpy() {
        let s = |d: &[usize]| Shape::fixed(d);
        assert_eq!(broadcast(&s(&[2, 3]), &s(&[3])), Some(s(&[2, 3])));
        assert_eq!(broadcast(&s(&[2, 1, 4]), &s(&[3, 1])), Some(s(&[2, 3, 4])));
        assert_eq!(broadcast(&s(&[2, 3]), &s(&[4])), None);
        let sym = Shape(vec![Dim::Sym("batch".into()), Dim::Fixed(4)]);
        assert_eq!(broadcast(&sym, &s(&[4])), Some(sym.clone()));
        assert_eq!(broadcast(&sym, &s(&[1, 4])), Some(sym.clone()));
    }

    #[test]
    fn broadcast_strides_zero_on_stretched_axes() {
        assert_eq!(broadcast_strides(&[3], &[2, 3]), vec![0, 1]);
        assert_eq!(broadcast_strides(&[2, 1], &[2, 3]), vec![1, 0]);
        assert_eq!(broadcast_strides(&[2, 3], &[2, 3]), vec![3, 1]);
        assert_eq!(broadcast_strides(&[1], &[2, 3]), vec![0, 0]);
    }
}
