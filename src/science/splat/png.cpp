#include "science/splat/png.h"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::science::splat {

void write_png(const std::string& path, const float* pixels, int64_t width, int64_t height, int64_t channels) {
  if (channels != 1 && channels != 3) throw Error(ErrorKind::invalid_argument, cat("a PNG image has 1 or 3 channels here, got ", channels));
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), std::fclose);
  if (!f) throw Error(ErrorKind::io, cat("cannot write ", path));
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!info) {
    png_destroy_write_struct(&png, nullptr);
    throw Error(ErrorKind::out_of_memory, "libpng could not start a PNG writer");
  }
  std::vector<uint8_t> row(static_cast<size_t>(width * channels));
  // libpng reports errors by longjmp: nothing with a destructor may be created below this point
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw Error(ErrorKind::io, cat("libpng failed writing ", path));
  }
  png_init_io(png, f.get());
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8, channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int64_t y = 0; y < height; ++y) {
    const float* src = pixels + y * width * channels;
    for (int64_t i = 0; i < width * channels; ++i) {
      float v = std::isnan(src[i]) ? 0.f : std::clamp(src[i], 0.f, 1.f);
      row[static_cast<size_t>(i)] = static_cast<uint8_t>(std::lround(v * 255.f));
    }
    png_write_row(png, row.data());
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  if (std::fflush(f.get()) != 0) throw Error(ErrorKind::io, cat("cannot write ", path));
}

}  // namespace rlx::science::splat
