// The subcommands of `rlx` (DESIGN §8). Each lives in its own file and returns an exit code.
#pragma once
#include <string>
#include <vector>

#include "args.h"

namespace rlx::cli {

struct Command {
  const char* name;
  const char* usage;    // one line: arguments
  const char* summary;  // one line: what it does
  int (*run)(Args& args);
};

const std::vector<Command>& commands();

int cmd_devices(Args& args);
int cmd_compile(Args& args);
int cmd_export(Args& args);
int cmd_demo(Args& args);
int cmd_train(Args& args);
int cmd_info(Args& args);
int cmd_tokenize(Args& args);
int cmd_embed(Args& args);
int cmd_bench(Args& args);
int cmd_generate(Args& args);
int cmd_run(Args& args);
int cmd_onnx_suite(Args& args);
int cmd_diff(Args& args);
int cmd_serve(Args& args);
int cmd_quantize(Args& args);
int cmd_launch(Args& args);
int cmd_splat(Args& args);
// rlx quantize CHECKPOINT.safetensors --to int8: the image classifiers of rlx train (quantize_classifier.cpp)
int cmd_quantize_classifier(Args& args, const std::string& to, const std::string& out);

}  // namespace rlx::cli
