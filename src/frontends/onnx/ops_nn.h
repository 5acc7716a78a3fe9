// Convolution helpers shared by Conv, ConvTranspose and the quantized convolutions.
#pragma once
#include "frontends/onnx/importer.h"

namespace rlx::frontends::onnx {

struct ConvGeometry {
  Ints strides, dilations, lo, hi;  // per spatial dim
};

// strides/dilations/pads/auto_pad of a Conv-like node for input dims xs and kernel dims.
ConvGeometry conv_geometry(NodeCtx& c, const std::vector<int64_t>& xs, const std::vector<int64_t>& kernel);
ValueId conv_nd(FoldingBuilder& b, ValueId x, ValueId w, const ConvGeometry& g, int64_t groups);
ValueId add_channel_bias(FoldingBuilder& b, ValueId y, ValueId bias);

}  // namespace rlx::frontends::onnx
