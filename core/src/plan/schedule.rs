//! The node order and the kernel variants: the declared order or a memory-aware one,
//! whichever plans the smaller arena, then the convolutions that run as Winograd.

use crate::ir::{Graph, Node, Winograd};

use super::arena::{self, Plan};
use super::scratch::scratch_elems;

/// The arena plan of `graph` with the Winograd choices `winograd`.
fn plan_of(graph: &Graph, winograd: &[u8]) -> Plan {
    let scratch: Vec<usize> = (0..graph.nodes.len())
        .map(|i| scratch_elems(graph, i, winograd[i]))
        .collect();
    arena::plan(graph, &scratch)
}

/// Orders `graph.nodes` (the declared order or [`arena::greedy_order`], whichever plans
/// the smaller arena; the declared one on a tie), then chooses the Winograd
/// convolutions from [`Graph::winograd`]: `always` all of them, `auto` those whose
/// scratch fits in the arena as planned. Returns the plan and the choice per node (the
/// rows of 4x4 elements a pass; 0 for none).
pub fn schedule(graph: &mut Graph) -> (Plan, Vec<u8>) {
    let all = if graph.winograd == Winograd::Always {
        4
    } else {
        0
    };
    let mut winograd = vec![all; graph.nodes.len()];
    let mut plan = order_and_plan(graph, &winograd);
    if graph.winograd != Winograd::Auto {
        return (plan, winograd);
    }
    // One node at a time, all sixteen elements a pass or else a row of four (a quarter
    // of the scratch), kept when the arena does not grow.
    for i in 0..graph.nodes.len() {
        let before = scratch_elems(graph, i, 0);
        for rows in [4, 1] {
            let after = scratch_elems(graph, i, rows);
            if after == before {
                break;
            }
            // What is alive while the node runs already bounds every arena from below:
            // where the larger scratch takes it past the arena, no plan of the trial can
            // keep it, and planning it again would be wasted (it made the search cubic).
            if (plan.live_bytes[i] - 4 * before).saturating_add(4 * after) > plan.arena_bytes {
                continue;
            }
            winograd[i] = rows;
            // A free range as the arena is placed now takes it at no cost; only where
            // none does is the whole graph planned again.
            if plan.grow_scratch_in_place(i, after) {
                break;
            }
            let trial = plan_of(graph, &winograd);
            if trial.arena_bytes <= plan.arena_bytes {
                plan = trial;
                break;
            }
            winograd[i] = 0;
        }
    }
    (plan, winograd)
}

/// The declared order or the memory-aware one, whichever plans the smaller arena
/// (`winograd` is uniform, so it does not depend on the order).
fn order_and_plan(graph: &mut Graph, winograd: &[u8]) -> Plan {
    let declared = plan_of(graph, winograd);
    let order = arena::greedy_order(graph);
    if order.iter().enumerate().all(|(i, &k)| i == k) {
        return declared;
    }
    let permute = |g: &mut Graph, order: &[usize]| {
        let mut slots: Vec<Option<Node>> =
            std::mem::take(&mut g.nodes).into_iter().map(Some).collect();
        g.nodes = order
            .iter()
            .map(|&k| slots[k].take().expect("an order is a permutation"))
            .collect();
    };
    permute(graph, &order);
    let greedy = plan_of(graph, winograd);
    if greedy.arena_bytes < declared.arena_bytes {
        return greedy;
    }
    let mut inverse = vec![0; order.len()];
    for (i, &k) in order.iter().enumerate() {
        inverse[k] = i;
    }
    permute(graph, &inverse);
    declared
}
