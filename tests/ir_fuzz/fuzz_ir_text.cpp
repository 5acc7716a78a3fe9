// libFuzzer target: the IR text parser, then the type checker and a compile for the `null`
// device (every pass but the kernels) — text in `.rlx` files and `rlx run` arguments comes from
// anyone. Anything but rlx::Error is a bug. Plain byte mutations rarely get past the lexer, so the
// target brings a structure-aware mutator: it edits whole tokens — numbers to interesting values,
// an op keyword to another op's, a dtype to another, a line duplicated, dropped or moved.
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ir/op.h"
#include "ir/text.h"
#include "rlx/dtype.h"
#include "rlx/error.h"
#include "rlx/graph.h"
#include "rlx/session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (size_t{1} << 16)) return 0;
  try {
    rlx::ir::Graph g = rlx::ir::parse_graph(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.rlx");
    rlx::Session("null").compile(rlx::Graph(std::make_shared<rlx::ir::Graph>(std::move(g))));
  } catch (const rlx::Error&) {
  }
  return 0;
}

namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'; }

std::vector<std::string> tokens_of(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    size_t j = i + 1;
    if (word_char(s[i]))
      while (j < s.size() && word_char(s[j])) ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool is_number(const std::string& t) { return !t.empty() && (std::isdigit(static_cast<unsigned char>(t[0])) || (t[0] == '-' && t.size() > 1)); }

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  static const char* kNumbers[] = {"0", "1", "-1", "2", "3", "7", "64", "65536", "2147483647", "4294967296", "9223372036854775807",
                                   "-9223372036854775808", "1e308", "nan", "inf", "0.5", "1000000000000"};
  std::mt19937 rng(seed);
  auto pick = [&](size_t n) { return n ? static_cast<size_t>(rng() % n) : 0; };
  std::string s(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> t = tokens_of(s);
  if (t.empty()) return size;
  switch (pick(6)) {
    case 0: {  // a number becomes an interesting one
      std::vector<size_t> at;
      for (size_t i = 0; i < t.size(); ++i)
        if (is_number(t[i])) at.push_back(i);
      if (!at.empty()) t[at[pick(at.size())]] = kNumbers[pick(std::size(kNumbers))];
      break;
    }
    case 1: {  // an op keyword becomes another op's
      std::vector<size_t> at;
      for (size_t i = 0; i < t.size(); ++i)
        if (t[i].rfind("mir.", 0) == 0 || t[i].rfind("hir.", 0) == 0) at.push_back(i);
      if (!at.empty()) t[at[pick(at.size())]] = rlx::ir::op_keyword(static_cast<rlx::ir::Op>(pick(rlx::ir::kNumOps)));
      break;
    }
    case 2: {  // a dtype becomes another
      std::vector<size_t> at;
      for (size_t i = 0; i < t.size(); ++i)
        if (rlx::dtype_from_name(t[i])) at.push_back(i);
      if (!at.empty()) t[at[pick(at.size())]] = rlx::dtype_name(static_cast<rlx::DType>(pick(rlx::kNumDTypes)));
      break;
    }
    default: {  // whole lines: duplicate, drop or move one
      std::vector<std::string> lines;
      size_t from = 0;
      for (size_t i = 0; i <= s.size(); ++i)
        if (i == s.size() || s[i] == '\n') {
          lines.push_back(s.substr(from, i - from));
          from = i + 1;
        }
      size_t a = pick(lines.size()), b = pick(lines.size());
      int how = static_cast<int>(pick(3));
      if (how == 0) lines.insert(lines.begin() + static_cast<long>(b), lines[a]);
      else if (how == 1 && lines.size() > 1) lines.erase(lines.begin() + static_cast<long>(a));
      else std::swap(lines[a], lines[b]);
      s.clear();
      for (size_t i = 0; i < lines.size(); ++i) s += lines[i] + (i + 1 < lines.size() ? "\n" : "");
      t = tokens_of(s);
      break;
    }
  }
  std::string out;
  for (const auto& x : t) out += x;
  if (out.size() > max_size) return size;
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
