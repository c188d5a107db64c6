// Build-time generator for the runtime tests: AOT-compiles four tiny Halide kernels (argv entry points,
// no runtime inside) and one standalone Halide runtime, as codegen does for a real model.
//   usage: tiny_kernels_generator OUT_DIR
#include <Halide.h>

#include <cstdio>
#include <string>

using namespace Halide;

namespace {

const Target kTarget = get_host_target().with_feature(Target::NoRuntime);

// h = x + w: w broadcast over the dynamic batch and seq extents. Halide dims are innermost first.
void add_bias3(const std::string &dir) {
  ImageParam x(Float(32), 3, "x"), w(Float(32), 1, "w");
  Var c("c"), s("s"), b("b");
  Func h("h");
  h(c, s, b) = x(c, s, b) + w(c);
  h.parallel(b);
  h.compile_to_object(dir + "/add_bias3.o", {x, w}, "add_bias3", kTarget);
}

// out = in * k, with k an int64 scalar argument.
void scale1(const std::string &dir) {
  ImageParam in(Float(32), 1, "in");
  Param<int64_t> k("k");
  Var i("i");
  Func out("out");
  out(i) = in(i) * cast<float>(k);
  out.compile_to_object(dir + "/scale1.o", {in, k}, "scale1", kTarget);
}

// Two outputs: y = a * m (m broadcast over the last axis) and z = sum of y over the last axis.
void mul_rows_sum(const std::string &dir) {
  ImageParam a(Float(32), 3, "a"), m(Float(32), 2, "m");
  Var c("c"), s("s"), b("b");
  Func y("y"), z("z");
  y(c, s, b) = a(c, s, b) * m(s, b);
  RDom r(0, a.dim(0).extent());
  z(s, b) = 0.0f;
  z(s, b) += y(r, s, b);
  Pipeline({y, z}).compile_to_object(dir + "/mul_rows_sum.o", {a, m}, "mul_rows_sum", kTarget);
}

// A bool output: Halide's Bool() is UInt(1), stored one byte per element.
void positive(const std::string &dir) {
  ImageParam z(Float(32), 2, "z");
  Var s("s"), b("b");
  Func p("p");
  p(s, b) = z(s, b) > 0.0f;
  p.compile_to_object(dir + "/positive.o", {z}, "positive", kTarget);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  add_bias3(dir);
  scale1(dir);
  mul_rows_sum(dir);
  positive(dir);
  compile_standalone_runtime(dir + "/halide_runtime.o", get_host_target());
  return 0;
}
