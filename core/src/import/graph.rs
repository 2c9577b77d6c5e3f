//! The file's graph as a whole: local functions inlined, nodes sorted, the nodes an
//! output needs, the outer names a subgraph reads.

use std::collections::{BTreeSet, HashMap, HashSet};

use tinyonnx_proto as pb;

use super::{Importer, MAX_NODES};

impl Importer<'_> {
    /// The nodes `outputs` need, in an order where each comes after what it reads.
    pub(super) fn schedule(&mut self, nodes: &[pb::NodeProto], outputs: &[&str]) -> Vec<usize> {
        let order = self.sort(nodes);
        let live = live_nodes(nodes, &order, outputs);
        order.into_iter().filter(|&i| live[i]).collect()
    }

    /// The graph's nodes with calls of the model's local functions replaced by their
    /// bodies (names made unique per call, attribute references resolved).
    pub(super) fn inline(
        &mut self,
        graph: &pb::GraphProto,
        functions: &[pb::FunctionProto],
    ) -> Vec<pb::NodeProto> {
        let mut out = Vec::new();
        let mut stack: Vec<(pb::NodeProto, usize)> =
            graph.node.iter().rev().cloned().map(|n| (n, 0)).collect();
        let mut calls = 0usize;
        while let Some((node, depth)) = stack.pop() {
            let domain = node.domain.clone().unwrap_or_default();
            let op = node.op_type.clone().unwrap_or_default();
            let Some(f) = functions.iter().find(|f| {
                f.name.as_deref() == Some(&op) && f.domain.clone().unwrap_or_default() == domain
            }) else {
                out.push(node);
                continue;
            };
            if depth >= 16 || out.len() + stack.len() > MAX_NODES {
                self.error(format!(
                    "function `{op}` calls functions more than 16 deep (or recursively)"
                ));
                continue;
            }
            calls += 1;
            let prefix = format!("{}::{calls}::", node.name.clone().unwrap_or(op.clone()));
            let mut rename: HashMap<String, String> = HashMap::new();
            for (formal, actual) in f.input.iter().zip(&node.input) {
                rename.insert(formal.clone(), actual.clone());
            }
            for (formal, actual) in f.output.iter().zip(&node.output) {
                rename.insert(formal.clone(), actual.clone());
            }
            let map = |n: &String, rename: &HashMap<String, String>| -> String {
                if n.is_empty() {
                    return String::new();
                }
                rename
                    .get(n)
                    .cloned()
                    .unwrap_or_else(|| format!("{prefix}{n}"))
            };
            let mut body = Vec::new();
            for inner in &f.node {
                let mut n = inner.clone();
                n.input = n.input.iter().map(|i| map(i, &rename)).collect();
                n.output = n.output.iter().map(|o| map(o, &rename)).collect();
                n.name = Some(format!("{prefix}{}", n.name.clone().unwrap_or_default()));
                // Attribute references take the call's value, or the function's default.
                let mut attrs = Vec::new();
                for a in n.attribute {
                    match a.ref_attr_name.as_deref() {
                        Some(r) => {
                            let given = node
                                .attribute
                                .iter()
                                .chain(&f.attribute_proto)
                                .find(|b| b.name.as_deref() == Some(r));
                            if let Some(b) = given {
                                let mut b = b.clone();
                                b.name = a.name.clone();
                                attrs.push(b);
                            }
                        }
                        None => attrs.push(a),
                    }
                }
                n.attribute = attrs;
                body.push((n, depth + 1));
            }
            stack.extend(body.into_iter().rev());
        }
        out
    }

    /// The nodes in an order where each comes after what it reads (the file's own order
    /// where it allows); nodes in a cycle or reading a name nothing makes are reported.
    pub(super) fn sort(&mut self, nodes: &[pb::NodeProto]) -> Vec<usize> {
        let mut producer: HashMap<&str, usize> = HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            for o in n.output.iter().filter(|o| !o.is_empty()) {
                if producer.insert(o, i).is_some() || self.vals.contains_key(o.as_str()) {
                    let msg = format!(
                        "the name `{o}` is made twice (by a node and by another node, input or initializer)"
                    );
                    self.error(msg);
                }
            }
        }
        let mut waiting = vec![0usize; nodes.len()];
        let mut readers: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        let mut unknown = BTreeSet::new();
        for (i, n) in nodes.iter().enumerate() {
            for inp in reads(n).iter().filter(|s| !s.is_empty()) {
                match producer.get(inp.as_str()) {
                    Some(&p) => {
                        waiting[i] += 1;
                        readers[p].push(i);
                    }
                    None if self.vals.contains_key(inp) => {}
                    None => {
                        unknown.insert(format!("`{inp}` (read by {})", describe(n)));
                    }
                }
            }
        }
        if !unknown.is_empty() {
            let list: Vec<String> = unknown.into_iter().collect();
            self.error(format!(
                "nodes read names that no node, input or initializer makes: {}",
                list.join(", ")
            ));
        }
        let mut ready: BTreeSet<usize> = (0..nodes.len()).filter(|&i| waiting[i] == 0).collect();
        let mut order = Vec::with_capacity(nodes.len());
        while let Some(i) = ready.pop_first() {
            order.push(i);
            for &r in &readers[i] {
                waiting[r] -= 1;
                if waiting[r] == 0 {
                    ready.insert(r);
                }
            }
        }
        if order.len() < nodes.len() {
            let stuck: Vec<String> = (0..nodes.len())
                .filter(|&i| waiting[i] > 0)
                .take(8)
                .map(|i| describe(&nodes[i]))
                .collect();
            self.error(format!(
                "the graph has a cycle: these nodes wait on each other: {}",
                stuck.join(", ")
            ));
        }
        order
    }
}

/// Which nodes an output needs, by what they read.
fn live_nodes(nodes: &[pb::NodeProto], order: &[usize], outputs: &[&str]) -> Vec<bool> {
    let mut needed: HashSet<String> = outputs.iter().map(|s| s.to_string()).collect();
    let mut live = vec![false; nodes.len()];
    for &i in order.iter().rev() {
        if nodes[i].output.iter().any(|o| needed.contains(o)) {
            live[i] = true;
            needed.extend(reads(&nodes[i]));
        }
    }
    live
}

/// The names a node reads: its inputs, and the outer names its subgraphs capture.
pub(super) fn reads(node: &pb::NodeProto) -> Vec<String> {
    let mut out = node.input.clone();
    let mut stack: Vec<&pb::GraphProto> = node
        .attribute
        .iter()
        .flat_map(|a| a.g.iter().chain(&a.graphs))
        .collect();
    // Names defined anywhere inside the subgraphs (ONNX forbids shadowing, so a name
    // read there and defined nowhere there comes from outside).
    let mut inner: HashSet<&str> = HashSet::new();
    let mut read: Vec<&str> = Vec::new();
    let mut depth = 0;
    while let Some(g) = stack.pop() {
        depth += 1;
        if depth > 4096 {
            break;
        }
        inner.extend(g.input.iter().filter_map(|v| v.name.as_deref()));
        inner.extend(g.initializer.iter().filter_map(|t| t.name.as_deref()));
        for n in &g.node {
            inner.extend(n.output.iter().map(String::as_str));
            read.extend(n.input.iter().map(String::as_str));
            stack.extend(n.attribute.iter().flat_map(|a| a.g.iter().chain(&a.graphs)));
        }
        read.extend(g.output.iter().filter_map(|v| v.name.as_deref()));
    }
    out.extend(
        read.into_iter()
            .filter(|r| !r.is_empty() && !inner.contains(r))
            .map(str::to_string),
    );
    out
}

/// A node for messages: its name and operator.
pub(super) fn describe(n: &pb::NodeProto) -> String {
    format!(
        "`{}` ({})",
        n.name.as_deref().unwrap_or(""),
        n.op_type.as_deref().unwrap_or("")
    )
}
