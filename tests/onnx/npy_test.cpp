// .npy reading and writing: every RLX dtype round-trips; big-endian and Fortran-order files
// read correctly; malformed files are a clear rlx::Error.
#include <gtest/gtest.h>

#include "formats/npy.h"
#include "rlx/error.h"

namespace {

using rlx::DType;
using rlx::Tensor;

TEST(Npy, EveryDtypeRoundTrips) {
  for (DType d : {DType::f32, DType::f64, DType::f16, DType::i8, DType::u8, DType::i16, DType::i32, DType::i64, DType::boolean, DType::c64}) {
    std::vector<double> v = {0, 1, -2, 3, 1, 0};
    if (d == DType::u8 || d == DType::boolean) v = {0, 1, 2, 3, 1, 0};
    Tensor t = Tensor::from_f64(d, {2, 3}, v);
    std::string bytes = rlx::formats::npy_bytes(t);
    Tensor back = rlx::formats::parse_npy(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "t.npy");
    EXPECT_EQ(back.dtype(), d);
    EXPECT_EQ(back.shape(), t.shape());
    EXPECT_TRUE(back.bytes_equal(t)) << rlx::dtype_name(d);
  }
  Tensor s = Tensor::scalar(DType::f32, 2.5);
  std::string bytes = rlx::formats::npy_bytes(s);
  EXPECT_EQ(rlx::formats::parse_npy(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "s.npy").rank(), 0);
}

std::string npy(const std::string& header, const std::string& data) {
  std::string h = header;
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h + data;
}

TEST(Npy, BigEndianAndFortranOrder) {
  std::string be = {0, 0, 0, 1, 0, 0, 0, 2};
  std::string f = npy("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", be);
  Tensor t = rlx::formats::parse_npy(reinterpret_cast<const uint8_t*>(f.data()), f.size(), "be.npy");
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{1, 2}));
  std::vector<float> col = {1, 4, 2, 5, 3, 6};  // [[1,2,3],[4,5,6]] in column-major order
  std::string data(reinterpret_cast<const char*>(col.data()), 24);
  f = npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", data);
  t = rlx::formats::parse_npy(reinterpret_cast<const uint8_t*>(f.data()), f.size(), "f.npy");
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(Npy, MalformedFilesAreClearErrors) {
  auto fails = [](const std::string& bytes, const char* needle) {
    try {
      rlx::formats::parse_npy(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "x.npy");
      ADD_FAILURE() << "accepted: " << needle;
    } catch (const rlx::Error& e) {
      EXPECT_EQ(e.kind(), rlx::ErrorKind::format);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  fails("not numpy at all", "magic");
  fails(npy("{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }", "abcd"), "<u4");
  fails(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", "abcd"), "needs 16");
  fails(npy("{'descr': '<f4', 'fortran_order': False, }", ""), "shape");
  // an entry past int64 (strtoll saturates), and huge dims beside a zero one (found by fuzz_npy:
  // the zero made the count 0 while the strides overflowed)
  fails(npy("{'descr': '>f4', 'fortran_order': False, 'shape': (0, 99999999999999999999999999990, 9,), }", ""), "bad shape entry");
  fails(npy("{'descr': '>f4', 'fortran_order': False, 'shape': (0, 9999999999, 9999999999,), }", ""), "implausibly large");
}

}  // namespace
