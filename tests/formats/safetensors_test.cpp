// safetensors: write → read round trips for every dtype, zero-copy views, sharded models.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "formats/inspect.h"
#include "formats/safetensors.h"
#include "rlx/error.h"
#include "test_util.h"

namespace rlx::formats {
namespace {

using test::scratch_dir;

const WeightType kSafetensorsTypes[] = {
    WeightType::f64,     WeightType::f32,     WeightType::f16,     WeightType::bf16,    WeightType::c64,
    WeightType::f8_e4m3, WeightType::f8_e5m2, WeightType::f8_e8m0, WeightType::f6_e2m3, WeightType::f6_e3m2,
    WeightType::f4,      WeightType::i64,     WeightType::i32,     WeightType::i16,     WeightType::i8,
    WeightType::u64,     WeightType::u32,     WeightType::u16,     WeightType::u8,      WeightType::boolean};

TensorView random_view(const std::string& name, WeightType t, std::vector<int64_t> shape, std::mt19937& rng) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<uint8_t> bytes(*weight_type_bytes(t, static_cast<uint64_t>(n)));
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  if (t == WeightType::boolean)
    for (auto& b : bytes) b &= 1;
  return owned_view(name, t, std::move(shape), std::move(bytes));
}

TEST(Safetensors, RoundTripEveryDtypeIsByteIdentical) {
  std::mt19937 rng(7);
  std::vector<TensorView> in;
  for (WeightType t : kSafetensorsTypes)
    in.push_back(random_view(std::string("t.") + weight_type_name(t), t, {3, 4, 2}, rng));  // 24 values: whole F4/F6 bytes
  in.push_back(random_view("scalar", WeightType::f32, {}, rng));
  in.push_back(random_view("empty", WeightType::f16, {0, 5}, rng));
  std::map<std::string, std::string> meta = {{"format", "pt"}, {"note", "h\xc3\xa9llo"}};
  std::string dir = scratch_dir("rt");
  write_safetensors(dir + "/a.safetensors", in, meta);
  SafetensorsFile f = read_safetensors(dir + "/a.safetensors");
  EXPECT_EQ(f.metadata, meta);
  ASSERT_EQ(f.tensors.size(), in.size());
  for (const TensorView& want : in) {
    const TensorView* got = f.find(want.name);
    ASSERT_NE(got, nullptr) << want.name;
    EXPECT_EQ(got->type, want.type) << want.name;
    EXPECT_EQ(got->shape, want.shape) << want.name;
    ASSERT_EQ(got->nbytes, want.nbytes) << want.name;
    if (want.nbytes) {
      EXPECT_EQ(0, std::memcmp(got->data, want.data, want.nbytes)) << want.name;
    }
    // Larger elements are laid out first, so every tensor is aligned for its own type.
    int64_t elem = weight_type_block_elems(got->type) == 1 ? weight_type_block_bytes(got->type) : 1;
    EXPECT_EQ(got->file_offset % static_cast<uint64_t>(elem), 0u) << want.name;
  }
  // Writing what was read gives the same file, byte for byte.
  write_safetensors(dir + "/b.safetensors", f.tensors, f.metadata);
  EXPECT_EQ(test::read_bytes(dir + "/a.safetensors"), test::read_bytes(dir + "/b.safetensors"));
}

TEST(Safetensors, TensorsAreZeroCopyViewsOfTheMapping) {
  std::vector<float> v = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f};
  std::string dir = scratch_dir("zc");
  write_safetensors(dir + "/m.safetensors", {view_of("w", Tensor::from_vector(v, {2, 3}))});
  Tensor t;
  const void* mapped = nullptr;
  {
    SafetensorsFile f = read_safetensors(dir + "/m.safetensors");
    t = to_tensor(f.tensors.at(0));
    mapped = f.tensors[0].data;
  }  // the file object is gone; the tensor's owner keeps the mapping alive
  EXPECT_EQ(t.data(), mapped);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.to_vector<float>(), v);
  t.data_as<float>()[0] = 42.0f;  // copy-on-write: allowed, and the file is unchanged
  EXPECT_EQ(to_tensor(read_safetensors(dir + "/m.safetensors").tensors[0]).to_vector<float>(), v);
}

TEST(Safetensors, StorageOnlyTypesNeedDequantize) {
  std::mt19937 rng(1);
  TensorView u32 = random_view("u", WeightType::u32, {4}, rng);
  try {
    to_tensor(u32);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("U32"), std::string::npos) << e.what();
  }
}

TEST(Safetensors, WriterRejectsWhatTheFormatCannotHold) {
  std::mt19937 rng(2);
  std::string dir = scratch_dir("w");
  auto q = owned_view("q", WeightType::q4_0, {32}, std::vector<uint8_t>(18));
  EXPECT_THROW(write_safetensors(dir + "/x.safetensors", {q}), Error);
  auto a = random_view("same", WeightType::f32, {2}, rng);
  EXPECT_THROW(write_safetensors(dir + "/x.safetensors", {a, a}), Error);
  auto bad = a;
  bad.nbytes = 4;
  EXPECT_THROW(write_safetensors(dir + "/x.safetensors", {bad}), Error);
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.safetensors"));
}

// Two shards and an index, as transformers' save_pretrained writes them.
std::string make_sharded(const std::string& dir, std::mt19937& rng) {
  write_safetensors(dir + "/model-00001-of-00002.safetensors",
                    {random_view("embed.weight", WeightType::bf16, {10, 4}, rng),
                     random_view("layers.0.w", WeightType::f32, {4, 4}, rng)},
                    {{"format", "pt"}});
  write_safetensors(dir + "/model-00002-of-00002.safetensors",
                    {random_view("layers.1.w", WeightType::f16, {4, 4}, rng),
                     random_view("head.bias", WeightType::i64, {3}, rng)},
                    {{"format", "pt"}});
  test::write_text(dir + "/model.safetensors.index.json",
                   R"({"metadata": {"total_size": 200}, "weight_map": {
                        "embed.weight": "model-00001-of-00002.safetensors",
                        "layers.0.w": "model-00001-of-00002.safetensors",
                        "layers.1.w": "model-00002-of-00002.safetensors",
                        "head.bias": "model-00002-of-00002.safetensors"}})");
  return dir;
}

TEST(Safetensors, ShardedModelListsEveryTensorOnce) {
  std::mt19937 rng(3);
  std::string dir = make_sharded(scratch_dir("sh"), rng);
  for (std::string path : {dir, dir + "/model.safetensors.index.json"}) {
    SafetensorsModel m = open_safetensors_model(path);
    ASSERT_EQ(m.files.size(), 2u);
    ASSERT_EQ(m.tensors.size(), 4u);
    EXPECT_EQ(m.metadata.at("total_size"), "200");
    EXPECT_EQ(m.find("embed.weight")->type, WeightType::bf16);
    EXPECT_EQ(m.find("layers.1.w")->shape, (std::vector<int64_t>{4, 4}));
    EXPECT_EQ(m.find("head.bias")->type, WeightType::i64);
  }
  nlohmann::json j = inspect_json(inspect(dir));
  EXPECT_EQ(j["format"], "safetensors");
  std::map<std::string, int> seen;
  for (const auto& t : j["tensors"]) ++seen[t["name"].get<std::string>()];
  EXPECT_EQ(seen, (std::map<std::string, int>{{"embed.weight", 1}, {"head.bias", 1}, {"layers.0.w", 1}, {"layers.1.w", 1}}));
  for (const auto& t : j["tensors"])
    if (t["name"] == "embed.weight") {
      EXPECT_EQ(t["dtype"], "BF16");
      EXPECT_EQ(t["shape"], nlohmann::json({10, 4}));
    }
}

TEST(Safetensors, ShardedIndexMustMatchTheShards) {
  std::mt19937 rng(4);
  std::string dir = make_sharded(scratch_dir("bad"), rng);
  auto expect_error = [&](const std::string& index, const std::string& fragment) {
    test::write_text(dir + "/model.safetensors.index.json", index);
    try {
      open_safetensors_model(dir);
      ADD_FAILURE() << "no error for " << index;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_error(R"({"weight_map": {"embed.weight": "model-00002-of-00002.safetensors",
                                   "layers.0.w": "model-00001-of-00002.safetensors"}})", "but it is in");
  expect_error(R"({"weight_map": {"embed.weight": "model-00002-of-00002.safetensors"}})", "no shard holds it");
  expect_error(R"({"weight_map": {"nope": "model-00001-of-00002.safetensors"}})", "no shard holds it");
  expect_error(R"({"weight_map": {"embed.weight": "../../etc/passwd"}})", "plain file names");
  expect_error(R"({"weight_map": {"embed.weight": "missing.safetensors"}})", "missing.safetensors");
  expect_error(R"({"weight_map": [1, 2]})", "weight_map");
  expect_error(R"({"weight_map": {"a": 3}})", "file name string");
}

TEST(Safetensors, SameTensorInTwoShardsIsAnError) {
  std::mt19937 rng(5);
  std::string dir = scratch_dir("dup");
  write_safetensors(dir + "/a.safetensors", {random_view("w", WeightType::f32, {2}, rng)});
  write_safetensors(dir + "/b.safetensors", {random_view("w", WeightType::f32, {2}, rng)});
  EXPECT_THROW(open_safetensors_model(dir), Error);
}

}  // namespace
}  // namespace rlx::formats
