// `rlx` — the RLX command-line tool. Every command accepts --json; errors are one paragraph
// on stderr and a non-zero exit code.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "commands.h"
#include "rlx/error.h"
#include "util/flags.h"
#include "util/host_memory.h"
#include "util/strings.h"

namespace rlx::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> cmds = {
      {"devices", "[--json]", "list devices, whether they are available, and their native-op counts", cmd_devices},
      {"compile", "FILE.rlx|MODEL.onnx [--device D] [--emit hir|mir|lir] [--report] [--policy P] [--precision P] [--stop-after PASS] [--dump-dir DIR] [--bind S=N,…] [--json]",
       "compile a graph, print IR at any level and the dispatch report", cmd_compile},
      {"export", "--target webgpu|metal|rocm|cortex-m4|cortex-m7|cortex-m55 FILE.rlx|MODEL.onnx|BERT_DIR -o DIR [--bind S=N,…] [--precision P] [--json]",
       "write the program of a compiled plan for a host RLX does not run in-process (webgpu: WGSL kernels, plan, weights, the JS module and a page a browser "
       "runs — for a BERT directory, a sentence-embedding page; metal: MSL kernels, a dispatch plan, the weights; rocm: HIP kernels, a host program and a "
       "Makefile for hipcc)", cmd_export},
      {"demo", "[--json]", "the main job on embedded defaults: a transformer block on every device, then Fashion-MNIST training", cmd_demo},
      {"train", "mnist [--data DIR] [--model mlp|cnn] [--hidden 128[,64…]] [--epochs N] [--batch B] [--lr X] [--optimizer sgd|adam|adamw] "
                "[--momentum M] [--weight-decay W] [--clip-norm C] [--lr-schedule constant|step|cosine] [--seed S] [--device D] "
                "[--qat int4|int8|int4/gN] [--qat-activations] [--precision f32|amp|bf16|amp-f16] [--loss-scale S [--loss-scale-interval N]] [--data-parallel] [--pipeline-parallel [--pipeline-schedule 1f1b|gpipe] [--micro-batches M]] [--pipeline-stages S (with both: each pipeline's ranks)] (under rlx launch) [--save ckpt.safetensors] [--load ckpt.safetensors] [--plot curves.png] [--limit N] [--threads N] [--json]",
       "train an image classifier on MNIST-format data (Fashion-MNIST by default)", cmd_train},
      {"info", "FILE|DIR [--json]", "format, metadata and tensors of a safetensors/GGUF/ONNX file or model directory", cmd_info},
      {"tokenize", "--model DIR|FILE.gguf --text T [--pair T2] [--special|--no-special] [--max-length N] [--json]", "token ids and tokens of a text (WordPiece or BPE, Hugging Face-exact)", cmd_tokenize},
      {"embed", "--model DIR|FILE.gguf [--text T]… [--file F|-] [--batch N] [--device D] [--precision f32] [--threads N] [--json]", "sentence embeddings with a BERT-family model directory (sentence-transformers pooling)", cmd_embed},
      {"quantize", "MODEL (--to gguf:Q8_0|Q6_K|Q5_K_M|Q5_K_S|Q5_K|Q5_1|Q5_0|Q4_K_M|Q4_K_S|Q4_K|Q4_1|Q4_0|IQ4_NL|IQ4_XS|Q3_K_L|Q3_K_M|Q3_K_S|Q3_K|Q2_K_S|Q2_K|F32|F16|BF16 -o OUT.gguf | --compare FILE.gguf) [--eval TEXT_FILE] [--tokens 512] [--imatrix-text CALIB_FILE [--imatrix-tokens 4096]] [--gate kld=X,kld_p99=X,top1=P,ppl=R] [--plot KLD.png] [--threads N] [--json] | CHECKPOINT.safetensors --to int8|int4 -o OUT.rlx [--calib 2000] [--observer minmax|percentile|mse|entropy] [--percentile 99.99] [--group 32] [--asymmetric] [--gate accuracy=POINTS] [--data DIR] [--json]",
       "quantize a llama-family Hugging Face model to a GGUF file, measured against f32 over a text (KL divergence, top-1 agreement, perplexity, teacher-forced); refused — exit 3, nothing written — when a --gate limit is broken; --imatrix-text weighs each column's error by its activations' mean square over a calibration text; --compare measures a GGUF made elsewhere (llama-quantize) the same way; an rlx train checkpoint becomes a static int8 graph (calibrated on training images) or int4 weights in groups, judged by test accuracy", cmd_quantize},
      {"bench", "WORKLOAD [options] (minilm; `rlx bench` lists them)", "benchmarks: p50/p90 latency of a workload", cmd_bench},
      {"generate", "--model DIR|FILE.gguf (--prompt T | --prompt-ids 1,2,3) [--max-tokens N] [--temperature 0] [--top-k K] [--top-p P] [--min-p P] [--repeat-penalty R] [--seed S] [--chat [--chat-template FILE.jinja]] [--no-think] [--ignore-eos] [--device D] [--precision f32|bf16] [--activations auto|q8|f32] [--threads N] [--tp N] [--pp N] (one rank of rlx launch -n TP·PP) [--report (every rank's dispatch report and share of the model)] [--json]",
       "text generation with a Qwen3 / llama-family model, streamed (greedy unless the model's generation_config samples)", cmd_generate},
      {"run", "MODEL.onnx|GRAPH.rlx --input NAME=FILE.npy … [--output DIR] [--device D] [--precision f32|bf16|f16|amp|int8|int4] [--threads N] [--json]", "run an ONNX model or a .rlx graph on .npy inputs, write its outputs as .npy", cmd_run},
      {"onnx-suite", "DIR [--filter REGEX] [--device D] [--json]", "ONNX backend test data: pass/fail per test, ends with `N passed, M failed`", cmd_onnx_suite},
      {"diff", "MODEL.onnx|FILE.rlx [--device D] [--against reference] [--input NAME=FILE.npy]… [--bind S=N,…] [--seed N] [--rtol R] [--atol A] [--top N] [--flip-weight NAME] [--json]",
       "the first node whose output differs between a device and the reference, and the largest errors (exit 3 when one does)", cmd_diff},
      {"launch", "-n N [--backend gloo|mpi|nccl] [--timeout S] [--json] -- COMMAND … | -n N --dry-run [--model qwen3-8b|qwen3-32b|…|DIR] [--tp T] [--pp P] [--precision bf16|q8_0|…] [--ctx 4096] [--batch 1] [--prompt 512] [--json]",
       "start N local ranks of a command (rlx bench collectives, …) that find each other through a rendezvous (Gloo: a file store; MPI: mpirun); when a rank fails the others are stopped and the failure is named. --dry-run plans a tensor/pipeline-parallel layout on paper: each rank's weights and KV cache, and the bytes a decode and a prefill step communicate",
       cmd_launch},
      {"splat", "render SCENE.ply|--random N [--eye x,y,z --target x,y,z [--up 0,1,0] [--fov 50] | --camera cameras.json [--view I]] [--size WxH] [--background r,g,b] [--alpha A.png] [--device D] [--threads N] -o OUT.png [--json] | fit [--gaussians 2000] [--target-gaussians 1000] [--views 16] [--size 128] [--steps 2000] [--lr 0.05] [--sh-degree 1] [--eval-every 100] [--seed 7] [--min-psnr DB] [--device D] [--threads N] [-o DIR] [--json]",
       "3D Gaussian splatting: render a .ply scene (the 3DGS layout) to PNG through a camera; fit a scene with Adam to views rendered from a known random one, writing the PSNR curve, before/after renders and both scenes (exit 3 below --min-psnr)", cmd_splat},
      {"serve", "(--model DIR|FILE.gguf | --embedding-model DIR)… [--host 127.0.0.1] [--port 8080] [--api-key K] [--parallel N] [--ctx N] [--chat-template FILE.jinja] [--model-name ID] [--embedding-model-name ID] [--max-body BYTES] [--device D] [--precision f32|bf16] [--activations q8|auto|f32] [--threads N]",
       "an OpenAI-compatible HTTP server: /v1/completions, /v1/chat/completions (streamed), /v1/embeddings, /v1/models, /health, /metrics; concurrent requests decode together. Quantized matrices take 8-bit activations by default, as llama.cpp's do (--activations auto keeps Q8_0's f32 activations, and so its greedy ids equal to f32 weights')", cmd_serve},
  };
  return cmds;
}

}  // namespace rlx::cli

namespace {

void print_usage() {
  std::printf("usage: rlx <command> [options]\n\ncommands:\n");
  for (const auto& c : rlx::cli::commands()) std::printf("  %-10s %s\n", c.name, c.summary);
  std::printf("\n  rlx <command> --help     options of one command\n  rlx --list-flags [--markdown]  environment flags (RLX_*)\n"
              "  rlx <command> … --memory-limit SIZE  fail cleanly past SIZE of host memory (8G, 512M; RLX_MEMORY_LIMIT)\n");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rlx;
  std::vector<std::string> tokens(argv + 1, argv + argc);
  if (tokens.empty() || tokens[0] == "--help" || tokens[0] == "-h" || tokens[0] == "help") {
    print_usage();
    return tokens.empty() ? 2 : 0;
  }
  try {
    if (tokens[0] == "--list-flags") {
      if (tokens.size() > 1 && tokens[1] == "--markdown") {
        std::fputs(flags_markdown().c_str(), stdout);
      } else {
        for (const auto& f : flag_infos())
          std::printf("%-22s %-7s = %-14s %s\n", f.name, f.type, flag_value_text(f.name).c_str(), f.doc);
      }
      return 0;
    }
    // --memory-limit SIZE, for any command (and, through the environment, the ranks rlx launch starts)
    for (size_t i = 1; i + 1 < tokens.size() && tokens[i] != "--"; ++i)
      if (tokens[i] == "--memory-limit") {
        set_memory_limit(parse_byte_size(tokens[i + 1], "--memory-limit"));
        ::setenv("RLX_MEMORY_LIMIT", tokens[i + 1].c_str(), 1);
        tokens.erase(tokens.begin() + static_cast<long>(i), tokens.begin() + static_cast<long>(i) + 2);
        break;
      }
    for (const auto& c : cli::commands()) {
      if (tokens[0] != c.name) continue;
      std::vector<std::string> rest(tokens.begin() + 1, tokens.end());
      for (const auto& t : rest) {
        if (t == "--") break;  // what follows is another command's (rlx launch)
        if (t == "--help" || t == "-h") {
          std::printf("usage: rlx %s %s\n  %s\n", c.name, c.usage, c.summary);
          return 0;
        }
      }
      cli::Args args(c.name, rest);
      return c.run(args);
    }
    std::fprintf(stderr, "rlx: unknown command '%s'\n\n", tokens[0].c_str());
    print_usage();
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "rlx %s: %s: %s\n", tokens[0].c_str(), error_kind_name(e.kind()), e.what());
    return e.kind() == ErrorKind::invalid_argument ? 2 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rlx %s: internal error: %s\n", tokens[0].c_str(), e.what());
    return 1;
  }
}
