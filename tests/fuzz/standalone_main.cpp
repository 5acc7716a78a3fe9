// A stand-in for libFuzzer when the fuzz targets are built without it (gcc, `make test`):
// runs every seed file, then `-runs=N` deterministic mutations of them (bit flips, interesting
// integers, truncation, insertion, deletion, chunk copies). Accepts libFuzzer's command line:
// flags start with '-', the rest are corpus directories or files. A target that defines
// LLVMFuzzerCustomMutator (as libFuzzer reads it) gets half of its inputs from it.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// A target's structure-aware mutator, where it has one (libFuzzer's hook; weak: most have none).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) __attribute__((weak));

namespace {

struct Rng {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  uint64_t next() {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return s;
  }
  size_t below(size_t n) { return n ? static_cast<size_t>(next() % n) : 0; }
};

void mutate(std::vector<uint8_t>& b, Rng& r, size_t max_len) {
  static const uint64_t kInteresting[] = {0, 1, 2, 3, 7, 8, 31, 32, 64, 127, 128, 255, 256, 0x7fff, 0xffff,
                                          0x7fffffff, 0xffffffffull, 0x100000000ull, 1ull << 40, 1ull << 62,
                                          0x7fffffffffffffffull, 0xffffffffffffffffull};
  int n = 1 + static_cast<int>(r.below(4));
  for (int k = 0; k < n; ++k) {
    switch (r.below(7)) {
      case 0:
        if (!b.empty()) b[r.below(b.size())] ^= static_cast<uint8_t>(1u << r.below(8));
        break;
      case 1:
        if (!b.empty()) b[r.below(b.size())] = static_cast<uint8_t>(kInteresting[r.below(std::size(kInteresting))]);
        break;
      case 2:
        if (b.size() >= 8) {
          uint64_t v = kInteresting[r.below(std::size(kInteresting))];
          size_t w = r.below(2) ? 8 : 4;
          std::memcpy(b.data() + r.below(b.size() - w + 1), &v, w);
        }
        break;
      case 3:
        b.resize(r.below(b.size() + 1));
        break;
      case 4:
        if (b.size() < max_len) b.insert(b.begin() + static_cast<long>(r.below(b.size() + 1)), static_cast<uint8_t>(r.next()));
        break;
      case 5:
        if (!b.empty()) b.erase(b.begin() + static_cast<long>(r.below(b.size())));
        break;
      case 6:
        if (b.size() > 2) {
          size_t from = r.below(b.size()), len = 1 + r.below(std::min<size_t>(32, b.size() - from));
          std::vector<uint8_t> chunk(b.begin() + static_cast<long>(from), b.begin() + static_cast<long>(from + len));
          size_t to = r.below(b.size());
          if (b.size() + len <= max_len) b.insert(b.begin() + static_cast<long>(to), chunk.begin(), chunk.end());
        }
        break;
    }
  }
}

std::vector<uint8_t> read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

int main(int argc, char** argv) {
  long runs = 0;
  size_t max_len = 65536;
  std::vector<std::vector<uint8_t>> seeds;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("-runs=", 0) == 0) runs = std::atol(a.c_str() + 6);
    else if (a.rfind("-max_len=", 0) == 0) max_len = static_cast<size_t>(std::atol(a.c_str() + 9));
    else if (a[0] == '-') continue;  // other libFuzzer flags
    else if (std::filesystem::is_directory(a)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::directory_iterator(a))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& p : files) seeds.push_back(read_file(p));
    } else {
      seeds.push_back(read_file(a));
    }
  }
  if (seeds.empty()) seeds.emplace_back();
  for (const auto& s : seeds) LLVMFuzzerTestOneInput(s.data(), s.size());
  Rng rng;
  std::vector<uint8_t> cur;
  for (long i = 0; i < runs; ++i) {
    // Mostly stack mutations on the previous input, restarting from a seed now and then.
    if (i % 16 == 0) cur = seeds[rng.below(seeds.size())];
    if (LLVMFuzzerCustomMutator && rng.below(2)) {  // half the inputs from the target's own mutator
      size_t n = cur.size();
      cur.resize(max_len);
      cur.resize(LLVMFuzzerCustomMutator(cur.data(), n, max_len, static_cast<unsigned>(rng.next())));
    } else {
      mutate(cur, rng, max_len);
    }
    LLVMFuzzerTestOneInput(cur.data(), cur.size());
  }
  std::printf("standalone fuzz driver: %zu seeds and %ld mutated inputs, no crash\n", seeds.size(), runs);
  return 0;
}
