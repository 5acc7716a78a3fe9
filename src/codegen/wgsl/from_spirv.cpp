#include "codegen/wgsl/from_spirv.h"

#include <spirv/unified1/GLSL.std.450.h>
#include <spirv/unified1/spirv.hpp>

#include <array>
#include <map>
#include <set>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::codegen::wgsl {

namespace {

using Id = uint32_t;

struct Insn {
  spv::Op op;
  std::vector<uint32_t> w;  // the operands (the words after the opcode word)
};

struct Type {
  enum Kind { void_, bool_, int_, float_, vector, array, runtime_array, struct_, pointer, function } kind = void_;
  bool is_signed = false;
  Id element = 0;  // vector/array/pointer target
  uint32_t count = 0;  // vector size; array length (a constant's value)
  std::vector<Id> members;
  spv::StorageClass storage = spv::StorageClassFunction;
};

Type type_of_kind(Type::Kind kind, bool is_signed = false, Id element = 0, uint32_t count = 0) {
  Type t;
  t.kind = kind, t.is_signed = is_signed, t.element = element, t.count = count;
  return t;
}

struct Block {
  Id label = 0;
  std::vector<Insn> body;  // without the merge instruction and the terminator
  Insn terminator{spv::OpNop, {}};
  spv::Op merge = spv::OpNop;  // OpSelectionMerge or OpLoopMerge
  Id merge_block = 0, continue_block = 0;
};

[[noreturn]] void refuse(const std::string& what) { throw Error(ErrorKind::unsupported, cat("webgpu: ", what)); }

class Translator {
 public:
  Translator(const std::vector<uint32_t>& words, const Options& options) : options_(options) {
    if (words.size() < 5 || words[0] != spv::MagicNumber) refuse("not SPIR-V");
    for (size_t i = 5; i < words.size();) {
      const uint32_t n = words[i] >> 16;
      if (n == 0 || i + n > words.size()) refuse("a truncated SPIR-V instruction");
      insns_.push_back({static_cast<spv::Op>(words[i] & 0xffff), std::vector<uint32_t>(words.begin() + static_cast<long>(i) + 1, words.begin() + static_cast<long>(i + n))});
      i += n;
    }
  }

  Translation run() {
    scan();
    Translation t;
    std::string s = "fn rlx_f32(bits: u32) -> f32 { return bitcast<f32>(bits); }\n";
    s += declarations(t);
    s += function();
    t.wgsl = s;
    return t;
  }

 private:
  // ---- the module ----
  void scan() {
    bool in_function = false;
    Block* cur = nullptr;
    for (const Insn& in : insns_) {
      const auto& w = in.w;
      switch (in.op) {
        case spv::OpExtInstImport: ext_[w[0]] = string_at(w, 1); break;
        case spv::OpExecutionMode:
          if (w[1] == spv::ExecutionModeLocalSize) local_ = {w[2], w[3], w[4]};
          break;
        case spv::OpDecorate: decorate(w[0], w[1], w.size() > 2 ? w[2] : 0); break;
        case spv::OpMemberDecorate:  // glslang marks a StructuredBuffer's (read-only) array member
          if (w[2] == spv::DecorationNonWritable) non_writable_.insert(w[0]);
          break;
        case spv::OpTypeVoid: types_[w[0]] = type_of_kind(Type::void_); break;
        case spv::OpTypeBool: types_[w[0]] = type_of_kind(Type::bool_); break;
        case spv::OpTypeInt:
          if (w[1] != 32) refuse(cat("a ", w[1], "-bit integer type (the kernels' WebGPU flavour is 32-bit)"));
          types_[w[0]] = type_of_kind(Type::int_, w[2] != 0);
          break;
        case spv::OpTypeFloat:
          if (w[1] != 32) refuse(cat("a ", w[1], "-bit float type"));
          types_[w[0]] = type_of_kind(Type::float_);
          break;
        case spv::OpTypeVector: types_[w[0]] = type_of_kind(Type::vector, false, w[1], w[2]); break;
        case spv::OpTypeArray: types_[w[0]] = type_of_kind(Type::array, false, w[1], constants_.at(w[2]).value); break;
        case spv::OpTypeRuntimeArray: types_[w[0]] = type_of_kind(Type::runtime_array, false, w[1]); break;
        case spv::OpTypeStruct: {
          Type t = type_of_kind(Type::struct_);
          t.members.assign(w.begin() + 1, w.end());
          types_[w[0]] = t;
          break;
        }
        case spv::OpTypePointer: {
          Type t = type_of_kind(Type::pointer, false, w[2]);
          t.storage = static_cast<spv::StorageClass>(w[1]);
          types_[w[0]] = t;
          break;
        }
        case spv::OpTypeFunction: types_[w[0]] = type_of_kind(Type::function); break;
        case spv::OpConstant: constants_[w[1]] = {w[0], w[2], literal(w[0], w[2])}; break;
        case spv::OpConstantTrue: constants_[w[1]] = {w[0], 1, "true"}; break;
        case spv::OpConstantFalse: constants_[w[1]] = {w[0], 0, "false"}; break;
        case spv::OpConstantNull: constants_[w[1]] = {w[0], 0, cat(type(w[0]), "()")}; break;
        case spv::OpConstantComposite: {
          std::vector<std::string> parts;
          for (size_t k = 2; k < w.size(); ++k) parts.push_back(constants_.at(w[k]).text);
          constants_[w[1]] = {w[0], 0, cat(type(w[0]), "(", join(parts, ", "), ")")};
          break;
        }
        case spv::OpVariable:
          if (!in_function) globals_.push_back({w[1], w[0], static_cast<spv::StorageClass>(w[2]), w.size() > 3 ? w[3] : 0});
          else {
            locals_.push_back({w[1], w[0], spv::StorageClassFunction, w.size() > 3 ? w[3] : 0});
            names_[w[1]] = cat("v", w[1]);
          }
          break;
        case spv::OpFunction:
          if (in_function || function_seen_) refuse("more than one function (the kernels are inlined into main)");
          in_function = function_seen_ = true;
          break;
        case spv::OpFunctionEnd: in_function = false; break;
        case spv::OpLabel:
          order_.push_back(w[0]);
          cur = &blocks_[w[0]];
          cur->label = w[0];
          break;
        case spv::OpSelectionMerge:
          cur->merge = in.op, cur->merge_block = w[0];
          break;
        case spv::OpLoopMerge:
          cur->merge = in.op, cur->merge_block = w[0], cur->continue_block = w[1];
          break;
        case spv::OpBranch:
        case spv::OpBranchConditional:
        case spv::OpSwitch:
        case spv::OpReturn:
        case spv::OpUnreachable:
        case spv::OpKill: cur->terminator = in; break;
        case spv::OpPhi:
          phis_.push_back(in);
          cur->body.push_back(in);
          break;
        default:
          if (in_function && cur) {
            if (in.op == spv::OpAtomicIAdd || in.op == spv::OpAtomicAnd || in.op == spv::OpAtomicOr || in.op == spv::OpAtomicXor || in.op == spv::OpAtomicUMax ||
                in.op == spv::OpAtomicUMin || in.op == spv::OpAtomicSMax || in.op == spv::OpAtomicSMin || in.op == spv::OpAtomicExchange ||
                in.op == spv::OpAtomicCompareExchange)
              atomic_pointers_.insert(w[2]);
            if (in.op == spv::OpAccessChain || in.op == spv::OpInBoundsAccessChain) chain_base_[w[1]] = root_of(w[2]);
            cur->body.push_back(in);
          }
      }
    }
    for (Id p : atomic_pointers_) atomic_roots_.insert(root_of(p));
  }

  Id root_of(Id pointer) const {
    auto it = chain_base_.find(pointer);
    return it == chain_base_.end() ? pointer : it->second;
  }

  void decorate(Id target, uint32_t decoration, uint32_t value) {
    switch (decoration) {
      case spv::DecorationBinding: binding_[target] = value; break;
      case spv::DecorationBuiltIn: builtin_[target] = value; break;
      case spv::DecorationNonWritable: non_writable_.insert(target); break;
      default: break;
    }
  }

  static std::string string_at(const std::vector<uint32_t>& w, size_t from) {
    std::string s;
    for (size_t k = from; k < w.size(); ++k)
      for (int b = 0; b < 4; ++b) {
        const char c = static_cast<char>((w[k] >> (8 * b)) & 0xff);
        if (!c) return s;
        s += c;
      }
    return s;
  }

  std::string literal(Id type_id, uint32_t bits) const {
    const Type& t = types_.at(type_id);
    // a non-finite constant through a function: WGSL's constant evaluation rejects inf and NaN
    if (t.kind == Type::float_) return (bits & 0x7f800000u) == 0x7f800000u ? cat("rlx_f32(", bits, "u)") : cat("bitcast<f32>(", bits, "u)");
    if (t.kind == Type::int_) return t.is_signed ? cat("i32(", static_cast<int32_t>(bits), ")") : cat(bits, "u");
    refuse("a constant of a type it cannot spell");
  }

  std::string type(Id id) const {
    const Type& t = types_.at(id);
    switch (t.kind) {
      case Type::bool_: return "bool";
      case Type::int_: return t.is_signed ? "i32" : "u32";
      case Type::float_: return "f32";
      case Type::vector: return cat("vec", t.count, "<", type(t.element), ">");
      case Type::array: return cat("array<", type(t.element), ", ", t.count, ">");
      case Type::runtime_array: return cat("array<", type(t.element), ">");
      case Type::struct_: return cat("S", id);
      default: refuse("a type it cannot spell");
    }
  }

  // the element type of a buffer used atomically
  std::string buffer_type(Id var, Id struct_id, bool atomic) const {
    const Type& t = types_.at(struct_id);
    std::string s = cat("struct B", var, " {");
    for (size_t m = 0; m < t.members.size(); ++m) {
      const Type& mt = types_.at(t.members[m]);
      std::string ty = type(t.members[m]);
      if (atomic && mt.kind == Type::runtime_array) {
        if (types_.at(mt.element).kind != Type::int_) refuse("atomics on a buffer of non-integers");
        ty = cat("array<atomic<", type(mt.element), ">>");
      }
      s += cat(m ? ", " : " ", "m", m, ": ", ty);
    }
    return s + " }\n";
  }

  std::string declarations(Translation& out) {
    std::string s;
    std::set<Id> printed;
    // the structs of buffers and push constants, then every other struct the kernel names
    for (const Var& g : globals_) {
      const Type& pt = types_.at(g.type);
      const Id pointee = pt.element;
      switch (g.storage) {
        case spv::StorageClassUniform:
        case spv::StorageClassStorageBuffer: {
          const bool atomic = atomic_roots_.count(g.id) > 0;
          s += buffer_type(g.id, pointee, atomic);  // a struct per buffer: one may be atomic, another not
          // read_write even where the kernel only reads, unless asked (Options): WebGPU forbids
          // one buffer bound both read-only and writable in a dispatch, and the webgpu device
          // binds one arena for both
          const uint32_t b = binding_.count(g.id) ? binding_.at(g.id) : 0;
          const bool writable = atomic || !(non_writable_.count(g.id) || non_writable_.count(pointee));
          if (out.writable.size() <= b) out.writable.resize(b + 1, true), out.declared.resize(b + 1, false);
          out.writable[b] = writable;
          out.declared[b] = true;
          s += cat("@group(0) @binding(", b, ") var<storage, ", writable || !options_.read_only_bindings ? "read_write" : "read", "> v", g.id, ": B", g.id, ";\n");
          names_[g.id] = cat("v", g.id);
          break;
        }
        case spv::StorageClassPushConstant: push_ = g; break;
        case spv::StorageClassWorkgroup:
          s += cat("var<workgroup> v", g.id, ": ", type(pointee), ";\n");
          names_[g.id] = cat("v", g.id);
          break;
        case spv::StorageClassPrivate:
          s += cat("var<private> v", g.id, ": ", type(pointee), ";\n");
          if (g.init) private_inits_.push_back({g.id, g.init});
          names_[g.id] = cat("v", g.id);
          break;
        case spv::StorageClassInput:
          if (!builtin_.count(g.id)) refuse("an input that is not a built-in");
          s += cat("var<private> v", g.id, ": ", type(pointee), ";\n");
          names_[g.id] = cat("v", g.id);
          break;
        default: refuse(cat("a variable in storage class ", g.storage));
      }
    }
    if (push_.id) {
      const Id st = types_.at(push_.type).element;
      const Type& t = types_.at(st);
      s += cat("struct S", st, " {");
      for (size_t m = 0; m < t.members.size(); ++m) s += cat(m ? ", " : " ", "m", m, ": ", type(t.members[m]));
      s += " }\n";
      out.uniform_bytes = static_cast<uint32_t>(4 * t.members.size());
      s += cat("@group(1) @binding(0) var<uniform> v", push_.id, ": S", st, ";\n");
      names_[push_.id] = cat("v", push_.id);
    }
    for (const auto& [id, t] : types_)
      if (t.kind == Type::struct_ && s.find(cat("struct S", id, " ")) == std::string::npos) {
        bool buffer_like = false;
        for (Id m : t.members) buffer_like = buffer_like || types_.at(m).kind == Type::runtime_array;
        if (!buffer_like) {
          s += cat("struct S", id, " {");
          for (size_t m = 0; m < t.members.size(); ++m) s += cat(m ? ", " : " ", "m", m, ": ", type(t.members[m]));
          s += " }\n";
        }
      }
    return s;
  }

  // ---- the function ----
  struct Var {
    Id id = 0, type = 0;
    spv::StorageClass storage = spv::StorageClassFunction;
    Id init = 0;
  };
  struct Constant {
    Id type = 0;
    uint32_t value = 0;
    std::string text;
  };

  std::string value(Id id) const {
    if (auto c = constants_.find(id); c != constants_.end()) return c->second.text;
    if (auto n = names_.find(id); n != names_.end()) return n->second;
    refuse(cat("a use of %", id, " before its definition"));
  }

  Id type_of(Id id) const {
    if (auto c = constants_.find(id); c != constants_.end()) return c->second.type;
    if (auto t = value_type_.find(id); t != value_type_.end()) return t->second;
    refuse(cat("the type of %", id));
  }

  // `id` as the integer type `want` (SPIR-V mixes signedness; WGSL does not)
  std::string as(Id id, Id want) const {
    const Id have = type_of(id);
    if (have == want || type(have) == type(want)) return value(id);
    return cat("bitcast<", type(want), ">(", value(id), ")");
  }
  std::string as_signed(Id id, bool is_signed) const {
    const Id t = type_of(id);
    const Type& ty = types_.at(t);
    const Type& scalar = ty.kind == Type::vector ? types_.at(ty.element) : ty;
    if (scalar.kind != Type::int_ || scalar.is_signed == is_signed) return value(id);
    const std::string s = is_signed ? "i32" : "u32";
    return cat("bitcast<", ty.kind == Type::vector ? cat("vec", ty.count, "<", s, ">") : s, ">(", value(id), ")");
  }

  std::string function() {
    std::string body;
    // every SSA value is a function-scope variable: SPIR-V lets a value defined in a loop be
    // used after it, which WGSL's block scoping would not
    emit_region(order_.at(0), 0, body, 1, {});
    std::string s = cat("@compute @workgroup_size(", local_[0], ", ", local_[1], ", ", local_[2], ")\nfn main(");
    std::vector<std::string> params, sets;
    for (const Var& g : globals_)
      if (g.storage == spv::StorageClassInput) {
        const char* b = nullptr;
        switch (builtin_.at(g.id)) {
          case spv::BuiltInLocalInvocationId: b = "local_invocation_id"; break;
          case spv::BuiltInWorkgroupId: b = "workgroup_id"; break;
          case spv::BuiltInGlobalInvocationId: b = "global_invocation_id"; break;
          case spv::BuiltInLocalInvocationIndex: b = "local_invocation_index"; break;
          case spv::BuiltInNumWorkgroups: b = "num_workgroups"; break;
          default: refuse(cat("the built-in ", builtin_.at(g.id)));
        }
        params.push_back(cat("@builtin(", b, ") b", g.id, ": ", type(types_.at(g.type).element)));
        sets.push_back(cat("  v", g.id, " = b", g.id, ";\n"));
      }
    s += join(params, ", ") + ") {\n";
    for (const auto& x : sets) s += x;
    for (const auto& [id, init] : private_inits_) s += cat("  v", id, " = ", value(init), ";\n");
    for (const Var& l : locals_) s += cat("  var v", l.id, ": ", type(types_.at(l.type).element), ";\n");
    for (const auto& [id, t] : value_type_) s += cat("  var r", id, ": ", type(t), ";\n");
    return s + body + "}\n";
  }

  // The innermost loop's merge and continue blocks, and the merge of a switch inside it (a
  // branch there is WGSL's `break` out of the switch, never the code after it copied into
  // the branch: that would move a barrier into non-uniform control flow).
  struct Loop {
    Id merge = 0, cont = 0, switch_merge = 0;
  };

  void indent(std::string& out, int depth) const { out.append(static_cast<size_t>(2 * depth), ' '); }

  // Phi assignments of the edge from → to.
  void edge(Id from, Id to, std::string& out, int depth) {
    for (const Insn& phi : blocks_.at(to).body) {
      if (phi.op != spv::OpPhi) continue;
      for (size_t k = 2; k + 1 < phi.w.size(); k += 2)
        if (phi.w[k + 1] == from) {
          indent(out, depth);
          out += cat("r", phi.w[1], " = ", value(phi.w[k]), ";\n");
        }
    }
  }

  // A branch from block `from` to `to` inside the region ending at `end`, with `loop` the
  // innermost loop: a break or continue where it leaves the region's straight path.
  bool jump(Id from, Id to, Id end, std::string& out, int depth, const Loop& loop) {
    edge(from, to, out, depth);
    if (to == end) return true;
    if (loop.switch_merge && to == loop.switch_merge) {
      indent(out, depth), out += "break;\n";
      return true;
    }
    if (loop.switch_merge && loop.merge && to == loop.merge) refuse("a loop's exit from inside a switch (WGSL's break would leave the switch)");
    if (loop.merge && to == loop.merge) {
      indent(out, depth), out += "break;\n";
      return true;
    }
    if (loop.cont && to == loop.cont) {
      indent(out, depth), out += "continue;\n";
      return true;
    }
    return false;
  }

  void emit_region(Id start, Id end, std::string& out, int depth, Loop loop) {
    Id cur = start;
    while (cur != end) {
      const Block& b = blocks_.at(cur);
      if (b.merge == spv::OpLoopMerge) {
        indent(out, depth), out += "loop {\n";
        const Loop inner{b.merge_block, b.continue_block};
        emit_body(b, out, depth + 1);
        const Insn& t = b.terminator;
        if (t.op == spv::OpBranchConditional) {  // the header tests and exits
          const Id yes = t.w[1], no = t.w[2];
          const Id stay = yes == b.merge_block ? no : yes;
          indent(out, depth + 1), out += cat("if (", yes == b.merge_block ? "" : "!", "(", value(t.w[0]), ")) {\n");
          edge(cur, b.merge_block, out, depth + 2);
          indent(out, depth + 2), out += "break;\n";
          indent(out, depth + 1), out += "}\n";
          edge(cur, stay, out, depth + 1);
          if (stay != b.continue_block) emit_region(stay, b.continue_block, out, depth + 1, inner);
        } else if (t.op == spv::OpBranch) {
          edge(cur, t.w[0], out, depth + 1);
          if (t.w[0] != b.continue_block) emit_region(t.w[0], b.continue_block, out, depth + 1, inner);
        } else {
          refuse("a loop header without a branch");
        }
        // the continue construct: its last block branches back to the header
        indent(out, depth + 1), out += "continuing {\n";
        if (b.continue_block != cur) emit_continue(b.continue_block, cur, b.merge_block, out, depth + 2);
        indent(out, depth + 1), out += "}\n";
        indent(out, depth), out += "}\n";
        cur = b.merge_block;
        continue;
      }
      emit_body(b, out, depth);
      const Insn& t = b.terminator;
      switch (t.op) {
        case spv::OpReturn: indent(out, depth), out += "return;\n"; return;
        case spv::OpUnreachable: return;
        case spv::OpBranch:
          if (jump(cur, t.w[0], end, out, depth, loop)) return;
          cur = t.w[0];
          break;
        case spv::OpBranchConditional: {
          if (b.merge != spv::OpSelectionMerge) {  // a conditional break or continue
            indent(out, depth), out += cat("if (", value(t.w[0]), ") {\n");
            if (!jump(cur, t.w[1], end, out, depth + 1, loop)) refuse("an unstructured conditional branch");
            indent(out, depth), out += "} else {\n";
            if (!jump(cur, t.w[2], end, out, depth + 1, loop)) refuse("an unstructured conditional branch");
            indent(out, depth), out += "}\n";
            return;
          }
          const Id merge = b.merge_block;
          indent(out, depth), out += cat("if (", value(t.w[0]), ") {\n");
          if (!jump(cur, t.w[1], merge, out, depth + 1, loop)) emit_region(t.w[1], merge, out, depth + 1, loop);
          indent(out, depth), out += "} else {\n";
          if (!jump(cur, t.w[2], merge, out, depth + 1, loop)) emit_region(t.w[2], merge, out, depth + 1, loop);
          indent(out, depth), out += "}\n";
          cur = merge;
          break;
        }
        case spv::OpSwitch: {
          if (b.merge != spv::OpSelectionMerge) refuse("a switch without a merge");
          const Id merge = b.merge_block;
          Loop in_switch = loop;
          in_switch.switch_merge = merge;
          indent(out, depth), out += cat("switch (", as_signed(t.w[0], true), ") {\n");
          for (size_t k = 2; k + 1 < t.w.size(); k += 2) {
            indent(out, depth + 1), out += cat("case ", static_cast<int32_t>(t.w[k]), ": {\n");
            if (!jump(cur, t.w[k + 1], merge, out, depth + 2, in_switch)) emit_region(t.w[k + 1], merge, out, depth + 2, in_switch);
            indent(out, depth + 1), out += "}\n";
          }
          indent(out, depth + 1), out += "default: {\n";
          if (!jump(cur, t.w[1], merge, out, depth + 2, in_switch)) emit_region(t.w[1], merge, out, depth + 2, in_switch);
          indent(out, depth + 1), out += "}\n";
          indent(out, depth), out += "}\n";
          cur = merge;
          break;
        }
        default: refuse(cat("the terminator ", t.op));
      }
    }
  }

  void emit_continue(Id start, Id header, Id merge, std::string& out, int depth) {
    Id cur = start;
    for (;;) {
      const Block& b = blocks_.at(cur);
      emit_body(b, out, depth);
      const Insn& t = b.terminator;
      if (t.op == spv::OpBranch && t.w[0] == header) {
        edge(cur, header, out, depth);
        return;
      }
      if (t.op == spv::OpBranchConditional && (t.w[1] == header || t.w[2] == header)) {
        const bool back_on_true = t.w[1] == header;
        edge(cur, header, out, depth);  // the header's phis take the back edge's values (assigned either way)
        indent(out, depth), out += cat("break if ", back_on_true ? "!" : "", "(", value(t.w[0]), ");\n");
        (void)merge;
        return;
      }
      if (t.op == spv::OpBranch) {
        edge(cur, t.w[0], out, depth);
        cur = t.w[0];
        continue;
      }
      refuse("a continue construct it cannot print");
    }
  }

  std::string ref(Id pointer) const {  // the reference a pointer names
    if (auto it = refs_.find(pointer); it != refs_.end()) return it->second;
    return value(pointer);
  }
  bool atomic_ref(Id pointer) const { return atomic_roots_.count(root_of(pointer)) > 0; }

  void define(Id result_type, Id id, const std::string& expr, std::string& out, int depth) {
    value_type_[id] = result_type;
    names_[id] = cat("r", id);
    indent(out, depth);
    out += cat("r", id, " = ", expr, ";\n");
  }

  void emit_body(const Block& b, std::string& out, int depth) {
    for (const Insn& in : b.body) {
      const auto& w = in.w;
      auto bin = [&](const char* o) { define(w[0], w[1], cat("(", as(w[2], w[0]), " ", o, " ", as(w[3], w[0]), ")"), out, depth); };
      auto sbin = [&](const char* o, bool s) { define(w[0], w[1], cat("bitcast<", type(w[0]), ">(", as_signed(w[2], s), " ", o, " ", as_signed(w[3], s), ")"), out, depth); };
      auto cmp = [&](const char* o, int sign) {  // sign: 0 as is, 1 signed, -1 unsigned
        const std::string a = sign ? as_signed(w[2], sign > 0) : value(w[2]), c = sign ? as_signed(w[3], sign > 0) : value(w[3]);
        define(w[0], w[1], cat("(", a, " ", o, " ", c, ")"), out, depth);
      };
      switch (in.op) {
        case spv::OpPhi: names_[w[1]] = cat("r", w[1]), value_type_[w[1]] = w[0]; break;
        case spv::OpAccessChain:
        case spv::OpInBoundsAccessChain: {
          std::string r = ref(w[2]);
          Id t = types_.at(type_of_pointer(w[2])).element;
          for (size_t k = 3; k < w.size(); ++k) {
            const Type& ty = types_.at(t);
            if (ty.kind == Type::struct_) {
              const uint32_t m = constants_.at(w[k]).value;
              r += cat(".m", m);
              t = ty.members.at(m);
            } else {
              r += cat("[", value(w[k]), "]");
              t = ty.element;
            }
          }
          refs_[w[1]] = r;
          pointer_type_[w[1]] = w[0];
          break;
        }
        case spv::OpLoad:
          define(w[0], w[1], atomic_ref(w[2]) ? cat("atomicLoad(&", ref(w[2]), ")") : ref(w[2]), out, depth);
          break;
        case spv::OpStore:
          indent(out, depth);
          out += atomic_ref(w[0]) ? cat("atomicStore(&", ref(w[0]), ", ", value(w[1]), ");\n") : cat(ref(w[0]), " = ", value(w[1]), ";\n");
          break;
        case spv::OpCopyObject: define(w[0], w[1], value(w[2]), out, depth); break;
        case spv::OpUndef: define(w[0], w[1], cat(type(w[0]), "()"), out, depth); break;
        case spv::OpIAdd: bin("+"); break;
        case spv::OpISub: bin("-"); break;
        case spv::OpIMul: bin("*"); break;
        case spv::OpUDiv: sbin("/", false); break;
        case spv::OpSDiv: sbin("/", true); break;
        case spv::OpUMod: sbin("%", false); break;
        case spv::OpSRem: sbin("%", true); break;
        case spv::OpSMod: {  // the sign of the divisor: the truncated remainder, moved by b when the signs differ
          sbin("%", true);
          const std::string r = as_signed(w[1], true), d = as_signed(w[3], true);
          indent(out, depth);
          out += cat("r", w[1], " = bitcast<", type(w[0]), ">(select(", r, ", ", r, " + ", d, ", ", r, " != 0 && ((", r, " < 0) != (", d, " < 0))));\n");
          break;
        }
        case spv::OpFAdd: bin("+"); break;
        case spv::OpFSub: bin("-"); break;
        case spv::OpFMul: bin("*"); break;
        case spv::OpFDiv: bin("/"); break;
        case spv::OpFRem: bin("%"); break;
        case spv::OpFMod: define(w[0], w[1], cat("(", value(w[2]), " - ", value(w[3]), " * floor(", value(w[2]), " / ", value(w[3]), "))"), out, depth); break;
        case spv::OpFNegate: define(w[0], w[1], cat("(-", value(w[2]), ")"), out, depth); break;
        case spv::OpSNegate: define(w[0], w[1], cat("bitcast<", type(w[0]), ">(-", as_signed(w[2], true), ")"), out, depth); break;
        case spv::OpBitwiseAnd: bin("&"); break;
        case spv::OpBitwiseOr: bin("|"); break;
        case spv::OpBitwiseXor: bin("^"); break;
        case spv::OpNot: define(w[0], w[1], cat("(~", as(w[2], w[0]), ")"), out, depth); break;
        case spv::OpShiftLeftLogical: define(w[0], w[1], cat("(", as(w[2], w[0]), " << ", as_signed(w[3], false), ")"), out, depth); break;
        case spv::OpShiftRightLogical:
          define(w[0], w[1], cat("bitcast<", type(w[0]), ">(", as_signed(w[2], false), " >> ", as_signed(w[3], false), ")"), out, depth);
          break;
        case spv::OpShiftRightArithmetic:
          define(w[0], w[1], cat("bitcast<", type(w[0]), ">(", as_signed(w[2], true), " >> ", as_signed(w[3], false), ")"), out, depth);
          break;
        case spv::OpIEqual: cmp("==", -1); break;
        case spv::OpINotEqual: cmp("!=", -1); break;
        case spv::OpULessThan: cmp("<", -1); break;
        case spv::OpULessThanEqual: cmp("<=", -1); break;
        case spv::OpUGreaterThan: cmp(">", -1); break;
        case spv::OpUGreaterThanEqual: cmp(">=", -1); break;
        case spv::OpSLessThan: cmp("<", 1); break;
        case spv::OpSLessThanEqual: cmp("<=", 1); break;
        case spv::OpSGreaterThan: cmp(">", 1); break;
        case spv::OpSGreaterThanEqual: cmp(">=", 1); break;
        case spv::OpFOrdEqual: cmp("==", 0); break;
        case spv::OpFOrdLessThan: cmp("<", 0); break;
        case spv::OpFOrdLessThanEqual: cmp("<=", 0); break;
        case spv::OpFOrdGreaterThan: cmp(">", 0); break;
        case spv::OpFOrdGreaterThanEqual: cmp(">=", 0); break;
        case spv::OpFUnordNotEqual: cmp("!=", 0); break;
        case spv::OpFOrdNotEqual:  // ordered: false when either is NaN
          define(w[0], w[1], cat("((", value(w[2]), " != ", value(w[3]), ") && !", is_nan(w[2]), " && !", is_nan(w[3]), ")"), out, depth);
          break;
        case spv::OpLogicalAnd: cmp("&&", 0); break;
        case spv::OpLogicalOr: cmp("||", 0); break;
        case spv::OpLogicalEqual: cmp("==", 0); break;
        case spv::OpLogicalNotEqual: cmp("!=", 0); break;
        case spv::OpLogicalNot: define(w[0], w[1], cat("(!", value(w[2]), ")"), out, depth); break;
        case spv::OpIsNan: define(w[0], w[1], is_nan(w[2]), out, depth); break;
        case spv::OpIsInf: define(w[0], w[1], cat("((bitcast<u32>(", value(w[2]), ") & 0x7fffffffu) == 0x7f800000u)"), out, depth); break;
        case spv::OpSelect: define(w[0], w[1], cat("select(", value(w[4]), ", ", value(w[3]), ", ", value(w[2]), ")"), out, depth); break;
        case spv::OpConvertFToS:
        case spv::OpConvertFToU: define(w[0], w[1], cat(type(w[0]), "(", value(w[2]), ")"), out, depth); break;
        case spv::OpConvertSToF: define(w[0], w[1], cat(type(w[0]), "(", as_signed(w[2], true), ")"), out, depth); break;
        case spv::OpConvertUToF: define(w[0], w[1], cat(type(w[0]), "(", as_signed(w[2], false), ")"), out, depth); break;
        case spv::OpBitcast: define(w[0], w[1], cat("bitcast<", type(w[0]), ">(", value(w[2]), ")"), out, depth); break;
        case spv::OpCompositeConstruct: {
          std::vector<std::string> parts;
          for (size_t k = 2; k < w.size(); ++k) parts.push_back(value(w[k]));
          define(w[0], w[1], cat(type(w[0]), "(", join(parts, ", "), ")"), out, depth);
          break;
        }
        case spv::OpCompositeExtract: {
          std::string e = value(w[2]);
          Id t = type_of(w[2]);
          for (size_t k = 3; k < w.size(); ++k) {
            const Type& ty = types_.at(t);
            if (ty.kind == Type::struct_) e += cat(".m", w[k]), t = ty.members.at(w[k]);
            else e += cat("[", w[k], "]"), t = ty.element;
          }
          define(w[0], w[1], e, out, depth);
          break;
        }
        case spv::OpVectorShuffle: {
          const uint32_t na = types_.at(type_of(w[2])).count;
          std::vector<std::string> parts;
          for (size_t k = 4; k < w.size(); ++k) parts.push_back(w[k] < na ? cat(value(w[2]), "[", w[k], "]") : cat(value(w[3]), "[", w[k] - na, "]"));
          define(w[0], w[1], cat(type(w[0]), "(", join(parts, ", "), ")"), out, depth);
          break;
        }
        case spv::OpExtInst: define(w[0], w[1], ext_inst(w), out, depth); break;
        case spv::OpControlBarrier: indent(out, depth), out += (w[2] & spv::MemorySemanticsUniformMemoryMask) ? "storageBarrier();\n  workgroupBarrier();\n" : "workgroupBarrier();\n"; break;
        case spv::OpMemoryBarrier: refuse("a memory barrier without a control barrier (WGSL has none)");
        case spv::OpAtomicIAdd: atomic(w, "atomicAdd", out, depth); break;
        case spv::OpAtomicAnd: atomic(w, "atomicAnd", out, depth); break;
        case spv::OpAtomicOr: atomic(w, "atomicOr", out, depth); break;
        case spv::OpAtomicXor: atomic(w, "atomicXor", out, depth); break;
        case spv::OpAtomicUMax:
        case spv::OpAtomicSMax: atomic(w, "atomicMax", out, depth); break;
        case spv::OpAtomicUMin:
        case spv::OpAtomicSMin: atomic(w, "atomicMin", out, depth); break;
        case spv::OpAtomicExchange: atomic(w, "atomicExchange", out, depth); break;
        case spv::OpAtomicCompareExchange: {
          // strong semantics from the weak exchange: retry while it failed spuriously
          const std::string r = ref(w[2]), value_ = value(w[6]), cmp_ = value(w[7]);
          value_type_[w[1]] = w[0];
          names_[w[1]] = cat("r", w[1]);
          indent(out, depth), out += "loop {\n";
          indent(out, depth + 1), out += cat("let x = atomicCompareExchangeWeak(&", r, ", ", cmp_, ", ", value_, ");\n");
          indent(out, depth + 1), out += cat("if (x.exchanged || x.old_value != ", cmp_, ") { r", w[1], " = x.old_value; break; }\n");
          indent(out, depth), out += "}\n";
          break;
        }
        case spv::OpNop:
        case spv::OpLine:
        case spv::OpNoLine: break;
        default: refuse(cat("the SPIR-V instruction ", static_cast<int>(in.op)));
      }
    }
  }

  Id type_of_pointer(Id p) const {
    if (auto it = pointer_type_.find(p); it != pointer_type_.end()) return it->second;
    for (const Var& g : globals_)
      if (g.id == p) return g.type;
    for (const Var& l : locals_)
      if (l.id == p) return l.type;
    refuse(cat("the pointer %", p));
  }

  void atomic(const std::vector<uint32_t>& w, const char* fn, std::string& out, int depth) {
    define(w[0], w[1], cat(fn, "(&", ref(w[2]), ", ", as(w[5], w[0]), ")"), out, depth);
  }

  std::string is_nan(Id x) const { return cat("((bitcast<u32>(", value(x), ") & 0x7fffffffu) > 0x7f800000u)"); }

  std::string ext_inst(const std::vector<uint32_t>& w) const {
    if (ext_.at(w[2]) != "GLSL.std.450") refuse(cat("the extended instruction set ", ext_.at(w[2])));
    const auto f = static_cast<GLSLstd450>(w[3]);
    auto a = [&](size_t k) { return value(w[4 + k]); };
    auto call = [&](const char* name, size_t n) {
      std::vector<std::string> args;
      for (size_t k = 0; k < n; ++k) args.push_back(as(w[4 + k], w[0]));
      return cat(name, "(", join(args, ", "), ")");
    };
    auto scall = [&](const char* name, size_t n, bool s) {
      std::vector<std::string> args;
      for (size_t k = 0; k < n; ++k) args.push_back(as_signed(w[4 + k], s));
      return cat("bitcast<", type(w[0]), ">(", name, "(", join(args, ", "), "))");
    };
    switch (f) {
      case GLSLstd450Round:
      case GLSLstd450RoundEven: return call("round", 1);  // WGSL's round is half to even
      case GLSLstd450Trunc: return call("trunc", 1);
      case GLSLstd450FAbs: return call("abs", 1);
      case GLSLstd450SAbs: return scall("abs", 1, true);
      case GLSLstd450FSign: return call("sign", 1);
      case GLSLstd450SSign: return scall("sign", 1, true);
      case GLSLstd450Floor: return call("floor", 1);
      case GLSLstd450Ceil: return call("ceil", 1);
      case GLSLstd450Fract: return call("fract", 1);
      case GLSLstd450Sin: return call("sin", 1);
      case GLSLstd450Cos: return call("cos", 1);
      case GLSLstd450Tan: return call("tan", 1);
      case GLSLstd450Atan: return call("atan", 1);
      case GLSLstd450Atan2: return call("atan2", 2);
      case GLSLstd450Tanh: return call("tanh", 1);
      case GLSLstd450Pow: return call("pow", 2);
      case GLSLstd450Exp: return call("exp", 1);
      case GLSLstd450Log: return call("log", 1);
      case GLSLstd450Exp2: return call("exp2", 1);
      case GLSLstd450Log2: return call("log2", 1);
      case GLSLstd450Sqrt: return call("sqrt", 1);
      case GLSLstd450InverseSqrt: return call("inverseSqrt", 1);
      case GLSLstd450FMin:
      case GLSLstd450NMin: return call("min", 2);
      case GLSLstd450FMax:
      case GLSLstd450NMax: return call("max", 2);
      case GLSLstd450UMin: return scall("min", 2, false);
      case GLSLstd450SMin: return scall("min", 2, true);
      case GLSLstd450UMax: return scall("max", 2, false);
      case GLSLstd450SMax: return scall("max", 2, true);
      case GLSLstd450FClamp:
      case GLSLstd450NClamp: return call("clamp", 3);
      case GLSLstd450UClamp: return scall("clamp", 3, false);
      case GLSLstd450SClamp: return scall("clamp", 3, true);
      case GLSLstd450FMix: return call("mix", 3);
      case GLSLstd450Step: return call("step", 2);
      case GLSLstd450Fma: return call("fma", 3);
      case GLSLstd450Ldexp: return cat("ldexp(", a(0), ", ", as_signed(w[5], true), ")");
      case GLSLstd450PackHalf2x16: return cat("pack2x16float(", a(0), ")");
      case GLSLstd450UnpackHalf2x16: return cat("unpack2x16float(", a(0), ")");
      default: refuse(cat("GLSL.std.450 instruction ", static_cast<int>(f)));
    }
  }

  std::vector<Insn> insns_;
  std::map<Id, std::string> ext_;
  std::array<uint32_t, 3> local_{1, 1, 1};
  std::map<Id, Type> types_;
  std::map<Id, Constant> constants_;
  std::vector<Var> globals_, locals_;
  Var push_;
  std::vector<std::pair<Id, Id>> private_inits_;
  std::map<Id, uint32_t> binding_, builtin_;
  std::map<Id, Block> blocks_;
  std::vector<Id> order_;
  std::vector<Insn> phis_;
  std::map<Id, Id> chain_base_;
  std::set<Id> atomic_pointers_, atomic_roots_;
  std::set<Id> non_writable_;  // variables and buffer structs glslang decorated NonWritable
  Options options_;
  bool function_seen_ = false;
  // printing state
  std::map<Id, std::string> names_, refs_;
  std::map<Id, Id> value_type_, pointer_type_;
};

}  // namespace

Translation from_spirv(const std::vector<uint32_t>& spirv, const Options& options) { return Translator(spirv, options).run(); }

}  // namespace rlx::codegen::wgsl
