#include "formats/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::formats {

namespace {

// Closes the descriptor on every path out of open(); the mapping does not need it.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void fail_io(const std::string& path, const char* what) {
  throw Error(ErrorKind::io, cat("cannot ", what, " '", path, "': ", std::strerror(errno)));
}

}  // namespace

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) fail_io(path, "open");
  struct stat st;
  if (::fstat(f.fd, &st) != 0) fail_io(path, "stat");
  if (!S_ISREG(st.st_mode))
    throw Error(ErrorKind::io, cat("'", path, "' is not a regular file"));
  std::shared_ptr<MappedFile> m(new MappedFile());
  m->path_ = path;
  m->size_ = static_cast<size_t>(st.st_size);
  if (m->size_ == 0) return m;  // mmap refuses length 0; an empty file has no bytes to view
  // PROT_WRITE + MAP_PRIVATE: a caller that writes into a tensor view gets a private page
  // instead of a crash, and the file never changes.
  void* p = ::mmap(nullptr, m->size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, f.fd, 0);
  if (p == MAP_FAILED) {
    if (errno == ENOMEM)
      throw Error(ErrorKind::out_of_memory, cat("cannot map '", path, "' (", m->size_, " bytes): ", std::strerror(errno)));
    fail_io(path, "map");
  }
  m->data_ = static_cast<uint8_t*>(p);
  return m;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

std::string read_text_file(const std::string& path, size_t max_bytes) {
  auto m = MappedFile::open(path);
  if (m->size() > max_bytes)
    throw Error(ErrorKind::format, cat("'", path, "' is ", m->size(), " bytes; files of this kind are at most ",
                                       max_bytes, " bytes"));
  return std::string(reinterpret_cast<const char*>(m->data()), m->size());
}

}  // namespace rlx::formats
