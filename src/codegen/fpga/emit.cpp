#include "codegen/fpga/emit.h"

#include <cstdio>
#include <optional>
#include <sstream>

#include "codegen/fpga/parallel.h"
#include "codegen/int8/layers.h"
#include "fpga_runtime.h"  // generated: the files of runtime/ as strings
#include "codegen/dialect_c.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::codegen::fpga {

namespace {

using int8::Step;
using ir::Graph;
using ir::ValueId;

}  // namespace

const std::vector<Part>& parts() {
  // The UP5K: 5280 LUTs, 8 SB_MAC16, 30 EBR of 4 kbit, 4 SPRAM of 16K×16 (yosys -spram maps a
  // single-port RAM onto them; the bitstream cannot initialize them, so their weights are loaded
  // through the configuration stream at power-up, as a board would from its SPI flash).
  static const std::vector<Part> all = {
      {"ice40-up5k", "Lattice iCE40 UltraPlus UP5K (yosys synth_ice40, nextpnr-ice40, icepack)", true, 8, 30 * 512, 16384, 4, 4, 24.0, 0},
      {"generic", "a generic FPGA (yosys synth to 6-input LUTs: LUT and flip-flop counts; Fmax estimated on 7-series cell delays)", false, 0, 0, 0, 0, 16, 0.0,
       16384},
  };
  return all;
}

const Part& part(const std::string& name) {
  for (const Part& p : parts())
    if (name == p.name) return p;
  std::vector<std::string> names;
  for (const Part& p : parts()) names.push_back(p.name);
  throw Error(ErrorKind::invalid_argument, cat("unknown FPGA part '", name, "' (", join(names), ")"));
}

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t pow2_ceil(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

// The bytes a step reads and writes (one image).
int64_t in_count(const Step& s) {
  if (s.kind == Step::Kind::conv) return s.cin * s.h * s.w;
  if (s.kind == Step::Kind::max_pool) return s.batch * s.h * s.w;
  return s.k;
}
int64_t out_count(const Step& s) {
  if (s.kind == Step::Kind::conv) return s.cout * s.oh * s.ow;
  if (s.kind == Step::Kind::max_pool) return s.batch * s.oh * s.ow;
  return s.n;
}
int64_t channels_out(const Step& s) { return s.kind == Step::Kind::conv ? s.cout : s.n; }

// One layer as hardware: a fully connected layer takes P products a cycle over T words of each
// row; a convolution one product a cycle (rlx_conv), max pooling one tap a cycle (rlx_maxpool).
struct Layer {
  const Step* step;
  int64_t p = 1, t = 1;
  bool loadable = false;   // weights in SPRAM, written through the configuration stream
  int64_t cfg_offset = 0;  // its first byte in that stream
  int64_t words() const { return step->kind == Step::Kind::fc ? step->n * t : static_cast<int64_t>(step->weights.size()); }
  int64_t weight_bytes() const { return words() * p; }
  int64_t in_words() const { return (in_count(*step) + p - 1) / p; }  // its input buffer, P banks
};

// The chain the hardware runs: [quantize] → fc … → [dequantize], one input and one output.
struct Chain {
  std::optional<Step> quantize, dequantize;
  std::vector<Step> fcs;  // the layers: fully connected, convolution, max pooling
  bool all_fc() const {
    for (const Step& s : fcs)
      if (s.kind != Step::Kind::fc) return false;
    return true;
  }
};

Chain chain_of(const Graph& lir, const std::vector<Step>& steps) {
  Chain c;
  std::map<ValueId, ValueId> alias;  // a view's output → what it views
  auto root = [&](ValueId v) {
    while (alias.count(v)) v = alias.at(v);
    return v;
  };
  std::vector<std::string> problems;
  if (lir.inputs().size() != 1 || lir.outputs().size() != 1) problems.push_back("the program takes one input and gives one output");
  ValueId at = lir.inputs().empty() ? ir::kNoValue : lir.inputs()[0];  // the value the next step must read
  for (const Step& s : steps) {
    if (s.kind == Step::Kind::view) {
      alias[s.out] = s.in;
      continue;
    }
    if (root(s.in) != root(at)) problems.push_back(cat(s.label, ": reads a value other than the previous step's (the hardware is one chain of layers)"));
    switch (s.kind) {
      case Step::Kind::quantize:
        if (c.quantize || !c.fcs.empty()) problems.push_back(cat(s.label, ": a quantize inside the chain (only the input is quantized, by the host)"));
        c.quantize = s;
        break;
      case Step::Kind::fc:
        if (c.dequantize) problems.push_back(cat(s.label, ": a layer after the dequantize"));
        if (s.rows != 1) problems.push_back(cat(s.label, ": ", s.rows, " rows (the hardware takes one input vector at a time)"));
        for (int32_t m : s.mult)
          if (m < 0) problems.push_back(cat(s.label, ": a negative requantization multiplier"));
        c.fcs.push_back(s);
        break;
      case Step::Kind::dequantize:
        if (c.dequantize) problems.push_back(cat(s.label, ": a second dequantize"));
        c.dequantize = s;
        break;
      case Step::Kind::conv:
      case Step::Kind::max_pool:
        if (c.dequantize) problems.push_back(cat(s.label, ": a layer after the dequantize"));
        if (s.kind == Step::Kind::conv && s.batch != 1) problems.push_back(cat(s.label, ": ", s.batch, " images (the hardware takes one at a time)"));
        for (int32_t m : s.mult)
          if (m < 0) problems.push_back(cat(s.label, ": a negative requantization multiplier"));
        c.fcs.push_back(s);
        break;
      default:
        problems.push_back(cat(s.label, ": ", s.kind == Step::Kind::add ? "an integer add" : "a softmax",
                               " (the fpga generator runs chains of fully connected, convolution and max-pooling layers so far)"));
    }
    at = s.out;
  }
  if (c.fcs.empty()) problems.push_back("no integer layer to run");
  if (!lir.outputs().empty() && root(lir.outputs()[0]) != root(at)) problems.push_back("the graph's output is not the chain's last value");
  if (!problems.empty())
    throw Error(ErrorKind::unsupported, cat("the fpga generator cannot take this int8 graph:\n  ", join(problems, "\n  ")));
  return c;
}

// P per layer (a power of two up to the part's widest array, no wider than the row), then halved
// on the layers with the fewest products until the arrays fit the part's multipliers; weights in
// block RAM while it lasts, else in SPRAM.
std::vector<Layer> plan_layers(const Chain& c, const Part& part) {
  std::vector<Layer> ls;
  for (const Step& s : c.fcs) ls.push_back(Layer{&s, s.kind == Step::Kind::fc ? std::min<int64_t>(part.max_parallel, pow2_ceil(s.k)) : 1});
  auto total = [&] {  // multipliers: P per fully connected layer, one per convolution
    int64_t t = 0;
    for (const Layer& l : ls) t += l.step->kind == Step::Kind::max_pool ? 0 : l.p;
    return t;
  };
  while (part.dsp > 0 && total() > part.dsp) {
    Layer* least = nullptr;
    for (Layer& l : ls)
      if (l.p > 1 && (!least || l.step->k * l.step->n < least->step->k * least->step->n)) least = &l;
    if (!least) throw Error(ErrorKind::unsupported, cat("fpga:", part.name, ": ", ls.size(), " layers need more than its ", part.dsp, " multipliers"));
    least->p /= 2;
  }
  for (Layer& l : ls) l.t = ceil_div(l.step->k, l.p);
  if (part.ebr_bytes == 0) return ls;
  // block RAM: each layer's input buffer (P banks) and per-channel parameters come first
  auto blocks = [](int64_t words, int64_t bits) { return ceil_div(bits, 16) * ceil_div(words, 256); };  // 256×16 EBRs
  int64_t left = part.ebr_bytes / 512;
  // (a parameter ROM of fewer than 32 channels is a few LUTs: yosys maps it to logic)
  for (const Layer& l : ls)
    left -= l.p * ceil_div(l.in_words(), 512) + (l.step->kind == Step::Kind::max_pool || channels_out(*l.step) < 32 ? 0 : blocks(channels_out(*l.step), 70));
  int64_t spram_left = part.spram_blocks, cfg = 0;
  std::vector<std::string> problems;
  for (Layer& l : ls) {
    if (l.step->kind == Step::Kind::max_pool) continue;
    if (l.step->kind == Step::Kind::conv) {  // convolution weights are ROMs
      left -= blocks(l.words(), 8);
      if (left < 0) problems.push_back(cat(l.step->label, ": ", l.words(), " bytes of weights do not fit the block RAM left"));
      continue;
    }
    const int64_t rom = blocks(l.words(), 8 * l.p);
    if (rom <= left) {
      left -= rom;
      continue;
    }
    const int64_t wide = ceil_div(8 * l.p, 16), deep = ceil_div(l.words(), part.spram_words);
    if (part.spram_words == 0 || wide * deep > spram_left) {
      problems.push_back(cat(l.step->label, ": ", l.weight_bytes(), " bytes of weights fit neither the ", left * 512, " bytes of block RAM left nor the SPRAM left (",
                             spram_left, " blocks of ", part.spram_words * 2, " bytes)"));
      continue;
    }
    spram_left -= wide * deep;
    l.loadable = true;
    l.cfg_offset = cfg;
    cfg += l.weight_bytes();
  }
  if (!problems.empty()) throw Error(ErrorKind::unsupported, cat("the model does not fit the ", part.name, ":\n  ", join(problems, "\n  ")));
  return ls;
}

// Weight words, P bytes each (byte p at bits 8p…), row j at words j·T…, zero-padded.
std::vector<uint8_t> weight_bytes(const Layer& l) {
  std::vector<uint8_t> b(static_cast<size_t>(l.weight_bytes()), 0);
  const Step& s = *l.step;
  if (s.kind == Step::Kind::conv) return std::vector<uint8_t>(s.weights.begin(), s.weights.end());  // [cout][cin/groups][kh][kw]
  for (int64_t j = 0; j < s.n; ++j)
    for (int64_t k = 0; k < s.k; ++k) b[static_cast<size_t>(j * l.t * l.p + k)] = static_cast<uint8_t>(s.weights[static_cast<size_t>(j * s.k + k)]);
  return b;
}

std::string hex_words(const std::vector<uint8_t>& bytes, int64_t p) {
  std::string out;
  char buf[4];
  for (size_t w = 0; w < bytes.size() / static_cast<size_t>(p); ++w) {
    for (int64_t i = p - 1; i >= 0; --i) {
      std::snprintf(buf, sizeof buf, "%02x", bytes[w * static_cast<size_t>(p) + static_cast<size_t>(i)]);
      out += buf;
    }
    out += '\n';
  }
  return out;
}

// {bias[31:0], mult[31:0], shift[5:0]} per output channel, 70 bits in 18 hex digits.
std::string requant_words(const Step& s) {
  std::string out;
  char buf[32];
  for (int64_t j = 0; j < channels_out(s); ++j) {
    const uint64_t bias = static_cast<uint32_t>(s.has_bias ? s.bias[static_cast<size_t>(j)] : 0);
    const uint64_t mult = static_cast<uint32_t>(s.mult[static_cast<size_t>(j)]), shift = static_cast<uint8_t>(s.shift[static_cast<size_t>(j)]);
    // bits 69..64 are bias[31:26]; 63..0 the rest
    const uint64_t hi = bias >> 26, lo = (bias << 38) | (mult << 6) | shift;
    std::snprintf(buf, sizeof buf, "%02llx%016llx\n", static_cast<unsigned long long>(hi), static_cast<unsigned long long>(lo));
    out += buf;
  }
  return out;
}

// A C float literal that reads back as the same float (the C dialect's).
std::string c_float(float f) { return c99().literal(f, ValueClass::floating); }

std::string top_module(const Graph& lir, const std::vector<Layer>& ls, const Part& part, int64_t cfg_bytes) {
  std::ostringstream v;
  const size_t L = ls.size();
  const int64_t n_in = in_count(*ls.front().step), n_out = out_count(*ls.back().step);
  int64_t pm = 1;  // the widest loadable word
  for (const Layer& l : ls)
    if (l.loadable) pm = std::max(pm, l.p);
  v << "// Generated by `rlx export --target fpga:" << part.name << "` from @" << lir.name << "; do not edit.\n"
    << "// One inference: the configuration stream (once, after reset: cfg.bin, the weights kept in SPRAM), then\n"
    << "// " << n_in << " input bytes (the quantized input), then " << n_out << " output bytes and the argmax (out_last).\n"
    << "`default_nettype none\n\nmodule rlx_model (\n"
    << "    input  wire       clk,\n    input  wire       rst,\n"
    << "    input  wire       cfg_valid,\n    input  wire [7:0] cfg_data,\n    output wire       cfg_ready,\n"
    << "    input  wire       in_valid,\n    input  wire [7:0] in_data,\n    output wire       in_ready,\n"
    << "    output wire       out_valid,\n    output wire [7:0] out_data,\n    output wire       out_last,\n    input  wire       out_ready\n);\n";
  v << "  localparam [7:0] S_CFG = 0, S_IN = 1, S_OUT = 2;  // then S_OUT + 1 + i: layer i runs\n"
    << "  localparam integer CFG_BYTES = " << cfg_bytes << ", N_IN = " << n_in << ", N_OUT = " << n_out << ";\n"
    << "  logic [7:0] state;\n  logic [23:0] cfg_count;\n  logic [15:0] count;\n  logic [" << L - 1 << ":0] start;\n"
    << "  logic [" << 8 * pm - 1 << ":0] cfg_shift;  // the configuration bytes before this one, newest at the top\n"
    << "  wire cfg_take = state == S_CFG && cfg_valid;\n"
    << "  wire in_take = state == S_IN && in_valid;\n"
    << "  assign cfg_ready = state == S_CFG;\n  assign in_ready = state == S_IN;\n\n";
  // wires per layer and buffer
  for (size_t i = 0; i < L; ++i) {
    const Layer& l = ls[i];
    const Step& st = *l.step;
    v << "  // " << st.label << ": "
      << (st.kind == Step::Kind::fc         ? cat(st.k, " → ", st.n, ", ", l.p, " products a cycle, weights in ", l.loadable ? "SPRAM (configuration stream)" : "ROM")
          : st.kind == Step::Kind::conv     ? cat(st.cin, "×", st.h, "×", st.w, " → ", st.cout, "×", st.oh, "×", st.ow, ", ", st.kh, "×", st.kw, " kernel, one product a cycle")
                                            : cat(st.batch, "×", st.h, "×", st.w, " → ", st.batch, "×", st.oh, "×", st.ow, ", max over ", st.kh, "×", st.kw))
      << "\n"
      << "  wire l" << i << "_done, l" << i << "_we;\n  wire [15:0] l" << i << "_xaddr, l" << i << "_yaddr;\n  wire [7:0] l" << i << "_ydata;\n"
      << "  wire [" << 8 * l.p - 1 << ":0] l" << i << "_xword;\n";
    // the input buffer of layer i: the input stream or layer i−1
    const std::string we = i == 0 ? "in_take" : cat("l", i - 1, "_we"), wa = i == 0 ? "count" : cat("l", i - 1, "_yaddr"), wd = i == 0 ? "in_data" : cat("l", i - 1, "_ydata");
    v << "  rlx_buffer #(.P(" << l.p << "), .WORDS(" << l.in_words() << ")) b" << i << " (.clk(clk), .we(" << we << "), .waddr(" << wa << "), .wdata(" << wd << "), .raddr(l" << i
      << "_xaddr), .rdata(l" << i << "_xword));\n";
    std::string cfg_we = "1'b0", cfg_addr = "16'd0", cfg_word = cat(8 * l.p, "'d0");
    if (l.loadable) {
      const int lp = __builtin_ctzll(static_cast<unsigned long long>(l.p));
      v << "  wire [23:0] l" << i << "_coff = cfg_count - 24'd" << l.cfg_offset << ";\n"
        << "  wire l" << i << "_cfg_we = cfg_take && " << (l.cfg_offset > 0 ? cat("cfg_count >= 24'd", l.cfg_offset, " && ") : "") << "cfg_count < 24'd"
        << l.cfg_offset + l.weight_bytes()
        << (lp > 0 ? cat(" && l", i, "_coff[", lp - 1, ":0] == ", lp, "'d", l.p - 1) : std::string()) << ";\n";  // a word's last byte
      // registered: the RAM's address mux then starts from flip-flops, off the counter's compare
      v << "  logic l" << i << "_cfg_we_q;\n  logic [15:0] l" << i << "_cfg_addr_q;\n  logic [" << 8 * l.p - 1 << ":0] l" << i << "_cfg_word_q;\n"
        << "  always_ff @(posedge clk) begin\n    l" << i << "_cfg_we_q <= !rst && l" << i << "_cfg_we;\n    l" << i << "_cfg_addr_q <= 16'(l" << i << "_coff >> " << lp
        << ");\n    l" << i << "_cfg_word_q <= "
        << (l.p > 1 ? cat("{cfg_data, cfg_shift[", 8 * pm - 1, " -: ", 8 * (l.p - 1), "]}") : std::string("cfg_data")) << ";\n  end\n";
      cfg_we = cat("l", i, "_cfg_we_q");
      cfg_addr = cat("l", i, "_cfg_addr_q");
      cfg_word = cat("l", i, "_cfg_word_q");
    }
    const std::string ports = cat("      .clk(clk), .rst(rst), .start(start[", i, "]), .done(l", i, "_done), .x_addr(l", i, "_xaddr), .x_word(l", i, "_xword),\n",
                                  "      .y_we(l", i, "_we), .y_addr(l", i, "_yaddr), .y_data(l", i, "_ydata)");
    if (st.kind == Step::Kind::conv) {
      v << "  rlx_conv #(.CIN(" << st.cin << "), .H(" << st.h << "), .W(" << st.w << "), .COUT(" << st.cout << "), .KH(" << st.kh << "), .KW(" << st.kw << "), .OH("
        << st.oh << "), .OW(" << st.ow << "),\n      .SH(" << st.stride_h << "), .SW(" << st.stride_w << "), .DH(" << st.dil_h << "), .DW(" << st.dil_w << "), .PT("
        << st.pad_top << "), .PL(" << st.pad_left << "), .GROUPS(" << st.groups << "), .PAD(" << static_cast<int>(st.pad_value) << "), .W_INIT(\"l" << i
        << "_w.hex\"), .Q_INIT(\"l" << i << "_q.hex\"),\n      .ZP(" << st.out_zero_point << "), .LO(" << st.lo << "), .HI(" << st.hi << ")) l" << i << " (\n"
        << ports << ");\n\n";
      continue;
    }
    if (st.kind == Step::Kind::max_pool) {
      v << "  rlx_maxpool #(.C(" << st.batch << "), .H(" << st.h << "), .W(" << st.w << "), .KH(" << st.kh << "), .KW(" << st.kw << "), .OH(" << st.oh << "), .OW("
        << st.ow << "), .SH(" << st.stride_h << "), .SW(" << st.stride_w << "), .PT(" << st.pad_top << "), .PL(" << st.pad_left << ")) l" << i << " (\n"
        << ports << ");\n\n";
      continue;
    }
    v << "  rlx_fc #(.K(" << l.step->k << "), .N(" << l.step->n << "), .P(" << l.p << "), .LOADABLE(" << (l.loadable ? 1 : 0) << "), .W_INIT(\""
      << (l.loadable ? "" : cat("l", i, "_w.hex")) << "\"), .Q_INIT(\"l" << i << "_q.hex\"), .ZP(" << l.step->out_zero_point << "), .LO(" << l.step->lo << "), .HI("
      << l.step->hi << ")) l" << i << " (\n"
      << "      .clk(clk), .rst(rst), .start(start[" << i << "]), .done(l" << i << "_done), .x_addr(l" << i << "_xaddr), .x_word(l" << i << "_xword),\n"
      << "      .y_we(l" << i << "_we), .y_addr(l" << i << "_yaddr), .y_data(l" << i << "_ydata), .cfg_we(" << cfg_we << "), .cfg_addr(" << cfg_addr << "), .cfg_word("
      << cfg_word << "));\n\n";
  }
  const size_t last = L - 1;
  v << "  // the last layer's outputs, and their argmax (the first of equal maxima) as they are written\n"
    << "  logic [7:0] obuf[0:N_OUT-1];\n  logic signed [7:0] best;\n  logic [7:0] best_at;\n"
    << "  always_ff @(posedge clk)\n    if (l" << last << "_we) begin\n      obuf[l" << last << "_yaddr] <= l" << last << "_ydata;\n"
    << "      if (l" << last << "_yaddr == 16'd0 || $signed(l" << last << "_ydata) > best) begin\n        best <= $signed(l" << last << "_ydata);\n        best_at <= l"
    << last << "_yaddr[7:0];\n      end\n    end\n"
    << "  assign out_valid = state == S_OUT;\n  assign out_last = count == 16'(N_OUT);\n"
    << "  assign out_data = out_last ? best_at : obuf[count];\n\n";
  v << "  always_ff @(posedge clk) begin\n    start <= '0;\n"
    << (pm > 1 ? cat("    if (cfg_take) cfg_shift <= {cfg_data, cfg_shift[", 8 * pm - 1, ":8]};\n") : std::string("    if (cfg_take) cfg_shift <= cfg_data;\n"))
    << "    if (rst) begin\n      state <= CFG_BYTES > 0 ? S_CFG : S_IN;\n      cfg_count <= 24'd0;\n      count <= 16'd0;\n"
    << "    end else begin\n      case (state)\n"
    << "        S_CFG:\n        if (cfg_take) begin\n          cfg_count <= cfg_count + 24'd1;\n          if (cfg_count == 24'(CFG_BYTES - 1)) state <= S_IN;\n        end\n"
    << "        S_IN:\n        if (in_take) begin\n          if (count == 16'(N_IN - 1)) begin\n            count <= 16'd0;\n            start[0] <= 1'b1;\n"
    << "            state <= S_OUT + 8'd1;\n          end else count <= count + 16'd1;\n        end\n"
    << "        S_OUT:\n        if (out_ready) begin\n          if (out_last) begin\n            count <= 16'd0;\n            state <= S_IN;\n"
    << "          end else count <= count + 16'd1;\n        end\n";
  for (size_t i = 0; i < L; ++i) {
    v << "        S_OUT + 8'd" << i + 1 << ":\n        if (l" << i << "_done) ";
    if (i + 1 < L)
      v << "begin\n          start[" << i + 1 << "] <= 1'b1;\n          state <= S_OUT + 8'd" << i + 2 << ";\n        end\n";
    else
      v << "state <= S_OUT;\n";
  }
  v << "        default: state <= S_IN;\n      endcase\n    end\n  end\nendmodule\n\n`default_nettype wire\n";
  return v.str();
}

std::string io_header(const Chain& c, int64_t cfg_bytes) {
  std::ostringstream h;
  h << "/* Generated by `rlx export --target fpga…`: what the testbench needs to know of the model. */\n"
    << "#define RLX_IN_COUNT " << in_count(c.fcs.front()) << "\n#define RLX_OUT_COUNT " << out_count(c.fcs.back()) << "\n"
    << "#define RLX_CFG_BYTES " << cfg_bytes << "\n"
    << "#define RLX_QUANTIZE " << (c.quantize ? 1 : 0) << "\n#define RLX_IN_SCALE " << c_float(c.quantize ? c.quantize->scale : 1.0f) << "\n#define RLX_IN_ZERO_POINT "
    << (c.quantize ? c.quantize->zero_point : 0) << "\n"
    << "#define RLX_DEQUANTIZE " << (c.dequantize ? 1 : 0) << "\n#define RLX_OUT_SCALE " << c_float(c.dequantize ? c.dequantize->scale : 1.0f)
    << "\n#define RLX_OUT_ZERO_POINT " << (c.dequantize ? c.dequantize->zero_point : 0) << "\n";
  return h.str();
}

// timing_top: the module whose registers the generic part's timing estimate measures.
std::string makefile(const Part& part, const std::string& timing_top) {
  std::string m = cat(
      "# Generated by `rlx export --target fpga:", part.name, "`. Needs verilator, yosys", part.ice40 ? ", nextpnr-ice40 and fpga-icestorm" : "",
      " (Debian packages of those names).\n",
      "#   make sim        the Verilator testbench (obj_dir/Vtb)\n",
      "#   make run        rlx_input.bin -> rlx_output.bin through the simulated hardware; cycles per inference\n",
      part.ice40 ? "#   make            synthesis (yosys synth_ice40), place and route (nextpnr-ice40 --up5k), model.bin (icepack); report\n"
                 : "#   make            yosys synth to 6-input LUTs; report; the timing estimate (make timing)\n",
      "SV = rlx_fpga.sv model.sv\nTOP = rlx_model\nVERILATOR = verilator\nYOSYS = yosys\n");
  if (part.ice40)
    m += cat("NEXTPNR = nextpnr-ice40\nICEPACK = icepack\nFREQ = ", static_cast<int>(part.mhz), "\n\n.PHONY: all sim run report clean\n\nall: model.bin report\n\n",
             "synth.json: $(SV) $(wildcard *.hex)\n\t$(YOSYS) -q -l yosys.log -p \"read_verilog -sv $(SV); synth_ice40 -top $(TOP) -dsp -spram -json synth.json\"\n\n",
             "model.asc: synth.json\n\t$(NEXTPNR) -q --up5k --package sg48 --json synth.json --asc model.asc --pcf-allow-unconstrained --freq $(FREQ) -l nextpnr.log\n\n",
             "model.bin: model.asc\n\t$(ICEPACK) model.asc model.bin\n\n",
             "# LUT (ICESTORM_LC), EBR (ICESTORM_RAM), SPRAM and DSP use, and Fmax, from nextpnr's log\n",
             "report: model.bin\n\t@sh report.sh nextpnr.log\n\n");
  else
    m += cat("TIMING_TOP = ", timing_top, "\n\n.PHONY: all sim run report timing clean\n\nall: report timing\n\n",
             "synth.log: $(SV) $(wildcard *.hex)\n\t$(YOSYS) -q -l synth.log -p \"read_verilog -sv $(SV); synth -top $(TOP) -lut 6; stat\"\n\n",
             "report: synth.log\n\t@sh report.sh synth.log\n\n",
             "# An Fmax estimate: yosys maps to Xilinx 7-series cells (LUTs and carry chains, no DSPs) and its static timing\n",
             "# analysis adds their Artix-7 delays (yosys's cell library, from Project X-Ray); report.sh adds a routing allowance.\n",
             "sta.log: $(SV) $(wildcard *.hex)\n\t$(YOSYS) -q -l sta.log -p \"read_verilog -sv $(SV); synth_xilinx -family xc7 -abc9 -nodsp -top $(TIMING_TOP); ",
             "tee -o xc7_stat.txt stat; read_verilog -lib -specify +/xilinx/cells_sim.v; sta\" >/dev/null 2>&1 || { tail -20 sta.log; exit 1; }\n",
             "\t@# (sta warns of every output port of the sampled modules: its log has them)\n\n",
             "timing: sta.log\n\t@sh report.sh sta.log\n\n");
  m += "sim: obj_dir/Vtb\n\nobj_dir/Vtb: $(SV) tb.cpp model_io.h\n"
       "\t$(VERILATOR) --cc --exe --build -O3 -Wno-fatal -Wno-WIDTH --top-module $(TOP) $(SV) tb.cpp -CFLAGS -O2 -o Vtb > verilator.log\n\n"
       "run: obj_dir/Vtb\n\t./obj_dir/Vtb rlx_input.bin rlx_output.bin\n\n"
       "clean:\n\trm -rf obj_dir synth.json model.asc model.bin *.log tb.json\n";
  return m;
}

// The fully parallel form (parallel.h): no weight files, one datapath module.
std::map<std::string, std::string> emit_parallel(const Graph& lir, const Chain& c, const Part& part) {
  const ParallelProgram prog = parallel_program(c.fcs, cat("// Generated by `rlx export --target fpga:", part.name, "` from @", lir.name,
                                                           "; do not edit.\n// Fully parallel: every product a constant multiplier, every stage registered.\n"));
  std::map<std::string, std::string> files;
  files["model.sv"] = prog.sv;
  files["rlx_fpga.sv"] = kRlxFpgaSv;
  files["tb.cpp"] = kTbCpp;
  files["report.sh"] = kReportSh;
  files["model_io.h"] = io_header(c, 0);
  files["Makefile"] = makefile(part, "rlx_timing_sample");
  std::vector<std::string> layer_json;
  for (const Step& s : c.fcs)
    layer_json.push_back(cat("{\"label\":", json_quote(s.label), ",\"in\":", s.k, ",\"out\":", s.n, ",\"parallel\":", s.k * s.n, ",\"weights\":\"logic\"}"));
  files["model.json"] = cat("{\"model\":", json_quote(lir.name), ",\"part\":\"", part.name, "\",\"architecture\":\"fully-parallel\",\"input_bytes\":", c.fcs.front().k,
                            ",\"output_bytes\":", c.fcs.back().n, ",\"multipliers\":", prog.products, ",\"pipeline_cycles\":", prog.cycles,
                            ",\"cfg_bytes\":0,\"layers\":[", join(layer_json, ","), "]}\n");
  return files;
}

}  // namespace

std::map<std::string, std::string> emit_program(const ir::Graph& lir, const Part& part) {
  const std::vector<Step> steps = int8::schedule(lir, "fpga");
  const Chain c = chain_of(lir, steps);
  int64_t total_products = 0;
  for (const Step& s : c.fcs) total_products += s.k * s.n;
  if (c.all_fc() && total_products <= part.unroll_products) return emit_parallel(lir, c, part);
  std::vector<Layer> ls = plan_layers(c, part);
  std::map<std::string, std::string> files;
  std::string cfg;
  std::vector<std::string> layer_json;
  for (size_t i = 0; i < ls.size(); ++i) {
    const Layer& l = ls[i];
    const char* kind = l.step->kind == Step::Kind::fc ? "fc" : l.step->kind == Step::Kind::conv ? "conv" : "max_pool";
    if (l.step->kind != Step::Kind::max_pool) {
      const std::vector<uint8_t> w = weight_bytes(l);
      if (l.loadable) cfg.append(w.begin(), w.end());
      else files[cat("l", i, "_w.hex")] = hex_words(w, l.p);
      files[cat("l", i, "_q.hex")] = requant_words(*l.step);
    }
    layer_json.push_back(cat("{\"label\":", json_quote(l.step->label), ",\"kind\":\"", kind, "\",\"in\":", in_count(*l.step), ",\"out\":", out_count(*l.step),
                             ",\"parallel\":", l.step->kind == Step::Kind::max_pool ? 0 : l.p, ",\"weights\":\"",
                             l.step->kind == Step::Kind::max_pool ? "none" : l.loadable ? "spram" : "rom", "\",\"weight_bytes\":",
                             l.step->kind == Step::Kind::max_pool ? 0 : l.weight_bytes(), "}"));
  }
  const int64_t cfg_bytes = static_cast<int64_t>(cfg.size());
  files["model.sv"] = top_module(lir, ls, part, cfg_bytes);
  files["rlx_fpga.sv"] = kRlxFpgaSv;
  files["tb.cpp"] = kTbCpp;
  files["report.sh"] = kReportSh;
  files["model_io.h"] = io_header(c, cfg_bytes);
  files["Makefile"] = makefile(part, "rlx_model");
  if (cfg_bytes > 0) files["cfg.bin"] = cfg;
  int64_t multipliers = 0;
  for (const Layer& l : ls) multipliers += l.step->kind == Step::Kind::max_pool ? 0 : l.p;
  files["model.json"] = cat("{\"model\":", json_quote(lir.name), ",\"part\":\"", part.name, "\",\"input_bytes\":", in_count(*ls.front().step), ",\"output_bytes\":",
                            out_count(*ls.back().step), ",\"architecture\":\"mac-arrays\",\"multipliers\":", multipliers, ",\"cfg_bytes\":", cfg_bytes, ",\"layers\":[", join(layer_json, ","), "]}\n");
  return files;
}

}  // namespace rlx::codegen::fpga
