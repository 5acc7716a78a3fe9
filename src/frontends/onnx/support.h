// Up-front checks on an ONNX model: which nodes the importer cannot map (operator, opset or
// dtype), found from the protobuf and ONNX's own type inference without reading any weight.
#pragma once
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace rlx::frontends::onnx {

struct UnsupportedNode {
  std::string domain, op, node;
  int64_t opset = 0;
  std::vector<std::string> dtypes;  // the node's input/output types RLX lacks ("STRING", "UINT32", "sequence")
  bool no_converter = false;        // the operator itself is not mapped (else only its dtypes are missing)
  std::string str() const;          // "StringNormalizer (opset 10, dtypes STRING) node 'x': no converter"
};

std::vector<UnsupportedNode> find_unsupported(const ::onnx::ModelProto& model);

}  // namespace rlx::frontends::onnx
