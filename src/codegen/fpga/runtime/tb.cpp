// tb.cpp — the Verilator testbench of an RLX FPGA program (written by `rlx export --target fpga…`).
//   ./obj_dir/Vtb [INPUT.bin [OUTPUT.bin]]      (defaults rlx_input.bin, rlx_output.bin)
// INPUT holds the model's inputs back to back (f32 when the graph quantizes its input, else int8).
// The host side of the graph runs here exactly as on the host — quantize_linear in IEEE single
// precision rounding half to even, dequantize_linear as (q − zero point)·scale — and the hardware
// in between: the configuration stream (cfg.bin) once after reset, then per inference the input
// bytes in and the output bytes and the argmax out, through the valid/ready handshakes. Writes the
// outputs (f32 after a dequantize, else int8) and prints the cycles per inference; tb.json has them.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "Vrlx_model.h"
#include "model_io.h"
#include "verilated.h"

namespace {

Vrlx_model* dut;
uint64_t cycles = 0;

void tick() {
  dut->clk = 0;
  dut->eval();
  dut->clk = 1;
  dut->eval();
  ++cycles;
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "tb: %s\n", what);
  std::exit(1);
}

std::vector<uint8_t> read_file(const char* path, bool required) {
  std::vector<uint8_t> b;
  FILE* f = std::fopen(path, "rb");
  if (!f) {
    if (required) {
      std::fprintf(stderr, "tb: cannot open %s\n", path);
      std::exit(1);
    }
    return b;
  }
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) b.insert(b.end(), buf, buf + n);
  std::fclose(f);
  return b;
}

// One byte through a valid/ready input: it is taken at the rising edge where both are high.
template <class Valid, class Data, class Ready>
void push(Valid& valid, Data& data, const Ready& ready, uint8_t byte) {
  valid = 1;
  data = byte;
  for (int waited = 0;; ++waited) {
    dut->clk = 0;
    dut->eval();
    const bool taken = ready;
    tick();
    if (taken) break;
    if (waited > 50000000) fail("the hardware stopped taking input");
  }
  valid = 0;
}

int8_t quantize(float x) {
  const float v = std::nearbyint(x / RLX_IN_SCALE) + static_cast<float>(RLX_IN_ZERO_POINT);  // to nearest even: the default mode
  return static_cast<int8_t>(v < -128.0f ? -128.0f : v > 127.0f ? 127.0f : v);
}

}  // namespace

int main(int argc, char** argv) {
  const char* in_path = argc > 1 ? argv[1] : "rlx_input.bin";
  const char* out_path = argc > 2 ? argv[2] : "rlx_output.bin";
  const std::vector<uint8_t> input = read_file(in_path, true);
  const size_t in_bytes = RLX_IN_COUNT * (RLX_QUANTIZE ? sizeof(float) : 1);
  if (input.empty() || input.size() % in_bytes != 0) {
    std::fprintf(stderr, "tb: %s has %zu bytes, not a multiple of one input (%zu bytes)\n", in_path, input.size(), in_bytes);
    return 1;
  }
  const size_t images = input.size() / in_bytes;
  const std::vector<uint8_t> cfg = read_file("cfg.bin", RLX_CFG_BYTES > 0);
  if (cfg.size() != static_cast<size_t>(RLX_CFG_BYTES)) fail("cfg.bin does not hold the configuration this program was written for");

  VerilatedContext ctx;
  ctx.commandArgs(argc, argv);
  dut = new Vrlx_model(&ctx);
  dut->rst = 1;
  dut->cfg_valid = dut->in_valid = 0;
  dut->out_ready = 1;
  for (int i = 0; i < 4; ++i) tick();
  dut->rst = 0;
  const uint64_t cfg_start = cycles;
  for (uint8_t b : cfg) push(dut->cfg_valid, dut->cfg_data, dut->cfg_ready, b);
  const uint64_t cfg_cycles = cycles - cfg_start;

  FILE* out = std::fopen(out_path, "wb");
  if (!out) fail("cannot write the output file");
  uint64_t min_cycles = UINT64_MAX, max_cycles = 0, total = 0;
  uint64_t compute_min = UINT64_MAX, compute_max = 0;  // the last input byte in → the first output byte out
  std::vector<int8_t> q(RLX_IN_COUNT);
  for (size_t i = 0; i < images; ++i) {
    const uint8_t* x = input.data() + i * in_bytes;
    for (size_t k = 0; k < RLX_IN_COUNT; ++k) {
      if (RLX_QUANTIZE) {
        float f;
        std::memcpy(&f, x + 4 * k, 4);
        q[k] = quantize(f);
      } else {
        q[k] = static_cast<int8_t>(x[k]);
      }
    }
    const uint64_t begin = cycles;
    for (size_t k = 0; k < RLX_IN_COUNT; ++k) push(dut->in_valid, dut->in_data, dut->in_ready, static_cast<uint8_t>(q[k]));
    const uint64_t computing = cycles;  // the last input byte is in: from here to the first output byte
    std::vector<int8_t> y;
    for (uint64_t waited = 0;; ++waited) {
      dut->clk = 0;
      dut->eval();
      const bool valid = dut->out_valid, last = dut->out_last;
      const uint8_t byte = dut->out_data;
      tick();
      if (valid) {
        if (y.empty() && !last) {
          const uint64_t c = cycles - 1 - computing;
          compute_min = c < compute_min ? c : compute_min;
          compute_max = c > compute_max ? c : compute_max;
        }
        if (last) {
          if (y.size() != RLX_OUT_COUNT) fail("the hardware gave a wrong number of outputs");
          break;
        }
        y.push_back(static_cast<int8_t>(byte));
      }
      if (waited > 50000000) fail("the hardware stopped before its outputs");
    }
    const uint64_t c = cycles - begin;
    min_cycles = c < min_cycles ? c : min_cycles;
    max_cycles = c > max_cycles ? c : max_cycles;
    total += c;
    for (int8_t v : y) {
      if (RLX_DEQUANTIZE) {
        const float f = static_cast<float>(static_cast<int32_t>(v) - RLX_OUT_ZERO_POINT) * RLX_OUT_SCALE;
        std::fwrite(&f, sizeof f, 1, out);
      } else {
        std::fwrite(&v, 1, 1, out);
      }
    }
  }
  std::fclose(out);
  dut->final();
  delete dut;
  std::printf("rlx: %zu inferences in Verilator; cycles per inference %llu (min) %llu (max), %.1f mean (of them computing, from the last input byte to the "
              "first output byte: %llu–%llu); configuration %llu cycles\n",
              images, static_cast<unsigned long long>(min_cycles), static_cast<unsigned long long>(max_cycles), static_cast<double>(total) / static_cast<double>(images),
              static_cast<unsigned long long>(compute_min), static_cast<unsigned long long>(compute_max), static_cast<unsigned long long>(cfg_cycles));
  if (FILE* j = std::fopen("tb.json", "w")) {
    std::fprintf(j, "{\"inferences\":%zu,\"cycles_min\":%llu,\"cycles_max\":%llu,\"compute_cycles_min\":%llu,\"compute_cycles_max\":%llu,\"configuration_cycles\":%llu}\n",
                 images, static_cast<unsigned long long>(min_cycles), static_cast<unsigned long long>(max_cycles), static_cast<unsigned long long>(compute_min),
                 static_cast<unsigned long long>(compute_max), static_cast<unsigned long long>(cfg_cycles));
    std::fclose(j);
  }
  return 0;
}
