// Inputs and expected outputs of the tiny test model (tiny_model.c), computed on the host.
#ifndef ONNXC_TESTS_RUNTIME_TINY_REFERENCE_H
#define ONNXC_TESTS_RUNTIME_TINY_REFERENCE_H

#include <cstdint>
#include <vector>

struct TinyCase {
  int64_t batch, seq;
  std::vector<int64_t> x_dims, m_dims;
  std::vector<float> x, m;
  std::vector<float> y, z, hflat;
  std::vector<uint8_t> p;

  TinyCase(int64_t batch_, int64_t seq_, float salt = 0.0f) : batch(batch_), seq(seq_) {
    static const float w[8] = {0.5f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f, 3.5f, -40.0f};
    x_dims = {batch, seq, 8};
    m_dims = {batch, seq};
    x.resize(static_cast<size_t>(batch * seq * 8));
    m.resize(static_cast<size_t>(batch * seq));
    for (size_t i = 0; i < x.size(); i++) x[i] = static_cast<float>(i % 11) * 1.5f - 3.0f + salt;
    for (size_t i = 0; i < m.size(); i++) m[i] = (i % 3 == 1) ? -2.0f : 0.5f + static_cast<float>(i % 5);
    float k = static_cast<float>(seq + 1);
    y.resize(x.size());
    hflat.resize(x.size());
    z.resize(m.size());
    p.resize(m.size());
    for (size_t r = 0; r < m.size(); r++) {
      float sum = 0.0f;
      for (size_t c = 0; c < 8; c++) {
        float h = x[r * 8 + c] + w[c];
        hflat[r * 8 + c] = h;
        y[r * 8 + c] = (h * k) * m[r];
        sum += y[r * 8 + c];
      }
      z[r] = sum;
      p[r] = sum > 0.0f;
    }
  }
};

#endif
