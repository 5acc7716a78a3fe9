// The one exception type RLX throws. A message names what was wrong (input, node, field,
// offset), what was expected and what was found, and the fix where one exists.
#pragma once
#include <stdexcept>
#include <string>

namespace rlx {

enum class ErrorKind {
  invalid_argument,  // a caller passed something malformed (shape, dtype, option)
  invalid_graph,     // the verifier rejected a graph
  parse,             // text IR or another textual input could not be parsed
  unsupported,       // the dispatch contract found ops a device cannot run
  format,            // a model/weights file is malformed
  io,                // a file could not be read or written
  out_of_memory,     // an allocation above the limit or the machine's memory
  runtime,           // a kernel failed at run time (e.g. index out of range)
  internal,          // a bug in RLX: please report it
};

const char* error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace rlx
