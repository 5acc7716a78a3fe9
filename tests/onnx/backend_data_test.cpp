// A representative slice of the ONNX backend test data (libonnx-testdata), one test per
// converter family and opset convention, on the cpu device. The whole suite is `rlx onnx-suite`
// (`make onnx-suite`), a conformance measure rather than a unit test.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "frontends/onnx/backend_test.h"
#include "frontends/onnx/onnx.h"
#include "ir/op.h"

namespace {

const char* kData = "/usr/share/libonnx-testdata/data";

class BackendData : public ::testing::TestWithParam<const char*> {};

TEST_P(BackendData, PassesOnCpu) {
  std::string dir = std::string(kData) + "/" + GetParam();
  if (!std::filesystem::exists(dir + "/model.onnx")) GTEST_SKIP() << "libonnx-testdata is not installed (make setup installs it)";
  auto r = rlx::frontends::onnx::run_backend_test(dir, "cpu");
  EXPECT_EQ(r.status, "passed") << r.reason;
}

INSTANTIATE_TEST_SUITE_P(
    Onnx, BackendData,
    ::testing::Values("node/test_conv_with_strides_and_asymmetric_padding", "node/test_convtranspose_output_shape", "node/test_maxpool_2d_ceil",
                      "node/test_maxpool_with_argmax_2d_precomputed_strides", "node/test_averagepool_2d_pads_count_include_pad",
                      "node/test_resize_upsample_scales_cubic_align_corners", "node/test_resize_tf_crop_and_resize",
                      "node/test_lstm_with_peepholes", "node/test_gru_seq_length", "node/test_loop11", "node/test_scan_sum", "node/test_if",
                      "node/test_gather_elements_negative_indices", "node/test_gathernd_example_int32_batch_dim1", "node/test_scatternd_add",
                      "node/test_einsum_batch_diagonal", "node/test_layer_normalization_4d_axis_negative_2_expanded",
                      "node/test_reshape_zero_and_negative_dim", "node/test_slice_neg_steps", "node/test_squeeze_negative_axes",
                      "node/test_softmax_axis_0", "node/test_hardmax_axis_0", "node/test_reduce_log_sum_exp_keepdims_random",
                      "node/test_argmax_negative_axis_keepdims_example_select_last_index", "node/test_nllloss_NCd1d2_with_weight_reduction_mean",
                      "node/test_sce_mean_weight_ii_4d_log_prob_expanded", "node/test_gridsample_bicubic", "node/test_roialign_aligned_true",
                      "node/test_dft_inverse", "node/test_stft_with_window", "node/test_qlinearconv", "node/test_dynamicquantizelinear",
                      "node/test_mod_mixed_sign_int32", "node/test_atanh", "node/test_atan", "node/test_asin_example", "node/test_range_float_type_positive_delta_expanded",
                      "node/test_cast_BFLOAT16_to_FLOAT", "node/test_adam", "node/test_det_nd", "node/test_tril_neg", "node/test_onehot_with_axis",
                      "pytorch-converted/test_ConvTranspose2d", "pytorch-converted/test_Conv3d_dilated_strided", "pytorch-converted/test_PReLU_2d_multiparam",
                      "pytorch-operator/test_operator_repeat_dim_overflow", "simple/test_expand_shape_model3"),
    [](const ::testing::TestParamInfo<const char*>& info) {
      std::string s = info.param;
      for (char& ch : s)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return s;
    });

// Atan maps onto the elementwise primitive mir.atan (every device runs it natively), not onto a
// polynomial of twenty nodes.
TEST(BackendData, AtanImportsAsOnePrimitive) {
  std::string model = std::string(kData) + "/node/test_atan/model.onnx";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "libonnx-testdata is not installed (make setup installs it)";
  auto g = rlx::frontends::onnx::import_model(model).graph;
  ASSERT_EQ(g->num_nodes(), 1);
  EXPECT_EQ(g->node(0).op, rlx::ir::Op::atan);
}

TEST(BackendData, CompareTensorsUsesOnnxTolerances) {
  using rlx::Tensor;
  Tensor want = Tensor::from_vector(std::vector<float>{1000.0f, 0.0f, NAN}, {3});
  EXPECT_EQ(rlx::frontends::onnx::compare_tensors(Tensor::from_vector(std::vector<float>{1000.9f, 0.0f, NAN}, {3}), want), "");
  EXPECT_NE(rlx::frontends::onnx::compare_tensors(Tensor::from_vector(std::vector<float>{1001.1f, 0.0f, NAN}, {3}), want), "");
  EXPECT_NE(rlx::frontends::onnx::compare_tensors(Tensor::from_vector(std::vector<float>{1000.0f, 1e-6f, NAN}, {3}), want), "");
  EXPECT_NE(rlx::frontends::onnx::compare_tensors(Tensor::from_vector(std::vector<double>{1000.0, 0.0, NAN}, {3}), want), "");
}

}  // namespace
