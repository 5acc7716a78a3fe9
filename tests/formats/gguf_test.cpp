// GGUF: metadata of every value type and tensors of every storable type survive write → read;
// dims are stored innermost first and come back row-major.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "formats/gguf.h"
#include "formats/quant.h"
#include "rlx/error.h"
#include "test_util.h"

namespace rlx::formats {
namespace {

std::vector<std::pair<std::string, GgufValue>> every_value_type() {
  std::vector<GgufValue> nested = {gguf_array_of<int16_t>(GgufType::i16, {1, -2}),
                                   gguf_array_of<int16_t>(GgufType::i16, {}),
                                   gguf_array_of<int16_t>(GgufType::i16, {3})};
  return {
      {"general.architecture", GgufValue("llama")},
      {"t.u8", GgufValue(uint8_t{250})},
      {"t.i8", GgufValue(int8_t{-120})},
      {"t.u16", GgufValue(uint16_t{65000})},
      {"t.i16", GgufValue(int16_t{-32000})},
      {"t.u32", GgufValue(uint32_t{4000000000u})},
      {"t.i32", GgufValue(int32_t{-2000000000})},
      {"t.f32", GgufValue(0.1f)},
      {"t.bool", GgufValue(true)},
      {"t.string", GgufValue(std::string("h\xc3\xa9llo \xe2\x9c\x93"))},
      {"t.u64", GgufValue(uint64_t{9223372036854775813ull})},
      {"t.i64", GgufValue(int64_t{-4611686018427387907ll})},
      {"t.f64", GgufValue(1e300)},
      {"t.arr.u8", gguf_array_of<uint8_t>(GgufType::u8, {0, 1, 255})},
      {"t.arr.f32", gguf_array_of<float>(GgufType::f32, {0.5f, -1.25f, 3e-8f})},
      {"t.arr.bool", gguf_array({GgufValue(true), GgufValue(false)})},
      {"t.arr.string", gguf_array(std::vector<std::string>{"a", "", "\xc3\xbc"})},
      {"t.arr.u64", gguf_array_of<uint64_t>(GgufType::u64, {1, 18446744073709551615ull})},
      {"t.arr.empty", gguf_array_of<int64_t>(GgufType::i64, {})},
      {"t.arr.nested", gguf_array(nested)},
      {"t.arr.nested2", gguf_array({gguf_array({gguf_array(std::vector<std::string>{"x", "y"})})})},
  };
}

TEST(Gguf, MetadataOfEveryTypeRoundTrips) {
  GgufWriter w;
  auto kvs = every_value_type();
  for (const auto& [k, v] : kvs) w.set(k, v);
  auto bytes = w.bytes();
  GgufFile f = parse_gguf(bytes.data(), bytes.size(), nullptr, "mem");
  EXPECT_EQ(f.version, 3u);
  ASSERT_EQ(f.metadata.size(), kvs.size());
  for (size_t i = 0; i < kvs.size(); ++i) {
    EXPECT_EQ(f.metadata[i].first, kvs[i].first);
    EXPECT_EQ(f.metadata[i].second.type(), kvs[i].second.type()) << kvs[i].first;
    EXPECT_EQ(f.metadata[i].second.to_json(), kvs[i].second.to_json()) << kvs[i].first;
  }
  EXPECT_EQ(f.find("t.u64")->as_uint(), 9223372036854775813ull);
  EXPECT_EQ(f.find("t.i8")->as_int(), -120);
  EXPECT_EQ(*f.find("t.string")->as_string(), "h\xc3\xa9llo \xe2\x9c\x93");
  EXPECT_EQ(f.find("t.arr.nested")->as_array()->arrays.at(2).to_json(), nlohmann::json({3}));
  EXPECT_EQ(f.find("t.f32")->to_json().get<double>(), static_cast<double>(0.1f));
  // Re-writing what was read reproduces the file.
  GgufWriter w2;
  for (const auto& [k, v] : f.metadata) w2.set(k, v);
  EXPECT_EQ(w2.bytes(), bytes);
}

TEST(Gguf, TensorsOfEveryStorableTypeRoundTripPacked) {
  std::mt19937 rng(11);
  const WeightType types[] = {WeightType::f32,  WeightType::f16,  WeightType::bf16, WeightType::f64,
                              WeightType::i8,   WeightType::i16,  WeightType::i32,  WeightType::i64,
                              WeightType::q4_0, WeightType::q4_1, WeightType::q5_0, WeightType::q5_1,
                              WeightType::q8_0, WeightType::q2_k, WeightType::q3_k, WeightType::q4_k,
                              WeightType::q5_k, WeightType::q6_k, WeightType::q8_k, WeightType::iq4_nl, WeightType::iq4_xs};
  GgufWriter w;
  w.set("general.alignment", GgufValue(uint32_t{64}));
  std::vector<TensorView> in;
  for (WeightType t : types) {
    std::vector<int64_t> shape = {2, 3, 256};  // rows of whole K-quant blocks
    std::vector<uint8_t> bytes(*weight_type_bytes(t, 2 * 3 * 256));
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    in.push_back(owned_view(weight_type_name(t), t, shape, std::move(bytes)));
    w.add_tensor(in.back());
  }
  std::string dir = test::scratch_dir("t");
  w.write(dir + "/m.gguf");
  EXPECT_EQ(test::read_bytes(dir + "/m.gguf"), w.bytes());  // streamed and in-memory forms agree
  GgufFile f = read_gguf(dir + "/m.gguf");
  EXPECT_EQ(f.alignment, 64u);
  EXPECT_EQ(f.find("general.alignment")->as_uint(), 64u);
  ASSERT_EQ(f.tensors.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const TensorView& got = f.tensors[i];
    EXPECT_EQ(got.name, in[i].name);
    EXPECT_EQ(got.type, in[i].type);
    EXPECT_EQ(got.ggml_type, *weight_type_ggml_id(in[i].type));
    EXPECT_EQ(got.shape, in[i].shape);
    ASSERT_EQ(got.nbytes, in[i].nbytes);
    EXPECT_EQ(0, std::memcmp(got.data, in[i].data, got.nbytes)) << got.name;
    EXPECT_EQ((got.file_offset - f.data_offset) % 64, 0u);
  }
}

TEST(Gguf, DimsAreStoredInnermostFirst) {
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[i] = static_cast<float>(i);
  GgufWriter w;
  w.add_tensor_f32("x", {2, 3, 4}, v.data(), WeightType::f32);
  auto bytes = w.bytes();
  // The tensor info sits after the 24-byte header: name, n_dims = 3, then dims 4, 3, 2.
  size_t at = 24 + 8 + 1 + 4;
  uint64_t dims[3];
  std::memcpy(dims, bytes.data() + at, sizeof dims);
  EXPECT_EQ(dims[0], 4u);
  EXPECT_EQ(dims[1], 3u);
  EXPECT_EQ(dims[2], 2u);
  GgufFile f = parse_gguf(bytes.data(), bytes.size(), nullptr, "mem");
  Tensor t = dequantize(f.tensors[0]);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(t.to_vector<float>(), v);
}

TEST(Gguf, ReadsVersion2) {
  // v2 and v3 share one layout (v3 only allows big-endian files, which RLX refuses by name).
  GgufWriter w;
  w.set("general.architecture", GgufValue("llama"));
  std::vector<float> x(32, 2.0f);
  w.add_tensor_f32("w", {32}, x.data(), WeightType::f32);
  auto bytes = w.bytes();
  bytes[4] = 2;
  GgufFile f = parse_gguf(bytes.data(), bytes.size(), nullptr, "v2.gguf");
  EXPECT_EQ(f.version, 2u);
  EXPECT_EQ(dequantize(f.tensors.at(0)).to_vector<float>(), x);
}

TEST(Gguf, UnsupportedQuantTypesAreNamedWhenUsed) {
  // A file whose tensor uses IQ2_XXS (ggml type 16): readable, listed by name, not decodable.
  test::Bytes b;
  b.raw("GGUF").put<uint32_t>(3).put<uint64_t>(1).put<uint64_t>(0);
  b.str("blk.0.attn_q.weight").put<uint32_t>(2).put<uint64_t>(256).put<uint64_t>(2).put<uint32_t>(16).put<uint64_t>(0);
  b.pad(32).zeros(2 * 66);
  GgufFile f = parse_gguf(b.b.data(), b.size(), nullptr, "iq.gguf");
  ASSERT_EQ(f.tensors.size(), 1u);
  EXPECT_EQ(f.tensors[0].type, WeightType::unsupported);
  EXPECT_EQ(f.tensors[0].type_name(), "IQ2_XXS");
  try {
    dequantize(f.tensors[0]);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    EXPECT_EQ(std::string(e.what()), "tensor blk.0.attn_q.weight uses quant type IQ2_XXS, which RLX does not support yet");
  }
  for (uint32_t id : {17u, 18u, 19u, 21u, 22u, 29u, 34u, 35u, 39u})
    EXPECT_EQ(weight_type_from_ggml(id), WeightType::unsupported) << ggml_type_name(id);
  EXPECT_EQ(weight_type_from_ggml(20), WeightType::iq4_nl);
  EXPECT_EQ(weight_type_from_ggml(23), WeightType::iq4_xs);
}

TEST(Gguf, WriterChecksItsInputs) {
  GgufWriter w;
  std::vector<float> v(256);
  EXPECT_THROW(w.add_tensor_f32("x", {48}, v.data(), WeightType::q4_0), Error);  // 48 is not whole blocks of 32
  EXPECT_THROW(w.add_tensor_f32("x", {256}, v.data(), WeightType::q8_k), Error);  // RLX does not write Q8_K
  w.add_tensor_f32("x", {32}, v.data(), WeightType::q8_0);
  EXPECT_THROW(w.add_tensor_f32("x", {32}, v.data(), WeightType::q8_0), Error);  // duplicate name
  EXPECT_THROW(w.set("general.alignment", GgufValue(uint32_t{48})), Error);
  EXPECT_THROW(w.set("k", GgufValue(std::string("\xff"))), Error);
  EXPECT_THROW(gguf_array({GgufValue(uint8_t{1}), GgufValue(int8_t{1})}), Error);
}

}  // namespace
}  // namespace rlx::formats
