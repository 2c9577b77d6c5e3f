//! Static memory plan: which byte range of the arena each intermediate tensor uses.
//!
//! Model inputs are read from the caller's arrays, weights from `static` data and
//! outputs are written straight into the returned arrays, so the arena holds only the
//! intermediate tensors. A tensor lives from the node that produces it to the last node
//! that reads it, both included. An element-wise node may write its output over an
//! input that dies at that node (its `OpSchema::inplace`), which merges the two into one
//! buffer; a view (`OpSchema::view`: Reshape, Flatten, ...) always shares its input's
//! buffer, which then lives until the last reader of either. A view of a model input
//! (directly or through other views) takes no buffer at all: its readers read the
//! caller's array ([`input_views`]). Buffers are then placed
//! greedily, largest first, each into a free gap of its lifetime, aligned to its element
//! size: at the lowest offset (first fit) and, separately, in the smallest gap (best
//! fit); the smaller arena wins.
//!
//! The node order is a choice too: the compiler plans the declared order and the order
//! of [`greedy_order`] (run first what frees the most memory, e.g. a shortcut that reads
//! a block's input) and keeps the smaller arena.
//!
//! The lower bound is the largest total size of the buffers alive at one step: no plan
//! can use less.

use std::collections::HashMap;

use crate::ir::{Graph, TensorId, TensorKind};

/// The plan of one graph.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Byte offset of every intermediate tensor in the arena.
    pub offsets: HashMap<TensorId, usize>,
    /// For each node: whether output 0 is written over its in-place input.
    pub inplace: Vec<bool>,
    /// For each node: the byte offset of its scratch region, if it asked for one.
    pub scratch: Vec<Option<usize>>,
    /// For each node: the f32 values of scratch it was planned with (0: none).
    pub scratch_elems: Vec<usize>,
    /// Size of the arena in bytes.
    pub arena_bytes: usize,
    /// The largest total size of tensors alive at the same step.
    pub lower_bound_bytes: usize,
    /// For each node: the total size of the buffers alive while it runs, its scratch
    /// included. No placement fits in fewer bytes than any of them.
    pub live_bytes: Vec<usize>,
    /// The views read straight from a model input: view tensor -> that input.
    pub input_views: HashMap<TensorId, TensorId>,
    /// Every buffer as placed: first and last step, offset and size.
    placed: Vec<Placed>,
    /// For each step, the buffers of `placed` alive then.
    placed_at: Vec<Vec<usize>>,
    /// For each node, its scratch region's buffer in `placed`.
    scratch_placed: Vec<Option<usize>>,
}

/// A placed buffer: alive from step `start` to `end` (included) at `offset`.
#[derive(Debug, Clone, Copy)]
struct Placed {
    start: usize,
    end: usize,
    offset: usize,
    bytes: usize,
}

impl Plan {
    /// Gives node `i` a scratch region of `elems` f32 values without moving anything
    /// else, if a free range of the arena as it is holds one while the node runs (the
    /// lowest such offset). Returns whether it did; the arena does not grow either way.
    /// This is how the Winograd search keeps a larger scratch without planning the
    /// whole graph again per convolution.
    pub fn grow_scratch_in_place(&mut self, i: usize, elems: usize) -> bool {
        let bytes = 4 * elems;
        let own = self.scratch_placed[i];
        let mut busy: Vec<(usize, usize)> = self.placed_at[i]
            .iter()
            // The node's present scratch is given up for the new one.
            .filter(|&&k| Some(k) != own)
            .map(|&k| {
                (
                    self.placed[k].offset,
                    self.placed[k].offset + self.placed[k].bytes,
                )
            })
            .collect();
        busy.sort_unstable();
        let mut offset = 0;
        for (lo, hi) in busy {
            if offset + bytes <= lo {
                break;
            }
            offset = offset.max(hi.next_multiple_of(4));
        }
        if offset + bytes > self.arena_bytes {
            return false;
        }
        let old = 4 * self.scratch_elems[i];
        match own {
            Some(k) => {
                self.placed[k].offset = offset;
                self.placed[k].bytes = bytes;
            }
            None => {
                self.placed.push(Placed {
                    start: i,
                    end: i,
                    offset,
                    bytes,
                });
                self.placed_at[i].push(self.placed.len() - 1);
                self.scratch_placed[i] = Some(self.placed.len() - 1);
            }
        }
        self.scratch[i] = Some(offset);
        self.scratch_elems[i] = elems;
        self.live_bytes[i] = self.live_bytes[i] - old + bytes;
        self.lower_bound_bytes = self.lower_bound_bytes.max(self.live_bytes[i]);
        true
    }
}

#[derive(Debug, Clone)]
struct Buffer {
    bytes: usize,
    align: usize,
    start: usize,
    end: usize,
    offset: usize,
}

/// Whether a tensor lives in the arena.
pub fn in_arena(graph: &Graph, id: TensorId) -> bool {
    matches!(graph.tensors[id].kind, TensorKind::Value) && !graph.is_output(id)
}

/// Bytes of tensor `id` on the device.
fn tensor_bytes(graph: &Graph, id: TensorId) -> usize {
    graph.device_numel(id) * graph.tensors[id].ty.dtype.size()
}

/// The tensors that are views of a model input, directly or through other views, each
/// with that input: they need no buffer and no copy, since the input's array is already
/// the values in the same order and nothing writes over it. A view that is a model
/// output is still copied into the caller's output. A graph with control flow keeps its
/// copies: a body reads the outer tensors at their arena offsets.
pub fn input_views(graph: &Graph) -> HashMap<TensorId, TensorId> {
    let mut views = HashMap::new();
    if graph.nodes.iter().any(|n| n.control.is_some()) {
        return views;
    }
    let bytes = |id: TensorId| tensor_bytes(graph, id);
    // A checked graph lists a producer before its readers, so a chain resolves in order.
    for node in &graph.nodes {
        let (Some(&Some(src)), Some(&o)) = (node.inputs.first(), node.outputs.first()) else {
            continue;
        };
        let root = match graph.tensors[src].kind {
            TensorKind::Input => Some(src),
            _ => views.get(&src).copied(),
        };
        if let Some(root) = root
            && node.op.view
            && in_arena(graph, o)
            && bytes(o) == bytes(src)
            && graph.tensors[o].ty.dtype == graph.tensors[src].ty.dtype
        {
            views.insert(o, root);
        }
    }
    views
}

/// Plans the arena of a checked graph; `scratch[i]` is the f32 elements node `i` needs
/// for the duration of its call.
pub fn plan(graph: &Graph, scratch_elems: &[usize]) -> Plan {
    let input_views = input_views(graph);
    let bytes = |id: TensorId| tensor_bytes(graph, id);
    let mut last_use: HashMap<TensorId, usize> = HashMap::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        for &o in &node.outputs {
            last_use.entry(o).or_insert(i);
        }
        for id in node.inputs.iter().flatten() {
            last_use.insert(*id, i);
        }
    }
    let mut buffers: Vec<Buffer> = Vec::new();
    let mut buffer_of: HashMap<TensorId, usize> = HashMap::new();
    let mut scratch_buffer: Vec<Option<usize>> = vec![None; graph.nodes.len()];
    let mut inplace = vec![false; graph.nodes.len()];
    let mut pinned: std::collections::HashSet<usize> = std::collections::HashSet::new();
    for (i, node) in graph.nodes.iter().enumerate() {
        if let Some(&n) = scratch_elems.get(i)
            && n > 0
        {
            buffers.push(Buffer {
                bytes: n * 4,
                // A control-flow body's region holds tensors of any element type.
                align: if node.control.is_some() { 8 } else { 4 },
                start: i,
                end: i,
                offset: 0,
            });
            scratch_buffer[i] = Some(buffers.len() - 1);
        }
        for (k, &o) in node.outputs.iter().enumerate() {
            if input_views.contains_key(&o) {
                // Nothing to copy: the node's "in-place" write is no write at all.
                inplace[i] = true;
                continue;
            }
            if !in_arena(graph, o) {
                continue;
            }
            let reuse = (k == 0)
                .then_some(node.op.inplace)
                .flatten()
                .and_then(|j| node.inputs.get(j).copied().flatten())
                .filter(|&src| {
                    // (A control-flow body reads outer tensors it does not plan, and
                    // its formal inputs keep their own buffers: the control-flow code
                    // copies the body's outputs into them.)
                    buffer_of.get(&src).is_some_and(|b| !pinned.contains(b))
                        && in_arena(graph, src)
                        && bytes(src) == bytes(o)
                        && graph.tensors[src].ty.dtype == graph.tensors[o].ty.dtype
                        && (node.op.view
                            // Written over: nothing else may read the buffer later (the
                            // input itself or a view of it), and the node reads the input
                            // only once.
                            || (buffers[buffer_of[&src]].end == i
                                && node.inputs.iter().flatten().filter(|&&t| t == src).count()
                                    == 1))
                });
            if let Some(src) = reuse {
                let b = buffer_of[&src];
                buffers[b].end = buffers[b].end.max(last_use[&o]);
                buffer_of.insert(o, b);
                inplace[i] = true;
            } else {
                buffers.push(Buffer {
                    bytes: bytes(o),
                    align: graph.tensors[o].ty.dtype.size(),
                    start: i,
                    end: last_use[&o],
                    offset: 0,
                });
                buffer_of.insert(o, buffers.len() - 1);
                if std::ptr::eq(node.op, &crate::ops::control::BODY_ENTRY) {
                    pinned.insert(buffers.len() - 1);
                }
            }
        }
    }
    // Bytes alive at each step: each buffer added at its first step and taken off after
    // its last (one pass, where summing the buffers of every step was quadratic).
    let steps = graph.nodes.len();
    let mut delta = vec![0isize; steps + 1];
    for b in &buffers {
        delta[b.start] += b.bytes as isize;
        delta[b.end + 1] -= b.bytes as isize;
    }
    let live_bytes: Vec<usize> = delta[..steps]
        .iter()
        .scan(0isize, |live, d| {
            *live += d;
            Some(*live as usize)
        })
        .collect();
    let lower_bound_bytes = live_bytes.iter().copied().max().unwrap_or(0);
    // Two placements, the smaller kept: lowest offset (first fit) and smallest gap
    // (best fit), both largest buffer first.
    let mut best_fit = buffers.clone();
    let first = place(&mut buffers, Fit::First);
    let arena_bytes = if place(&mut best_fit, Fit::Best) < first {
        buffers = best_fit;
        place(&mut buffers, Fit::Best)
    } else {
        first
    };
    let scratch = scratch_buffer
        .iter()
        .map(|b| b.map(|b| buffers[b].offset))
        .collect();
    let offsets = buffer_of
        .into_iter()
        .map(|(t, b)| (t, buffers[b].offset))
        .collect();
    let placed: Vec<Placed> = buffers
        .iter()
        .map(|b| Placed {
            start: b.start,
            end: b.end,
            offset: b.offset,
            bytes: b.bytes,
        })
        .collect();
    let mut placed_at = vec![Vec::new(); steps];
    for (k, b) in placed.iter().enumerate() {
        for at in &mut placed_at[b.start..=b.end] {
            at.push(k);
        }
    }
    Plan {
        offsets,
        inplace,
        scratch,
        scratch_elems: (0..graph.nodes.len())
            .map(|i| scratch_elems.get(i).copied().unwrap_or(0))
            .collect(),
        arena_bytes,
        lower_bound_bytes,
        live_bytes,
        input_views,
        placed,
        placed_at,
        // `placed` keeps the buffers' order.
        scratch_placed: scratch_buffer,
    }
}

/// Where a buffer goes among the free gaps of its lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fit {
    /// The lowest offset.
    First,
    /// The smallest gap it fits in (above the highest busy byte if none).
    Best,
}

/// Greedy by size: each buffer, largest first, into a free aligned gap of its whole
/// lifetime chosen by `fit`. Returns the arena size.
fn place(buffers: &mut [Buffer], fit: Fit) -> usize {
    let mut order: Vec<usize> = (0..buffers.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(buffers[i].bytes), buffers[i].start));
    // The buffers placed so far, by the steps they are alive at: the ones a buffer must
    // avoid are those of its own steps (looking through every placed buffer instead
    // made planning quadratic in the graph's size).
    let steps = buffers.iter().map(|b| b.end + 1).max().unwrap_or(0);
    let mut placed_at: Vec<Vec<usize>> = vec![Vec::new(); steps];
    let mut arena = 0;
    for i in order {
        let (start, end) = (buffers[i].start, buffers[i].end);
        let mut near: Vec<usize> = placed_at[start..=end].iter().flatten().copied().collect();
        near.sort_unstable();
        near.dedup();
        let mut busy: Vec<(usize, usize)> = near
            .into_iter()
            .map(|j| (buffers[j].offset, buffers[j].offset + buffers[j].bytes))
            .collect();
        busy.sort_unstable();
        let (bytes, align) = (buffers[i].bytes, buffers[i].align);
        // Candidate gaps: (start, size), the last one unbounded.
        let mut offset = 0;
        let mut chosen: Option<(usize, usize)> = None;
        for (lo, hi) in busy {
            if offset + bytes <= lo {
                let gap = lo - offset;
                if fit == Fit::First {
                    chosen = Some((offset, gap));
                    break;
                }
                if chosen.is_none_or(|(_, g)| gap < g) {
                    chosen = Some((offset, gap));
                }
            }
            offset = offset.max(hi.next_multiple_of(align));
        }
        let offset = chosen.map_or(offset, |(o, _)| o);
        buffers[i].offset = offset;
        arena = arena.max(offset + buffers[i].bytes);
        for at in &mut placed_at[start..=end] {
            at.push(i);
        }
    }
    arena
}

/// A memory-aware topological order of `graph`'s nodes: repeatedly the ready node
/// (declared order breaks ties) whose arena outputs minus the arena inputs it is the
/// last reader of is smallest, so a branch that frees a large tensor runs before one
/// that only allocates. Returns node indices.
pub fn greedy_order(graph: &Graph) -> Vec<usize> {
    let n = graph.nodes.len();
    let bytes = |id: TensorId| tensor_bytes(graph, id);
    let views = input_views(graph);
    let in_arena = |id: TensorId| in_arena(graph, id) && !views.contains_key(&id);
    let producer: HashMap<TensorId, usize> = graph
        .nodes
        .iter()
        .enumerate()
        .flat_map(|(i, node)| node.outputs.iter().map(move |&o| (o, i)))
        .collect();
    // Readers left per tensor.
    let mut readers: HashMap<TensorId, usize> = HashMap::new();
    for node in &graph.nodes {
        let mut seen: Vec<TensorId> = node.inputs.iter().flatten().copied().collect();
        seen.sort_unstable();
        seen.dedup();
        for t in seen {
            *readers.entry(t).or_default() += 1;
        }
    }
    // The producers each node still waits for, and the readers of each node's outputs:
    // the ready nodes are kept as a set instead of found again among all the nodes at
    // every step (which made ordering quadratic in the graph's size).
    let mut waiting = vec![0usize; n];
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, node) in graph.nodes.iter().enumerate() {
        let mut deps: Vec<usize> = node
            .inputs
            .iter()
            .flatten()
            .filter_map(|t| producer.get(t).copied())
            .collect();
        deps.sort_unstable();
        deps.dedup();
        waiting[i] = deps.len();
        for p in deps {
            consumers[p].push(i);
        }
    }
    let mut ready: std::collections::BTreeSet<usize> =
        (0..n).filter(|&i| waiting[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    for _ in 0..n {
        let score = |i: usize| -> i64 {
            let node = &graph.nodes[i];
            let alloc: usize = node
                .outputs
                .iter()
                .filter(|&&o| in_arena(o))
                .map(|&o| bytes(o))
                .sum();
            let mut ins: Vec<TensorId> = node.inputs.iter().flatten().copied().collect();
            ins.sort_unstable();
            ins.dedup();
            let freed: usize = ins
                .iter()
                .filter(|&&t| in_arena(t) && readers[&t] == 1)
                .map(|&t| bytes(t))
                .sum();
            alloc as i64 - freed as i64
        };
        let next = ready
            .iter()
            .copied()
            .min_by_key(|&i| (score(i), i))
            .expect("a checked graph is acyclic, so some node is ready");
        ready.remove(&next);
        let mut ins: Vec<TensorId> = graph.nodes[next].inputs.iter().flatten().copied().collect();
        ins.sort_unstable();
        ins.dedup();
        for t in ins {
            *readers.get_mut(&t).expect("counted above") -= 1;
        }
        for &c in &consumers[next] {
            waiting[c] -= 1;
            if waiting[c] == 0 {
                ready.insert(c);
            }
        }
        order.push(next);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf(bytes: usize, start: usize, end: usize) -> Buffer {
        Buffer {
            bytes,
            align: 4,
            start,
            end,
            offset: 0,
        }
    }

    #[test]
    fn buffers_alive_together_never_overlap() {
        // A pseudo-random mix of sizes and lifetimes, checked pairwise.
        let mut rng = crate::init::SplitMix64::new(3);
        for _ in 0..200 {
            let n = 2 + (rng.next_u64() % 12) as usize;
            let mut bufs: Vec<Buffer> = (0..n)
                .map(|_| {
                    let start = (rng.next_u64() % 10) as usize;
                    let len = (rng.next_u64() % 5) as usize;
                    buf(4 * (1 + (rng.next_u64() % 64) as usize), start, start + len)
                })
                .collect();
            for fit in [Fit::First, Fit::Best] {
                let arena = place(&mut bufs, fit);
                for (i, a) in bufs.iter().enumerate() {
                    assert_eq!(a.offset % a.align, 0);
                    assert!(a.offset + a.bytes <= arena);
                    for b in &bufs[i + 1..] {
                        let live_together = a.start <= b.end && b.start <= a.end;
                        let disjoint =
                            a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset;
                        assert!(!live_together || disjoint, "{a:?} overlaps {b:?}");
                    }
                }
            }
        }
    }

    /// A plan of the placed buffers `(start, end, offset, bytes)` (no tensors).
    fn placed(bufs: &[(usize, usize, usize, usize)], steps: usize, arena: usize) -> Plan {
        let placed: Vec<Placed> = bufs
            .iter()
            .map(|&(start, end, offset, bytes)| Placed {
                start,
                end,
                offset,
                bytes,
            })
            .collect();
        let mut placed_at = vec![Vec::new(); steps];
        let mut live_bytes = vec![0; steps];
        for (k, b) in placed.iter().enumerate() {
            for step in b.start..=b.end {
                placed_at[step].push(k);
                live_bytes[step] += b.bytes;
            }
        }
        Plan {
            offsets: HashMap::new(),
            inplace: vec![false; steps],
            scratch: vec![None; steps],
            scratch_elems: vec![0; steps],
            arena_bytes: arena,
            lower_bound_bytes: live_bytes.iter().copied().max().unwrap_or(0),
            live_bytes,
            input_views: HashMap::new(),
            placed,
            placed_at,
            scratch_placed: vec![None; steps],
        }
    }

    #[test]
    fn a_scratch_grows_into_a_free_range_or_not_at_all() {
        // Step 2 has bytes 1024..1536 busy: a scratch of 1024 bytes fits below them.
        let mut p = placed(&[(0, 1, 0, 1024), (1, 2, 1024, 512)], 3, 1536);
        assert!(p.grow_scratch_in_place(2, 256));
        assert_eq!(
            (p.scratch[2], p.scratch_elems[2], p.live_bytes[2]),
            (Some(0), 256, 1536)
        );
        // 1200 bytes fit nowhere under 1536 beside the busy range: nothing changes.
        assert!(!p.grow_scratch_in_place(2, 300));
        assert_eq!((p.scratch[2], p.scratch_elems[2]), (Some(0), 256));
        // Its own region does not count as busy: growing to the whole free range works.
        let mut q = placed(&[(0, 2, 0, 512)], 3, 2048);
        assert!(q.grow_scratch_in_place(1, 128));
        assert_eq!(q.scratch[1], Some(512));
        assert!(q.grow_scratch_in_place(1, 384));
        assert_eq!((q.scratch[1], q.live_bytes[1]), (Some(512), 2048));
        assert_eq!(q.placed.len(), 2, "the scratch is resized, not added twice");
    }

    #[test]
    fn a_chain_reuses_memory() {
        // t0 (1024 B) -> t1 (512 B) -> t2 (48 B): t2 can take t0's place.
        let mut bufs = vec![buf(1024, 0, 1), buf(512, 1, 2), buf(48, 2, 3)];
        assert_eq!(place(&mut bufs, Fit::First), 1536);
        assert_eq!(bufs[2].offset, 0);
    }
}
