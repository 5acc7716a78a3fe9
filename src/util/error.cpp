#include "rlx/error.h"

namespace rlx {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_argument: return "invalid argument";
    case ErrorKind::invalid_graph: return "invalid graph";
    case ErrorKind::parse: return "parse error";
    case ErrorKind::unsupported: return "unsupported";
    case ErrorKind::format: return "malformed file";
    case ErrorKind::io: return "i/o error";
    case ErrorKind::out_of_memory: return "out of memory";
    case ErrorKind::runtime: return "runtime error";
    case ErrorKind::internal: return "internal error";
  }
  return "error";
}

}  // namespace rlx
