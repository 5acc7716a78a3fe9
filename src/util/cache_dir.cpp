#include "util/cache_dir.h"

#include <cstdlib>
#include <filesystem>

namespace rlx {

std::string cache_dir(const std::string& device) {
  namespace fs = std::filesystem;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  fs::path base = xdg && *xdg ? fs::path(xdg) : home && *home ? fs::path(home) / ".cache" : fs::path();
  if (base.empty()) return "";
  std::error_code ec;
  fs::path dir = base / "rlx" / device;
  fs::create_directories(dir, ec);
  return ec ? "" : dir.string();
}

}  // namespace rlx
