// Recurrent layers: RNN, GRU, LSTM. X is [seq, batch, input] (layout 0) or [batch, seq, input]
// (layout 1); Y adds a direction axis; Y_h (and LSTM's Y_c) hold the last state per direction.
#include "ir/infer/context.h"

namespace onnxc::ir {
namespace {

void infer_recurrent(InferContext& ctx) {
  const auto& x = ctx.in_shape(0);
  DType dt = ctx.in_dtype(0);
  if (!x) {
    for (size_t i = 0; i < ctx.num_outputs(); ++i) ctx.set_tensor(i, dt, std::nullopt);
    return;
  }
  infer_check(ctx, x->size() == 3) << "expects a 3-D input, got " << shape_str(*x);
  bool batch_first = ctx.node().attr_int("layout", 0) != 0;
  Dim seq = (*x)[batch_first ? 1 : 0], batch = (*x)[batch_first ? 0 : 1];
  Dim dirs = ctx.node().attr_string("direction", "forward") == "bidirectional" ? 2 : 1;
  // hidden_size is an attribute; R ([dirs, gates*hidden, hidden]) also tells it.
  Dim hidden = ctx.node().has_attr("hidden_size") ? Dim(ctx.node().attr_int("hidden_size", 0))
               : ctx.in_rank(2) == 3              ? (*ctx.in_shape(2))[2]
                                                  : Dim::unknown();
  Shape y = batch_first ? Shape{batch, seq, dirs, hidden} : Shape{seq, dirs, batch, hidden};
  Shape state = batch_first ? Shape{batch, dirs, hidden} : Shape{dirs, batch, hidden};
  ctx.set_tensor(0, dt, y);
  ctx.set_tensor(1, dt, state);
  ctx.set_tensor(2, dt, state);  // LSTM's Y_c
}

}  // namespace

void add_rnn_ops(OpTable& t) { t.add_all({"RNN", "GRU", "LSTM"}, 0, infer_recurrent); }

}  // namespace onnxc::ir
