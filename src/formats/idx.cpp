#include "formats/idx.h"

#include <zlib.h>

#include <cstring>
#include <vector>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::formats {

namespace {

constexpr size_t kMaxBytes = size_t{4} << 30;  // 4 GiB: more than any IDX dataset

std::vector<uint8_t> read_all(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");  // also reads uncompressed files as they are
  if (!f) throw Error(ErrorKind::io, cat("cannot open ", path));
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  for (;;) {
    int n = gzread(f, buf, sizeof(buf));
    if (n < 0) {
      int err = 0;
      std::string msg = gzerror(f, &err);
      gzclose(f);
      throw Error(ErrorKind::format, cat(path, ": corrupt gzip data (", msg, ") after ", out.size(), " bytes"));
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > kMaxBytes) {
      gzclose(f);
      throw Error(ErrorKind::format, cat(path, ": larger than ", kMaxBytes, " bytes once decompressed"));
    }
    out.insert(out.end(), buf, buf + n);
  }
  gzclose(f);
  return out;
}

}  // namespace

Tensor read_idx(const std::string& path) {
  std::vector<uint8_t> b = read_all(path);
  if (b.size() < 4) throw Error(ErrorKind::format, cat(path, ": magic at byte offset 0: file is only ", b.size(), " bytes"));
  if (b[0] != 0 || b[1] != 0)
    throw Error(ErrorKind::format, cat(path, ": magic at byte offset 0: expected 00 00 <type> <rank>, this is not an IDX file"));
  DType dt;
  switch (b[2]) {
    case 0x08: dt = DType::u8; break;
    case 0x09: dt = DType::i8; break;
    case 0x0B: dt = DType::i16; break;
    case 0x0C: dt = DType::i32; break;
    case 0x0D: dt = DType::f32; break;
    case 0x0E: dt = DType::f64; break;
    default: throw Error(ErrorKind::format, cat(path, ": element type at byte offset 2: unknown code 0x", std::hex, int{b[2]}));
  }
  int rank = b[3];
  if (rank == 0 || rank > 8) throw Error(ErrorKind::format, cat(path, ": rank at byte offset 3: ", rank, " is not in 1..8"));
  size_t header = 4 + 4 * static_cast<size_t>(rank);
  if (b.size() < header) throw Error(ErrorKind::format, cat(path, ": dims at byte offset 4: truncated header"));
  std::vector<int64_t> shape;
  size_t count = 1;
  for (int d = 0; d < rank; ++d) {
    const uint8_t* p = b.data() + 4 + 4 * d;
    uint32_t v = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
    if (v > 0 && count > kMaxBytes / v) throw Error(ErrorKind::format, cat(path, ": dim ", d, " at byte offset ", 4 + 4 * d, ": the element count overflows"));
    count *= v;
    shape.push_back(v);
  }
  size_t es = dtype_size(dt);
  size_t need = count * es;
  if (b.size() - header != need)
    throw Error(ErrorKind::format, cat(path, ": data at byte offset ", header, ": the dims need ", need, " bytes, the file has ", b.size() - header));
  Tensor t = Tensor::zeros(dt, shape);
  uint8_t* out = static_cast<uint8_t*>(t.data());
  const uint8_t* src = b.data() + header;
  // IDX stores multi-byte values big-endian.
  for (size_t i = 0; i < count; ++i)
    for (size_t k = 0; k < es; ++k) out[i * es + k] = src[i * es + (es - 1 - k)];
  return t;
}

}  // namespace rlx::formats
