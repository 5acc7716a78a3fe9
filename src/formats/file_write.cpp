#include "formats/file_write.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::formats {

void write_file_atomic(const std::string& path,
                       const std::function<void(const std::function<void(const void*, size_t)>& put)>& fill) {
  std::string tmp = cat(path, ".tmp", ::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error(ErrorKind::io, cat("cannot create '", tmp, "': ", std::strerror(errno)));
  bool ok = true;
  try {
    fill([&](const void* data, size_t n) {
      if (ok && n && std::fwrite(data, 1, n, f) != n) ok = false;
    });
  } catch (...) {
    std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  int err = ok ? 0 : errno;
  if (std::fclose(f) != 0 && ok) ok = false, err = errno;
  if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) ok = false, err = errno;
  if (!ok) {
    std::remove(tmp.c_str());
    throw Error(ErrorKind::io, cat("cannot write '", path, "': ", std::strerror(err)));
  }
}

}  // namespace rlx::formats
