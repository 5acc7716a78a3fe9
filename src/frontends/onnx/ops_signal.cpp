// Signal processing: Hann/Hamming/Blackman windows, DFT (real or complex input, inverse,
// onesided, dft_length) and STFT as contractions with constant cosine/sine matrices, and
// MelWeightMatrix (a function of its scalar arguments only).
#include <cmath>

#include "frontends/onnx/ops_util.h"
#include "frontends/onnx/proto.h"
#include "rlx/error.h"

namespace rlx::frontends::onnx {

namespace {

DType out_dtype(NodeCtx& c, int64_t def = ::onnx::TensorProto::FLOAT) {
  auto d = dtype_from_onnx(static_cast<int32_t>(c.attr_i("output_datatype", def)));
  if (!d) c.fail("an output_datatype RLX lacks");
  return *d;
}

// a0 − a1·cos(2πn/N) + a2·cos(4πn/N), N = size (periodic) or size − 1 (symmetric).
std::vector<ValueId> window(NodeCtx& c, double a0, double a1, double a2) {
  FoldingBuilder& b = c.b;
  int64_t n = static_cast<int64_t>(c.scalar(0, "size"));
  if (n < 0 || n > kMaxImportTable) c.invalid(cat("size ", n, " is out of range"));
  double den = static_cast<double>(c.attr_i("periodic", 1) ? n : n - 1);
  DType d = out_dtype(c);
  ValueId i = b.iota({Dim(n)}, DType::f64, 0);
  ValueId th = b.mul(i, b.scalar(DType::f64, 2 * M_PI / den));
  ValueId w = b.sub(b.scalar(DType::f64, a0), b.mul(b.unary(Op::cos, th), b.scalar(DType::f64, a1)));
  if (a2 != 0) w = b.add(w, b.mul(b.unary(Op::cos, b.mul(th, b.scalar(DType::f64, 2.0))), b.scalar(DType::f64, a2)));
  return {b.cast(w, d)};
}
std::vector<ValueId> hann(NodeCtx& c) { return window(c, 0.5, 0.5, 0); }
std::vector<ValueId> hamming(NodeCtx& c) { return window(c, 25.0 / 46.0, 21.0 / 46.0, 0); }
std::vector<ValueId> blackman(NodeCtx& c) { return window(c, 0.42, 0.5, 0.08); }

// DFT of x [..., n, ...] along `axis`, x real ([..., 1]) or complex ([..., 2]) in the last dim.
ValueId dft(FoldingBuilder& b, ValueId x, int64_t axis, int64_t length, bool inverse, bool onesided) {
  Shape s = b.shape(x);
  int64_t r = static_cast<int64_t>(s.size());
  int64_t n = s[static_cast<size_t>(axis)].value();
  bool complex = s.back() == Dim(2);
  DType d = b.dtype(x);
  int64_t bins = onesided ? length / 2 + 1 : length;
  int64_t used = std::min(n, length);  // inputs past dft_length are dropped, missing ones are zeros
  if (length <= 0) throw Error(ErrorKind::format, cat("a DFT length of ", length));
  if (used * bins > kMaxImportTable) throw Error(ErrorKind::unsupported, cat("a DFT matrix of ", used, "x", bins, " (the importer's tables stop at ", kMaxImportTable, " elements)"));
  std::vector<double> cm(static_cast<size_t>(used * bins)), sm(cm.size());
  for (int64_t i = 0; i < used; ++i)
    for (int64_t k = 0; k < bins; ++k) {
      double th = 2 * M_PI * static_cast<double>((i * k) % length) / static_cast<double>(length);
      double scale = inverse ? 1.0 / static_cast<double>(length) : 1.0;
      cm[static_cast<size_t>(i * bins + k)] = std::cos(th) * scale;
      sm[static_cast<size_t>(i * bins + k)] = (inverse ? std::sin(th) : -std::sin(th)) * scale;
    }
  if (used < n) x = b.slice_axis(x, axis, Dim(0), Dim(used));
  ValueId C = b.constant(Tensor::from_f64(d, {used, bins}, cm)), S = b.constant(Tensor::from_f64(d, {used, bins}, sm));
  auto part = [&](int64_t k) { return b.slice_axis(x, r - 1, Dim(k), Dim(k + 1)); };
  // Contract the axis, then move the bins back to where the axis was.
  auto contract = [&](ValueId v, ValueId m) {
    ValueId y = b.dot_general(v, m, {{}, {}}, {{axis}, {0}});  // [... without axis ..., bins]
    Ints perm;
    for (int64_t i = 0, j = 0; i < r; ++i) perm.push_back(i == axis ? r - 1 : j++);
    return b.transpose(y, perm);
  };
  ValueId re, im;
  ValueId xr = part(0);
  if (complex) {
    ValueId xi = part(1);
    // (xr + i·xi)(cos + i·sin'): re = xr·C − xi·S, im = xr·S + xi·C
    re = b.sub(contract(xr, C), contract(xi, S));
    im = b.add(contract(xr, S), contract(xi, C));
  } else {
    re = contract(xr, C);
    im = contract(xr, S);
  }
  return b.concat({re, im}, r - 1);
}

std::vector<ValueId> dft_op(NodeCtx& c) {
  ValueId x = c.in(0);
  int64_t r = c.rank(x);
  int64_t axis = c.attr_i("axis", 1);
  if (axis < 0) axis += r;
  if (axis <= 0 || axis >= r - 1) c.invalid(cat("axis ", c.attr_i("axis", 1), " must name a signal dim"));
  Dim n = c.shape(x)[static_cast<size_t>(axis)];
  if (!n.is_static()) c.fail("a DFT over a symbolic length");
  int64_t length = c.has(1) ? c.int_scalar(1, "dft_length") : n.value();
  bool inverse = c.attr_i("inverse", 0) != 0, onesided = c.attr_i("onesided", 0) != 0;
  if (inverse && onesided) c.fail("an inverse onesided DFT");
  return {dft(c.b, x, axis, length, inverse, onesided)};
}

std::vector<ValueId> stft(NodeCtx& c) {
  FoldingBuilder& b = c.b;
  ValueId x = c.in(0);
  c.require_rank(x, 3, 3, "the signal");
  auto xs = c.static_shape(x, "the signal");
  int64_t step = c.int_scalar(1, "frame_step");
  int64_t flen = c.has(3) ? c.int_scalar(3, "frame_length") : c.has(2) ? c.static_shape(c.in(2), "the window")[0] : 0;
  if (flen <= 0 || step <= 0) c.invalid("needs a positive frame_length (or a window) and frame_step");
  int64_t frames = (xs[1] - flen) / step + 1;
  if (frames <= 0) c.invalid(cat("frame_length ", flen, " exceeds the signal's ", xs[1], " samples"));
  checked_table(c, frames * flen, "frame index table");
  std::vector<int64_t> idx;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t k = 0; k < flen; ++k) idx.push_back(f * step + k);
  ValueId fr = b.gather(x, b.constant(Tensor::from_vector(idx, {frames, flen})), 1);  // [batch, frames, flen, c]
  if (c.has(2)) fr = b.mul(fr, b.reshape(b.cast(c.in(2), c.dtype(x)), {Dim(1), Dim(1), Dim(flen), Dim(1)}));
  bool onesided = c.attr_i("onesided", 1) != 0;
  return {dft(b, fr, 2, flen, false, onesided)};
}

std::vector<ValueId> mel_weight_matrix(NodeCtx& c) {
  int64_t mel = static_cast<int64_t>(c.scalar(0, "num_mel_bins"));
  int64_t dft_len = static_cast<int64_t>(c.scalar(1, "dft_length"));
  double rate = c.scalar(2, "sample_rate"), lo = c.scalar(3, "lower_edge_hertz"), hi = c.scalar(4, "upper_edge_hertz");
  int64_t spec = dft_len / 2 + 1;
  if (mel <= 0 || dft_len <= 0 || rate <= 0) c.invalid("num_mel_bins, dft_length and sample_rate must be positive");
  checked_table(c, spec * mel, "mel weight matrix");
  double lo_mel = 2595 * std::log10(1 + lo / 700), hi_mel = 2595 * std::log10(1 + hi / 700);
  double step = (hi_mel - lo_mel) / static_cast<double>(mel + 2);
  std::vector<int64_t> bins;
  for (int64_t i = 0; i < mel + 2; ++i) {
    double f = 700 * (std::pow(10.0, (static_cast<double>(i) * step + lo_mel) / 2595) - 1);
    bins.push_back(static_cast<int64_t>(std::floor(static_cast<double>(dft_len + 1) * f / rate)));
  }
  std::vector<double> w(static_cast<size_t>(spec * mel), 0.0);
  auto at = [&](int64_t j, int64_t i) -> double& { return w[static_cast<size_t>(j * mel + i)]; };
  for (int64_t i = 0; i < mel; ++i) {
    int64_t l = bins[static_cast<size_t>(i)], ce = bins[static_cast<size_t>(i + 1)], h = bins[static_cast<size_t>(i + 2)];
    if (ce - l == 0) {
      if (ce >= 0 && ce < spec) at(ce, i) = 1;
    } else {
      for (int64_t j = l; j <= ce; ++j)
        if (j >= 0 && j < spec) at(j, i) = static_cast<double>(j - l) / static_cast<double>(ce - l);
    }
    if (h - ce > 0)
      for (int64_t j = ce; j < h; ++j)
        if (j >= 0 && j < spec) at(j, i) = static_cast<double>(h - j) / static_cast<double>(h - ce);
  }
  return {c.b.constant(Tensor::from_f64(out_dtype(c), {spec, mel}, w))};
}

}  // namespace

void register_signal(OpTable& t) {
  t.insert(t.end(), {
                        {"", "HannWindow", 17, hann},
                        {"", "HammingWindow", 17, hamming},
                        {"", "BlackmanWindow", 17, blackman},
                        {"", "DFT", 17, dft_op},
                        {"", "STFT", 17, stft},
                        {"", "MelWeightMatrix", 17, mel_weight_matrix},
                    });
}

}  // namespace rlx::frontends::onnx
