//! Phase 4: coordinates. y by layer; x by alternating passes that pull each
//! layer towards the mean of its neighbours above (then below) while keeping
//! the order and the spacing, solved exactly per layer as an isotonic
//! regression (pool adjacent violators). Dummies weigh more, so long edges
//! straighten.

use crate::ordering::Ordering;
use crate::{Options, Point};

pub struct Placement {
    centers: Vec<Point>,
}

impl Placement {
    pub fn node_center(&self, v: usize) -> Point {
        self.centers[v]
    }

    pub fn dummy_center(&self, d: usize) -> Point {
        self.centers[d]
    }
}

const PASSES: usize = 8;

pub fn place(order: &Ordering, options: &Options) -> Placement {
    let items = order.item_count();
    let n = order.node_count;
    let width = |v: usize| {
        if v < n {
            options.node_width
        } else {
            options.dummy_width
        }
    };
    let separation = |a: usize, b: usize| {
        let gap = if a >= n && b >= n {
            options.node_gap / 4.0
        } else {
            options.node_gap
        };
        width(a) / 2.0 + gap + width(b) / 2.0
    };
    let mut x = vec![0.0f64; items];
    for layer in &order.layers {
        let mut at = 0.0;
        for (i, &v) in layer.iter().enumerate() {
            if i > 0 {
                at += separation(layer[i - 1], v);
            }
            x[v] = at;
        }
    }
    // Centre the initial packing on the widest layer, so passes start balanced.
    let widest = order
        .layers
        .iter()
        .filter_map(|l| l.last().map(|&v| x[v]))
        .fold(0.0, f64::max);
    for layer in &order.layers {
        if let Some(&last) = layer.last() {
            let shift = (widest - x[last]) / 2.0;
            for &v in layer {
                x[v] += shift;
            }
        }
    }

    let mut offsets = Vec::new();
    let mut targets = Vec::new();
    let mut weights = Vec::new();
    // The neighbours to average over, and the layers to sweep, this pass.
    type Sweep<'a> = (
        &'a [Vec<usize>],
        Box<dyn Iterator<Item = &'a Vec<usize>> + 'a>,
    );
    for pass in 0..PASSES {
        let (neighbours, layers): Sweep<'_> = if pass % 2 == 0 {
            (&order.up, Box::new(order.layers.iter().skip(1)))
        } else {
            (&order.down, Box::new(order.layers.iter().rev().skip(1)))
        };
        for layer in layers {
            offsets.clear();
            targets.clear();
            weights.clear();
            let mut offset = 0.0;
            for (i, &v) in layer.iter().enumerate() {
                if i > 0 {
                    offset += separation(layer[i - 1], v);
                }
                let ns = &neighbours[v];
                let (target, weight) = if ns.is_empty() {
                    (x[v], 0.05)
                } else {
                    let mean = ns.iter().map(|&w| x[w]).sum::<f64>() / ns.len() as f64;
                    (mean, if v >= n { 2.0 } else { 1.0 })
                };
                offsets.push(offset);
                targets.push(target - offset);
                weights.push(weight);
            }
            let fitted = isotonic(&targets, &weights);
            for (i, &v) in layer.iter().enumerate() {
                x[v] = fitted[i] + offsets[i];
            }
        }
    }

    let left = (0..items)
        .map(|v| x[v] - width(v) / 2.0)
        .fold(f64::INFINITY, f64::min);
    let left = if left.is_finite() { left } else { 0.0 };
    let mut centers = vec![Point::default(); items];
    for (l, layer) in order.layers.iter().enumerate() {
        let y = l as f64 * (options.node_height + options.layer_gap) + options.node_height / 2.0;
        for &v in layer {
            centers[v] = Point { x: x[v] - left, y };
        }
    }
    Placement { centers }
}

/// The non-decreasing sequence closest to `values` in weighted least squares.
fn isotonic(values: &[f64], weights: &[f64]) -> Vec<f64> {
    // Blocks of pooled values: (mean, total weight, length).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::with_capacity(values.len());
    for (&v, &w) in values.iter().zip(weights) {
        blocks.push((v, w, 1));
        while blocks.len() > 1 {
            let (m2, w2, n2) = blocks[blocks.len() - 1];
            let (m1, w1, n1) = blocks[blocks.len() - 2];
            if m1 <= m2 {
                break;
            }
            blocks.pop();
            let total = w1 + w2;
            *blocks.last_mut().unwrap() = ((m1 * w1 + m2 * w2) / total, total, n1 + n2);
        }
    }
    blocks
        .into_iter()
        .flat_map(|(m, _, len)| std::iter::repeat_n(m, len))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::isotonic;

    #[test]
    fn isotonic_pools_violators() {
        assert_eq!(
            isotonic(&[1.0, 3.0, 2.0], &[1.0, 1.0, 1.0]),
            vec![1.0, 2.5, 2.5]
        );
        assert_eq!(isotonic(&[0.0, 1.0], &[1.0, 1.0]), vec![0.0, 1.0]);
    }
}
