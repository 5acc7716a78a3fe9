#include "frontends/rten/rten_attrs.h"

#include <cstring>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::frontends::rten {

namespace fb = rlx::rten_fb;

namespace {

class Attrs {
 public:
  Attrs(::onnx::NodeProto* n) : n_(n) {}
  void i(const char* name, int64_t v) { add(name, ::onnx::AttributeProto::INT)->set_i(v); }
  void f(const char* name, float v) { add(name, ::onnx::AttributeProto::FLOAT)->set_f(v); }
  void s(const char* name, const std::string& v) { add(name, ::onnx::AttributeProto::STRING)->set_s(v); }
  template <class V>
  void ints(const char* name, const V* v) {
    if (!v) return;
    auto* a = add(name, ::onnx::AttributeProto::INTS);
    for (auto x : *v) a->add_ints(static_cast<int64_t>(x));
  }
  ::onnx::AttributeProto* add(const char* name, ::onnx::AttributeProto::AttributeType t) {
    auto* a = n_->add_attribute();
    a->set_name(name);
    a->set_type(t);
    return a;
  }

 private:
  ::onnx::NodeProto* n_;
};

const char* auto_pad(fb::AutoPad p) { return p == fb::AutoPad::Same ? "SAME_UPPER" : "NOTSET"; }

std::string lower(const char* s) {
  std::string r = s ? s : "";
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

const char* direction(fb::RNNDirection d) {
  return d == fb::RNNDirection::Reverse ? "reverse" : d == fb::RNNDirection::Bidirectional ? "bidirectional" : "forward";
}

const char* coord_mode(fb::CoordTransformMode m) {
  switch (m) {
    case fb::CoordTransformMode::Asymmetric: return "asymmetric";
    case fb::CoordTransformMode::AlignCorners: return "align_corners";
    case fb::CoordTransformMode::PytorchHalfPixel: return "pytorch_half_pixel";
    default: return "half_pixel";
  }
}

const char* nearest_mode(fb::NearestMode m) {
  switch (m) {
    case fb::NearestMode::Floor: return "floor";
    case fb::NearestMode::Ceil: return "ceil";
    case fb::NearestMode::RoundPreferCeil: return "round_prefer_ceil";
    default: return "round_prefer_floor";
  }
}

const char* reduction(fb::ScatterReduction r) {
  switch (r) {
    case fb::ScatterReduction::Add: return "add";
    case fb::ScatterReduction::Mul: return "mul";
    case fb::ScatterReduction::Min: return "min";
    case fb::ScatterReduction::Max: return "max";
    default: return "none";
  }
}

// A pool's kernel, strides, pads and padding mode.
template <class P>
void pool(Attrs& a, const P* p) {
  a.ints("kernel_shape", p->kernel_size());
  a.s("auto_pad", auto_pad(p->auto_pad()));
  a.ints("pads", p->pads());
  a.ints("strides", p->strides());
  a.i("ceil_mode", p->ceil_mode());
}

}  // namespace

void attributes(const fb::OperatorNode* op, ::onnx::NodeProto* node, ::onnx::GraphProto* graph,
                const std::function<void(const fb::Graph*, ::onnx::GraphProto*)>& subgraph, const std::string& source) {
  Attrs a(node);
  using T = fb::OperatorType;
  const T t = op->type();
  // An attribute table of the wrong kind for the operator is a malformed file, not a default.
  auto want = [&](fb::OperatorAttrs kind) -> bool {
    if (op->attrs_type() == fb::OperatorAttrs::NONE) return false;  // all defaults
    if (op->attrs_type() != kind)
      throw Error(ErrorKind::format, cat(source, ": node '", node->name(), "' (", node->op_type(), ") carries ", fb::EnumNameOperatorAttrs(op->attrs_type()),
                                         " attributes"));
    if (!op->attrs())  // the union's type without its table
      throw Error(ErrorKind::format, cat(source, ": node '", node->name(), "' (", node->op_type(), ") names ", fb::EnumNameOperatorAttrs(kind), " attributes but has none"));
    return true;
  };
  switch (t) {
    case T::ArgMax:
    case T::ArgMin:
      if (want(fb::OperatorAttrs::ArgMaxAttrs)) {
        auto* x = op->attrs_as_ArgMaxAttrs();
        a.i("axis", x->axis());
        a.i("keepdims", x->keep_dims());
      }
      break;
    case T::AveragePool:
      if (want(fb::OperatorAttrs::AveragePoolAttrs)) {
        auto* x = op->attrs_as_AveragePoolAttrs();
        pool(a, x);
        a.i("count_include_pad", x->count_include_pad());
      }
      break;
    case T::MaxPool:
      if (want(fb::OperatorAttrs::MaxPoolAttrs)) pool(a, op->attrs_as_MaxPoolAttrs());
      break;
    case T::BatchNormalization:
    case T::InstanceNormalization:
      if (want(fb::OperatorAttrs::BatchNormalizationAttrs)) a.f("epsilon", op->attrs_as_BatchNormalizationAttrs()->epsilon());
      break;
    case T::Cast:
      if (want(fb::OperatorAttrs::CastAttrs)) a.i("to", onnx_dtype(op->attrs_as_CastAttrs()->to()));
      break;
    case T::Concat:
      if (want(fb::OperatorAttrs::ConcatAttrs)) a.i("axis", op->attrs_as_ConcatAttrs()->axis());
      break;
    case T::ConcatFromSequence:
      if (want(fb::OperatorAttrs::ConcatFromSequenceAttrs)) {
        a.i("axis", op->attrs_as_ConcatFromSequenceAttrs()->axis());
        a.i("new_axis", op->attrs_as_ConcatFromSequenceAttrs()->new_axis());
      }
      break;
    case T::ConstantOfShape:
      if (want(fb::OperatorAttrs::ConstantOfShapeAttrs)) {
        auto* x = op->attrs_as_ConstantOfShapeAttrs();
        ::onnx::TensorProto* v = a.add("value", ::onnx::AttributeProto::TENSOR)->mutable_t();
        v->add_dims(1);
        if (const fb::IntScalar* i = x->value_as_IntScalar()) {
          v->set_data_type(::onnx::TensorProto::INT64);
          v->add_int64_data(i->value());
        } else if (const fb::FloatScalar* f = x->value_as_FloatScalar()) {
          v->set_data_type(::onnx::TensorProto::FLOAT);
          v->add_float_data(f->value());
        } else {
          throw Error(ErrorKind::format, cat(source, ": ConstantOfShape '", node->name(), "' has no value"));
        }
      }
      break;
    case T::Conv:
    case T::ConvInteger:
      if (want(fb::OperatorAttrs::ConvAttrs)) {
        auto* x = op->attrs_as_ConvAttrs();
        a.s("auto_pad", auto_pad(x->auto_pad()));
        a.ints("pads", x->pads());
        a.i("group", x->groups() ? x->groups() : 1);
        a.ints("strides", x->strides());
        a.ints("dilations", x->dilations());
      }
      break;
    case T::ConvTranspose:
      if (want(fb::OperatorAttrs::ConvTransposeAttrs)) {
        auto* x = op->attrs_as_ConvTransposeAttrs();
        a.ints("strides", x->strides());
        a.s("auto_pad", auto_pad(x->auto_pad()));
        a.ints("pads", x->pads());
        a.i("group", x->groups());
        a.ints("output_padding", x->output_padding());
        a.ints("dilations", x->dilations());
      }
      break;
    case T::CumSum:
      if (want(fb::OperatorAttrs::CumSumAttrs)) {
        a.i("exclusive", op->attrs_as_CumSumAttrs()->exclusive());
        a.i("reverse", op->attrs_as_CumSumAttrs()->reverse());
      }
      break;
    case T::DequantizeLinear:
      if (want(fb::OperatorAttrs::DequantizeLinearAttrs)) a.i("axis", op->attrs_as_DequantizeLinearAttrs()->axis());
      break;
    case T::QuantizeLinear:
      if (want(fb::OperatorAttrs::QuantizeLinearAttrs)) {
        auto* x = op->attrs_as_QuantizeLinearAttrs();
        a.i("axis", x->axis());
        if (x->output_dtype()) a.i("output_dtype", onnx_dtype(*x->output_dtype()));
      }
      break;
    case T::DepthToSpace:
      if (want(fb::OperatorAttrs::DepthToSpaceAttrs)) {
        auto* x = op->attrs_as_DepthToSpaceAttrs();
        a.s("mode", x->mode() == fb::DepthToSpaceMode::CRD ? "CRD" : "DCR");
        a.i("blocksize", x->block_size());
      }
      break;
    case T::DFT:
      if (want(fb::OperatorAttrs::DFTAttrs)) {
        a.i("inverse", op->attrs_as_DFTAttrs()->inverse());
        a.i("onesided", op->attrs_as_DFTAttrs()->onesided());
      }
      break;
    case T::Dropout:
      if (want(fb::OperatorAttrs::DropoutAttrs) && op->attrs_as_DropoutAttrs()->seed()) a.i("seed", *op->attrs_as_DropoutAttrs()->seed());
      break;
    case T::Einsum:
      if (want(fb::OperatorAttrs::EinsumAttrs) && op->attrs_as_EinsumAttrs()->equation()) a.s("equation", op->attrs_as_EinsumAttrs()->equation()->str());
      break;
    case T::Elu:
      if (want(fb::OperatorAttrs::EluAttrs)) a.f("alpha", op->attrs_as_EluAttrs()->alpha());
      break;
    case T::EyeLike:
      if (want(fb::OperatorAttrs::EyeLikeAttrs)) {
        auto* x = op->attrs_as_EyeLikeAttrs();
        if (x->dtype()) a.i("dtype", onnx_dtype(*x->dtype()));
        a.i("k", x->k());
      }
      break;
    case T::Flatten:
      if (want(fb::OperatorAttrs::FlattenAttrs)) a.i("axis", op->attrs_as_FlattenAttrs()->axis());
      break;
    case T::Gather:
    case T::GatherElements:
      if (want(fb::OperatorAttrs::GatherAttrs)) a.i("axis", op->attrs_as_GatherAttrs()->axis());
      break;
    case T::GatherND:
      if (want(fb::OperatorAttrs::GatherNDAttrs)) a.i("batch_dims", op->attrs_as_GatherNDAttrs()->batch_dims());
      break;
    case T::Gelu:
      if (want(fb::OperatorAttrs::GeluAttrs)) a.s("approximate", op->attrs_as_GeluAttrs()->approximate() == fb::GeluApproximation::Tanh ? "tanh" : "none");
      break;
    case T::Gemm:
      if (want(fb::OperatorAttrs::GemmAttrs)) {
        auto* x = op->attrs_as_GemmAttrs();
        a.f("alpha", x->alpha());
        a.f("beta", x->beta());
        a.i("transA", x->transpose_a());
        a.i("transB", x->transpose_b());
      }
      break;
    case T::GridSample:
      if (want(fb::OperatorAttrs::GridSampleAttrs)) a.i("align_corners", op->attrs_as_GridSampleAttrs()->align_corners());
      break;
    case T::GRU:
      if (want(fb::OperatorAttrs::GRUAttrs)) {
        auto* x = op->attrs_as_GRUAttrs();
        a.s("direction", direction(x->direction()));
        a.i("hidden_size", x->hidden_size());
        a.i("linear_before_reset", x->linear_before_reset());
      }
      break;
    case T::LSTM:
      if (want(fb::OperatorAttrs::LSTMAttrs)) {
        a.s("direction", direction(op->attrs_as_LSTMAttrs()->direction()));
        a.i("hidden_size", op->attrs_as_LSTMAttrs()->hidden_size());
      }
      break;
    case T::HardSigmoid:
      if (want(fb::OperatorAttrs::HardSigmoidAttrs)) {
        a.f("alpha", op->attrs_as_HardSigmoidAttrs()->alpha());
        a.f("beta", op->attrs_as_HardSigmoidAttrs()->beta());
      }
      break;
    case T::If:
      if (want(fb::OperatorAttrs::IfAttrs)) {
        auto* x = op->attrs_as_IfAttrs();
        if (!x->then_branch() || !x->else_branch()) throw Error(ErrorKind::format, cat(source, ": If '", node->name(), "' lacks a branch"));
        subgraph(x->then_branch(), a.add("then_branch", ::onnx::AttributeProto::GRAPH)->mutable_g());
        subgraph(x->else_branch(), a.add("else_branch", ::onnx::AttributeProto::GRAPH)->mutable_g());
      }
      break;
    case T::Loop:
      if (want(fb::OperatorAttrs::LoopAttrs)) {
        if (!op->attrs_as_LoopAttrs()->body()) throw Error(ErrorKind::format, cat(source, ": Loop '", node->name(), "' has no body"));
        subgraph(op->attrs_as_LoopAttrs()->body(), a.add("body", ::onnx::AttributeProto::GRAPH)->mutable_g());
      }
      break;
    case T::LayerNormalization:
      if (want(fb::OperatorAttrs::LayerNormalizationAttrs)) {
        a.i("axis", op->attrs_as_LayerNormalizationAttrs()->axis());
        a.f("epsilon", op->attrs_as_LayerNormalizationAttrs()->epsilon());
      }
      break;
    case T::LeakyRelu:
      if (want(fb::OperatorAttrs::LeakyReluAttrs)) a.f("alpha", op->attrs_as_LeakyReluAttrs()->alpha());
      break;
    case T::LogSoftmax:
    case T::Softmax:
      if (want(fb::OperatorAttrs::SoftmaxAttrs)) a.i("axis", op->attrs_as_SoftmaxAttrs()->axis());
      break;
    case T::LpNormalization:
      if (want(fb::OperatorAttrs::LpNormalizationAttrs)) {
        a.i("axis", op->attrs_as_LpNormalizationAttrs()->axis());
        a.i("p", op->attrs_as_LpNormalizationAttrs()->p());
      } else {
        a.i("axis", -1);
        a.i("p", 2);
      }
      break;
    case T::Mod:
      if (want(fb::OperatorAttrs::ModAttrs)) a.i("fmod", op->attrs_as_ModAttrs()->fmod());
      break;
    case T::NonMaxSuppression:
      if (want(fb::OperatorAttrs::NonMaxSuppressionAttrs))
        a.i("center_point_box", op->attrs_as_NonMaxSuppressionAttrs()->box_order() == fb::NMSBoxOrder::CenterWidthHeight);
      break;
    case T::OneHot:
      if (want(fb::OperatorAttrs::OneHotAttrs)) a.i("axis", op->attrs_as_OneHotAttrs()->axis());
      break;
    case T::Pad:
      if (want(fb::OperatorAttrs::PadAttrs)) a.s("mode", lower(fb::EnumNamePadMode(op->attrs_as_PadAttrs()->mode())));
      break;
    case T::ReduceMean:
    case T::ReduceL2:
    case T::ReduceL1:
    case T::ReduceProd:
    case T::ReduceSum:
    case T::ReduceMin:
    case T::ReduceMax:
    case T::ReduceSumSquare:
    case T::ReduceLogSum:
    case T::ReduceLogSumExp:
      if (want(fb::OperatorAttrs::ReduceMeanAttrs)) {
        auto* x = op->attrs_as_ReduceMeanAttrs();
        a.i("keepdims", x->keep_dims());
        a.i("noop_with_empty_axes", x->noop_with_empty_axes());
        // opset 18 takes the axes as an input: an attribute becomes a constant one
        if (x->axes() && node->input_size() < 2) {
          ::onnx::TensorProto* axes = graph->add_initializer();
          axes->set_name(node->name() + ":axes");
          axes->set_data_type(::onnx::TensorProto::INT64);
          axes->add_dims(x->axes()->size());
          for (int32_t v : *x->axes()) axes->add_int64_data(v);
          if (node->input_size() == 0) throw Error(ErrorKind::format, cat(source, ": ", node->op_type(), " '", node->name(), "' has no input"));
          node->add_input(axes->name());
        }
      } else {
        a.i("keepdims", 0);  // the table's default, not ONNX's
      }
      break;
    case T::Reshape:
      if (want(fb::OperatorAttrs::ReshapeAttrs)) a.i("allowzero", op->attrs_as_ReshapeAttrs()->allow_zero());
      break;
    case T::Resize:
      if (want(fb::OperatorAttrs::ResizeAttrs)) {
        auto* x = op->attrs_as_ResizeAttrs();
        a.s("mode", x->mode() == fb::ResizeMode::Linear ? "linear" : "nearest");
        a.s("coordinate_transformation_mode", coord_mode(x->coord_mode()));
        a.s("nearest_mode", nearest_mode(x->nearest_mode()));
      }
      break;
    case T::ReverseSequence:
      if (want(fb::OperatorAttrs::ReverseSequenceAttrs)) {
        a.i("batch_axis", op->attrs_as_ReverseSequenceAttrs()->batch_axis());
        a.i("time_axis", op->attrs_as_ReverseSequenceAttrs()->time_axis());
      }
      break;
    case T::ScatterElements:
    case T::Scatter:
      if (want(fb::OperatorAttrs::ScatterElementsAttrs)) {
        a.i("axis", op->attrs_as_ScatterElementsAttrs()->axis());
        a.s("reduction", reduction(op->attrs_as_ScatterElementsAttrs()->reduction()));
      }
      break;
    case T::ScatterND:
      if (want(fb::OperatorAttrs::ScatterNDAttrs)) a.s("reduction", reduction(op->attrs_as_ScatterNDAttrs()->reduction()));
      break;
    case T::Shape:
      if (want(fb::OperatorAttrs::ShapeAttrs)) {
        if (op->attrs_as_ShapeAttrs()->start()) a.i("start", *op->attrs_as_ShapeAttrs()->start());
        if (op->attrs_as_ShapeAttrs()->end()) a.i("end", *op->attrs_as_ShapeAttrs()->end());
      }
      break;
    case T::Split:
      if (want(fb::OperatorAttrs::SplitAttrs)) {
        a.i("axis", op->attrs_as_SplitAttrs()->axis());
        if (op->attrs_as_SplitAttrs()->num_outputs()) a.i("num_outputs", *op->attrs_as_SplitAttrs()->num_outputs());
      }
      break;
    case T::SplitToSequence:
      if (want(fb::OperatorAttrs::SplitToSequenceAttrs)) {
        a.i("axis", op->attrs_as_SplitToSequenceAttrs()->axis());
        a.i("keepdims", op->attrs_as_SplitToSequenceAttrs()->keep_dims());
      }
      break;
    case T::STFT:
      if (want(fb::OperatorAttrs::STFTAttrs)) a.i("onesided", op->attrs_as_STFTAttrs()->onesided());
      break;
    case T::TopK:
      if (want(fb::OperatorAttrs::TopKAttrs)) {
        a.i("axis", op->attrs_as_TopKAttrs()->axis());
        a.i("largest", op->attrs_as_TopKAttrs()->largest());
        a.i("sorted", op->attrs_as_TopKAttrs()->sorted());
      }
      break;
    case T::Transpose:
      if (want(fb::OperatorAttrs::TransposeAttrs)) a.ints("perm", op->attrs_as_TransposeAttrs()->perm());
      break;
    case T::Trilu:
      if (want(fb::OperatorAttrs::TriluAttrs)) a.i("upper", op->attrs_as_TriluAttrs()->upper());
      break;
    case T::Upsample:
      if (want(fb::OperatorAttrs::UpsampleAttrs)) a.s("mode", op->attrs_as_UpsampleAttrs()->mode() == fb::ResizeMode::Linear ? "linear" : "nearest");
      break;
    case T::Multinomial:
      if (want(fb::OperatorAttrs::MultinomialAttrs)) {
        a.i("sample_size", op->attrs_as_MultinomialAttrs()->sample_size());
        if (op->attrs_as_MultinomialAttrs()->seed()) a.f("seed", *op->attrs_as_MultinomialAttrs()->seed());
      }
      break;
    case T::RandomNormal:
    case T::RandomNormalLike:
    case T::RandomUniform:
    case T::RandomUniformLike:
    case T::RotaryEmbedding:
    case T::Attention:
    case T::SequenceEmpty:
      // Attributes RLX's importer has no use for yet; the importer names the op if it cannot run it.
      if (op->attrs_type() == fb::OperatorAttrs::SequenceEmptyAttrs && op->attrs_as_SequenceEmptyAttrs()->dtype())
        a.i("dtype", onnx_dtype(*op->attrs_as_SequenceEmptyAttrs()->dtype()));
      break;
    default:
      if (op->attrs_type() != fb::OperatorAttrs::NONE && op->attrs_type() != fb::OperatorAttrs::CastLikeAttrs &&
          op->attrs_type() != fb::OperatorAttrs::IsInfAttrs)
        throw Error(ErrorKind::format, cat(source, ": node '", node->name(), "' (", node->op_type(), ") carries ", fb::EnumNameOperatorAttrs(op->attrs_type()),
                                           " attributes; it takes none"));
      break;
  }
}

}  // namespace rlx::frontends::rten
