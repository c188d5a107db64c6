// The op family files of ir/infer/, each adding its entries to the op table. Listed explicitly
// (see op_registry.cpp) rather than through static registrar objects: a linker drops the object
// files of a static library that nothing references, and their registrars with them.
#pragma once

#include "ir/op_registry.h"

namespace onnxc::ir {

void add_elementwise_ops(OpTable& t);  // unary/binary math, comparisons, logic, activations, Cast
void add_reduce_ops(OpTable& t);       // Reduce*, ArgMax/ArgMin, softmax family, CumSum, TopK
void add_matmul_ops(OpTable& t);       // MatMul, Gemm, Einsum, quantized matmuls, Det
void add_conv_ops(OpTable& t);         // Conv, ConvTranspose, pools, MaxUnpool
void add_norm_ops(OpTable& t);         // BatchNormalization, LayerNormalization, ...
void add_nn_ops(OpTable& t);           // Resize, GridSample, RoiAlign, losses, Attention
void add_rnn_ops(OpTable& t);          // RNN, GRU, LSTM
void add_shape_ops(OpTable& t);        // Shape, Reshape, Transpose, Concat, Expand, Range, ...
void add_slice_ops(OpTable& t);        // Slice, Split, Pad
void add_index_ops(OpTable& t);        // Gather*, Scatter*, OneHot, NonZero, Unique, Compress, ...
void add_control_ops(OpTable& t);      // If, Loop, Scan, SequenceMap
void add_sequence_ops(OpTable& t);     // Sequence*, Optional*, SplitToSequence, ConcatFromSequence
void add_quantize_ops(OpTable& t);     // QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear
void add_signal_ops(OpTable& t);       // DFT, STFT, windows, MelWeightMatrix
void add_misc_ops(OpTable& t);         // random, text, training ops
void add_onnxc_ops(OpTable& t);        // onnxc.* ops the passes create (SymbolicShape)

}  // namespace onnxc::ir
