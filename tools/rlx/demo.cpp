// rlx demo: builds a small transformer block with the graph API, compiles it for every
// device, prints each dispatch report, runs it and compares every device with the reference.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "commands.h"
#include "json.h"
#include "rlx/error.h"
#include "rlx/ops.h"
#include "rlx/session.h"

namespace rlx::cli {

namespace {

Tensor random_tensor(std::mt19937& rng, std::vector<int64_t> shape, double scale) {
  std::normal_distribution<double> dist(0.0, scale);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(rng);
  return Tensor::from_f64(DType::f32, std::move(shape), v);
}

// tokens → embedding → [pre-norm causal self-attention + GELU MLP] → logits → softmax
Graph build_block(std::mt19937& rng, int64_t vocab, int64_t dim, int64_t heads) {
  Graph g("demo_block");
  Dim S = Dim::symbol("S");
  Value ids = g.input("ids", DType::i64, {S});
  int64_t hd = dim / heads;
  auto w = [&](std::vector<int64_t> shape, double scale = 0.2) { return constant(g, random_tensor(rng, std::move(shape), scale)); };
  Value x = embedding(w({vocab, dim}, 1.0), ids);
  Value h = layer_norm(x, w({dim}), w({dim}));
  auto heads_of = [&](Value t) { return transpose(reshape(t, {Dim(1), S, Dim(heads), Dim(hd)}), {0, 2, 1, 3}); };
  Value q = heads_of(linear(h, w({dim, dim}), w({dim})));
  Value k = heads_of(linear(h, w({dim, dim}), w({dim})));
  Value v = heads_of(linear(h, w({dim, dim}), w({dim})));
  Value att = op("attention", {q, k, v}, "mask=causal")[0];
  att = reshape(transpose(att, {0, 2, 1, 3}), {S, Dim(dim)});
  x = x + linear(att, w({dim, dim}), w({dim}));
  Value m = gelu(linear(layer_norm(x, w({dim}), w({dim})), w({4 * dim, dim}), w({4 * dim})));
  x = x + linear(m, w({dim, 4 * dim}), w({dim}));
  Value logits = linear(x, w({vocab, dim}));
  g.set_outputs({softmax(logits)});
  return g;
}

}  // namespace

int cmd_demo(Args& args) {
  bool json = args.flag("json");
  int64_t seq = args.int_or("seq", 16);
  args.finish();
  std::mt19937 rng(42);
  const int64_t vocab = 64, dim = 32, heads = 4;
  Graph g = build_block(rng, vocab, dim, heads);
  std::vector<int64_t> tokens(static_cast<size_t>(seq));
  for (auto& t : tokens) t = static_cast<int64_t>(rng() % vocab);
  Tensor ids = Tensor::from_vector(tokens, {seq});

  if (!json) std::printf("RLX demo: a causal transformer block (vocab %lld, dim %lld, %lld heads) over %lld tokens\n\n",
                         static_cast<long long>(vocab), static_cast<long long>(dim), static_cast<long long>(heads), static_cast<long long>(seq));
  Tensor expected = Session("reference").compile(g).run({ids})[0];
  std::vector<std::string> rows;
  int failures = 0;
  for (const DeviceInfo& d : devices()) {
    if (!json) std::printf("== device %s (%s)\n", d.name.c_str(), d.description.c_str());
    if (!d.available) {
      if (!json) std::printf("   not available here: %s\n\n", d.reason.c_str());
      rows.push_back(cat("{\"device\":", json_quote(d.name), ",\"available\":false}"));
      continue;
    }
    try {
      auto t0 = std::chrono::steady_clock::now();
      CompiledModel m = Session(d.name).compile(g);
      auto t1 = std::chrono::steady_clock::now();
      Tensor out = m.run({ids})[0];
      auto t2 = std::chrono::steady_clock::now();
      double err = 0;
      for (int64_t i = 0; i < out.numel(); ++i) err = std::max(err, std::fabs(out.at_f64(i) - expected.at_f64(i)));
      double compile_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
      double run_ms = std::chrono::duration<double, std::milli>(t2 - t1).count();
      bool ok = err < 1e-4;
      failures += ok ? 0 : 1;
      if (!json) {
        std::printf("%s", m.dispatch_report().c_str());
        std::printf("   compiled in %.1f ms, ran in %.2f ms; max |output - reference| = %.3g %s\n\n", compile_ms, run_ms, err, ok ? "(ok)" : "(MISMATCH)");
      }
      rows.push_back(cat("{\"device\":", json_quote(d.name), ",\"available\":true,\"compiled\":true,\"max_abs_error\":", err,
                         ",\"compile_ms\":", compile_ms, ",\"run_ms\":", run_ms, ",\"report\":", m.dispatch_report_json(), "}"));
    } catch (const Error& e) {
      // The null device claims nothing: its error lists every op of the graph, by design.
      if (!json) {
        // the first lines say it all; `rlx compile --device null` prints the full list
        std::string msg = e.what();
        size_t cut = 0;
        for (int line = 0; line < 8 && cut != std::string::npos; ++line) cut = msg.find('\n', cut + 1);
        if (cut != std::string::npos) msg = msg.substr(0, cut) + "\n  …";
        std::printf("   cannot compile (%s):\n   %s\n\n", error_kind_name(e.kind()), msg.c_str());
      }
      rows.push_back(cat("{\"device\":", json_quote(d.name), ",\"available\":true,\"compiled\":false,\"error\":", json_quote(e.what()), "}"));
      if (e.kind() != ErrorKind::unsupported) ++failures;
    }
  }
  if (json) {
    std::printf("{\"demo\":\"transformer_block\",\"devices\":%s}\n", json_array(rows).c_str());
    return failures ? 1 : 0;
  }
  // Then the headline job: train a classifier on Fashion-MNIST and report its test accuracy.
  const char* data = "/usr/share/datasets/fashion-mnist";
  if (std::FILE* f = std::fopen("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz", "rb")) {
    std::fclose(f);
    std::printf("== training: a 784-128-10 MLP on Fashion-MNIST (3 epochs, Adam), one compiled training step per batch\n");
    Args train_args("train", {"mnist", "--data", data, "--epochs", "3"});
    failures += cmd_train(train_args);
  } else {
    std::printf("== training skipped: %s is missing (apt-get install dataset-fashion-mnist; `make setup` installs it)\n", data);
  }
  return failures ? 1 : 0;
}

}  // namespace rlx::cli
