// The CUDA libraries loaded on first use (cuFFT, cuSOLVER, cuSPARSE: every process would
// otherwise map their hundreds of MB at start). load_api fills an API struct — its entry points
// and an `error` string saying why it could not be loaded, empty when it was.
#pragma once
#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "util/strings.h"

namespace rlx::backends::cuda {

// fill(api, sym) names each entry point: sym(api.create, "cufftCreate").
template <class Api, class Fill>
Api load_api(const char* library, Fill&& fill) {
  Api api{};
  void* h = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    api.error = cat(library, " could not be loaded (", dlerror(), ")");
    return api;
  }
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
    if (!fn && api.error.empty()) api.error = cat(library, " has no ", name);
  };
  fill(api, sym);
  return api;
}

}  // namespace rlx::backends::cuda
