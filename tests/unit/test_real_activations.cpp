// Real activations from several sources (issue 8): images concatenated along N in the order
// given, repeated to fill the batch; the sources must agree on the tensors and their C, H, W.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>
#include <sys/stat.h>
#include <unistd.h>

#include "support/files.h"
#include "workloads/activations/activation_source.h"
#include "workloads/network/network.h"

namespace wl = cdma::workloads;

namespace {

const std::string k_dir = std::string(CDMA_WORKLOADS_DATA_DIR) + "/inception_v3/";
const std::string k_chelsea = k_dir + "chelsea.npz", k_coffee = k_dir + "coffee.npz";

/// The shipped sample's two photos in `paths` order, dense_1 (not in the files) dense.
wl::npz_activation_source shipped(const std::vector<std::string>& paths) {
  wl::real_activation_options o;
  o.missing = wl::real_activation_options::missing_policy::dense;
  return wl::npz_activation_source(paths, o);
}

/// Bit pattern of element `e` of batch image `b` of tensor `key` as `s` fills it.
std::uint32_t word(wl::activation_source& s, const wl::network& net, const std::string& key, std::uint64_t b,
                   std::uint64_t e) {
  for (const auto& l : net.layers)
    if (l.offload_key == key) {
      std::uint32_t v = 0;
      const std::uint64_t per_image = l.offload.bytes() / static_cast<std::uint64_t>(l.offload.n);
      s.fill(key, l.offload, b * per_image + 4 * e, reinterpret_cast<std::uint8_t*>(&v), 4);
      return v;
    }
  ADD_FAILURE() << "no layer offloads " << key;
  return 0;
}

/// Zero words of tensor `key` of `net` (whole batch) as `s` fills it.
std::uint64_t zeros(wl::activation_source& s, const wl::network& net, const std::string& key) {
  for (const auto& l : net.layers)
    if (l.offload_key == key) {
      std::vector<std::uint32_t> v(static_cast<std::size_t>(l.offload.elements()));
      s.fill(key, l.offload, 0, reinterpret_cast<std::uint8_t*>(v.data()), v.size() * 4);
      std::uint64_t z = 0;
      for (auto w : v) z += w == 0;
      return z;
    }
  ADD_FAILURE() << "no layer offloads " << key;
  return 0;
}

/// A float32 .npy file of `shape` whose element e of image n is n * 1000 + e + 1 + `base`.
void write_npy(const std::string& path, const std::vector<int>& shape, float base = 0) {
  std::size_t per = 1;
  for (std::size_t i = 1; i < shape.size(); ++i) per *= static_cast<std::size_t>(shape[i]);
  std::vector<float> v;
  v.reserve(static_cast<std::size_t>(shape[0]) * per);
  for (int n = 0; n < shape[0]; ++n)
    for (std::size_t e = 0; e < per; ++e) v.push_back(base + static_cast<float>(n * 1000 + e + 1));
  cdma::test::write_npy_f32(path, shape, v);
}

/// A folder of .npy files (the tensors of a small network, see tiny_net()).
std::string folder(const std::string& name) {
  const std::string d = ::testing::TempDir() + "/cdma_real_multi_" + std::to_string(::getpid()) + "_" + name;
  std::system(("rm -rf '" + d + "'").c_str());
  ::mkdir(d.c_str(), 0755);
  return d;
}

/// input 2x4x4 -> c1 (conv 1x1, 3 filters, ReLU) -> c2 (conv 1x1, 2 filters, ReLU) -> fc:
/// offloads c1 (3x4x4, the input of c2); c2's output feeds the last layer (resident).
wl::network tiny_net(int batch) {
  const std::string path = ::testing::TempDir() + "/cdma_real_multi_net_" + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << R"({"name": "tiny", "input": [2, 4, 4], "layers": [
    {"name": "c1", "type": "conv", "filters": 3, "kernel": 1, "relu": true},
    {"name": "c2", "type": "conv", "filters": 2, "kernel": 1, "relu": true},
    {"name": "fc", "type": "fc", "units": 2}]})";
  wl::network net = wl::make_network(path, batch);
  std::remove(path.c_str());
  return net;
}

using cdma::test::error_of;

}  // namespace

// Expected words and counts: /usr/bin/python3 tests/unit/two_image_batch.py (NumPy on the two
// files): activation_1 (1x32x149x149) element 0 is 0x3d01eea3 in chelsea and 0x3f500205 in
// coffee, element 710431 (the last) 0x00000000 and 0x3f17a3dd; its zeros are 409561 and
// 370818, so a batch of 4 (chelsea, coffee, chelsea, coffee) holds 1560758.
TEST(RealActivationsMulti, TwoFilesGiveTwoDistinctImagesInTheOrderGiven) {
  const wl::network net = wl::make_network("inception_v3", 4);
  auto s = shipped({k_chelsea, k_coffee});
  ASSERT_NO_THROW(s.validate(net));
  EXPECT_EQ(s.distinct_images(), 2);
  EXPECT_EQ(s.images_in_file(), 2);
  const std::string d = s.describe(net);
  EXPECT_EQ(d.rfind("real: chelsea.npz + coffee.npz (2 distinct images, repeated to batch 4); ", 0), 0u) << d;
  EXPECT_NE(d.find("computed by pooling tensors of the files: average_pooling2d_1"), std::string::npos) << d;
  EXPECT_NE(d.find("1 tensor not in the files produced as dense synthetic data"), std::string::npos) << d;
  // Batch image b is image b mod 2: chelsea at 0 and 2, coffee at 1 and 3.
  for (std::uint64_t b = 0; b < 4; ++b) {
    const bool chelsea = b % 2 == 0;
    EXPECT_EQ(word(s, net, "activation_1", b, 0), chelsea ? 0x3d01eea3u : 0x3f500205u) << b;
    EXPECT_EQ(word(s, net, "activation_1", b, 710431), chelsea ? 0x00000000u : 0x3f17a3ddu) << b;
  }
  EXPECT_EQ(zeros(s, net, "activation_1"), 2u * (409561 + 370818));
  // The other order: coffee first.
  auto r = shipped({k_coffee, k_chelsea});
  ASSERT_NO_THROW(r.validate(net));
  EXPECT_EQ(r.describe(net).rfind("real: coffee.npz + chelsea.npz (2 distinct images", 0), 0u) << r.describe(net);
  EXPECT_EQ(word(r, net, "activation_1", 0, 0), 0x3f500205u);
  EXPECT_EQ(word(r, net, "activation_1", 3, 0), 0x3d01eea3u);
}

// Two sources with the same file name in different folders: the description names their
// paths, not "chelsea.npz + chelsea.npz" (the shared data has inception_v3/chelsea.npz and
// mobilenet_v2/chelsea.npz).
TEST(RealActivationsMulti, SourcesSharingAFileNameAreNamedByTheirPaths) {
  const std::string dir = ::testing::TempDir() + "same_name_" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  const std::string other = dir + "/chelsea.npz";  // coffee's bytes under chelsea's name
  {
    std::ifstream in(k_coffee, std::ios::binary);
    std::ofstream out(other, std::ios::binary);
    out << in.rdbuf();
  }
  const wl::network net = wl::make_network("inception_v3", 2);
  auto s = shipped({k_chelsea, other});
  ASSERT_NO_THROW(s.validate(net));
  const std::string d = s.describe(net);
  EXPECT_EQ(d.rfind("real: " + k_chelsea + " + " + other + " (2 distinct images); ", 0), 0u) << d;
  std::remove(other.c_str());
  ::rmdir(dir.c_str());
}

TEST(RealActivationsMulti, ABatchOfOneUsesTheFirstImageOnly) {
  const wl::network net = wl::make_network("inception_v3", 1);
  auto s = shipped({k_chelsea, k_coffee});
  ASSERT_NO_THROW(s.validate(net));
  EXPECT_EQ(s.distinct_images(), 1);
  EXPECT_EQ(s.describe(net).rfind("real: chelsea.npz + coffee.npz (1 distinct image); ", 0), 0u) << s.describe(net);
  EXPECT_EQ(word(s, net, "activation_1", 0, 0), 0x3d01eea3u);
  EXPECT_EQ(zeros(s, net, "activation_1"), 409561u);
}

// Sources with different N: image n of the batch is image n mod 3 of (a0, a1, b0).
TEST(RealActivationsMulti, SourcesMayHoldDifferentNumbersOfImages) {
  const std::string a = folder("n2"), b = folder("n1");
  write_npy(a + "/c1.npy", {2, 3, 4, 4});
  write_npy(b + "/c1.npy", {1, 3, 4, 4}, 0.5f);
  const wl::network net = tiny_net(5);
  // Also with a cache too small to keep a tensor (each tensor read again when filled).
  for (const std::uint64_t cache : {std::uint64_t{1} << 30, std::uint64_t{64}}) {
    wl::real_activation_options o;
    o.cache_limit_bytes = cache;
    wl::npz_activation_source s(std::vector<std::string>{a, b}, o);
    ASSERT_NO_THROW(s.validate(net));
    EXPECT_EQ(s.distinct_images(), 3);
    EXPECT_EQ(s.images_in_file(), 3);
    const float want[5] = {1, 1001, 1.5f, 1, 1001};  // element 0 of a0, a1, b0, a0, a1
    for (std::uint64_t n = 0; n < 5; ++n) {
      float v = 0;
      s.fill("c1", net.layers[1].offload, n * 3 * 4 * 4 * 4, reinterpret_cast<std::uint8_t*>(&v), 4);
      EXPECT_EQ(v, want[n]) << n << " cache " << cache;
    }
  }
  // A source whose tensors hold different N counts the smallest: c has c1 with 3 images and
  // c2 with 2, so its images are 2 and b's image follows at 2 (c1's third image is not used).
  const std::string c = folder("n3n2");
  write_npy(c + "/c1.npy", {3, 3, 4, 4});
  write_npy(c + "/c2.npy", {2, 2, 4, 4});
  const std::string d = folder("n1n1");
  write_npy(d + "/c1.npy", {1, 3, 4, 4}, 0.5f);
  write_npy(d + "/c2.npy", {1, 2, 4, 4}, 0.5f);
  wl::npz_activation_source u(std::vector<std::string>{c, d}, wl::real_activation_options{});
  ASSERT_NO_THROW(u.validate(net));
  EXPECT_EQ(u.images_in_file(), 3);
  float v2 = 0;
  u.fill("c1", net.layers[1].offload, 2 * 3 * 4 * 4 * 4, reinterpret_cast<std::uint8_t*>(&v2), 4);
  EXPECT_EQ(v2, 1.5f);
  // A batch of 2 needs only a's images: b is read for its shapes.
  wl::npz_activation_source t(std::vector<std::string>{a, b}, wl::real_activation_options{});
  const wl::network net2 = tiny_net(2);
  ASSERT_NO_THROW(t.validate(net2));
  EXPECT_EQ(t.distinct_images(), 2);
  float v = 0;
  t.fill("c1", net2.layers[1].offload, 3 * 4 * 4 * 4 + 4, reinterpret_cast<std::uint8_t*>(&v), 4);
  EXPECT_EQ(v, 1002.0f);
}

TEST(RealActivationsMulti, ShapesThatDifferBetweenSourcesAreAnErrorNamingBoth) {
  const std::string a = folder("c3"), b = folder("c4");
  write_npy(a + "/c1.npy", {1, 3, 4, 4});
  write_npy(b + "/c1.npy", {2, 4, 4, 4});
  wl::npz_activation_source s(std::vector<std::string>{a, b}, wl::real_activation_options{});
  const std::string m = error_of([&] { s.validate(tiny_net(2)); });
  EXPECT_NE(m.find(a), std::string::npos) << m;
  EXPECT_NE(m.find(b), std::string::npos) << m;
  EXPECT_NE(m.find("'c1'"), std::string::npos) << m;
  EXPECT_NE(m.find("2x4x4x4"), std::string::npos) << m;
  EXPECT_NE(m.find("1x3x4x4"), std::string::npos) << m;
  EXPECT_NE(m.find("same C, H, W"), std::string::npos) << m;
}

TEST(RealActivationsMulti, TensorSetsThatDifferBetweenSourcesAreAnErrorNamingBoth) {
  const std::string a = folder("two"), b = folder("one");
  write_npy(a + "/c1.npy", {1, 3, 4, 4});
  write_npy(a + "/c2.npy", {1, 2, 4, 4});
  write_npy(b + "/c1.npy", {1, 3, 4, 4});
  for (const auto& order : {std::vector<std::string>{a, b}, std::vector<std::string>{b, a}}) {
    const std::string m = error_of([&] { wl::npz_activation_source(order, wl::real_activation_options{}); });
    EXPECT_NE(m.find(b + ": holds no tensor 'c2', which " + a + " holds"), std::string::npos) << m;
  }
  // The same set after the name map: c calls c2 x. A name the map names must be in a source.
  const std::string c = folder("mapped");
  write_npy(c + "/c1.npy", {1, 3, 4, 4});
  write_npy(c + "/x.npy", {1, 2, 4, 4}, 0.25f);
  wl::real_activation_options o;
  o.name_map = {{"x", "c2"}};
  wl::npz_activation_source s(std::vector<std::string>{a, c}, o);
  const wl::network net = tiny_net(2);
  ASSERT_NO_THROW(s.validate(net));
  EXPECT_EQ(s.distinct_images(), 2);
  o.name_map = {{"y", "c2"}};
  const std::string m = error_of([&] { wl::npz_activation_source(std::vector<std::string>{a, c}, o); });
  EXPECT_NE(m.find(a + " + " + c + ": the name map names 'y', which is not a tensor of the files; expected"),
            std::string::npos)
      << m;
  // Two tensors of one file that the map sends to one layer: both are named (breaker s14 F8).
  o.name_map = {{"x", "c1"}};
  const std::string m2 = error_of([&] { wl::npz_activation_source(std::vector<std::string>{c}, o); });
  EXPECT_NE(m2.find(c + ": two tensors map to layer key 'c1': '"), std::string::npos) << m2;
  EXPECT_NE(m2.find("'c1'"), std::string::npos) << m2;
  EXPECT_NE(m2.find("'x'"), std::string::npos) << m2;
  EXPECT_NE(m2.find("expected one tensor per layer"), std::string::npos) << m2;
}

TEST(RealActivationsMulti, AMissingOrRepeatedSourceIsAnErrorNamingIt) {
  const std::string missing = ::testing::TempDir() + "/cdma_no_such_coffee.npz";
  std::string m = error_of([&] { shipped({k_chelsea, missing}); });
  EXPECT_NE(m.find(missing + ": no such file or directory"), std::string::npos) << m;
  m = error_of([&] { shipped({k_chelsea, k_dir + "../inception_v3/chelsea.npz"}); });
  EXPECT_NE(m.find("given twice"), std::string::npos) << m;
  m = error_of([&] { shipped({}); });
  EXPECT_NE(m.find("no file given"), std::string::npos) << m;
}
