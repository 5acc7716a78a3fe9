#include "codegen/cortexm/emit.h"

#include <cinttypes>
#include <cstdio>
#include <sstream>

#include "codegen/int8/layers.h"
#include "cortexm_runtime.h"  // generated: the files of runtime/ as strings
#include "passes/memory_plan.h"
#include "codegen/dialect_c.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::codegen::cortexm {

namespace {

using int8::Step;
using ir::Graph;
using ir::Op;
using ir::ValueId;

}  // namespace

const std::vector<Core>& cores() {
  // QEMU's boards (ENV.md §4): mps2-an386 (M4) and mps2-an500 (M7) map 4 MiB of SSRAM at 0 and at
  // 0x20000000; mps3-an547 (M55) has 512 KiB of ITCM at 0 and of DTCM at 0x20000000.
  static const std::vector<Core> all = {
      {"cortex-m4", "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16", "mps2-an386", "cortex-m4", "DSP (SXTB16 + SMLAD)", 0x0, 4u << 20, 0x20000000u, 4u << 20, true},
      {"cortex-m7", "-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16", "mps2-an500", "cortex-m7", "DSP (SXTB16 + SMLAD)", 0x0, 4u << 20, 0x20000000u, 4u << 20, true},
      {"cortex-m55", "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard", "mps3-an547", "cortex-m55", "Helium (MVE: VMLADAVA)", 0x0, 512u << 10, 0x20000000u, 512u << 10, false},
  };
  return all;
}

const Core& core(const std::string& name) {
  for (const Core& c : cores())
    if (name == c.name) return c;
  std::vector<std::string> names;
  for (const Core& c : cores()) names.push_back(c.name);
  throw Error(ErrorKind::invalid_argument, cat("unknown Cortex-M core '", name, "' (", join(names), ")"));
}

namespace {

// The arena: RLX's memory planner over a graph of the steps themselves (one node per kernel
// call), so that the i32 accumulators a step keeps in registers take no bytes.
struct ArenaPlan {
  int64_t bytes = 0;
  int64_t peak_live = 0;  // the most bytes of values live at once (no alignment, no gaps)
  std::map<ValueId, int64_t> offset;  // LIR value → byte offset in the arena
  std::vector<int64_t> scratch;       // per step: the offset of its scratch, or -1
};

ArenaPlan plan_arena(const Graph& lir, const std::vector<Step>& steps) {
  Graph kg;
  kg.name = lir.name;
  std::map<ValueId, ValueId> kv;  // LIR value → step-graph value
  // The application writes each input into the arena before a run: a node without inputs stands
  // for that write, so the inputs are placed like any other value.
  for (ValueId v : lir.inputs()) kv[v] = kg.add_node(Op::iota, {}, {}, {lir.type(v)}, "input")[0];
  std::vector<std::pair<int, ValueId>> scratch_of;  // step index, its scratch value
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    std::vector<ValueId> ins;
    for (ValueId v : {s.in, s.in2}) {
      if (v == ir::kNoValue) continue;
      if (!kv.count(v)) throw Error(ErrorKind::internal, cat("cortex-m: step ", i, " reads a value no earlier step wrote"));
      ins.push_back(kv.at(v));
    }
    std::vector<ir::Type> outs = {lir.type(s.out)};
    if (s.scratch_bytes > 0) outs.push_back({DType::i8, Shape{Dim(s.scratch_bytes)}});
    Op op = s.kind == Step::Kind::view ? Op::reshape : Op::dot_general;  // only views matter to the planner
    std::vector<ValueId> o = kg.add_node(op, ins, {}, outs, s.label);
    kv[s.out] = o[0];
    if (o.size() > 1) scratch_of.emplace_back(static_cast<int>(i), o[1]);
  }
  std::vector<ValueId> outs;
  for (ValueId v : lir.outputs()) {
    if (!kv.count(v)) throw Error(ErrorKind::internal, "cortex-m: a graph output is not written by any step");
    outs.push_back(kv.at(v));
  }
  kg.set_outputs(outs);
  passes::PlanOptions po;
  po.in_place = false;  // a kernel reads all of its input while it writes its output
  po.verify = false;    // the nodes are kernel calls, not ops
  po.alignment = 8;     // words and doublewords: all the kernels load
  Graph planned = passes::plan_memory(kg, po);

  ArenaPlan p;
  p.bytes = planned.arena_bytes;
  auto at = [&](ValueId v) {
    ValueId root = passes::placement_root(planned, v);
    return planned.placement[static_cast<size_t>(root)].offset + passes::placement_offset(planned, v);
  };
  for (const auto& [lv, k] : kv) p.offset[lv] = at(k);
  p.scratch.assign(steps.size(), -1);
  for (const auto& [i, v] : scratch_of) p.scratch[static_cast<size_t>(i)] = at(v);

  // Liveness of each root buffer over the step graph: from its writer to its last reader.
  const int n = planned.num_nodes();
  std::map<ValueId, std::pair<int, int>> live;
  for (int i = 0; i < n; ++i) {
    for (ValueId o : planned.node(i).outputs)
      if (planned.placement[static_cast<size_t>(o)].kind == ir::Placement::Kind::arena) live[o] = {i, i};
    for (ValueId in : planned.node(i).inputs) {
      ValueId r = passes::placement_root(planned, in);
      if (live.count(r)) live[r].second = std::max(live[r].second, i);
    }
  }
  for (ValueId v : planned.outputs()) {
    ValueId r = passes::placement_root(planned, v);
    if (live.count(r)) live[r].second = n;
  }
  for (int i = 0; i <= n; ++i) {
    int64_t sum = 0;
    for (const auto& [v, range] : live)
      if (range.first <= i && i <= range.second) sum += planned.placement[static_cast<size_t>(v)].bytes;
    p.peak_live = std::max(p.peak_live, sum);
  }
  return p;
}

template <class T>
std::string c_array(const char* type, const std::string& name, const std::vector<T>& v) {
  std::ostringstream s;
  s << "static const " << type << " " << name << "[" << v.size() << "] __attribute__((aligned(4))) = {";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i % 24 == 0) s << "\n  ";
    s << static_cast<int64_t>(v[i]) << (i + 1 < v.size() ? "," : "");
  }
  s << "\n};\n";
  return s.str();
}

// A C float literal that reads back as the same float (the C dialect's).
std::string c_float(float f) { return c99().literal(f, ValueClass::floating); }

std::string ptr(const char* type, int64_t offset) { return cat("(", type, "*)(rlx_arena + ", offset, ")"); }

// A C string literal (model.h's names).
std::string c_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out + "\"";
}

std::string type_text(const Graph& g, ValueId v) { return ir::type_str(g.type(v)); }

struct Program {
  std::string model_c, model_h, json;
  int64_t weight_bytes = 0;
};

Program print_model(const Graph& lir, const std::vector<Step>& steps, const ArenaPlan& plan, const Core& core) {
  std::ostringstream consts, body;
  int64_t weight_bytes = 0;
  std::vector<std::string> step_json;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const int64_t in = plan.offset.at(s.in), out = plan.offset.at(s.out);
    std::string call;
    switch (s.kind) {
      case Step::Kind::view: continue;
      case Step::Kind::quantize:
        call = cat("rlx_quantize_f32_s8(", ptr("const float", in), ", ", s.count, ", ", c_float(s.scale), ", ", s.zero_point, ", ", ptr("int8_t", out), ");");
        break;
      case Step::Kind::dequantize:
        call = cat("rlx_dequantize_s8_f32(", ptr("const int8_t", in), ", ", s.count, ", ", c_float(s.scale), ", ", s.zero_point, ", ", ptr("float", out), ");");
        break;
      case Step::Kind::max_pool:
        consts << cat("static const rlx_pool_t p", i, " = {", s.batch, ", ", s.h, ", ", s.w, ", ", s.oh, ", ", s.ow, ", ", s.kh, ", ", s.kw, ", ", s.stride_h, ", ", s.stride_w,
                      ", ", s.pad_top, ", ", s.pad_left, "};\n");
        call = cat("rlx_max_pool_s8(", ptr("const int8_t", in), ", &p", i, ", ", ptr("int8_t", out), ");");
        break;
      case Step::Kind::add:
        consts << cat("static const rlx_add_t a", i, " = {", s.a_offset, ", ", s.a_mult, ", ", s.a_shift, ", ", s.b_offset, ", ", s.b_mult, ", ", s.b_shift, ", ", s.mult[0],
                      ", ", static_cast<int>(s.shift[0]), ", ", s.out_zero_point, ", ", s.lo, ", ", s.hi, "};\n");
        call = cat("rlx_add_s8(", ptr("const int8_t", in), ", ", ptr("const int8_t", plan.offset.at(s.in2)), ", ", s.count, ", &a", i, ", ", ptr("int8_t", out), ");");
        break;
      case Step::Kind::softmax:
        consts << "\n/* " << s.label << ": exp(−scale·d) in fixed point for d = max − x */\n" << c_array("int32_t", cat("t", i), s.table);
        consts << cat("static const rlx_softmax_t x", i, " = {", s.rows, ", ", s.n, ", t", i, ", ", s.numerator, ", ", static_cast<int>(s.shift[0]), ", ", s.out_zero_point,
                      ", ", s.lo, ", ", s.hi, "};\n");
        weight_bytes += static_cast<int64_t>(s.table.size() * 4);
        call = cat("rlx_softmax_s8(", ptr("const int8_t", in), ", &x", i, ", ", ptr("int8_t", out), ");");
        break;
      case Step::Kind::fc:
      case Step::Kind::conv: {
        consts << "\n/* " << s.label << " */\n";
        consts << c_array("int8_t", cat("w", i), s.weights);
        if (s.has_bias) consts << c_array("int32_t", cat("b", i), s.bias);
        consts << c_array("int32_t", cat("m", i), s.mult) << c_array("int8_t", cat("s", i), s.shift);
        consts << cat("static const rlx_requant_t q", i, " = {", s.has_bias ? cat("b", i) : "0", ", m", i, ", s", i, ", ", s.out_zero_point, ", ", s.lo, ", ", s.hi, "};\n");
        weight_bytes += static_cast<int64_t>(s.weights.size() + s.bias.size() * 4 + s.mult.size() * 4 + s.shift.size());
        if (s.kind == Step::Kind::fc) {
          call = cat("rlx_fc_s8(", ptr("const int8_t", in), ", w", i, ", ", s.rows, ", ", s.k, ", ", s.n, ", &q", i, ", ", ptr("int8_t", out), ", ",
                     plan.scratch[i] >= 0 ? ptr("void", plan.scratch[i]) : "0", ");");
        } else {
          consts << cat("static const rlx_conv_t c", i, " = {", s.batch, ", ", s.cin, ", ", s.h, ", ", s.w, ", ", s.cout, ", ", s.kh, ", ", s.kw, ", ", s.oh, ", ", s.ow, ", ",
                        s.stride_h, ", ", s.stride_w, ", ", s.dil_h, ", ", s.dil_w, ", ", s.pad_top, ", ", s.pad_left, ", ", s.groups, ", ", static_cast<int>(s.pad_value), "};\n");
          const bool x16 = core.dsp && s.scratch_bytes > s.k;  // the unpacked column after the gathered one
          call = cat("rlx_conv_s8(", ptr("const int8_t", in), ", w", i, ", &c", i, ", &q", i, ", ", ptr("int8_t", out), ", ", ptr("int8_t", plan.scratch[i]), ", ",
                     x16 ? ptr("void", plan.scratch[i] + ((s.k + 7) & ~int64_t{7})) : "0", ");");
        }
        break;
      }
    }
    body << "  /* " << s.label << ": " << type_text(lir, s.in) << " -> " << type_text(lir, s.out) << " */\n  " << call << "\n";
    const char* kind = "dequantize";
    switch (s.kind) {
      case Step::Kind::fc: kind = "fc"; break;
      case Step::Kind::conv: kind = "conv"; break;
      case Step::Kind::max_pool: kind = "max_pool"; break;
      case Step::Kind::add: kind = "add"; break;
      case Step::Kind::softmax: kind = "softmax"; break;
      case Step::Kind::quantize: kind = "quantize"; break;
      default: break;
    }
    step_json.push_back(cat("{\"kernel\":\"", kind, "\",\"label\":", json_quote(s.label), ",\"in\":", json_quote(type_text(lir, s.in)), ",\"out\":",
                            json_quote(type_text(lir, s.out)), ",\"in_offset\":", in, ",\"out_offset\":", out,
                            plan.scratch[i] >= 0 ? cat(",\"scratch_offset\":", plan.scratch[i], ",\"scratch_bytes\":", s.scratch_bytes) : "", "}"));
  }

  std::ostringstream io_c, h;
  std::vector<std::string> in_bytes, out_bytes, in_names, out_names, in_at, out_at;
  for (size_t i = 0; i < lir.inputs().size(); ++i) {
    ValueId v = lir.inputs()[i];
    in_bytes.push_back(cat(dtype_bytes(lir.type(v).dtype, shape_numel(lir.type(v).shape).value())));
    in_names.push_back(c_string(lir.value(v).name.empty() ? cat("input", i) : lir.value(v).name));
    in_at.push_back(cat(plan.offset.at(v)));
  }
  for (size_t i = 0; i < lir.outputs().size(); ++i) {
    ValueId v = lir.outputs()[i];
    out_bytes.push_back(cat(dtype_bytes(lir.type(v).dtype, shape_numel(lir.type(v).shape).value())));
    out_names.push_back(c_string(lir.value(v).name.empty() ? cat("output", i) : lir.value(v).name));
    out_at.push_back(cat(plan.offset.at(v)));
  }

  h << "/* Generated by `rlx export --target " << core.name << "` from @" << lir.name << "; do not edit.\n"
    << " * The model's only RAM is rlx_arena (RLX_ARENA_BYTES, planned by RLX: inputs, activations, outputs)\n"
    << " * and the stack of rlx_model_run; its weights are const arrays (flash). */\n"
    << "#ifndef RLX_MODEL_H\n#define RLX_MODEL_H\n#include <stdint.h>\n\n"
    << "#define RLX_MODEL_NAME " << c_string(lir.name) << "\n#define RLX_CORE " << c_string(core.name) << "\n"
    << "#define RLX_ARENA_BYTES " << plan.bytes << "\n#define RLX_PEAK_LIVE_BYTES " << plan.peak_live << "\n"
    << "#define RLX_MODEL_INPUTS " << in_bytes.size() << "\n#define RLX_MODEL_OUTPUTS " << out_bytes.size() << "\n\n"
    << "extern const uint32_t rlx_input_bytes[RLX_MODEL_INPUTS], rlx_output_bytes[RLX_MODEL_OUTPUTS];\n"
    << "extern const char* const rlx_input_names[RLX_MODEL_INPUTS];\nextern const char* const rlx_output_names[RLX_MODEL_OUTPUTS];\n"
    << "/* Where input i is written before a run, and output i is read after it (inside the arena). */\n"
    << "void* rlx_model_input(int i);\nconst void* rlx_model_output(int i);\n"
    << "/* One inference: no allocation, no interpreter — the kernel calls of the graph in order. */\n"
    << "void rlx_model_run(void);\n\n#endif\n";

  std::ostringstream c;
  c << "/* Generated by `rlx export --target " << core.name << "` from @" << lir.name << "; do not edit. */\n"
    << "#include \"model.h\"\n#include \"rlx_cm.h\"\n\n"
    << "static uint8_t rlx_arena[RLX_ARENA_BYTES] __attribute__((aligned(16)));\n\n"
    << "const uint32_t rlx_input_bytes[RLX_MODEL_INPUTS] = {" << join(in_bytes) << "};\n"
    << "const uint32_t rlx_output_bytes[RLX_MODEL_OUTPUTS] = {" << join(out_bytes) << "};\n"
    << "const char* const rlx_input_names[RLX_MODEL_INPUTS] = {" << join(in_names) << "};\n"
    << "const char* const rlx_output_names[RLX_MODEL_OUTPUTS] = {" << join(out_names) << "};\n"
    << "static const uint32_t rlx_input_at[RLX_MODEL_INPUTS] = {" << join(in_at) << "};\n"
    << "static const uint32_t rlx_output_at[RLX_MODEL_OUTPUTS] = {" << join(out_at) << "};\n"
    << "void* rlx_model_input(int i) { return rlx_arena + rlx_input_at[i]; }\n"
    << "const void* rlx_model_output(int i) { return rlx_arena + rlx_output_at[i]; }\n"
    << consts.str() << "\nvoid rlx_model_run(void) {\n"
    << body.str() << "}\n";

  Program p;
  p.model_c = c.str();
  p.model_h = h.str();
  p.weight_bytes = weight_bytes;
  p.json = cat("{\"model\":", json_quote(lir.name), ",\"core\":\"", core.name, "\",\"kernels\":\"", core.isa, "\",\"arena_bytes\":", plan.bytes,
               ",\"peak_live_bytes\":", plan.peak_live, ",\"weight_bytes\":", weight_bytes, ",\"steps\":[", join(step_json, ","), "]}\n");
  return p;
}

std::string linker_script(const Core& c) {
  char mem[256];
  std::snprintf(mem, sizeof mem, "  FLASH (rx) : ORIGIN = 0x%08" PRIx32 ", LENGTH = %" PRIu32 "K\n  RAM (rwx)  : ORIGIN = 0x%08" PRIx32 ", LENGTH = %" PRIu32 "K\n", c.flash_origin,
                c.flash_bytes >> 10, c.ram_origin, c.ram_bytes >> 10);
  return cat("/* link.ld — ", c.name, " on QEMU's ", c.qemu_board,
             ". Code and weights in FLASH; .data, .bss (the arena), the heap newlib's stdio uses for\n"
             " * the test runner, and 16 KiB of stack at the top of RAM. .data keeps its load address equal to\n"
             " * its run address: QEMU loads it in place. */\nMEMORY\n{\n",
             mem,
             "}\n\nENTRY(Reset_Handler)\n\nSECTIONS\n{\n"
             "  .text : {\n    KEEP(*(.vectors))\n    *(.text*)\n    *(.rodata*)\n    . = ALIGN(4);\n  } > FLASH\n"
             "  .ARM.exidx : { *(.ARM.exidx*) } > FLASH\n"
             "  .init_array : {\n    PROVIDE_HIDDEN(__preinit_array_start = .); PROVIDE_HIDDEN(__preinit_array_end = .);\n"
             "    PROVIDE_HIDDEN(__init_array_start = .); KEEP(*(.init_array*)) PROVIDE_HIDDEN(__init_array_end = .);\n"
             "    PROVIDE_HIDDEN(__fini_array_start = .); KEEP(*(.fini_array*)) PROVIDE_HIDDEN(__fini_array_end = .);\n  } > FLASH\n"
             "  .data : { *(.data*) . = ALIGN(4); } > RAM\n"
             "  .bss (NOLOAD) : { __bss_start__ = .; *(.bss*) *(COMMON) . = ALIGN(4); __bss_end__ = .; } > RAM\n"
             "  end = .;\n  __end__ = .;\n"
             "  __stack_top = ORIGIN(RAM) + LENGTH(RAM);\n  __stack_limit = __stack_top - 16K;\n"
             "  ASSERT(__end__ <= __stack_limit, \"the program's RAM overlaps its stack\")\n}\n");
}

std::string makefile(const Core& c) {
  return cat(
      "# Generated by `rlx export --target ", c.name, "`. Needs arm-none-eabi-gcc, newlib and qemu-system-arm\n",
      "# (Debian: gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm).\n",
      "#   make            model.elf (", c.isa, " kernels) and model_plain.elf (the plain-C baseline)\n",
      "#   make run        runs model.elf under QEMU: rlx_input.bin -> rlx_output.bin (RUN_ELF=model_plain.elf for the baseline)\n",
      "#   make size       flash and RAM of the model (code, weights, arena) in both builds\n",
      "#   make icount     guest instructions per inference of both builds (a QEMU plugin counts them)\n",
      "CC = arm-none-eabi-gcc\nSIZE = arm-none-eabi-size\nQEMU = qemu-system-arm\nHOSTCC = cc\n",
      "CPU = ", c.cflags, "\n",
      "CFLAGS = $(CPU) -O2 -std=c99 -Wall -Wextra -ffunction-sections -fdata-sections\n",
      "LDFLAGS = $(CPU) --specs=rdimon.specs -nostartfiles -T link.ld -Wl,--gc-sections -lm\n",
      "BOARD = -M ", c.qemu_board, " -cpu ", c.qemu_cpu, " -nographic -monitor none -serial none -semihosting-config enable=on,target=native\n",
      "SRC = main.c model.c startup.c\nDEPS = $(SRC) model.h rlx_cm.h link.ld Makefile\nRUN_ELF = model.elf\n\n",
      ".PHONY: all run size icount clean\n\n",
      "all: model.elf model_plain.elf\n\n",
      "model.elf: $(DEPS)\n\t$(CC) $(CFLAGS) $(SRC) $(LDFLAGS) -o $@\n\n",
      "model_plain.elf: $(DEPS)\n\t$(CC) $(CFLAGS) -DRLX_CM_PLAIN $(SRC) $(LDFLAGS) -o $@\n\n",
      "run: $(RUN_ELF)\n\t$(QEMU) $(BOARD) -kernel $(RUN_ELF)\n\n",
      "model.o: model.c model.h rlx_cm.h Makefile\n\t$(CC) $(CFLAGS) -c model.c -o $@\n\n",
      "model_plain.o: model.c model.h rlx_cm.h Makefile\n\t$(CC) $(CFLAGS) -DRLX_CM_PLAIN -c model.c -o $@\n\n",
      "# text = code + weights (flash); bss = the arena (RAM); the stack is measured by `make run`.\n",
      "size: model.o model_plain.o model.elf\n\t$(SIZE) model.o model_plain.o\n\t$(SIZE) model.elf\n\n",
      "insn_count.so: insn_count.c\n\t$(HOSTCC) -O2 -shared -fPIC insn_count.c -o $@\n\n",
      "# instructions per inference and per kernel, DSP/MVE build against the plain-C one (icount.sh)\n",
      "icount: insn_count.so rlx_input.bin\n",
      "\tCC=\"$(CC)\" CFLAGS=\"$(CFLAGS)\" SRC=\"$(SRC)\" LDFLAGS=\"$(LDFLAGS)\" NM=arm-none-eabi-nm QEMU=\"$(QEMU)\" BOARD=\"$(BOARD)\" sh icount.sh\n\n",
      "clean:\n\trm -f *.elf *.o *.so profile_*.txt funcs_*.txt icount.json rlx_output.bin\n");
}

}  // namespace

std::map<std::string, std::string> emit_program(const ir::Graph& lir, const Core& core) {
  std::vector<Step> steps = int8::schedule(lir, "cortex-m");
  // The DSP cores' fully connected kernel unpacks a row of x to halfword pairs once for all its
  // outputs (Helium multiplies bytes directly and needs no scratch).
  if (core.dsp)
    for (Step& s : steps) {
      if (s.kind == Step::Kind::fc && s.k >= 8) s.scratch_bytes = 2 * (s.k & ~int64_t{3});
      // a convolution's gathered column, unpacked likewise (depthwise ones use their plane instead)
      // (worth its unpacking where a column serves at least sixteen channels)
      if (s.kind == Step::Kind::conv && !s.depthwise() && s.k >= 8 && s.cout / s.groups >= 16) s.scratch_bytes = ((s.k + 7) & ~int64_t{7}) + 2 * (s.k & ~int64_t{3});
    }
  ArenaPlan plan = plan_arena(lir, steps);
  Program p = print_model(lir, steps, plan, core);
  return {{"model.c", p.model_c},
          {"model.h", p.model_h},
          {"model.json", p.json},
          {"rlx_cm.h", kRlxCmH},
          {"main.c", kMainC},
          {"startup.c", kStartupC},
          {"insn_count.c", kInsnCountC},
          {"icount.sh", kIcountSh},
          {"link.ld", linker_script(core)},
          {"Makefile", makefile(core)}};
}

}  // namespace rlx::codegen::cortexm
