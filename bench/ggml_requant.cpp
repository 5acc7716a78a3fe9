// bench/quant_kld_peers.sh's peer side: rewrites every quantized tensor of an RLX-written GGUF with
// ggml's own quantizer (ggml_quantize_chunk: what llama.cpp's llama-quantize calls for each
// tensor, here without an importance matrix), taking the f32 values from an F32 GGUF of the same
// model. Same layout, same tensor types: only the quantizer differs.
//   ggml_requant RLX_TYPED.gguf F32.gguf OUT.gguf
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>
#include "ggml.h"
#include "gguf.h"
int main(int argc, char** argv) {
  if (argc != 4) { std::fprintf(stderr, "usage\n"); return 2; }
  gguf_init_params p{true, nullptr};
  gguf_context* q = gguf_init_from_file(argv[1], p);
  gguf_context* f = gguf_init_from_file(argv[2], p);
  if (!q || !f) { std::fprintf(stderr, "cannot read\n"); return 1; }
  std::ifstream qin(argv[1], std::ios::binary), fin(argv[2], std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(qin)), {});
  int replaced = 0;
  for (int64_t i = 0; i < gguf_get_n_tensors(q); ++i) {
    ggml_type t = gguf_get_tensor_type(q, i);
    if (t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_BF16) continue;
    const char* name = gguf_get_tensor_name(q, i);
    int64_t j = gguf_find_tensor(f, name);
    if (j < 0 || gguf_get_tensor_type(f, j) != GGML_TYPE_F32) { std::fprintf(stderr, "no f32 %s\n", name); return 1; }
    const int64_t* ne = gguf_get_tensor_ne(q, i);
    int64_t n = ne[0] * ne[1] * ne[2] * ne[3];
    std::vector<float> x(n);
    fin.seekg(gguf_get_data_offset(f) + gguf_get_tensor_offset(f, j));
    fin.read(reinterpret_cast<char*>(x.data()), n * 4);
    size_t off = gguf_get_data_offset(q) + gguf_get_tensor_offset(q, i);
    size_t got = ggml_quantize_chunk(t, x.data(), bytes.data() + off, 0, n / ne[0], ne[0], nullptr);
    if (got != gguf_get_tensor_size(q, i)) { std::fprintf(stderr, "size %s %zu %zu\n", name, got, gguf_get_tensor_size(q, i)); return 1; }
    ++replaced;
  }
  std::ofstream(argv[3], std::ios::binary).write(bytes.data(), bytes.size());
  std::printf("%d tensors requantized by ggml\n", replaced);
}
