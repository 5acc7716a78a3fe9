#include <charconv>
#include <unordered_map>

#include "ir/text.h"
#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::ir {

namespace {

class Parser {
 public:
  Parser(std::string_view text, const std::string& source) : s_(text), source_(source) {}

  Graph parse() {
    Graph g;
    skip();
    if (eat_word("lir")) g.is_lir = true;
    else if (!eat_word("graph")) fail("expected 'graph' or 'lir' at the start of the file");
    expect("@");
    g.name = name_token("graph name");
    expect("(");
    if (!eat(")")) {
      for (;;) {
        std::string n = value_name();
        expect(":");
        Type t = type();
        if (names_.count(n)) fail(cat("value %", n, " is defined twice"));
        ValueId v = g.add_input(t, numeric(n) ? "" : n);
        names_[n] = v;
        if (eat(",")) continue;
        expect(")");
        break;
      }
    }
    if (eat_word("donate")) {  // [output:input, …]
      expect("[");
      if (!eat("]")) {
        for (;;) {
          int64_t o = integer();
          expect(":");
          int64_t i = integer();
          g.donations.push_back({static_cast<int32_t>(o), static_cast<int32_t>(i)});
          if (eat(",")) continue;
          expect("]");
          break;
        }
      }
    }
    if (g.is_lir) {
      if (eat_word("device")) {
        expect("=");
        g.device = name_token("device name");
      }
      expect_word("arena");
      expect("=");
      g.arena_bytes = integer();
      for (size_t i = 0; i < g.inputs().size(); ++i) g.placement.push_back({Placement::Kind::input, 0, 0, static_cast<int32_t>(i)});
    }
    expect("{");
    for (;;) {
      skip();
      if (eat_word("return")) break;
      statement(g);
    }
    std::vector<ValueId> outs;
    skip();
    if (peek() != '}') {
      for (;;) {
        outs.push_back(use(value_name()));
        if (!eat(",")) break;
      }
    }
    expect("}");
    skip();
    if (pos_ != s_.size()) fail("unexpected text after the closing '}'");
    g.set_outputs(std::move(outs));
    return g;
  }

 private:
  void statement(Graph& g) {
    std::vector<std::string> results;
    for (;;) {
      results.push_back(value_name());
      if (!eat(",")) break;
    }
    expect("=");
    skip();
    size_t op_pos = pos_;
    std::string kw = name_token("op name");
    auto op = op_from_name(kw);
    if (!op) {
      pos_ = op_pos;
      fail(cat("unknown op '", kw, "'"));
    }
    expect("(");
    std::vector<ValueId> inputs;
    if (!eat(")")) {
      for (;;) {
        inputs.push_back(use(value_name()));
        if (eat(",")) continue;
        expect(")");
        break;
      }
    }
    Attrs attrs;
    if (eat("{")) {
      if (!eat("}")) {
        for (;;) {
          skip();
          size_t key_pos = pos_;
          std::string key = name_token("attribute name");
          const AttrSpec* spec = find_attr_spec(*op, key);
          if (!spec) {
            pos_ = key_pos;
            fail(cat(op_keyword(*op), " has no attribute '", key, "'"));
          }
          expect("=");
          skip();
          size_t vpos = pos_;
          std::string_view text = attr_text();
          try {
            attrs.set(key, attr_from_text(text, *spec, cat(op_keyword(*op), ".", key)));
          } catch (const Error& e) {
            pos_ = vpos;
            fail(e.what());
          }
          if (eat(",")) continue;
          expect("}");
          break;
        }
      }
    }
    try {
      normalize_attrs(*op, attrs);
    } catch (const Error& e) {
      fail(e.what());
    }
    expect(":");
    std::vector<Type> types;
    std::vector<Placement> places;
    for (;;) {
      types.push_back(type());
      places.push_back(g.is_lir ? placement() : Placement{});
      if (!eat(",")) break;
    }
    if (types.size() != results.size())
      fail(cat(op_keyword(*op), " defines ", results.size(), " values but lists ", types.size(), " types"));
    std::string node_name, origin;
    if (eat_word("loc")) {
      expect("(");
      node_name = quoted();
      if (eat_word("from")) {
        skip();
        origin = peek() == '"' ? quoted() : name_token("origin op");
      }
      expect(")");
    }
    auto outs = g.add_node(*op, std::move(inputs), std::move(attrs), std::move(types), node_name, origin);
    if (g.is_lir) g.node(g.num_nodes() - 1).path = Path::native;  // an LIR program holds only device kernels
    for (size_t i = 0; i < outs.size(); ++i) {
      if (names_.count(results[i])) fail(cat("value %", results[i], " is defined twice"));
      names_[results[i]] = outs[i];
      if (!numeric(results[i])) g.value(outs[i]).name = results[i];
      if (g.is_lir) {
        if (g.placement.size() < g.num_values()) g.placement.resize(g.num_values());
        g.placement[static_cast<size_t>(outs[i])] = places[i];
      }
    }
  }

  Placement placement() {
    Placement p;
    if (!eat("@")) fail("LIR results need a placement (@arena[a:b], @view(%v), @const[n])");
    std::string kind = name_token("placement kind");
    if (kind == "arena") {
      expect("[");
      p.kind = Placement::Kind::arena;
      p.offset = integer();
      expect(":");
      p.bytes = integer() - p.offset;
      expect("]");
    } else if (kind == "const") {
      expect("[");
      p.kind = Placement::Kind::constant;
      p.bytes = integer();
      expect("]");
    } else if (kind == "view") {
      expect("(");
      p.kind = Placement::Kind::view;
      p.index = use(value_name());
      if (eat("+")) p.offset = integer();
      expect(")");
    } else if (kind == "input") {
      expect("[");
      p.kind = Placement::Kind::input;
      p.index = static_cast<int32_t>(integer());
      expect("]");
    } else {
      fail(cat("unknown placement '", kind, "'"));
    }
    return p;
  }

  Type type() {
    skip();
    size_t b = pos_;
    while (pos_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    auto dt = dtype_from_name(s_.substr(b, pos_ - b));
    if (!dt) {
      pos_ = b;
      fail(cat("expected a type such as f32[B,384], found '", s_.substr(b, std::min<size_t>(12, s_.size() - b)), "'"));
    }
    expect("[");
    Shape shape;
    if (!eat("]")) {
      for (;;) {
        skip();
        size_t db = pos_;
        int depth = 0;
        while (pos_ < s_.size() && (depth > 0 || (s_[pos_] != ',' && s_[pos_] != ']'))) {
          if (s_[pos_] == '(') ++depth;
          if (s_[pos_] == ')') --depth;
          ++pos_;
        }
        try {
          shape.push_back(Dim::parse(s_.substr(db, pos_ - db)));
        } catch (const Error& e) {
          pos_ = db;
          fail(e.what());
        }
        if (eat(",")) continue;
        expect("]");
        break;
      }
    }
    return {*dt, shape};
  }

  // The raw text of one attribute value: up to the next ',' or '}' outside brackets and quotes.
  std::string_view attr_text() {
    size_t b = pos_;
    int depth = 0;
    bool quoted = false;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (quoted) {
        if (c == '\\') ++pos_;
        else if (c == '"') quoted = false;
      } else if (c == '"') {
        quoted = true;
      } else if (c == '[' || c == '(' || c == '<') {
        ++depth;
      } else if (c == ']' || c == ')' || c == '>') {
        --depth;
      } else if (depth == 0 && (c == ',' || c == '}')) {
        break;
      }
      ++pos_;
    }
    if (pos_ >= s_.size()) fail("unterminated attribute list");
    return trim(s_.substr(b, pos_ - b));
  }

  std::string quoted() {
    skip();
    if (peek() != '"') fail("expected a quoted string");
    size_t b = pos_++;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\\') ++pos_;
      ++pos_;
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    ++pos_;
    AttrSpec spec{"loc", AttrType::Str, {}, false, false, ""};
    return std::get<std::string>(attr_from_text(s_.substr(b, pos_ - b), spec, "loc"));
  }

  std::string value_name() {
    skip();
    if (peek() != '%') fail("expected a value such as %0 or %x");
    ++pos_;
    size_t b = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' || s_[pos_] == '.')) ++pos_;
    if (b == pos_) fail("expected a value name after '%'");
    return std::string(s_.substr(b, pos_ - b));
  }

  ValueId use(const std::string& n) {
    auto it = names_.find(n);
    if (it == names_.end()) fail(cat("value %", n, " is used before it is defined"));
    return it->second;
  }

  std::string name_token(const char* what) {
    skip();
    size_t b = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' || s_[pos_] == '.' || s_[pos_] == '-'))
      ++pos_;
    if (b == pos_) fail(cat("expected ", what));
    return std::string(s_.substr(b, pos_ - b));
  }

  int64_t integer() {
    skip();
    size_t b = pos_;
    if (peek() == '-') ++pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    int64_t v = 0;
    auto r = std::from_chars(s_.data() + b, s_.data() + pos_, v);
    if (r.ec != std::errc() || b == pos_) {
      pos_ = b;
      fail("expected an integer");
    }
    return v;
  }

  static bool numeric(const std::string& n) {
    for (char c : n)
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return !n.empty();
  }

  void skip() {
    for (;;) {
      while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      if (pos_ < s_.size() && s_[pos_] == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
        continue;
      }
      return;
    }
  }
  char peek() { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool eat(std::string_view tok) {
    skip();
    if (s_.substr(pos_, tok.size()) == tok) {
      pos_ += tok.size();
      return true;
    }
    return false;
  }
  bool eat_word(std::string_view w) {
    skip();
    if (s_.substr(pos_, w.size()) != w) return false;
    size_t e = pos_ + w.size();
    if (e < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[e])) || s_[e] == '_')) return false;
    pos_ = e;
    return true;
  }
  void expect(std::string_view tok) {
    if (!eat(tok)) fail(cat("expected '", tok, "'"));
  }
  void expect_word(std::string_view w) {
    if (!eat_word(w)) fail(cat("expected '", w, "'"));
  }

  [[noreturn]] void fail(const std::string& msg) {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw Error(ErrorKind::parse, cat(source_, ":", line, ":", col, ": ", msg));
  }

  std::string_view s_;
  std::string source_;
  size_t pos_ = 0;
  std::unordered_map<std::string, ValueId> names_;
};

}  // namespace

Graph parse_graph(std::string_view text, const std::string& source_name) { return Parser(text, source_name).parse(); }

}  // namespace rlx::ir
