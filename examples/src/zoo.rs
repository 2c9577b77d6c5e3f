//! Models that exercise the operators and attributes the seed architectures do not.

use tinyonnx::onnx_model;

onnx_model! {
    /// Convolution and pooling variants: 1-D with dilation, 1-D with stride and
    /// SAME_UPPER (ONNX Runtime rejects dilation together with SAME_*), depthwise with
    /// stride and SAME_LOWER, grouped with asymmetric pads and dilation, pooling with
    /// ceil_mode, count_include_pad and dilations; Gelu in both modes; grouped
    /// convolutions with packed and with run-time weights.
    pub model ConvZoo {
        opset = 20;
        input x: f32[1, 4, 9, 11];
        input s: f32[1, 3, 17];
        weight w1d: f32[5, 3, 3] = he_normal(seed = 1);
        weight b1d: f32[5] = uniform(low = -0.1, high = 0.1, seed = 2);
        weight wdw: f32[4, 1, 3, 3] = he_normal(seed = 3);
        weight wg: f32[6, 2, 2, 3] = he_normal(seed = 4);
        weight wg4: f32[8, 2, 3, 2] = he_normal(seed = 5);
        weight bg4: f32[8] = uniform(low = -0.1, high = 0.1, seed = 6);

        let c1 = Conv(s, w1d, b1d, dilations = [2], pads = [2, 1]);
        output o1 = Gelu(MaxPool(c1, kernel_shape = [3], strides = [2], ceil_mode = 1), approximate = "tanh");
        output o6 = Conv(s, w1d, strides = [2], auto_pad = "SAME_UPPER");
        let dw = Conv(x, wdw, group = 4, strides = [2, 2], auto_pad = "SAME_LOWER");
        let g = Conv(x, wg, group = 2, pads = [1, 0, 0, 2], dilations = [2, 1]);
        output o2 = Gelu(AveragePool(g, kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], count_include_pad = 1, ceil_mode = 1));
        output o3 = AveragePool(g, kernel_shape = [2, 2], dilations = [2, 1], pads = [0, 1, 0, 1]);
        output o4 = MaxPool(dw, kernel_shape = [2, 2], dilations = [2, 2], pads = [1, 1, 1, 1]);
        output o5 = AveragePool(Relu(dw), kernel_shape = [2, 3], auto_pad = "SAME_UPPER");
        // Packed matrix products per group (four channels each), then the direct kernel
        // for weights computed at run time.
        output o7 = Relu(Conv(x, wg4, bg4, group = 2, strides = [2, 1], pads = [1, 0, 2, 1], dilations = [1, 2]));
        output o8 = Conv(x, Mul(wg4, 0.5), group = 2, pads = [1, 1, 1, 1]);
    }
}

onnx_model! {
    /// LSTM variants: bidirectional with initial states and peepholes; reverse with
    /// input_forget, custom activations and clip; weights computed at run time.
    pub model LstmZoo {
        opset = 17;
        input x: f32[6, 2, 5];
        input h0: f32[2, 2, 7];
        input c0: f32[2, 2, 7];
        weight w: f32[2, 28, 5] = uniform(low = -0.4, high = 0.4, seed = 1);
        weight r: f32[2, 28, 7] = uniform(low = -0.4, high = 0.4, seed = 2);
        weight b: f32[2, 56] = uniform(low = -0.2, high = 0.2, seed = 3);
        weight p: f32[2, 21] = uniform(low = -0.3, high = 0.3, seed = 4);
        weight w2: f32[1, 16, 5] = uniform(low = -0.5, high = 0.5, seed = 5);
        weight r2: f32[1, 16, 4] = uniform(low = -0.5, high = 0.5, seed = 6);

        let (y, yh, yc) = LSTM(x, w, r, b, _, h0, c0, p, direction = "bidirectional", hidden_size = 7);
        output y;
        output yh;
        output yc;
        let (y2, _, _) = LSTM(x, w2, r2, direction = "reverse", hidden_size = 4, input_forget = 1, activations = ["Sigmoid", "Relu", "Tanh"], clip = 1.5);
        output y2;
        // Weights computed at run time: the unpacked kernel.
        let (_, yh3, _) = LSTM(x, Mul(w2, 0.5), r2, direction = "forward", hidden_size = 4);
        output yh3;
    }
}

onnx_model! {
    /// Data movement and shape operators: Concat, Unsqueeze, Transpose (given and default
    /// perm), Squeeze, Reshape with 0 and -1, Flatten, Constant, Dropout, Softmax on a
    /// middle axis, MatMul with broadcast batch dimensions, views of a tensor that stays
    /// alive.
    pub model ShapeZoo {
        opset = 17;
        dim batch = 2;
        input x: f32[batch, 3, 4];
        input z: f32[batch, 2, 4];
        input m: f32[2, 1, 3, 4];
        weight mw: f32[3, 4, 2] = glorot_uniform(seed = 1);
        weight proj: f32[5, 3] = glorot_uniform(seed = 2);
        weight mb: f32[2] = uniform(low = -0.5, high = 0.5, seed = 3);

        let cat = Concat(x, z, axis = 1);
        let t = Transpose(Unsqueeze(cat, [1]), perm = [0, 3, 1, 2]);
        let sq = Squeeze(t, [2]);
        let flat = Reshape(sq, [0, -1]);
        let shifted = Dropout(Add(flat, Constant(value_floats = [0.5, -0.5, 0.25, -0.25, 0.0, 1.0, -1.0, 0.5, 0.5, 0.5, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])));
        output y1 = Softmax(Mul(Flatten(shifted), Constant(value_float = 0.5)), axis = 1);
        output y2 = Transpose(sq);
        output y3 = Softmax(sq, axis = 1);
        output y4 = MatMul(sq, proj);
        output y5 = MatMul(m, mw);
        // A view (`seen`) keeps its input's buffer alive past an in-place candidate.
        let ra = Relu(x);
        let seen = Reshape(ra, [0, -1]);
        let sg = Flatten(Sigmoid(ra));
        output y6 = Add(sg, seen);
        // Bias and Relu fused into a MatMul whose B is computed at run time.
        let mm = Relu(Add(MatMul(m, Mul(mw, 2.0)), mb));
        output y7 = Sigmoid(mm);
    }
}

onnx_model! {
    /// The layer sugar the seed models do not use: `avg_pool2d`, `dropout`, a depthwise
    /// `conv2d` (groups = channels) with stride and dilation, and a bidirectional `lstm`.
    pub model SugarZoo {
        opset = 17;
        input x: f32[1, 6, 12, 12];
        input seq: f32[5, 1, 4];
        let dw = conv2d(x, 6, 3, groups = 6, stride = 2, dilation = 2, pad = [2, 1]);
        let pooled = avg_pool2d(Relu(dw), 2, stride = 1, pad = 1, count_include_pad = true);
        output image = dropout(flatten(pooled), ratio = 0.25);
        let (ys, _, _) = lstm(seq, 3, direction = "bidirectional", name = "birnn");
        output sequence = dropout(ys);
    }
}

onnx_model! {
    /// A residual block whose shortcut reads the block input: declared main branch
    /// first, the forward pass runs the shortcut first so the 1 KB input dies at the
    /// main branch's first product (arena 2,080 bytes instead of 3,072).
    pub model ScheduleZoo {
        opset = 17;
        input x: f32[1, 256];
        weight w1: f32[256, 256] = glorot_uniform(seed = 1);
        weight w2: f32[256, 256] = glorot_uniform(seed = 2);
        weight w3: f32[256, 8] = glorot_uniform(seed = 3);
        weight ws: f32[256, 8] = glorot_uniform(seed = 4);

        let big = Relu(x);
        let m1 = Gemm(big, w1);
        let m2 = Gemm(m1, w2);
        let m3 = Gemm(m2, w3);
        let s = Gemm(big, ws);
        output y = Add(m3, s);
    }
}

onnx_model! {
    /// Element-wise math and activations: every operator with and without its
    /// attributes, Clip with both bounds, one, or none, variadic Min and Max with
    /// broadcasting, Pow, LogSoftmax and GlobalMaxPool.
    pub model MathZoo {
        opset = 17;
        input x: f32[2, 3, 4];
        input z: f32[3, 1];
        weight e: f32[4] = uniform(low = 0.5, high = 2.5, seed = 1);
        weight lo: f32[] = constant(-0.25);

        let ax = Abs(x);
        output basic = Add(Add(Neg(Exp(x)), Log(Add(ax, 0.1))), Add(Sqrt(ax), Reciprocal(Add(ax, 0.5))));
        output rounding = Add(Floor(Mul(x, 3.0)), Ceil(Mul(x, 2.5)));
        output special = Add(Erf(x), Softplus(Mul(x, 30.0)));
        output leaky = Add(LeakyRelu(x), LeakyRelu(x, alpha = 0.3));
        output elu = Add(Elu(x), Elu(x, alpha = 0.5));
        output selu = Add(Selu(x), Selu(x, alpha = 2.0, gamma = 0.5));
        output hard = Add(HardSigmoid(Mul(x, 4.0)), HardSigmoid(x, alpha = 0.7, beta = 0.4));
        output clip_both = Clip(x, lo, 0.5);
        output clip_max = Clip(x, _, 0.3);
        output clip_none = Clip(x);
        output mins = Min(x, z, Neg(x));
        output maxs = Max(z, x);
        output one = Max(x);
        output pow = Pow(ax, e);
        output logp = LogSoftmax(x, axis = 1);
        output logp_last = LogSoftmax(x);
        output gmax = GlobalMaxPool(x);
    }
}

onnx_model! {
    /// Reductions at opset 18 (axes as an input): negative and several axes, keepdims 0
    /// and 1, every axis when none are given, and noop_with_empty_axes.
    pub model ReduceZoo {
        opset = 18;
        input x: f32[2, 3, 4];
        output sum = ReduceSum(x, [1]);
        output mean = ReduceMean(x, [-1, 0], keepdims = 0);
        output max = ReduceMax(x, [2], keepdims = 0);
        output min = ReduceMin(x, [0, 2]);
        output prod = ReduceProd(Add(Mul(x, 0.5), 1.0), [-2]);
        output all = ReduceMean(x, keepdims = 0);
        output noop = ReduceSum(x, noop_with_empty_axes = 1);
    }
}

onnx_model! {
    /// Reductions at opset 17: `axes` as an attribute (ReduceSum takes an input since 13).
    pub model ReduceAttrZoo {
        opset = 17;
        input x: f32[2, 3, 4];
        output mean = ReduceMean(x, axes = [1], keepdims = 0);
        output max = ReduceMax(x, axes = [-1]);
        output min = ReduceMin(x);
        output sum = ReduceSum(x, [0, 1], keepdims = 0);
        output prod = ReduceProd(Add(Mul(x, 0.5), 1.0), axes = [0]);
    }
}

onnx_model! {
    /// Data movement with compile-time parameters: Slice (negative starts and steps,
    /// clamped ends, default axes), Expand in both directions, Tile, Pad in every mode
    /// (with axes, negative pads and a constant value), Gather with negative and
    /// repeated indices, InstanceNormalization, Split, GatherElements and ScatterElements
    /// (plain and with add and max reductions over repeated positions).
    pub model MoveZoo {
        opset = 19;
        input x: f32[2, 3, 5];
        input col: f32[3, 1];
        weight scale: f32[3] = uniform(low = 0.5, high = 1.5, seed = 1);
        weight bias: f32[3] = uniform(low = -0.5, high = 0.5, seed = 2);
        weight upd: f32[2, 3, 2] = uniform(low = -1.0, high = 1.0, seed = 3);
        weight upd2: f32[1, 1, 3] = uniform(low = -1.0, high = 1.0, seed = 4);
        weight upd3: f32[1, 2, 1] = uniform(low = -1.0, high = 1.0, seed = 5);

        output s1 = Slice(x, [0, 1], [1, 100], [0, 2]);
        output s2 = Slice(x, [-1, 4], [-100, 0], [1, -1], [-1, -2]);
        output s3 = Slice(x, [1], [3]);
        output s4 = Slice(x, [0, 0, 0], [2, 3, 5], [0, 1, 2], [1, 2, 3]);
        output e1 = Expand(col, [2, 3, 4]);
        output e2 = Expand(x, [3, 1]);
        output t1 = Tile(x, [1, 2, 3]);
        output p1 = Pad(x, [0, 1, 2, 0, 0, 1], 0.5);
        output p2 = Pad(x, [1, 2, 1, 3], _, [1, -1], mode = "edge");
        output p3 = Pad(x, [0, 2, 1, 0, 1, 4], mode = "reflect");
        output p4 = Pad(x, [1, 1, 7, 0, 0, 2], mode = "wrap");
        output p5 = Pad(x, [0, -1, 1, 0, 0, -2]);
        output g1 = Gather(x, [2, -1, 0, 0], axis = 2);
        output g2 = Gather(x, [[1, 0], [1, 1]], axis = 0);
        output g3 = Gather(x, 1, axis = 1);
        output inorm = InstanceNormalization(x, scale, bias, epsilon = 0.001);
        let (a, b, c) = Split(x, [1, 3, 1], axis = -1);
        output a;
        output b;
        output c;
        let (h1, _, h3) = Split(x, num_outputs = 3, axis = 2);
        output h1;
        output h3;
        output ge1 = GatherElements(x, [[[0, 4], [1, -1], [2, 2]], [[3, 0], [-5, 1], [4, 4]]], axis = 2);
        output ge2 = GatherElements(x, [[[1, 0, 1, 0, 1]]], axis = 0);
        output sc1 = ScatterElements(x, [[[0, 4], [1, -1], [2, 3]], [[3, 0], [-5, 1], [4, 2]]], upd, axis = -1);
        output sc2 = ScatterElements(x, [[[0, 0, 4]]], upd2, axis = 2, reduction = "add");
        output sc3 = ScatterElements(x, [[[1], [0]]], upd3, axis = 1, reduction = "max");
    }
}

onnx_model! {
    /// GRU and RNN: bidirectional GRU with initial_h, reverse GRU with
    /// linear_before_reset and clip, RNN with Relu and bias, bidirectional RNN.
    pub model RnnZoo {
        opset = 17;
        input x: f32[5, 2, 3];
        input h0: f32[2, 2, 4];
        weight gw: f32[2, 12, 3] = uniform(low = -0.5, high = 0.5, seed = 1);
        weight gr: f32[2, 12, 4] = uniform(low = -0.5, high = 0.5, seed = 2);
        weight gb: f32[2, 24] = uniform(low = -0.3, high = 0.3, seed = 3);
        weight gw1: f32[1, 12, 3] = uniform(low = -0.5, high = 0.5, seed = 4);
        weight gr1: f32[1, 12, 4] = uniform(low = -0.5, high = 0.5, seed = 5);
        weight gb1: f32[1, 24] = uniform(low = -0.3, high = 0.3, seed = 6);
        weight rw: f32[1, 4, 3] = uniform(low = -0.5, high = 0.5, seed = 7);
        weight rr: f32[1, 4, 4] = uniform(low = -0.5, high = 0.5, seed = 8);
        weight rb: f32[1, 8] = uniform(low = -0.3, high = 0.3, seed = 9);
        weight rw2: f32[2, 4, 3] = uniform(low = -0.5, high = 0.5, seed = 10);
        weight rr2: f32[2, 4, 4] = uniform(low = -0.5, high = 0.5, seed = 11);

        let (gy, gh) = GRU(x, gw, gr, gb, _, h0, direction = "bidirectional", hidden_size = 4);
        output gy;
        output gh;
        let (gy1, _) = GRU(x, gw1, gr1, gb1, direction = "reverse", hidden_size = 4, linear_before_reset = 1, clip = 0.8);
        output gy1;
        let (ry, rh) = RNN(x, rw, rr, rb, hidden_size = 4, activations = ["Relu"]);
        output ry;
        output rh;
        let (ry2, _) = RNN(x, rw2, rr2, direction = "bidirectional", hidden_size = 4);
        output ry2;
    }
}

onnx_model! {
    /// ConvTranspose: stride 2 with pads and output_padding, groups with dilation and
    /// bias, auto_pad SAME_UPPER, and 1-D with output_shape.
    pub model ConvTransposeZoo {
        opset = 17;
        input x: f32[1, 4, 5, 6];
        input s: f32[2, 3, 7];
        weight w1: f32[4, 3, 3, 3] = he_normal(seed = 1);
        weight w2: f32[4, 2, 2, 3] = he_normal(seed = 2);
        weight b2: f32[4] = uniform(low = -0.2, high = 0.2, seed = 3);
        weight w3: f32[3, 2, 4] = he_normal(seed = 4);

        output up = ConvTranspose(x, w1, strides = [2, 2], pads = [1, 0, 0, 1], output_padding = [1, 1]);
        output grouped = ConvTranspose(x, w2, b2, group = 2, dilations = [2, 1], strides = [1, 2]);
        output same = ConvTranspose(x, w1, strides = [2, 3], auto_pad = "SAME_UPPER");
        output shaped = ConvTranspose(s, w3, strides = [3], output_shape = [20]);
    }
}

onnx_model! {
    /// Einsum equations users write: matrix product (explicit and implicit), batched
    /// product, attention scores, transpose, outer product, contractions, a sum.
    pub model EinsumZoo {
        opset = 17;
        input a: f32[3, 4];
        input b: f32[4, 5];
        input q: f32[2, 3, 6, 4];
        input k: f32[2, 3, 5, 4];
        input u: f32[3];
        input v: f32[5];
        weight t: f32[3, 4, 5] = uniform(low = -1.0, high = 1.0, seed = 1);

        output mm = Einsum(a, b, equation = "ij,jk->ik");
        output implicit = Einsum(a, b, equation = "ij,jk");
        output batched = Einsum(q, Transpose(k, perm = [0, 1, 3, 2]), equation = "bhqd,bhdk->bhqk");
        output scores = Einsum(q, k, equation = "bhqd, bhkd -> bhqk");
        output transposed = Einsum(a, equation = "ij->ji");
        output outer = Einsum(u, v, equation = "i,j->ij");
        output contracted = Einsum(t, b, equation = "ijk,jk->i");
        output summed = Einsum(t, equation = "ijk->k");
    }
}

onnx_model! {
    /// Every dtype through the element-wise, comparison, logic, selection, cast, arg and
    /// shape operators (opset 17: `Add` & co. take i8 and u8 from 14).
    pub model DtypeZoo {
        opset = 17;
        input a: f32[2, 3, 4];
        input b: f32[3, 4];
        input c: f64[2, 3];
        input d: f64[3];
        input i: i64[2, 3, 4];
        input j: i64[4];
        input k: i32[2, 3];
        input l: i32[2, 1];
        input m: i8[3, 4];
        input n: i8[4];
        input u: u8[2, 4];
        input v: u8[2, 4];
        input p: bool[2, 3];
        input q: bool[3];
        weight wd: f64[3] = [0.1, -0.2, 0.3];
        weight wi: i32[2, 1] = [3, -2];
        weight w8: i8[4] = [-128, 0, 5, 127];
        weight wu: u8[4] = [0, 7, 200, 255];
        weight wb: bool[3] = [true, false, true];
        weight wz: i32[3] = zeros;
        // Arithmetic per dtype, broadcasting both ways.
        output f64_arith = Sub(Mul(Add(c, d), d), Div(c, Add(Abs(d), Cast(Constant(value_float = 1.0), to = f64))));
        output i64_arith = Div(Mul(Sub(i, j), Add(j, Abs(j))), Add(Abs(j), Cast(Constant(value_int = 1), to = i64)));
        output i32_arith = Max(Min(Add(k, l), Mul(k, l)), Neg(l), k);
        output i8_arith = Sub(Mul(m, n), Neg(Abs(m)));
        output u8_arith = Add(Mul(u, v), Div(u, Add(v, Cast(Constant(value_int = 1), to = u8))));
        // Weights of every type.
        output w_f64 = Add(d, wd);
        output w_i32 = Add(Mul(l, wi), wz);
        output w_i8 = Max(n, w8);
        output w_u8 = Equal(Add(Cast(n, to = u8), wu), wu);
        output w_bool = Xor(q, wb);
        // Literals take the dtype of the operator's other inputs.
        output lit_i32 = Mul(k, 3);
        output lit_f64 = Add(c, [0.5, -0.25, 2.0]);
        output lit_u8 = Greater(Add(u, [1, 2, 3, 250]), 100);
        output lit_f32 = Mul(a, 2);
        // Comparisons to bool, logic, Where.
        output cmp_f32 = Or(Less(a, b), Equal(Floor(a), Floor(b)));
        output cmp_i64 = Xor(GreaterOrEqual(i, j), LessOrEqual(i, Neg(j)));
        output cmp_i8 = And(Greater(m, n), Not(Equal(m, Neg(n))));
        output cmp_u8 = Equal(u, v);
        output less_i32 = Less(k, l);
        output greater_u8 = Greater(u, v);
        output le_i8 = LessOrEqual(m, n);
        output ge_f64 = GreaterOrEqual(c, d);
        output cmp_bool = Equal(p, q);
        output where_f64 = Where(And(p, q), c, d);
        output where_i32 = Where(Greater(k, l), k, Neg(l));
        // Casts between every pair of kinds.
        output cast_f32_i32 = Cast(Mul(a, Constant(value_float = 7.0)), to = i32);
        output cast_f32_u8 = Cast(Abs(Mul(a, Constant(value_float = 100.0))), to = u8);
        output cast_i64_f32 = Cast(i, to = f32);
        output cast_i8_i64 = Cast(m, to = i64);
        output cast_i32_i8 = Cast(Mul(k, Cast(Constant(value_int = 40), to = i32)), to = i8);
        output cast_bool_f64 = Cast(p, to = f64);
        output cast_f64_bool = Cast(Cast(Cast(Add(c, d), to = i32), to = f64), to = bool);
        output cast_u8_f32 = Cast(u, to = 1);
        // Arg, reductions and movement on integers.
        output argmax_i64 = ArgMax(i, axis = 1);
        output argmin_i32_last = ArgMin(k, axis = -1, keepdims = 0, select_last_index = 1);
        output argmax_u8 = ArgMax(u, axis = 0, select_last_index = 1);
        output argmax_f32 = ArgMax(a, axis = 2, keepdims = 0);
        output sum_i32 = ReduceSum(k, [1], keepdims = 0);
        output max_i8 = ReduceMax(m, axes = [0]);
        output mean_i64 = ReduceMean(i, axes = [0, 2]);
        output moved_bool = Concat(Transpose(p, perm = [1, 0]), Transpose(p, perm = [1, 0]), axis = 1);
        output moved_i8 = Slice(Reshape(m, [4, 3]), [1], [4], [0]);
        output moved_u8 = Pad(u, [0, 1, 0, 1], mode = "reflect");
        output shape_of = Concat(Shape(a), Shape(k), axis = 0);
        output size_of = Size(p);
    }
}

onnx_model! {
    /// ONNX functions: `residual` is a `function` (emitted as a FunctionProto, one call
    /// node per use) used three times: twice with the same body (one definition), once
    /// with another activation slope (a second definition, `residual_2`); it calls the
    /// inlined block `affine`, and its weights are per-call inputs. The forward pass
    /// inlines everything as for a block.
    pub model FunctionZoo {
        opset = 17;
        input x: f32[2, 8];

        block affine(x, n, seed) {
            return linear(x, n, init = glorot_uniform(seed = seed));
        }

        /// A residual unit: x + affine(leaky_relu(affine(x))).
        function residual(x, slope = 0.01, seed_a = 0, seed_b = 0) {
            let h = LeakyRelu(affine(x, 8, seed_a), alpha = slope);
            return Add(x, affine(h, 8, seed_b));
        }

        let r1 = residual(x, seed_a = 1, seed_b = 2);
        let r2 = residual(r1, seed_a = 3, seed_b = 4);
        let r3 = residual(r2, slope = 0.2, seed_a = 5, seed_b = 6);
        output y = Tanh(r3);
        output r2;
    }
}

onnx_model! {
    /// Standardizes 8 features, `(x - mean) * inv_std`: a preprocessing model.
    pub model Standardize {
        opset = 17;
        input x: f32[batch, 8];
        weight mean: f32[8] = uniform(low = -0.5, high = 0.5, seed = 1);
        weight inv_std: f32[8] = uniform(low = 0.5, high = 2.0, seed = 2);
        output z = Mul(Sub(x, mean), inv_std);
    }
}

onnx_model! {
    /// Classifies 8 standardized features into 3 classes.
    pub model Classify {
        opset = 17;
        input features: f32[batch, 8];
        let h = relu(linear(features, 16, init = he_normal(seed = 3)));
        output probs = softmax(linear(h, 3, init = glorot_uniform(seed = 4)), axis = -1);
    }
}

onnx_model! {
    /// `Standardize` then `Classify` as one model (as `onnx.compose.merge_models`): the
    /// output `z` feeds the input `features`; names get the prefixes `pre/` and `clf/`.
    pub model Pipeline = compose(
        Standardize,
        Classify,
        map = [("z", "features")],
        prefix1 = "pre/",
        prefix2 = "clf/",
    );
}
