// Activation sources: synthetic density and clustering, determinism, real-file matching.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "workloads/activations/activation_source.h"

namespace wl = cdma::workloads;

namespace {

constexpr std::size_t kElems = 1 << 20;  // 1 M elements

std::vector<std::uint32_t> draw(wl::activation_source& s, const std::string& key, std::uint64_t offset = 0,
                                std::size_t n = kElems) {
  std::vector<std::uint32_t> v(n);
  s.fill(key, wl::tensor_shape{1, 1, 1, static_cast<std::int64_t>(n)}, offset,
         reinterpret_cast<std::uint8_t*>(v.data()), n * 4);
  return v;
}

double density(const std::vector<std::uint32_t>& v) {
  std::size_t nz = 0;
  for (auto x : v) nz += x != 0;
  return static_cast<double>(nz) / static_cast<double>(v.size());
}

double mean_zero_run(const std::vector<std::uint32_t>& v) {
  std::size_t runs = 0, zeros = 0;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] == 0) {
      ++zeros;
      if (i == 0 || v[i - 1] != 0) ++runs;
    }
  return runs ? static_cast<double>(zeros) / static_cast<double>(runs) : 0;
}

TEST(SyntheticActivations, UniformDensityWithin1Percent) {
  for (double d : {0.1, 0.5, 0.9}) {
    wl::synthetic_activation_source s(d, 7);
    EXPECT_NEAR(density(draw(s, "layer")), d, 0.01 * d) << d;
  }
}

TEST(SyntheticActivations, ClusteredDensityAndRunLength) {
  for (double L : {4.0, 16.0, 64.0}) {
    wl::synthetic_params p;
    p.density = 0.4;
    p.mean_zero_run = L;
    wl::synthetic_activation_source s(p);
    const auto v = draw(s, "conv3");
    EXPECT_NEAR(density(v), 0.4, 0.01 * 0.4 * (L > 32 ? 3 : 1)) << L;
    EXPECT_NEAR(mean_zero_run(v), L, 0.1 * L) << L;
  }
  // Independent zeros at density d: mean zero run 1 / d = 2.5 elements.
  wl::synthetic_activation_source u(0.4, 1);
  EXPECT_NEAR(mean_zero_run(draw(u, "conv3")), 2.5, 0.25);
}

TEST(SyntheticActivations, SameSeedSameBytesAnyWindow) {
  wl::synthetic_params p;
  p.density = 0.3;
  p.mean_zero_run = 8;
  wl::synthetic_activation_source a(p), b(p);
  const auto whole = draw(a, "k", 0, 100000);
  EXPECT_EQ(whole, draw(b, "k", 0, 100000));
  // A window regenerated alone (unaligned, crossing a chain segment) equals the same bytes.
  std::vector<std::uint8_t> part(5003);
  b.fill("k", wl::tensor_shape{1, 1, 1, 100000}, 65530, part.data(), part.size());
  EXPECT_EQ(0, std::memcmp(part.data(), reinterpret_cast<const std::uint8_t*>(whole.data()) + 65530, part.size()));
  p.seed = 2;
  wl::synthetic_activation_source c(p);
  EXPECT_NE(whole, draw(c, "k", 0, 100000));
}

TEST(SyntheticActivations, PerLayerDensityAndInfeasibleClustering) {
  wl::synthetic_params p;
  p.density = 0.5;
  p.layer_density["syn_2"] = 0.1;
  wl::synthetic_activation_source s(p);
  EXPECT_NEAR(density(draw(s, "syn_2")), 0.1, 0.001);
  EXPECT_NEAR(density(draw(s, "syn_1")), 0.5, 0.005);
  p.mean_zero_run = 2;  // density 0.1 needs a mean zero run >= 9
  wl::synthetic_activation_source bad(p);
  try {
    bad.validate(wl::synthetic_chain(1, 3));
    ADD_FAILURE();
  } catch (const wl::activation_error& e) {
    EXPECT_NE(std::string(e.what()).find("syn_2"), std::string::npos) << e.what();
  }
}

TEST(TrainingProfile, FmnistCsvInterpolation) {
  const std::string csv = std::string(CDMA_SHARED_DATA_DIR) + "/density/fmnist_training.csv";
  const wl::network net = wl::make_network("fmnist_cnn", 16);
  // fmnist_training.csv: iteration 0 conv1 zero_fraction 0.45185945471938777; iteration 1404
  // (progress 1) conv5 0.88 (README: "conv5 from 53 % to 88 %").
  const auto d0 = wl::training_profile_densities(csv, 0.0, net);
  EXPECT_NEAR(d0.at("conv1"), 1 - 0.45185945471938777, 1e-12);
  const auto d1 = wl::training_profile_densities(csv, 1.0, net);
  EXPECT_NEAR(d1.at("conv5"), 0.12, 0.01);
  EXPECT_TRUE(d1.count("pool1"));  // non-profiled layers take the curve at the same depth
  EXPECT_THROW(wl::training_profile_densities(csv, 1.5, net), wl::activation_error);
}

TEST(RealActivations, NameMatchingNoLayerAndWrongShapeAreErrors) {
  const std::string npz = std::string(CDMA_SHARED_DATA_DIR) + "/activations/fmnist_cnn/iter0000.npz";
  // A tensor name that matches no layer of the network: both are named.
  {
    wl::npz_activation_source s(npz);
    try {
      s.validate(wl::make_network("inception_v3", 1));
      ADD_FAILURE();
    } catch (const wl::activation_error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("'conv1'"), std::string::npos) << m;
      EXPECT_NE(m.find("inception_v3"), std::string::npos) << m;
    }
  }
  // Wrong shape: the name map sends conv2 (16x64x28x28) to the key of a layer expecting
  // another shape (conv1's output feeds conv2: N x 32x28x28).
  {
    wl::real_activation_options o;
    o.name_map = {{"conv1", "conv2"}, {"conv2", "conv1"}};
    wl::npz_activation_source s(npz, o);
    try {
      s.validate(wl::make_network("fmnist_cnn", 16));
      ADD_FAILURE();
    } catch (const wl::activation_error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("'conv1'"), std::string::npos) << m;
      EXPECT_NE(m.find("layer 'conv2'"), std::string::npos) << m;
      EXPECT_NE(m.find("16x64x28x28"), std::string::npos) << m;
    }
  }
}

TEST(RealActivations, DistinctImagesAndRepetition) {
  const std::string npz = std::string(CDMA_WORKLOADS_DATA_DIR) + "/inception_v3/chelsea.npz";
  wl::npz_activation_source s(npz);
  const wl::network net = wl::make_network("inception_v3", 4);
  s.validate(net);
  EXPECT_EQ(s.distinct_images(), 1);
  EXPECT_NE(s.describe(net).find("1 distinct image, repeated to batch 4"), std::string::npos) << s.describe(net);
  const auto& l = net.layers[1];
  const std::uint64_t per = l.offload.bytes() / 4;
  std::vector<std::uint8_t> a(64), b(64);
  s.fill(l.offload_key, l.offload, 100, a.data(), 64);
  s.fill(l.offload_key, l.offload, 3 * per + 100, b.data(), 64);  // image 3 = image 0
  EXPECT_EQ(a, b);
}

}  // namespace
