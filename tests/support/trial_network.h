// The 11-layer CNN of the new-user trial s19 (/work/notes/newuser-s19-files/mynet.json), as
// a layer file (docs/workloads.md "Layer file format"): 3x64x64 input, two 32-channel
// branches of pool1 (conv2a 1x1, conv2b 3x3) concatenated into conv3, a residual add of
// conv4 (linear) and conv3. vDNN layers in order: 0 conv1, 1 pool1, 2 conv2a, 3 conv2b,
// 4 conv3, 5 conv4, 6 res, 7 pool2, 8 conv5, 9 gap, 10 fc (the concat cat2 is no layer).
// One copy for the tests that use it.
#pragma once
#include <fstream>
#include <string>

namespace cdma::test {

inline const char* const kTrialNetworkJson = R"({"name": "mynet", "input": [3, 64, 64], "layers": [
    {"name": "conv1", "type": "conv", "filters": 32, "kernel": 3, "pad": 1, "relu": true},
    {"name": "pool1", "type": "pool", "op": "max", "kernel": 2, "stride": 2},
    {"name": "conv2a", "type": "conv", "filters": 32, "kernel": 1, "relu": true, "inputs": ["pool1"]},
    {"name": "conv2b", "type": "conv", "filters": 32, "kernel": 3, "pad": 1, "relu": true, "inputs": ["pool1"]},
    {"name": "cat2", "type": "concat", "inputs": ["conv2a", "conv2b"]},
    {"name": "conv3", "type": "conv", "filters": 64, "kernel": 3, "pad": 1, "relu": true},
    {"name": "conv4", "type": "conv", "filters": 64, "kernel": 3, "pad": 1},
    {"name": "res", "type": "add", "inputs": ["conv4", "conv3"], "relu": true},
    {"name": "pool2", "type": "pool", "op": "max", "kernel": 2, "stride": 2},
    {"name": "conv5", "type": "conv", "filters": 128, "kernel": 3, "pad": 1, "relu": true},
    {"name": "gap", "type": "pool", "op": "avg", "global": true},
    {"name": "fc", "type": "fc", "units": 10}]})";

/// Writes kTrialNetworkJson to `path` and returns `path`.
inline std::string write_trial_network(const std::string& path) {
  std::ofstream(path) << kTrialNetworkJson;
  return path;
}

}  // namespace cdma::test
