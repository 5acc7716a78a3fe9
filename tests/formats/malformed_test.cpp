// The malformed-file catalogue: every way a safetensors or GGUF file can lie, each answered by
// an rlx::Error(format) naming the field and byte offset, with memory bounded by the input's
// size — never a crash, an out-of-bounds read or an allocation sized by an untrusted count.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "formats/gguf.h"
#include "formats/safetensors.h"
#include "rlx/error.h"
#include "test_util.h"

// The largest single allocation made while a probe is active (this binary's operator new).
namespace {
std::atomic<bool> g_probe{false};
std::atomic<size_t> g_largest{0};
}  // namespace

// GCC cannot see that this operator new pairs with the free() below.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
// Every non-aligned form is replaced, so that new and delete always pair (ASan checks it).
namespace {
void* probed_alloc(size_t n) noexcept {
  if (g_probe.load(std::memory_order_relaxed) && n > g_largest.load(std::memory_order_relaxed)) g_largest = n;
  return std::malloc(n ? n : 1);
}
}  // namespace
void* operator new(size_t n) {
  if (void* p = probed_alloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return probed_alloc(n); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return probed_alloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace rlx::formats {
namespace {

using test::Bytes;

enum class Reader { safetensors, gguf };

// Parses `bytes`; expects a format error whose message holds every fragment, and no single
// allocation larger than 1 MiB plus 8 bytes per input byte.
void expect_rejected(Reader reader, const std::vector<uint8_t>& bytes, std::vector<std::string> fragments,
                     const SafetensorsLimits& st = {}, const GgufLimits& gg = {}) {
  SCOPED_TRACE(fragments.empty() ? std::string("(any)") : fragments[0]);
  g_largest = 0;
  g_probe = true;
  std::string what;
  ErrorKind kind = ErrorKind::internal;
  bool threw = false;
  try {
    if (reader == Reader::safetensors) parse_safetensors(bytes.data(), bytes.size(), nullptr, "bad.safetensors", st);
    else parse_gguf(bytes.data(), bytes.size(), nullptr, "bad.gguf", gg);
  } catch (const Error& e) {
    threw = true;
    what = e.what();
    kind = e.kind();
  }
  g_probe = false;
  ASSERT_TRUE(threw) << "accepted a malformed file";
  EXPECT_EQ(kind, ErrorKind::format) << what;
  fragments.push_back("at byte offset");
  for (const auto& f : fragments) EXPECT_NE(what.find(f), std::string::npos) << "missing '" << f << "' in: " << what;
  EXPECT_LE(g_largest.load(), (1u << 20) + 8 * bytes.size()) << what;
}

std::vector<uint8_t> st(const std::string& header, size_t data = 64) { return test::safetensors_raw(header, data); }

const char* kGoodHeader =
    R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
    R"("b":{"dtype":"I8","shape":[4],"data_offsets":[16,20]}})";

TEST(Malformed, SafetensorsCatalogue) {
  auto S = Reader::safetensors;
  ASSERT_NO_THROW(parse_safetensors(st(kGoodHeader, 20).data(), st(kGoodHeader, 20).size(), nullptr, "good"));
  expect_rejected(S, {}, {"header length at byte offset 0", "needs 8 bytes"});
  expect_rejected(S, {1, 0, 0}, {"header length", "truncated"});
  expect_rejected(S, Bytes().put<uint64_t>(1000).raw("{}").b, {"header length", "is 1000 bytes but only 2 bytes follow"});
  expect_rejected(S, Bytes().put<uint64_t>(uint64_t{1} << 62).raw("{}").b, {"header length", "above the 104857600-byte limit"});
  expect_rejected(S, st("[1,2]"), {"header at byte offset 8", "must start with '{'"});
  expect_rejected(S, st(R"({"a":{"dtype":"F32",)"), {"header JSON at byte offset", "malformed JSON"});
  expect_rejected(S, st("{\"a\xff\":{}}"), {"header JSON", "UTF-8"});
  expect_rejected(S, st(R"({} trailing)"), {"header JSON", "malformed JSON"});
  expect_rejected(S, st(R"({"a":3})"), {"entry 'a' must be an object, found a number"});
  expect_rejected(S, st(R"({"a":{"dtype":"F32","shape":[1]}})"), {"tensor 'a' has no 'data_offsets' field"});
  expect_rejected(S, st(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}})"), {"unknown field 'x'"});
  expect_rejected(S, st(R"({"a":{"dtype":"F32","dtype":"F16","shape":[1],"data_offsets":[0,4]}})"), {"repeats field 'dtype'"});
  expect_rejected(S, st(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{}})"), {"tensor 'a' appears twice"});
  expect_rejected(S, st(R"({"a":{"dtype":"F128","shape":[1],"data_offsets":[0,4]}})"), {"tensor 'a'", "unknown dtype 'F128'"});
  expect_rejected(S, st(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})"), {"values must be >= 0"});
  expect_rejected(S, st(R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})"), {"values must be integers"});
  expect_rejected(S, st(R"({"a":{"dtype":"F32","shape":"big","data_offsets":[0,4]}})"), {"field 'shape' of tensor 'a' must be an array"});
  expect_rejected(S, st(R"({"a":{"dtype":7,"shape":[1],"data_offsets":[0,4]}})"), {"field 'dtype' of tensor 'a' must be a string"});
  std::string many_dims = R"({"a":{"dtype":"U8","shape":[)";
  for (int i = 0; i < 64; ++i) many_dims += "1,";
  many_dims += "1]}}";
  expect_rejected(S, st(many_dims), {"more than 64 dims"});
  expect_rejected(S, st(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}})"), {"has more than 2 values"});
  expect_rejected(S, st(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4]}})"), {"has 1 values"});
  expect_rejected(S, st(R"({"a":{"dtype":"F32","shape":[[[[[[1]]]]]],"data_offsets":[0,4]}})"), {"must hold integers, found an array"});
  expect_rejected(S, st(R"({"a":{"dtype":"F32","shape":[1000],"data_offsets":[0,4000]}})", 64),
                  {"tensor 'a'", "end past the data section (64 bytes"});
  expect_rejected(S, st(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})"), {"has begin after end"});
  expect_rejected(S, st(R"({"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})"),
                  {"tensor 'a'", "needs 16 bytes but data_offsets [0, 12] span 12"});
  expect_rejected(S, st(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})"),
                  {"tensor 'b'", "overlap those of tensor 'a'"});
  expect_rejected(S, st(R"({"a":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,4]}})"),
                  {"more elements than fit in 64 bits"});
  // a zero dim leaves no elements, but the others must still fit the strides of a tensor
  expect_rejected(S, st(R"({"a":{"dtype":"U8","shape":[0,4294967296,4294967296],"data_offsets":[0,0]}})"),
                  {"more elements than fit in 64 bits"});
  expect_rejected(S, st(R"({"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})"), {"not a whole number of bytes"});
  expect_rejected(S, st(R"({"__metadata__":{"n":1}})"), {"__metadata__ value 'n' must be a string, found a number"});
  expect_rejected(S, st(R"({"__metadata__":{"n":"a","n":"b"}})"), {"__metadata__ key 'n' appears twice"});
  SafetensorsLimits few;
  few.max_tensors = 2;
  expect_rejected(S, st(R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},"c":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}})"),
                  {"more than 2 tensors"}, few);
  // Files of other kinds renamed to .safetensors.
  expect_rejected(S, Bytes().raw("\x80\x02").raw("ctorch._utils\n_rebuild_tensor_v2\nq\x00").b, {"file header", "Python pickle"});
  expect_rejected(S, Bytes().raw("PK\x03\x04").zeros(40).b, {"zip archive"});
  // A 640-byte header starts with the bytes 80 02, like a pickle, and is valid all the same.
  std::string h640 = R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})";
  h640.append(640 - h640.size(), ' ');
  auto valid = st(h640, 2);
  ASSERT_EQ(valid[0], 0x80);
  ASSERT_EQ(valid[1], 0x02);
  EXPECT_EQ(parse_safetensors(valid.data(), valid.size(), nullptr, "h640").tensors.size(), 1u);
  expect_rejected(S, Bytes().raw("GGUF").put<uint32_t>(3).zeros(16).b, {"a GGUF file, not safetensors"});
}

TEST(Malformed, SafetensorsTruncatedAnywhere) {
  auto good = st(kGoodHeader, 20);
  for (size_t n = 0; n < good.size(); ++n)
    expect_rejected(Reader::safetensors, std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(n)), {});
}

// A GGUF header: magic, version, tensor count, metadata count.
Bytes gguf(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
  Bytes b;
  b.raw("GGUF").put<uint32_t>(version).put<uint64_t>(n_tensors).put<uint64_t>(n_kv);
  return b;
}

// One tensor info with `dims` given innermost first, padded, then `data` bytes of data.
Bytes gguf_tensor(const std::vector<uint64_t>& dims, uint32_t type, uint64_t offset, size_t data, std::string name = "w") {
  Bytes b = gguf(1, 0);
  b.str(name).put<uint32_t>(static_cast<uint32_t>(dims.size()));
  for (uint64_t d : dims) b.put<uint64_t>(d);
  b.put<uint32_t>(type).put<uint64_t>(offset).pad(32).zeros(data);
  return b;
}

TEST(Malformed, GgufCatalogue) {
  auto G = Reader::gguf;
  expect_rejected(G, {}, {"magic at byte offset 0", "needs 4 bytes"});
  expect_rejected(G, Bytes().raw("GGUX").zeros(20).b, {"magic at byte offset 0", "found 47 47 55 58"});
  expect_rejected(G, Bytes().raw("\x80\x02\x63\x74").zeros(20).b, {"magic", "Python pickle"});
  expect_rejected(G, gguf(0, 0, 1).b, {"version at byte offset 4", "GGUF version 1"});
  expect_rejected(G, gguf(0, 0, 4).b, {"version at byte offset 4", "unsupported GGUF version 4"});
  expect_rejected(G, gguf(0, 0, 0x03000000).b, {"version at byte offset 4", "big-endian"});
  expect_rejected(G, gguf(uint64_t{1} << 62, 0).b, {"tensor count at byte offset 8", "above the limit"});
  expect_rejected(G, gguf(0, uint64_t{1} << 62).b, {"metadata count at byte offset 16", "above the limit"});
  expect_rejected(G, gguf(1000, 1000).zeros(100).b, {"tensor count at byte offset 8", "cannot fit in the 100 bytes"});
  expect_rejected(G, gguf(0, 1).put<uint64_t>(uint64_t{1} << 60).zeros(8).b,
                  {"metadata key #0 at byte offset 24", "above the 268435456-byte limit"});
  expect_rejected(G, gguf(0, 1).put<uint64_t>(1000).raw("abc").zeros(10).b, {"metadata key #0 at byte offset 24", "runs past the end"});
  expect_rejected(G, gguf(0, 1).str("ab\xff").put<uint32_t>(0).put<uint8_t>(1).b,
                  {"metadata key #0 at byte offset 34", "not valid UTF-8"});
  expect_rejected(G, gguf(0, 1).str("k").put<uint32_t>(8).str("\xc0\xaf").b, {"metadata 'k' at byte offset 45", "not valid UTF-8"});
  expect_rejected(G, gguf(0, 1).str("k").put<uint32_t>(13).zeros(8).b, {"metadata 'k' type at byte offset 33", "unknown GGUF value type 13"});
  expect_rejected(G, gguf(0, 1).str("k").put<uint32_t>(7).put<uint8_t>(2).b, {"metadata 'k' at byte offset 37", "bool byte is 2"});
  expect_rejected(G, gguf(0, 1).str("k").put<uint32_t>(9).put<uint32_t>(4).put<uint64_t>(uint64_t{1} << 40).zeros(16).b,
                  {"metadata 'k' count at byte offset 41", "array of 1099511627776 uint32 needs at least 4 bytes each"});
  expect_rejected(G, gguf(0, 1).str("k").put<uint32_t>(9).put<uint32_t>(8).put<uint64_t>(2).str("ok").str("\xed\xa0\x80").b,
                  {"metadata 'k'[1]", "not valid UTF-8"});
  Bytes deep = gguf(0, 1).str("k").put<uint32_t>(9);
  for (int i = 0; i < 10; ++i) deep.put<uint32_t>(9).put<uint64_t>(1);
  expect_rejected(G, deep.zeros(16).b, {"metadata 'k'", "nested more than 8 deep"});
  expect_rejected(G, gguf(0, 2).str("k").put<uint32_t>(0).put<uint8_t>(1).str("k").put<uint32_t>(0).put<uint8_t>(1).b,
                  {"metadata key 'k' at byte offset 38", "appears twice"});
  expect_rejected(G, gguf(0, 1).str("general.alignment").put<uint32_t>(4).put<uint32_t>(1u << 31).b,
                  {"metadata 'general.alignment'", "above the 1048576-byte limit"});
  for (uint32_t bad : {0u, 3u, 48u})
    expect_rejected(G, gguf(0, 1).str("general.alignment").put<uint32_t>(4).put<uint32_t>(bad).b,
                    {"metadata 'general.alignment'", "must be a uint32 power of two"});
  expect_rejected(G, gguf(0, 1).str("general.alignment").put<uint32_t>(10).put<uint64_t>(32).b,
                  {"metadata 'general.alignment'", "found uint64"});

  // Tensor infos start at byte 24 here: name (8 + 1), n_dims at 33, dims from 37.
  expect_rejected(G, gguf_tensor({1, 1, 1, 1, 1, 1, 1, 1, 1}, 0, 0, 64).b, {"tensor 'w' n_dims at byte offset 33", "9 dims"});
  expect_rejected(G, gguf_tensor({uint64_t{1} << 40, uint64_t{1} << 40}, 0, 0, 64).b, {"tensor 'w' dim 1 at byte offset 45", "64 bits"});
  expect_rejected(G, gguf_tensor({0, uint64_t{1} << 40, uint64_t{1} << 40}, 0, 0, 64).b, {"tensor 'w' dim 2 at byte offset 53", "64 bits"});
  expect_rejected(G, gguf_tensor({4}, 99, 0, 64).b, {"tensor 'w' type at byte offset 45", "unknown ggml type id 99"});
  expect_rejected(G, gguf_tensor({16}, 2, 0, 64).b, {"tensor 'w' at byte offset 33", "not a multiple of the Q4_0 block size 32"});
  expect_rejected(G, gguf_tensor({4}, 0, 4, 64).b, {"tensor 'w' offset at byte offset 49", "not a multiple of the alignment 32"});
  expect_rejected(G, gguf_tensor({64}, 0, 0, 100).b, {"tensor 'w' offset at byte offset 49", "run past its end", "truncated"});
  expect_rejected(G, gguf(1, 0).str("w").put<uint32_t>(1).put<uint64_t>(64).put<uint32_t>(0).put<uint64_t>(0).b,
                  {"tensor data at byte offset 57", "past the end of the file"});
  expect_rejected(G, gguf(1, 0).str("\xff").put<uint32_t>(0).put<uint32_t>(0).put<uint64_t>(0).b,
                  {"tensor name #0 at byte offset 32", "not valid UTF-8"});
  Bytes two = gguf(2, 0);
  two.str("a").put<uint32_t>(1).put<uint64_t>(8).put<uint32_t>(0).put<uint64_t>(0);
  two.str("b").put<uint32_t>(1).put<uint64_t>(8).put<uint32_t>(0).put<uint64_t>(0);
  expect_rejected(G, two.pad(32).zeros(64).b, {"tensor 'b' offset", "overlap those of tensor 'a'"});
  Bytes dup = gguf(2, 0);
  dup.str("a").put<uint32_t>(1).put<uint64_t>(8).put<uint32_t>(0).put<uint64_t>(0);
  dup.str("a").put<uint32_t>(1).put<uint64_t>(8).put<uint32_t>(0).put<uint64_t>(32);
  expect_rejected(G, dup.pad(32).zeros(64).b, {"tensor 'a' at byte offset 57", "the name appears twice"});
}

TEST(Malformed, GgufTruncatedAnywhere) {
  GgufWriter w;
  w.set("general.architecture", GgufValue("llama"));
  w.set("tokenizer.ggml.tokens", gguf_array(std::vector<std::string>{"a", "bc", "\xc3\xa9"}));
  w.set("nested", gguf_array({gguf_array_of<uint16_t>(GgufType::u16, {1, 2})}));
  std::vector<float> x(64, 1.0f);
  w.add_tensor_f32("q", {2, 32}, x.data(), WeightType::q4_0);
  w.add_tensor_f32("f", {3}, x.data(), WeightType::f32);
  auto good = w.bytes();
  GgufFile f = parse_gguf(good.data(), good.size(), nullptr, "good");
  size_t end = 0;
  for (const auto& t : f.tensors) end = std::max<size_t>(end, t.file_offset + t.nbytes);
  for (size_t n = 0; n < end; ++n)
    expect_rejected(Reader::gguf, std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(n)), {});
}

TEST(Malformed, UnreadableFilesAreIoErrors) {
  try {
    read_safetensors("/nonexistent/model.safetensors");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.safetensors"), std::string::npos);
  }
  EXPECT_THROW(read_gguf(std::string(RLX_SOURCE_DIR)), Error);  // a directory
}

}  // namespace
}  // namespace rlx::formats
