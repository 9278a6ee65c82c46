// Several real activation sources end to end (issue 8): the `activations` parameter as a JSON
// string or array, --param with a JSON array, --activations repeated, the embedded default on
// the two shipped photos, and a run whose every prefetched byte is compared.
#include <gtest/gtest.h>

#include <string>
#include <vector>
#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include "platform/config.h"
#include "platform/outputs.h"
#include "platform/platform.h"
#include "support/cli.h"
#include "support/sc_fixture.h"

using namespace cdma::platform;
using nlohmann::json;
namespace po = boost::program_options;

namespace {

const std::string k_dir = std::string(CDMA_WORKLOADS_DATA_DIR) + "/inception_v3/";

/// The configuration `cdma-vp run ARGS` builds (preset, options, --param), in-process.
platform_config from_args(const std::vector<std::string>& args) {
  config_options o;
  po::options_description d;
  add_config_options(d, o);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(d).run(), vm);
  po::notify(vm);
  o.resolve(vm);
  return o.config;
}

std::string config_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const config_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a config_error";
  return "";
}

class real_multi_run : public cdma::test::sc_fixture {};

}  // namespace

TEST(real_activations_config, a_string_or_an_array_in_a_file_and_written_back_the_same_way) {
  platform_config c = preset("titanx-gen3");
  apply_json(c, json::parse(R"({"activations": "/d/a.npz"})"), "f.json");
  EXPECT_EQ(c.activations, std::vector<std::string>{"/d/a.npz"});
  EXPECT_EQ(to_json(c)["activations"], "/d/a.npz");
  apply_json(c, json::parse(R"({"activations": ["/d/a.npz", "/d/b"]})"), "f.json");
  EXPECT_EQ(c.activations, (std::vector<std::string>{"/d/a.npz", "/d/b"}));
  EXPECT_EQ(to_json(c)["activations"], json::parse(R"(["/d/a.npz", "/d/b"])"));
  apply_json(c, json::parse(R"({"activations": ""})"), "f.json");
  EXPECT_TRUE(c.activations.empty());
  EXPECT_EQ(to_json(c)["activations"], "");
  // The written configuration reads back to the same list.
  platform_config d = preset("titanx-gen3");
  c.activations = {"/d/a.npz", "/d/b"};
  apply_json(d, to_json(c), "dump");
  EXPECT_EQ(d.activations, c.activations);
  for (const char* bad : {R"({"activations": ["/d/a.npz", 3]})", R"({"activations": ["/d/a.npz", ""]})",
                          R"({"activations": ["synthetic", "/d/a.npz"]})", R"({"activations": 7})"}) {
    const std::string m = config_error_of([&] { apply_json(c, json::parse(bad), "f.json"); });
    EXPECT_NE(m.find("f.json: activations = "), std::string::npos) << bad << ": " << m;
    EXPECT_NE(m.find("an array of paths"), std::string::npos) << bad << ": " << m;
  }
}

TEST(real_activations_config, param_takes_a_json_array_and_the_option_appends_when_repeated) {
  platform_config c = preset("titanx-gen3");
  apply_override(c, R"(activations=["/d/a.npz","/d/b.npz"])");
  EXPECT_EQ(c.activations, (std::vector<std::string>{"/d/a.npz", "/d/b.npz"}));
  apply_override(c, "activations=/d/c.npz");
  EXPECT_EQ(c.activations, std::vector<std::string>{"/d/c.npz"});
  const std::string m = config_error_of([&] { apply_override(c, "activations=[\"/d/a.npz\","); });
  EXPECT_NE(m.find("--param: activations = "), std::string::npos) << m;
  EXPECT_NE(m.find("not a JSON array of strings"), std::string::npos) << m;
  EXPECT_EQ(c.activations, std::vector<std::string>{"/d/c.npz"});  // unchanged
  // --activations repeated: every value, in order, each as typed (a '[' is part of a path).
  EXPECT_EQ(from_args({"--activations", "/d/a.npz", "--activations", "/d/[b].npz"}).activations,
            (std::vector<std::string>{"/d/a.npz", "/d/[b].npz"}));
  EXPECT_EQ(from_args({"--activations", "synthetic"}).activations, std::vector<std::string>{"synthetic"});
  EXPECT_TRUE(from_args({"--activations", ""}).activations.empty());
  const std::string s = config_error_of([] { from_args({"--activations", "/d/a.npz", "--activations", "synthetic"}); });
  EXPECT_NE(s.find("--activations: activations = "), std::string::npos) << s;
  EXPECT_NE(s.find("\"synthetic\" stands alone"), std::string::npos) << s;
}

TEST(real_activations_config, the_default_is_both_shipped_photos_and_config_dump_lists_them) {
  const platform_config c = preset("titanx-gen3");
  EXPECT_EQ(resolve_activations(c), (std::vector<std::string>{k_dir + "chelsea.npz", k_dir + "coffee.npz"}));
  EXPECT_EQ(resolve_activations(c), default_activations());
  EXPECT_EQ(resolve_missing_activations(c), "dense");
  std::string out;
  ASSERT_EQ(cdma::test::cli("config --dump", &out), 0);
  EXPECT_EQ(json::parse(out)["activations"], json(default_activations()));
  const std::string a = k_dir + "coffee.npz";
  ASSERT_EQ(cdma::test::cli("config --dump --activations " + a + " --activations " + k_dir + "chelsea.npz", &out), 0);
  EXPECT_EQ(json::parse(out)["activations"], json::array({a, k_dir + "chelsea.npz"}));
  // A file named by the user: missing_activations "auto" is "error" (as for one file).
  platform_config named = c;
  named.activations = default_activations();
  EXPECT_EQ(resolve_missing_activations(named), "error");
  // Combined with a synthetic-data option: refused naming both files.
  named.seed = 7;
  try {
    resolve_activations(named);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(k_dir + "chelsea.npz + " + k_dir + "coffee.npz"), std::string::npos)
        << e.what();
  }
}

// The embedded default at batch 3 (chelsea, coffee, chelsea): every prefetched byte matches
// what was offloaded, and the cDMA step moves what ZVC in 4 KiB windows gives for the
// concatenated images. Expected: /usr/bin/python3 tests/unit/two_image_batch.py (NumPy).
TEST_F(real_multi_run, the_default_on_two_photos_round_trips_and_compresses_as_numpy_predicts) {
  platform_config cfg;  // inception_v3, activations not given
  cfg.batch = 3;
  cfg.steps = "vdnn,cdma";
  const run_report rep = run(cfg);
  EXPECT_TRUE(rep.ok());
  EXPECT_EQ(rep.mismatched_bytes(), 0u);
  std::uint64_t offloaded = 0;
  for (const auto& l : rep.cdma.result.layers) offloaded += l.offloaded ? l.bytes : 0;
  EXPECT_EQ(rep.verified_bytes(), 2 * offloaded);
  EXPECT_EQ(rep.config.activations, default_activations());  // recorded as resolved
  EXPECT_EQ(rep.activations.rfind("real: chelsea.npz + coffee.npz (2 distinct images, repeated to batch 3); ", 0),
            0u)
      << rep.activations;
  struct expect { const char* key; std::uint64_t bytes, zeros, moved, meta; };
  const expect want[] = {{"activation_1", 8525184, 1189940, 3975960, 16656},
                         {"activation_5", 11614464, 1179402, 7205792, 22688},
                         {"activation_94", 147456, 27459, 42228, 288}};
  for (const expect& e : want) {
    bool found = false;
    for (std::size_t i = 0; i < rep.net.layers.size(); ++i) {
      if (rep.net.layers[i].offload_key != e.key) continue;
      found = true;
      const auto& l = rep.cdma.result.layers[i];
      ASSERT_TRUE(l.offloaded) << e.key;
      EXPECT_EQ(l.bytes, e.bytes) << e.key;
      EXPECT_EQ(l.zeros, e.zeros) << e.key;
      EXPECT_EQ(l.moved_data_bytes, e.moved) << e.key;
      EXPECT_EQ(l.meta_bytes, e.meta) << e.key;
    }
    EXPECT_TRUE(found) << e.key;
  }
}
