//! The file's graph inputs, their dims fixed by `dims(...)` and `shapes(...)`, and the
//! names `rename(...)` gives.

use std::collections::HashSet;

use tinyonnx_proto as pb;

use super::{Importer, Val, proto};
use crate::types::{Shape, TensorType};

impl Importer<'_> {
    /// The graph inputs that are not initializers, with their dims fixed by `dims(...)`
    /// and `shapes(...)`; every dim left open is reported in one message.
    pub(super) fn inputs(&mut self, graph: &pb::GraphProto) {
        let def = self.def;
        let mut used_dims = HashSet::new();
        let mut used_shapes = HashSet::new();
        let mut open: Vec<String> = Vec::new();
        let mut names = Vec::new();
        for vi in &graph.input {
            let name = vi.name.clone().unwrap_or_default();
            if self.vals.contains_key(&name) {
                continue;
            }
            names.push(name.clone());
            // Until it is made below, a failed input: its readers are not reported.
            self.vals.insert(name.clone(), Val::Poisoned);
            let Some(pb::type_proto::Value::TensorType(tt)) =
                vi.r#type.as_ref().and_then(|t| t.value.as_ref())
            else {
                self.error(format!("input `{name}` is not a tensor (a sequence, map or optional), which tinyonnx does not run"));
                continue;
            };
            let code = tt.elem_type.unwrap_or(0);
            let Some(dtype) = proto::dtype(code) else {
                self.error(format!(
                    "input `{name}` has element type {}, which tinyonnx does not run",
                    proto::type_name(code)
                ));
                continue;
            };
            let file_dims: Vec<Option<&pb::tensor_shape_proto::dimension::Value>> = tt
                .shape
                .as_ref()
                .map(|s| s.dim.iter().map(|d| d.value.as_ref()).collect())
                .unwrap_or_default();
            let shown = |d: Option<&pb::tensor_shape_proto::dimension::Value>| match d {
                Some(pb::tensor_shape_proto::dimension::Value::DimValue(v)) => v.to_string(),
                Some(pb::tensor_shape_proto::dimension::Value::DimParam(p)) if !p.is_empty() => {
                    p.clone()
                }
                _ => "?".into(),
            };
            let dims: Option<Vec<usize>> =
                if let Some((_, _, given)) = def.shapes.iter().find(|(k, _, _)| *k == name) {
                    used_shapes.insert(name.clone());
                    let mut out = Vec::new();
                    for lit in given {
                        match lit.base10_parse::<usize>() {
                            Ok(v) if (0..=crate::types::MAX_DIM).contains(&v) => out.push(v),
                            _ => self
                                .cx
                                .error(lit.span(), "a dim is an integer from 0 to 2^31"),
                        }
                    }
                    if !file_dims.is_empty() && given.len() != file_dims.len() {
                        self.error(format!(
                            "shapes(...) gives input `{name}` {} dims; the file's has {}",
                            given.len(),
                            file_dims.len()
                        ));
                    }
                    Some(out)
                } else if tt.shape.is_none() {
                    open.push(format!(
                        "`{name}` has no shape in the file: give `shapes({} = [...])`",
                        rust_key(&name)
                    ));
                    None
                } else {
                    let mut out = Vec::new();
                    let mut missing = false;
                    for d in &file_dims {
                        use pb::tensor_shape_proto::dimension::Value as D;
                        match d {
                            Some(D::DimValue(v))
                                if *v >= 0 && (*v as u64) <= crate::types::MAX_DIM as u64 =>
                            {
                                out.push(*v as usize)
                            }
                            Some(D::DimParam(p)) if !p.is_empty() => {
                                match def.dims.iter().find(|(k, _, _)| k == p) {
                                    Some((_, _, lit)) => {
                                        used_dims.insert(p.clone());
                                        match lit.base10_parse::<usize>() {
                                            Ok(v) if (1..=crate::types::MAX_DIM).contains(&v) => {
                                                out.push(v)
                                            }
                                            _ => {
                                                self.cx.error(
                                                    lit.span(),
                                                    "a dim is an integer from 1 to 2^31",
                                                );
                                                missing = true;
                                            }
                                        }
                                    }
                                    None => missing = true,
                                }
                            }
                            _ => missing = true,
                        }
                    }
                    if missing {
                        use pb::tensor_shape_proto::dimension::Value as D;
                        let all: Vec<String> = file_dims.iter().map(|d| shown(*d)).collect();
                        // The open dims: their names, or None for a dim without one.
                        let open_dims: Vec<Option<&str>> = file_dims
                            .iter()
                            .filter_map(|d| match d {
                                Some(D::DimValue(v)) if *v > 0 => None,
                                Some(D::DimParam(p)) if !p.is_empty() => {
                                    (!def.dims.iter().any(|(k, _, _)| k == p))
                                        .then_some(Some(p.as_str()))
                                }
                                _ => Some(None),
                            })
                            .collect();
                        let hint = if open_dims.iter().all(Option::is_some) {
                            let named: Vec<String> = open_dims
                                .iter()
                                .flatten()
                                .map(|p| format!("{} = ..", rust_key(p)))
                                .collect();
                            format!("dims({})", named.join(", "))
                        } else {
                            // The dims given or fixed by the file filled in.
                            let filled: Vec<String> = file_dims
                                .iter()
                                .map(|d| match d {
                                    Some(D::DimParam(p)) => def
                                        .dims
                                        .iter()
                                        .find(|(k, _, _)| k == p)
                                        .map_or_else(|| shown(*d), |(_, _, v)| v.to_string()),
                                    _ => shown(*d),
                                })
                                .collect();
                            format!("shapes({} = [{}])", rust_key(&name), filled.join(", "))
                        };
                        open.push(format!("`{name}` is [{}]: give `{hint}`", all.join(", ")));
                        None
                    } else {
                        Some(out)
                    }
                };
            if let Some(dims) = dims {
                let shown_name = self.renamed(&name);
                let id = self.cx.add_input(
                    shown_name,
                    TensorType {
                        dtype,
                        shape: Shape::fixed(&dims),
                    },
                );
                self.vals.insert(name, Val::Tensor(id));
            }
        }
        if !open.is_empty() {
            self.error(format!(
                "the file leaves dims open, and a static plan needs every one: {}",
                open.join("; ")
            ));
        }
        for (k, span, _) in &def.dims {
            if !used_dims.contains(k) {
                self.cx
                    .error(*span, format!("the file's inputs have no dim named `{k}`"));
            }
        }
        for (k, span, _) in &def.shapes {
            if !used_shapes.contains(k) {
                let known: Vec<&str> = names.iter().map(String::as_str).collect();
                let hint = crate::suggest::did_you_mean(k, &known)
                    .map(|s| format!(": did you mean `{s}`?"))
                    .unwrap_or_else(|| format!("; its inputs are {}", known.join(", ")));
                self.cx
                    .error(*span, format!("the file has no input `{k}`{hint}"));
            }
        }
        for (new, old) in &def.renames {
            let o = old.value();
            let exists =
                names.contains(&o) || graph.output.iter().any(|v| v.name.as_deref() == Some(&o));
            if !exists {
                self.cx.error(
                    old.span(),
                    format!("the file has no input or output `{o}` to rename to `{new}`"),
                );
            }
        }
    }

    /// The name a file's input or output has in the model: its rename, or its own.
    pub(super) fn renamed(&self, name: &str) -> String {
        self.def
            .renames
            .iter()
            .find(|(_, old)| old.value() == name)
            .map_or_else(|| name.to_string(), |(new, _)| new.to_string())
    }
}

/// How a file's name is written as a key of `dims(...)`/`shapes(...)`: itself when it
/// is an identifier, else as a string.
pub(super) fn rust_key(name: &str) -> String {
    let ident = !name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ident {
        name.to_string()
    } else {
        format!("{name:?}")
    }
}
