"""One small spec per op (src/ir/ops.def) and numpy construct (src/frontend/README.md).

Each case is checked three ways (conftest.differential_check): the naive
kernel is within budget, the interpreter equals numpy in float64, and the
budget is re-checked in Python. Valid numpy that the frontend refuses with
`error: unsupported:` is reported as a skip carrying the message, so the gaps
stay visible; a crash, another error or a wrong answer fails.
"""

import inspect
import textwrap

import numpy as np
import pytest

import conftest

# (id, parameters, body[, extra command-line arguments])
# The parameters are the entry's signature; the body is its indented code.
CASES = [
    # ---- unary elementwise maps
    ("neg", 'x: "f32[3, 5]"', "return -x"),
    ("unary_plus", 'x: "f32[3, 5]"', "return +x"),
    ("abs", 'x: "f32[3, 5]"', "return np.abs(x)"),
    ("abs_builtin", 'x: "f32[3, 5]"', "return abs(x)"),
    ("exp", 'x: "f32[3, 5]"', "return np.exp(x)"),
    ("exp_large_argument", 'x: "f32[3, 5]"', "return np.exp(x * 20.0)"),
    ("log", 'x: "f32[3, 5]"', "return np.log(np.abs(x) + 0.5)"),
    ("log_nan_and_inf", 'x: "f32[4, 5]"', "return np.log(x), np.log(x * 0.0)"),
    ("sqrt", 'x: "f32[3, 5]"', "return np.sqrt(np.abs(x))"),
    ("sqrt_nan", 'x: "f32[3, 5]"', "return np.sqrt(x)"),
    ("tanh", 'x: "f32[3, 5]"', "return np.tanh(x * 3.0)"),
    ("sin", 'x: "f32[3, 5]"', "return np.sin(x)"),
    ("cos", 'x: "f32[3, 5]"', "return np.cos(x)"),
    ("floor", 'x: "f32[3, 5]"', "return np.floor(x * 4.0)"),
    ("reciprocal", 'x: "f32[3, 5]"', "return 1.0 / x"),
    ("unary_minus_binds_looser_than_pow", 'x: "f32[3, 5]"', "return -x ** 2"),
    # ---- binary elementwise maps and broadcasting
    ("add_broadcast_row", 'x: "f32[3, 5]", y: "f32[5]"', "return x + y"),
    ("sub_broadcast_col", 'x: "f32[3, 5]", z: "f32[3, 1]"', "return x - z"),
    ("mul_outer_broadcast", 'z: "f32[3, 1]", y: "f32[5]"', "return z * y"),
    ("div", 'x: "f32[3, 5]", y: "f32[5]"', "return x / (np.abs(y) + 1.0)"),
    ("div_by_zero", 'x: "f32[3, 5]", y: "f32[5]"', "return x / (y * 0.0)"),
    ("scalar_param", 'x: "f32[3, 5]", s: "f32[]"', "return x * s + s"),
    ("scalar_constants", 'x: "f32[3, 5]"', "return (2.0 * x - 1) / 4 + 3 - x / 3.0"),
    ("constant_on_the_left", 'x: "f32[3, 5]"', "return 1 - x, 2 / (np.abs(x) + 1)"),
    ("broadcast_rank3", 'a: "f32[2, 1, 4]", b: "f32[3, 1]"', "return a * b + a"),
    ("zero_size_dim", 'x: "f32[0, 4]", y: "f32[4]"', "return x + y"),
    ("maximum", 'x: "f32[3, 5]", y: "f32[5]"', "return np.maximum(x, y)"),
    ("minimum_scalar", 'x: "f32[3, 5]"', "return np.minimum(x, 0.0)"),
    ("maximum_propagates_nan", 'x: "f32[3, 5]", y: "f32[3, 5]"',
     "return np.maximum(np.log(x), y), np.minimum(y, np.sqrt(x))"),
    ("relu", 'x: "f32[3, 5]"', "return np.maximum(x, 0)"),
    # ---- comparisons, logic, where
    ("lt", 'x: "f32[3, 5]", y: "f32[5]"', "return x < y"),
    ("le", 'x: "f32[3, 5]", y: "f32[5]"', "return x <= y"),
    ("gt", 'x: "f32[3, 5]", y: "f32[5]"', "return x > y"),
    ("ge", 'x: "f32[3, 5]"', "return x >= 0.0"),
    ("eq", 'x: "f32[3, 5]", y: "f32[3, 5]"', "return x == y, x == x"),
    ("ne", 'x: "f32[3, 5]"', "return x != 0.5, np.sqrt(x) != np.sqrt(x)"),
    ("logical_ops", 'x: "f32[3, 5]", y: "f32[5]"',
     "a = x > 0\nb = y < 0.5\nreturn a & b, a | b, ~a, a ^ b"),
    ("logical_functions", 'x: "f32[3, 5]", c: "bool[3, 5]"',
     "a = x > 0\nreturn np.logical_and(a, c), np.logical_or(a, c), np.logical_not(c)"),
    ("where_relu", 'x: "f32[3, 5]"', "return np.where(x > 0, x, 0.0)"),
    ("where_bool_param", 'c: "bool[3, 5]", x: "f32[3, 5]", y: "f32[5]"', "return np.where(c, x, y)"),
    ("where_broadcast_cond", 'c: "bool[5]", x: "f32[3, 1]"', "return np.where(c, x, -x)"),
    ("where_scalars", 'x: "f32[3, 5]"', "return np.where(x < 0.25, -1.0, 2.0)"),
    ("where_float_condition", 'x: "f32[3, 5]", y: "f32[3, 5]"', "return np.where(np.floor(x), x, y)"),
    ("where_inf", 'x: "f32[3, 5]"', "return np.where(x < 0.0, -np.inf, x)"),
    # ---- powers with constant exponents
    ("pow_2", 'x: "f32[3, 5]"', "return x ** 2"),
    ("pow_3", 'x: "f32[3, 5]"', "return x ** 3"),
    ("pow_half", 'x: "f32[3, 5]"', "return np.abs(x) ** 0.5"),
    ("pow_minus_1", 'x: "f32[3, 5]"', "return x ** -1"),
    ("pow_minus_2_float", 'x: "f32[3, 5]"', "return (np.abs(x) + 1.0) ** -2.0"),
    ("pow_1_5", 'x: "f32[3, 5]"', "return (np.abs(x) + 0.5) ** 1.5"),
    ("pow_0", 'x: "f32[3, 5]"', "return x ** 0"),
    ("pow_folded_exponent", 'x: "f32[3, 5]"', "return x ** (1 + 1)"),
    ("pow_constant_base", 'x: "f32[3, 5]"', "return 2.0 ** x"),
    # ---- reductions
    ("sum_all", 'x: "f32[2, 3, 4]"', "return np.sum(x)"),
    ("sum_method", 'x: "f32[2, 3, 4]"', "return x.sum(), x.sum(axis=1)"),
    ("sum_axis0", 'x: "f32[2, 3, 4]"', "return np.sum(x, axis=0)"),
    ("sum_positional_axis", 'x: "f32[2, 3, 4]"', "return np.sum(x, 1)"),
    ("sum_negative_axis", 'x: "f32[2, 3, 4]"', "return np.sum(x, axis=-2)"),
    ("sum_axis_tuple", 'x: "f32[2, 3, 4]"', "return np.sum(x, axis=(0, 2))"),
    ("sum_axis_tuple_negative_unsorted", 'x: "f32[2, 3, 4]"', "return np.sum(x, axis=(-1, 0))"),
    ("sum_keepdims", 'x: "f32[2, 3, 4]"', "return np.sum(x, axis=(0, 2), keepdims=True)"),
    ("sum_all_keepdims", 'x: "f32[2, 3, 4]"', "return np.sum(x, keepdims=True)"),
    ("sum_empty_axis", 'x: "f32[0, 3]"', "return np.sum(x, axis=0)"),
    ("mean", 'x: "f32[2, 3, 4]"', "return np.mean(x, axis=-1), np.mean(x)"),
    ("mean_keepdims_tuple", 'x: "f32[2, 3, 4]"', "return np.mean(x, axis=(1, -1), keepdims=True)"),
    ("mean_method", 'x: "f32[2, 3, 4]"', "return x.mean(axis=0)"),
    ("max", 'x: "f32[2, 3, 4]"', "return np.max(x, axis=1), np.max(x)"),
    ("max_keepdims_negative", 'x: "f32[2, 3, 4]"', "return np.max(x, axis=-1, keepdims=True)"),
    ("max_method", 'x: "f32[2, 3, 4]"', "return x.max(axis=(0, 1))"),
    ("amax", 'x: "f32[2, 3, 4]"', "return np.amax(x, axis=2)"),
    ("min", 'x: "f32[2, 3, 4]"', "return np.min(x, axis=(0, 2)), x.min()"),
    ("min_keepdims", 'x: "f32[2, 3, 4]"', "return np.min(x, axis=0, keepdims=True)"),
    ("max_propagates_nan", 'x: "f32[4, 6]"', "return np.max(np.log(x), axis=1), np.min(np.sqrt(x), axis=0)"),
    ("max_of_inf", 'x: "f32[4, 6]"', "return np.max(np.where(x < 0.5, -np.inf, x), axis=0)"),
    ("softmax_rows", 'x: "f32[4, 7]"',
     "m = np.max(x, axis=-1, keepdims=True)\ne = np.exp(x - m)\nreturn e / np.sum(e, axis=-1, keepdims=True)"),
    ("reduce_bool_sum", 'x: "f32[4, 6]"', "return np.sum(x > 0, axis=1)"),
    # ---- matmul
    ("matmul_2d", 'a: "f32[3, 4]", b: "f32[4, 5]"', "return a @ b"),
    ("matmul_function", 'a: "f32[3, 4]", b: "f32[4, 5]"', "return np.matmul(a, b)"),
    ("matmul_batched", 'a: "f32[2, 3, 4]", b: "f32[2, 4, 5]"', "return a @ b"),
    ("matmul_broadcast_batch", 'a: "f32[2, 1, 3, 4]", b: "f32[5, 4, 2]"', "return a @ b"),
    ("matmul_batch_vs_2d", 'a: "f32[2, 3, 4]", b: "f32[4, 5]"', "return a @ b"),
    ("matmul_vec_mat", 'v: "f32[4]", b: "f32[4, 5]"', "return v @ b"),
    ("matmul_mat_vec", 'a: "f32[3, 4]", v: "f32[4]"', "return a @ v"),
    ("matmul_vec_vec", 'u: "f32[4]", v: "f32[4]"', "return u @ v"),
    ("matmul_batched_vec", 'a: "f32[2, 3, 4]", v: "f32[4]"', "return a @ v, v @ np.swapaxes(a, -1, -2)"),
    ("matmul_k1", 'a: "f32[3, 1]", b: "f32[1, 5]"', "return a @ b"),
    ("matmul_long_k", 'a: "f32[2, 300]", b: "f32[300, 3]"', "return a @ b"),
    ("matmul_chain", 'a: "f32[3, 4]", b: "f32[4, 5]", c: "f32[5, 2]"', "return a @ b @ c"),
    ("matmul_transposed_operand", 'a: "f32[4, 3]", b: "f32[5, 4]"', "return a.T @ b.T"),
    ("dot_2d", 'a: "f32[3, 4]", b: "f32[4, 5]"', "return np.dot(a, b)"),
    # ---- einsum
    ("einsum_matmul", 'a: "f32[3, 4]", b: "f32[4, 5]"', 'return np.einsum("ij,jk->ik", a, b)'),
    ("einsum_bmm", 'a: "f32[2, 3, 4]", b: "f32[2, 4, 5]"', 'return np.einsum("bij,bjk->bik", a, b)'),
    ("einsum_full_contraction", 'a: "f32[3, 4]", b: "f32[3, 4]"', 'return np.einsum("ij,ij->", a, b)'),
    ("einsum_elementwise", 'a: "f32[3, 4]", b: "f32[3, 4]"', 'return np.einsum("ij,ij->ij", a, b)'),
    ("einsum_outer", 'u: "f32[3]", v: "f32[4]"', 'return np.einsum("i,j->ij", u, v)'),
    ("einsum_diagonal_two_operands", 'a: "f32[4, 4]", v: "f32[4]"', 'return np.einsum("ii,i->i", a, v)'),
    ("einsum_trace_two_operands", 'a: "f32[4, 4]", v: "f32[4]"', 'return np.einsum("ii,i->", a, v)'),
    ("einsum_transposed_output", 'a: "f32[3, 4]", b: "f32[5, 4]"', 'return np.einsum("ik,jk->ji", a, b)'),
    ("einsum_attention_scores", 'q: "f32[2, 3, 4, 5]", k: "f32[2, 3, 6, 5]"', 'return np.einsum("bhqd,bhkd->bhqk", q, k)'),
    ("einsum_implicit_output", 'a: "f32[3, 4]", b: "f32[4, 5]"', 'return np.einsum("ij,jk", a, b)'),
    ("einsum_spaces", 'a: "f32[3, 4]", b: "f32[4, 5]"', 'return np.einsum("ij, jk -> ik", a, b)'),
    ("einsum_one_operand_transpose", 'a: "f32[3, 4]"', 'return np.einsum("ij->ji", a)'),
    ("einsum_one_operand_diagonal", 'a: "f32[4, 4]"', 'return np.einsum("ii->i", a)'),
    # ---- transposes and axis moves
    ("dot_T", 'x: "f32[3, 5]"', "return x.T"),
    ("dot_T_rank3", 'x: "f32[2, 3, 4]"', "return x.T"),
    ("transpose_default", 'x: "f32[2, 3, 4]"', "return np.transpose(x)"),
    ("transpose_axes_tuple", 'x: "f32[2, 3, 4]"', "return np.transpose(x, (1, 0, 2))"),
    ("transpose_method_varargs", 'x: "f32[2, 3, 4]"', "return x.transpose(2, 0, 1)"),
    ("transpose_negative_axes", 'x: "f32[2, 3, 4]"', "return np.transpose(x, axes=(-1, 0, -2))"),
    ("swapaxes", 'x: "f32[2, 3, 4]"', "return np.swapaxes(x, 0, 2)"),
    ("swapaxes_method_negative", 'x: "f32[2, 3, 4]"', "return x.swapaxes(-1, -2)"),
    ("expand_dims_front", 'x: "f32[3, 4]"', "return np.expand_dims(x, 0)"),
    ("expand_dims_negative", 'x: "f32[3, 4]"', "return np.expand_dims(x, -1), np.expand_dims(x, axis=1)"),
    ("expand_dims_tuple", 'x: "f32[3, 4]"', "return np.expand_dims(x, (0, 2))"),
    # ---- reshapes
    ("reshape_varargs", 'x: "f32[2, 3, 4]"', "return x.reshape(6, 4)"),
    ("reshape_tuple_minus1", 'x: "f32[2, 3, 4]"', "return x.reshape((4, -1))"),
    ("reshape_flatten", 'x: "f32[2, 3, 4]"', "return x.reshape(-1)"),
    ("reshape_function", 'x: "f32[2, 3, 4]"', "return np.reshape(x, (2, -1, 2))"),
    ("reshape_with_shape_arithmetic", 'x: "f32[2, 3, 4]"', "B, S, D = x.shape\nreturn x.reshape(B * S, D // 2, 2)"),
    ("reshape_to_scalar", 'x: "f32[1, 1]"', "return x.reshape(())"),
    ("reshape_of_transpose", 'x: "f32[2, 3, 4]"', "return np.swapaxes(x, 0, 1).reshape(3, 8)"),
    ("squeeze_all", 'x: "f32[3, 1, 4, 1]"', "return np.squeeze(x)"),
    ("squeeze_axis", 'x: "f32[3, 1, 4, 1]"', "return np.squeeze(x, axis=1), x.squeeze(-1)"),
    ("flatten_ravel", 'x: "f32[2, 3]"', "return x.flatten(), np.ravel(x)"),
    # ---- slicing
    ("slice_range", 'x: "f32[6, 5]"', "return x[1:3]"),
    ("slice_reverse", 'x: "f32[6, 5]"', "return x[::-1]"),
    ("slice_step", 'x: "f32[6, 5]"', "return x[:, ::2]"),
    ("slice_negative_step_bounds", 'x: "f32[6, 5]"', "return x[5:1:-2], x[::-2, 1:]"),
    ("slice_negative_bounds", 'x: "f32[6, 5]"', "return x[-3:-1], x[:, -2:]"),
    ("slice_out_of_range_bounds", 'x: "f32[6, 5]"', "return x[2:100], x[-100:2]"),
    ("slice_empty", 'x: "f32[6, 5]"', "return x[4:2] + 1.0"),
    ("index_int", 'x: "f32[6, 5]"', "return x[1], x[-1]"),
    ("index_ints_and_slices", 'x: "f32[2, 3, 4]"', "return x[1, :, 2], x[:, 0]"),
    ("index_all_ints", 'x: "f32[2, 3, 4]"', "return x[1, 2, 3]"),
    ("index_none", 'x: "f32[6, 5]"', "return x[None], x[:, None, :]"),
    ("index_ellipsis", 'x: "f32[2, 3, 4]"', "return x[..., 1], x[..., None], x[0, ...]"),
    ("index_ellipsis_middle", 'x: "f32[2, 3, 4]"', "return x[1, ..., 1:3]"),
    ("slice_then_broadcast", 'x: "f32[4, 6]"', "return x[:, :3] * x[:, 3:]"),
    ("rotate_halves", 'x: "f32[4, 6]"', "return np.concatenate([-x[..., 3:], x[..., :3]], axis=-1)"),
    # ---- concatenate, stack, split
    ("concatenate_axis0", 'a: "f32[2, 3]", b: "f32[4, 3]"', "return np.concatenate([a, b], axis=0)"),
    ("concatenate_default_axis", 'a: "f32[2, 3]", b: "f32[4, 3]"', "return np.concatenate((a, b))"),
    ("concatenate_negative_axis_three", 'a: "f32[2, 3]", b: "f32[2, 1]", c: "f32[2, 2]"',
     "return np.concatenate([a, b, c], axis=-1)"),
    ("concatenate_same_operand", 'a: "f32[2, 3]"', "return np.concatenate([a, a * 2.0, a], axis=1)"),
    ("stack", 'a: "f32[2, 3]", b: "f32[2, 3]"', "return np.stack([a, b])"),
    ("stack_last_axis", 'a: "f32[2, 3]", b: "f32[2, 3]"', "return np.stack((a, b, a), axis=-1)"),
    ("split_sections", 'x: "f32[4, 6]"', "a, b = np.split(x, 2, axis=1)\nreturn a - b"),
    ("split_indices", 'x: "f32[5, 6]"', "a, b, c = np.split(x, [1, 3])\nreturn a, b, c"),
    ("split_subscript", 'x: "f32[4, 6]"', "parts = np.split(x, 3, axis=-1)\nreturn parts[0] + parts[2]"),
    # ---- constructors and masks
    ("triu", 'x: "f32[4, 5]"', "return np.triu(x), np.triu(x, 1), np.triu(x, k=-1)"),
    ("tril", 'x: "f32[4, 5]"', "return np.tril(x), np.tril(x, k=-1), np.tril(x, 2)"),
    ("triu_batched", 'x: "f32[2, 3, 3]"', "return np.triu(x, k=1)"),
    ("causal_mask", 'x: "f32[4, 4]"',
     "mask = np.triu(np.ones((4, 4), dtype=bool), k=1)\nreturn np.where(mask, -np.inf, x)"),
    ("ones_zeros_full", 'x: "f32[3, 4]"', "return x + np.ones((3, 4)), np.zeros((4,)) + x, np.full((3, 1), 2.5) * x"),
    ("ones_int_shape", 'x: "f32[4]"', "return np.ones(4) + x, np.zeros(4) * x"),
    ("full_like_dtype", 'x: "f32[3, 4]"', "return np.full((3, 4), -1.0, dtype=np.float32) * x"),
    ("arange", 'x: "f32[3, 4]"', "return np.arange(4) * x"),
    ("arange_start_stop_step", 'x: "f32[4]"', "return np.arange(2, 10, 2) + x, np.arange(1.0, 2.0, 0.25) * x"),
    ("arange_mask", 'x: "f32[5, 5]"',
     "i = np.arange(5)\nreturn np.where(i[:, None] >= i[None, :], x, 0.0)"),
    # ---- astype
    ("astype_bool_to_float", 'x: "f32[3, 5]", y: "f32[5]"', "return (x > 0).astype(np.float32) * y"),
    ("astype_same", 'x: "f32[3, 5]"', "return x.astype(np.float32)"),
    ("astype_f64", 'x: "f32[3, 5]"', "return x.astype(np.float64) * 0.1"),
    ("astype_int_truncates", 'x: "f32[3, 5]"', "return (x * 10.0).astype(np.int32)"),
    ("astype_f16_last", 'x: "f32[3, 5]"', "return (x * 3.0).astype(np.float16)"),
    ("astype_string_dtype", 'x: "f32[3, 5]"', 'return (x > 0.5).astype("float32")'),
    # ---- constant folding and shape arithmetic
    ("fold_log", 'x: "f32[3, 5]"', "return x * np.log(40.0)"),
    ("fold_mla_scale", 'x: "f32[3, 5]"', "return x * ((0.1 * np.log(40.0) + 1.0) ** 2 / np.sqrt(192.0))"),
    ("fold_pi_e", 'x: "f32[3, 5]"', "return x * np.pi + np.e"),
    ("fold_integer_arithmetic", 'x: "f32[3, 5]"', "return x * (2 ** 10 // 3 % 7) + 7 // 2"),
    ("fold_shape_attributes", 'x: "f32[3, 5]"', "return x / x.shape[-1] + x.ndim + x.size + len(x)"),
    ("fold_sqrt_of_dim", 'x: "f32[3, 64]"', "return x * (1.0 / np.sqrt(x.shape[-1]))"),
    ("fold_inf_constant", 'x: "f32[3, 5]"', "return np.maximum(x, -np.inf), np.minimum(x, np.inf)"),
    ("fold_float_builtin", 'x: "f32[3, 5]"', "return x * float(3) + int(2.7)"),
    # ---- functions, names and outputs
    ("multiple_outputs", 'x: "f32[3, 5]"', "return x + 1.0, x * 2.0"),
    ("outputs_of_several_shapes", 'x: "f32[3, 5]"', "return np.sum(x, axis=0), x.T, np.max(x)"),
    ("output_is_a_parameter", 'x: "f32[3, 5]"', "return x"),
    ("same_output_twice", 'x: "f32[3, 5]"', "y = x * 2.0\nreturn y, y"),
    ("parenthesised_tuple", 'x: "f32[3, 5]"', "return (x - 1.0, np.abs(x))"),
    ("reassignment", 'x: "f32[3, 5]"', "y = x * 2.0\ny = y + 1.0\nx = y * x\nreturn x"),
    ("augmented_assignment", 'x: "f32[3, 5]"', "y = x * 1.0\ny += 1.0\ny *= x\ny -= 2.0\ny /= 4.0\nreturn y"),
    ("tuple_unpack_shape", 'x: "f32[3, 5]"', "M, N = x.shape\nreturn x * (M + N)"),
    ("docstring_and_comments", 'x: "f32[3, 5]"', '"""A docstring."""\n# a comment\nreturn x + 1.0  # trailing'),
    ("named_dims", 'x: "f32[M, N]", y: "f32[N]"', "return x * y + x.shape[0]", ["-D", "M=3", "-D", "N=4"]),
    ("f64_params", 'x: "f64[3, 5]", y: "f64[5]"', "return np.tanh(x) * y"),
    ("mixed_f32_f64_promotes", 'x: "f32[3, 5]", y: "f64[5]"', "return x * y"),
    ("int_param", 'x: "f32[3, 5]", n: "i32[5]"', "return x * n"),
]

HELPER_CASES = [
    ("helper_inlined", """
def silu(x):
    return x / (1.0 + np.exp(-x))

def f(x: "f32[3, 5]"):
    return silu(x) * 2.0
"""),
    ("helper_defaults_and_keywords", """
def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=axis, keepdims=True)

def f(x: "f32[3, 5]"):
    return softmax(x), softmax(x, axis=0), softmax(x, 0)
"""),
    ("helper_nested_calls", """
def sq(x):
    return x * x

def mean_sq(x, axis):
    return np.mean(sq(x), axis=axis, keepdims=True)

def rms(x):
    return x / np.sqrt(mean_sq(x, -1) + 1e-6)

def f(x: "f32[3, 5]", g: "f32[5]"):
    return rms(x) * g
"""),
    ("helper_returns_tuple", """
def stats(x):
    return np.mean(x, axis=-1), np.max(x, axis=-1)

def f(x: "f32[3, 5]"):
    m, mx = stats(x)
    return mx - m
"""),
    ("helper_local_names_do_not_leak", """
def g(x):
    y = x * 2.0
    return y

def f(x: "f32[3, 5]"):
    y = x + 1.0
    z = g(y)
    return y, z
"""),
    ("entry_is_last_annotated", """
def f(x: "f32[3, 5]"):
    return x * 100.0

def g(x: "f32[2, 2]"):
    return x + 1.0

def helper(x):
    return x
"""),
    ("module_constant", """
EPS = 1e-5
SCALE = 2.0 * EPS

def f(x: "f32[3, 5]"):
    return x / np.sqrt(x * x + EPS) + SCALE
"""),
]


def spec_text(params, body):
    return ("import numpy as np\n\n\ndef f(" + params + "):\n"
            + textwrap.indent(textwrap.dedent(body), "    ") + "\n")


def all_cases():
    return list(_cases())


def _cases():
    for case in CASES:
        name, params, body = case[:3]
        extra = case[3] if len(case) > 3 else []
        yield pytest.param(spec_text(params, body), extra, id=name)
    for name, text in HELPER_CASES:
        yield pytest.param("import numpy as np\n\n" + text.lstrip("\n"), [], id=name)


def test_case_names_are_unique():
    names = [c[0] for c in CASES] + [c[0] for c in HELPER_CASES]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


def test_specs_run_under_numpy(tmp_path):
    """The cases are themselves valid numpy, so a refusal is axon's."""
    for i, param in enumerate(all_cases()):
        text = param.values[0]
        path = tmp_path / f"case{i}.py"
        path.write_text(text)
        fn = conftest.entry_function(conftest.import_spec(path))
        args = []
        for p in inspect.signature(fn).parameters.values():
            dtype, shape = conftest.parse_type(p.annotation.replace("M", "3").replace("N", "4"))
            a = np.ones(shape)
            args.append(a.astype(bool) if dtype == "bool" else a)
        with np.errstate(all="ignore"):
            fn(*args)


@pytest.mark.parametrize("text,extra", all_cases())
def test_op(text, extra, tmp_path):
    spec = tmp_path / "spec.py"
    spec.write_text(text)
    try:
        conftest.differential_check(spec, tmp_path / "dump", extra_args=extra, timeout=120)
        return
    except conftest.Unsupported as e:
        gap = str(e)
        failure = None
    except AssertionError as e:
        gap = None
        failure = str(e)
    if gap:
        pytest.skip(gap)
    pytest.fail(f"{failure}\n--- spec ---\n{text}", pytrace=False)
