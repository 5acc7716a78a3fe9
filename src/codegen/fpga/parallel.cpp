#include "codegen/fpga/parallel.h"

#include <cstdlib>
#include <sstream>

#include "util/strings.h"

namespace rlx::codegen::fpga {

namespace {

using int8::Step;

constexpr int64_t kGroup = 8;  // products summed in one stage before the accumulator's

// Bits of a signed value whose magnitude is at most `bound`.
int64_t signed_bits(int64_t bound) {
  int64_t n = 1;
  while (bound >= (int64_t{1} << (n - 1))) ++n;
  return n;
}

std::string lit(int64_t bits, int64_t v) {  // a sized signed literal: -8'sd5
  return cat(v < 0 ? "-" : "", bits, "'sd", std::llabs(v));
}

// x·c as shifted copies of x added and subtracted: c in its non-adjacent form (digits −1, 0, 1,
// no two neighbours nonzero — the fewest terms), so synthesis builds adders on carry chains
// rather than a multiplier array it would have to simplify. `x` is a signed expression, widened
// to `bits` first. Returns signed terms ("+ …" or "- …"); none when c = 0.
std::vector<std::string> times_constant(const std::string& x, int64_t c, int64_t bits) {
  std::vector<std::string> terms;
  const std::string wide = cat(bits, "'(", x, ")");
  for (int shift = 0; c != 0; ++shift, c /= 2) {
    if (c % 2 == 0) continue;
    const int64_t digit = 2 - ((c % 4) + 4) % 4;  // c ≡ 1 (mod 4): +1; c ≡ 3: −1
    c -= digit;
    terms.push_back(cat(digit > 0 ? "+ " : "- ", shift == 0 ? wide : cat("(", wide, " <<< ", shift, ")")));
  }
  return terms;
}

// The terms as one expression: a leading "+ " dropped, a leading "- " kept as a negation.
std::string sum_terms(const std::vector<std::string>& terms) {
  std::string e;
  for (size_t i = 0; i < terms.size(); ++i) e += i == 0 ? (terms[i][0] == '+' ? terms[i].substr(2) : cat("-(", terms[i].substr(2), ")")) : cat(" ", terms[i]);
  return e;
}

// One neuron — an output of a layer — as a module of its own: x (the layer's input bytes) in, y
// out `stages` cycles later, every register written every cycle. Neurons share nothing but
// their input, so the slowest neuron's slowest stage is the datapath's critical path, and yosys
// can map (and time) each module alone.
struct Neuron {
  std::string sv;
  int64_t stages = 0;
  int64_t widest_sum = 0;  // terms in its longest sum (a group's products, or the accumulator's)
  int64_t m_terms = 0;     // terms of its longer requantization product
};

Neuron print_neuron(const Step& s, size_t li, int64_t j, int64_t& products) {
  const int64_t groups = s.k > kGroup ? (s.k + kGroup - 1) / kGroup : 0;
  // accumulator width: exact (|x| ≤ 128), at most the graph's 32 bits (which wrap)
  int64_t bound = std::llabs(s.has_bias ? s.bias[static_cast<size_t>(j)] : 0), gw = 1;
  for (int64_t g = 0; g * kGroup < s.k; ++g) {
    int64_t gb = 0;
    for (int64_t k = g * kGroup; k < std::min(s.k, (g + 1) * kGroup); ++k) gb += 128 * std::llabs(s.weights[static_cast<size_t>(j * s.k + k)]);
    gw = std::max(gw, signed_bits(gb));
    bound += gb;
  }
  const int64_t aw = std::min<int64_t>(signed_bits(bound), 32);
  auto sum_of = [&](int64_t k0, int64_t k1, int64_t bits) {
    std::vector<std::string> terms;
    for (int64_t k = k0; k < k1; ++k) {
      const int w = s.weights[static_cast<size_t>(j * s.k + k)];
      if (w == 0) continue;
      ++products;
      for (std::string& t : times_constant(cat("$signed(x[", 8 * k + 7, ":", 8 * k, "])"), w, bits)) terms.push_back(std::move(t));
    }
    return terms;
  };
  std::ostringstream decl, body;
  Neuron n;
  // stage: products summed in groups of kGroup (only when the row is longer than that)
  std::vector<std::string> acc_terms;
  if (groups > 0) {
    ++n.stages;
    for (int64_t g = 0; g < groups; ++g) {
      std::vector<std::string> terms = sum_of(g * kGroup, std::min(s.k, (g + 1) * kGroup), gw);
      if (terms.empty()) continue;
      decl << "  logic signed [" << gw - 1 << ":0] g" << g << ";\n";
      body << "    g" << g << " <= " << sum_terms(terms) << ";\n";
      acc_terms.push_back(cat("+ ", aw, "'(g", g, ")"));
      n.widest_sum = std::max<int64_t>(n.widest_sum, static_cast<int64_t>(terms.size()));
    }
  } else {
    acc_terms = sum_of(0, s.k, aw);
  }
  ++n.stages;  // the accumulator: bias + Σ
  const int64_t b = s.has_bias ? s.bias[static_cast<size_t>(j)] : 0;
  if (b != 0 || acc_terms.empty()) acc_terms.insert(acc_terms.begin(), cat("+ ", lit(aw, b)));
  n.widest_sum = std::max<int64_t>(n.widest_sum, static_cast<int64_t>(acc_terms.size()));
  decl << "  logic signed [" << aw - 1 << ":0] acc;\n";
  body << "    acc <= " << sum_terms(acc_terms) << ";\n";
  // requantize: y = clamp(ZP + ⌊(acc·M + 2^(s−1)) / 2^s⌋, LO, HI) — M in halves of 16 and 15 bits
  // (two narrower constant products), their sum with the rounding term, then the shift (wiring),
  // the zero point and the clamp: a stage each
  const int64_t m = s.mult[static_cast<size_t>(j)];
  const int sh = s.shift[static_cast<size_t>(j)];
  const int64_t pw = std::max<int64_t>(aw + 33, sh + 2);
  n.stages += 3;
  std::vector<std::string> lo = times_constant("acc", m & 0xffff, aw + 17), hi = times_constant("acc", m >> 16, aw + 16);
  n.m_terms = static_cast<int64_t>(std::max(lo.size(), hi.size()));
  decl << "  logic signed [" << aw + 16 << ":0] ml;\n  logic signed [" << aw + 15 << ":0] mh;\n  logic signed [" << pw - 1 << ":0] p;\n"
       << "  wire signed [" << pw - 1 << ":0] r = (p >>> " << sh << ") + " << lit(pw, s.out_zero_point) << ";\n";
  body << "    ml <= " << (lo.empty() ? std::string("'0") : sum_terms(lo)) << ";\n"
       << "    mh <= " << (hi.empty() ? std::string("'0") : sum_terms(hi)) << ";\n"
       << "    p <= (" << pw << "'(mh) <<< 16) + " << pw << "'(ml)" << (sh > 0 ? cat(" + ", pw, "'sd", (uint64_t{1} << (sh - 1))) : std::string()) << ";\n"
       << "    y <= r < " << lit(pw, s.lo) << " ? " << lit(8, s.lo) << " : r > " << lit(pw, s.hi) << " ? " << lit(8, s.hi) << " : r[7:0];\n";
  std::ostringstream v;
  v << "// " << s.label << ", output " << j << " of " << s.n << ": accumulator of " << aw << " bits, requantized by " << m << " / 2^" << sh << "\n"
    << "module rlx_l" << li << "_n" << j << " (input wire clk, input wire [" << 8 * s.k - 1 << ":0] x, output logic signed [7:0] y);\n"
    << decl.str() << "  always_ff @(posedge clk) begin\n" << body.str() << "  end\nendmodule\n\n";
  n.sv = v.str();
  return n;
}

}  // namespace

ParallelProgram parallel_program(const std::vector<Step>& fcs, const std::string& header) {
  ParallelProgram prog;
  const int64_t n_in = fcs.front().k, n_out = fcs.back().n;
  std::ostringstream modules, wires, insts, valid, sample;
  std::string in = "x", v_in = "x_valid";
  int64_t widest_in = 0, sampled = 0;
  for (const Step& s : fcs) widest_in = std::max(widest_in, s.k);
  for (size_t i = 0; i < fcs.size(); ++i) {
    const Step& s = fcs[i];
    int64_t stages = 0;
    const std::string out = cat("a", i + 1);
    wires << "  wire [" << 8 * s.n - 1 << ":0] " << out << ";  // " << s.label << "\n";
    int64_t most_sum = -1, most_m = -1, most_sum_j = 0, most_m_j = 0;
    for (int64_t j = 0; j < s.n; ++j) {
      Neuron n = print_neuron(s, i, j, prog.products);
      if (n.widest_sum > most_sum) most_sum = n.widest_sum, most_sum_j = j;
      if (n.m_terms > most_m) most_m = n.m_terms, most_m_j = j;
      stages = n.stages;
      modules << n.sv;
      insts << "  rlx_l" << i << "_n" << j << " l" << i << "_n" << j << " (.clk(clk), .x(" << in << "), .y(" << out << "[" << 8 * j + 7 << ":" << 8 * j << "]));\n";
    }
    for (int64_t j : most_sum_j == most_m_j ? std::vector<int64_t>{most_sum_j} : std::vector<int64_t>{most_sum_j, most_m_j}) {
      sample << "  rlx_l" << i << "_n" << j << " s" << sampled << " (.clk(clk), .x(x[" << 8 * s.k - 1 << ":0]), .y(y[" << 8 * sampled + 7 << ":" << 8 * sampled << "]));\n";
      ++sampled;
    }
    wires << "  logic [" << stages - 1 << ":0] v" << i + 1 << ";  // the valid bit through its " << stages << " stages\n";
    valid << "    v" << i + 1 << " <= {v" << i + 1 << (stages > 1 ? cat("[", stages - 2, ":0]") : std::string()) << ", " << v_in << "};\n";
    v_in = cat("v", i + 1, "[", stages - 1, "]");
    prog.cycles += stages;
    in = out;
  }
  std::ostringstream v;
  v << header << "`default_nettype none\n\n" << modules.str();
  // the argmax (the first of equal maxima, as numpy.argmax): a tree of compares, a register a
  // level; it runs beside the output stream, after the datapath's latency
  v << "// The argmax of the outputs (the first of equal maxima, as numpy.argmax): pairs compared a level a\n"
    << "// cycle, the lower index winning ties.\n"
    << "module rlx_argmax (input wire clk, input wire x_valid, input wire [" << 8 * n_out - 1 << ":0] x, output wire at_valid, output wire [7:0] at);\n";
  std::vector<std::pair<std::string, std::string>> cand;  // (value, index) expressions
  for (int64_t j = 0; j < n_out; ++j) cand.push_back({cat("$signed(x[", 8 * j + 7, ":", 8 * j, "])"), cat("8'd", j)});
  std::string valid_at = "x_valid";
  std::ostringstream tree;
  for (int level = 1; cand.size() > 1; ++level) {
    std::vector<std::pair<std::string, std::string>> next;
    for (size_t m = 0; m < cand.size(); m += 2) {
      const std::string val = cat("v", level, "_", m / 2), idx = cat("i", level, "_", m / 2);
      v << "  logic signed [7:0] " << val << ";\n  logic [7:0] " << idx << ";\n";
      if (m + 1 < cand.size())
        tree << "    " << val << " <= " << cand[m + 1].first << " > " << cand[m].first << " ? " << cand[m + 1].first << " : " << cand[m].first << ";\n    " << idx
             << " <= " << cand[m + 1].first << " > " << cand[m].first << " ? " << cand[m + 1].second << " : " << cand[m].second << ";\n";
      else
        tree << "    " << val << " <= " << cand[m].first << ";\n    " << idx << " <= " << cand[m].second << ";\n";
      next.push_back({val, idx});
    }
    v << "  logic av" << level << ";\n";
    tree << "    av" << level << " <= " << valid_at << ";\n";
    valid_at = cat("av", level);
    cand = next;
  }
  v << "  always_ff @(posedge clk) begin\n" << tree.str() << "  end\n  assign at_valid = " << valid_at << ";\n  assign at = " << cand[0].second
    << ";\nendmodule\n\n";
  v << "// The datapath: an input vector in, its outputs " << prog.cycles << " cycles later; a new input every cycle.\n"
    << "module rlx_datapath (\n    input  wire clk,\n    input  wire x_valid,\n    input  wire [" << 8 * n_in - 1 << ":0] x,\n"
    << "    output wire y_valid,\n    output wire [" << 8 * n_out - 1 << ":0] y\n);\n"
    << wires.str() << insts.str() << "  assign y = " << in << ";\n  assign y_valid = " << v_in << ";\n"
    << "  always_ff @(posedge clk) begin\n" << valid.str() << "  end\nendmodule\n\n";
  // the byte streams around it
  v << "// The streams: " << n_in << " input bytes gathered into a vector, the datapath, then " << n_out
    << " output bytes and the argmax (out_last).\n// Nothing to configure: cfg_ready stays low.\n"
    << "module rlx_model (\n"
    << "    input  wire       clk,\n    input  wire       rst,\n"
    << "    input  wire       cfg_valid,\n    input  wire [7:0] cfg_data,\n    output wire       cfg_ready,\n"
    << "    input  wire       in_valid,\n    input  wire [7:0] in_data,\n    output wire       in_ready,\n"
    << "    output wire       out_valid,\n    output wire [7:0] out_data,\n    output wire       out_last,\n    input  wire       out_ready\n);\n"
    << "  localparam [1:0] S_IN = 0, S_RUN = 1, S_OUT = 2;\n  localparam integer N_IN = " << n_in << ", N_OUT = " << n_out << ";\n"
    << "  logic [1:0] state;\n  logic [15:0] count;\n  logic go;\n  wire done, am_valid;\n  logic [" << 8 * n_in - 1 << ":0] x;\n  wire [" << 8 * n_out - 1
    << ":0] y;\n  logic [" << 8 * n_out - 1 << ":0] obuf;\n  wire [7:0] am_at;\n  logic [7:0] best_at;\n"
    << "  rlx_datapath dp (.clk(clk), .x_valid(go), .x(x), .y_valid(done), .y(y));\n"
    << "  rlx_argmax am (.clk(clk), .x_valid(done), .x(y), .at_valid(am_valid), .at(am_at));\n"
    << "  assign cfg_ready = 1'b0;\n  assign in_ready = state == S_IN;\n  assign out_valid = state == S_OUT;\n"
    << "  assign out_last = count == 16'(N_OUT);\n  assign out_data = out_last ? best_at : obuf[8*count[7:0]+:8];\n"
    << "  always_ff @(posedge clk) begin\n    go <= 1'b0;\n"
    << "    if (rst) begin\n      state <= S_IN;\n      count <= 16'd0;\n    end else begin\n      case (state)\n"
    << "        S_IN:\n        if (in_valid) begin\n          x[8*count[7:0]+:8] <= in_data;\n"
    << "          if (count == 16'(N_IN - 1)) begin\n            count <= 16'd0;\n            go <= 1'b1;\n            state <= S_RUN;\n"
    << "          end else count <= count + 16'd1;\n        end\n"
    << "        S_RUN: begin  // the outputs, then their argmax\n          if (done) obuf <= y;\n          if (am_valid) begin\n            best_at <= am_at;\n"
    << "            state <= S_OUT;\n          end\n        end\n"
    << "        S_OUT:\n        if (out_ready) begin\n          if (out_last) begin\n            count <= 16'd0;\n            state <= S_IN;\n"
    << "          end else count <= count + 16'd1;\n        end\n        default: state <= S_IN;\n      endcase\n    end\n  end\nendmodule\n\n`default_nettype wire\n";
  // what `make timing` maps and times: per layer the neuron with the longest sum and the one with
  // the longest requantization product (every neuron's registers are its own, so its stages'
  // depths follow those term counts), and the argmax
  v << "// For the timing estimate (make timing): per layer the neuron with the longest sum and the one with the\n"
    << "// longest requantization product, and the argmax — the stages every other neuron has, at their deepest.\n"
    << "module rlx_timing_sample (input wire clk, input wire x_valid, input wire [" << 8 * std::max(widest_in, n_out) - 1 << ":0] x, output wire [" << 8 * sampled - 1
    << ":0] y, output wire am_valid, output wire [7:0] am_at);\n"
    << sample.str() << "  rlx_argmax am (.clk(clk), .x_valid(x_valid), .x(x[" << 8 * n_out - 1 << ":0]), .at_valid(am_valid), .at(am_at));\nendmodule\n";
  prog.sv = v.str();
  return prog;
}

}  // namespace rlx::codegen::fpga
