#include "rlx/dtype.h"

namespace rlx {

namespace {
struct Info {
  const char* name;
  int bits;
  DTypeClass cls;
};
constexpr Info kInfo[] = {
#define X(name, bits, cls) {#name, bits, DTypeClass::cls},
    RLX_DTYPES(X)
#undef X
};
static_assert(sizeof(kInfo) / sizeof(kInfo[0]) == kNumDTypes);
}  // namespace

const char* dtype_name(DType t) {
  if (t == DType::boolean) return "bool";
  return kInfo[static_cast<int>(t)].name;
}

std::optional<DType> dtype_from_name(std::string_view name) {
  if (name == "bool") return DType::boolean;
  for (int i = 0; i < kNumDTypes; ++i)
    if (i != static_cast<int>(DType::boolean) && name == kInfo[i].name) return static_cast<DType>(i);
  return std::nullopt;
}

int dtype_bits(DType t) { return kInfo[static_cast<int>(t)].bits; }
DTypeClass dtype_class(DType t) { return kInfo[static_cast<int>(t)].cls; }

size_t dtype_bytes(DType t, int64_t n) {
  if (n <= 0) return 0;
  return (static_cast<size_t>(n) * dtype_bits(t) + 7) / 8;
}

size_t dtype_size(DType t) { return t == DType::i4 ? 0 : dtype_bits(t) / 8; }

}  // namespace rlx
