// The input readers on bad input (break-it report of session 12): a directory where a file is
// expected, a small .npz that expands to a huge tensor, a window too large for the engine,
// duplicate keys in JSON, duplicate members in an .npz, unknown keys, empty names and shared
// keys in a layer file, and messages that were garbled or named the wrong quantity.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/files.h"
#include "platform/config.h"
#include "support/cli.h"
#include "workloads/activations/activation_source.h"
#include "workloads/compute/roofline.h"
#include "workloads/io/npy.h"
#include "workloads/network/network.h"

using namespace cdma::platform;
namespace wl = cdma::workloads;
using cdma::test::slurp;

namespace {

std::string tmp(const std::string& name) {
  return std::string(::testing::TempDir()) + "cdma_inputs_" + std::to_string(::getpid()) + "_" + name;
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

void make_dir(const std::string& path) { ASSERT_EQ(::mkdir(path.c_str(), 0777), 0) << path; }

/// Runs cdma-vp with `args` (through bash); returns the exit status, stderr in *err.
int cli(const std::string& args, std::string* err) { return cdma::test::cli(args, nullptr, err); }

/// Runs a Python script (CDMA_PYTHON, standard library only); fails the test if it fails.
void python(const std::string& script) {
  const std::string p = tmp("gen.py");
  write_text(p, script);
  ASSERT_EQ(std::system((std::string(CDMA_PYTHON) + " " + p).c_str()), 0) << script;
}

/// A .npy image of float32 `values` with shape `shape` (NumPy 1.0 format, header padded to 64).
std::string npy_f4(const std::string& shape, const std::vector<float>& values) {
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(h.size() & 0xFF);
  out += static_cast<char>(h.size() >> 8);
  out += h;
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * 4);
  return out;
}

using cdma::test::error_of;

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << "'" << (part) << "' not in: " << (text)

/// Peak resident set of this process, bytes.
long peak_rss_bytes() {
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss * 1024L;
}

/// A layer file of two 1x1 convolutions on a 1x4x4 input: c2 offloads c1's output, 2x4x4
/// float32 = 128 bytes per image.
std::string two_conv_net() {
  const std::string p = tmp("two_conv.json");
  write_text(p, R"({"name": "two", "input": [1, 4, 4], "layers": [
    {"name": "c1", "type": "conv", "filters": 2, "kernel": 1},
    {"name": "c2", "type": "conv", "filters": 2, "kernel": 1}]})");
  return p;
}

/// An .npz (deflated) with member c1.npy of shape (images, 2, 4, 4) float32: image k holds
/// 32 floats k * 100 + 1 .. k * 100 + 32 for k < 4, zeros after (so 100 MB compress to ~100 KB).
/// Written in chunks: the generator never holds the array.
std::string big_npz(long images) {
  const std::string p = tmp("big_" + std::to_string(images) + ".npz");
  python("import struct, zipfile\n"
         "n = " + std::to_string(images) + "\n"
         "h = \"{'descr': '<f4', 'fortran_order': False, 'shape': (%d, 2, 4, 4), }\" % n\n"
         "h += ' ' * ((64 - (10 + len(h) + 1) % 64) % 64) + '\\n'\n"
         "with zipfile.ZipFile('" + p + "', 'w', zipfile.ZIP_DEFLATED) as z:\n"
         "  with z.open('c1.npy', 'w', force_zip64=True) as f:\n"
         "    f.write(b'\\x93NUMPY\\x01\\x00' + struct.pack('<H', len(h)) + h.encode())\n"
         "    for k in range(min(n, 4)):\n"
         "      f.write(struct.pack('<32f', *[k * 100 + i + 1 for i in range(32)]))\n"
         "    zero = bytes(128 * 8192)\n"
         "    left = n - min(n, 4)\n"
         "    while left > 0:\n"
         "      m = min(left, 8192)\n"
         "      f.write(zero[:128 * m])\n"
         "      left -= m\n");
  return p;
}

}  // namespace

// ---- 1. a directory where a file is expected ---------------------------------------------

// Every reader says "<path>: is a directory" (was std::bad_alloc for a .npy, whose size an
// ifstream reports as 2^63, and "basic_filebuf::underflow error reading the file: Is a
// directory" without the file name for the JSON readers).
TEST(input_readers, a_directory_given_as_a_file_is_named_by_every_reader) {
  const std::string d = tmp("adir.json");
  make_dir(d);
  EXPECT_HAS(error_of([&] { wl::read_npy(d); }), d + ": is a directory");
  EXPECT_HAS(error_of([&] { wl::npz_archive z(d); }), d + ": is a directory");
  EXPECT_HAS(error_of([&] { wl::load_name_map(d); }), d + ": is a directory");
  EXPECT_HAS(error_of([&] { wl::make_network(d, 1); }), d + ": is a directory");
  EXPECT_HAS(error_of([&] { wl::load_layer_file(d, 1); }), d + ": is a directory");
  EXPECT_HAS(error_of([&] { wl::load_keras_graph(d, 1); }), d + ": is a directory");
  EXPECT_HAS(error_of([&] { load_config_file(d); }), d + ": is a directory");
  const wl::network net = wl::make_network("fmnist_cnn", 1);
  EXPECT_HAS(error_of([&] { wl::training_profile_densities(d, 0.5, net); }), d + ": is a directory");
}

// Item 15: a tensor file inside --activations DIR that is a directory.
TEST(input_readers, a_directory_named_like_a_tensor_is_named_not_bad_alloc) {
  const std::string d = tmp("acts");
  make_dir(d);
  make_dir(d + "/conv1.npy");
  const wl::network net = wl::make_network("fmnist_cnn", 1);
  wl::npz_activation_source src(d);
  EXPECT_HAS(error_of([&] { src.validate(net); }), d + "/conv1.npy: is a directory");
}

// The same through the command line: exit 2, the path and "is a directory", for every option
// that names an input file.
TEST(input_readers, cli_directory_inputs_exit_2_naming_the_path) {
  const std::string d = tmp("cli_dir.json"), acts = tmp("cli_acts");
  make_dir(d);
  make_dir(acts);
  make_dir(acts + "/conv1.npy");
  std::string err;
  for (const std::string& args :
       {"run --network " + d + " --batch 1 -q", "run --network fmnist_cnn --batch 1 -q --config " + d,
        "run --network fmnist_cnn --batch 1 -q --activations " + acts,
        "run --network fmnist_cnn --batch 1 -q --activations " + acts + " --name-map " + d}) {
    EXPECT_EQ(cli(args, &err), 2) << args << "\n" << err;
    EXPECT_HAS(err, "is a directory");
    EXPECT_EQ(err.find("bad_alloc"), std::string::npos) << err;
    EXPECT_EQ(err.find("underflow"), std::string::npos) << err;
  }
  EXPECT_EQ(cli("run --network fmnist_cnn --batch 1 -q --activations " + acts, &err), 2);
  EXPECT_HAS(err, acts + "/conv1.npy: is a directory");
  EXPECT_EQ(cli("run --network " + d + " --batch 1 -q", &err), 2);
  EXPECT_HAS(err, d + ": is a directory");
}

// ---- 1b. a FIFO (or a device) where a file is expected ------------------------------------

/// A FIFO at `path` (replacing what is there); nobody ever writes to it.
void make_fifo(const std::string& path) {
  std::remove(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0) << path;
}

// An input that is a FIFO with no writer blocked the reader forever (the open waits for a
// writer): every reader refuses a path that is not a regular file before opening it, naming
// the path and what it is. (An alarm ends this test process if a reader blocks.)
TEST(input_readers, a_fifo_given_as_a_file_is_refused_by_every_reader_without_waiting) {
  ::alarm(60);
  const std::string f = tmp("fifo.json"), npy = tmp("fifo.npy"), npz = tmp("fifo.npz");
  make_fifo(f);
  make_fifo(npy);
  make_fifo(npz);
  const std::string fifo = ": is a FIFO, not a regular file";
  EXPECT_HAS(error_of([&] { wl::read_npy(npy); }), npy + fifo);
  EXPECT_HAS(error_of([&] { wl::npz_archive z(npz); }), npz + fifo + "; expected an .npz (zip) file");
  EXPECT_HAS(error_of([&] { wl::load_name_map(f); }), f + fifo + " (expected a JSON object");
  EXPECT_HAS(error_of([&] { wl::make_network(f, 1); }), f + fifo + " (expected a cdma-vp layer file or a Keras graph");
  EXPECT_HAS(error_of([&] { wl::load_layer_file(f, 1); }), f + fifo + " (expected a cdma-vp layer file");
  EXPECT_HAS(error_of([&] { wl::load_keras_graph(f, 1); }), f + fifo + " (expected a Keras graph JSON file)");
  EXPECT_HAS(error_of([&] { load_config_file(f); }), f + fifo + "; expected a JSON configuration file");
  const wl::network net = wl::make_network("fmnist_cnn", 1);
  EXPECT_HAS(error_of([&] { wl::training_profile_densities(f, 0.5, net); }),
             f + fifo + "; expected a CSV file iteration,epoch,layer,zero_fraction");
  EXPECT_HAS(error_of([&] { wl::apply_time_table(f, net, {}); }),
             f + fifo + "; expected a CSV file with header layer,forward_ms,backward_ms");
  // A device is named as such (/dev/zero was read without end as a configuration).
  EXPECT_HAS(error_of([&] { load_config_file("/dev/zero"); }),
             "/dev/zero: is a character device, not a regular file; expected a JSON configuration file");
  // A FIFO named like a tensor in an activations folder.
  const std::string d = tmp("fifo_acts");
  make_dir(d);
  make_fifo(d + "/c1.npy");
  wl::npz_activation_source src(d);
  EXPECT_HAS(error_of([&] { src.validate(wl::load_layer_file(two_conv_net(), 1)); }), d + "/c1.npy" + fifo);
  ::alarm(0);
}

// The same through the command line, for every option naming an input file and for analyze
// and sweep --merge: exit 2 at once (timeout 30 s: a hang is exit 124), naming the path.
TEST(input_readers, cli_fifo_inputs_exit_2_at_once_naming_the_path) {
  const std::string f = tmp("cli_fifo.json"), npy = tmp("cli_fifo.npy"), npz = tmp("cli_fifo.npz");
  const std::string csv = tmp("cli_fifo.csv"), acts = tmp("cli_fifo_acts"), sweep = tmp("cli_fifo_sweep");
  make_fifo(f);
  make_fifo(npy);
  make_fifo(npz);
  make_fifo(csv);
  make_dir(acts);
  make_fifo(acts + "/c1.npy");
  make_dir(sweep);
  make_fifo(sweep + "/sweep.plan.json");
  const std::string net = two_conv_net(), fast = " --batch 1 -q --steps oracle";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run --config " + f, f},
      {"compare --config " + f, f},
      {"config --dump --config " + f, f},
      {"run --network " + f + fast, f},
      {"run --network fmnist_cnn --layer-times " + csv + fast, csv},
      {"run --network " + net + " --activations " + acts + " --name-map " + f + fast, f},
      {"run --network fmnist_cnn --density-profile " + csv + fast, csv},
      {"run --network " + net + " --activations " + npz + fast, npz},
      {"run --network " + net + " --activations " + acts + fast, acts + "/c1.npy"},
      {"analyze " + npy, npy},
      {"analyze " + npz, npz},
      {"sweep --merge " + sweep, sweep + "/sweep.plan.json"}};
  for (const auto& [args, path] : cases) {
    std::string err;
    EXPECT_EQ(cdma::test::cli(args, nullptr, &err, "", 30), 2) << args << "\n" << err;
    EXPECT_HAS(err, path + ": is a FIFO, not a regular file");
  }
  // --activations FILE.npy named like a layer output: refused the same way.
  const std::string c1 = tmp("cli_fifo_c1");
  make_dir(c1);
  make_fifo(c1 + "/c1.npy");
  std::string err;
  EXPECT_EQ(cdma::test::cli("run --network " + net + " --activations " + c1 + "/c1.npy" + fast, nullptr, &err, "", 30), 2)
      << err;
  EXPECT_HAS(err, c1 + "/c1.npy: is a FIFO, not a regular file");
}

// Standard input is an input like any other: a regular file redirected to it is read
// (/dev/stdin leads to that file); a pipe is refused, naming /dev/stdin (it was read once
// and could not be read again).
TEST(input_readers, dev_stdin_is_read_when_it_is_a_regular_file) {
  const std::string cfg = tmp("stdin_cfg.json");
  write_text(cfg, R"({"network": "synthetic", "batch": 1})");
  std::string out, err;
  EXPECT_EQ(cdma::test::cli("config --dump --config /dev/stdin < " + cfg, &out, &err, "", 30), 0) << err;
  EXPECT_HAS(out, "\"batch\": 1");
  EXPECT_EQ(cdma::test::cli("config --dump --config /dev/stdin", &out, &err, "cat " + cfg + " |", 30), 2) << err;
  EXPECT_HAS(err, "/dev/stdin: is a FIFO, not a regular file; expected a JSON configuration file");
}

// ---- 2. a small .npz that expands to a huge tensor ---------------------------------------

// Only the rows asked for are kept: 781,250 images (100 MB) of which the first 2 are read; the
// rest of the member is inflated and discarded (for its CRC), never held (peak memory grows by
// far less than 100 MB).
TEST(input_readers, npz_member_read_with_a_row_limit_reads_only_those_rows) {
  const long n = 781250;  // x 128 B = 100,000,000 B
  const std::string p = big_npz(n);
  const long before = peak_rss_bytes();
  const wl::npz_archive z(p);
  const wl::npy_array a = z.read("c1", 2);
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{2, 2, 4, 4}));
  EXPECT_EQ(a.rows_in_file, static_cast<std::uint64_t>(n));
  ASSERT_EQ(a.data.size(), 256u);
  float v[64];
  std::memcpy(v, a.data.data(), 256);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[31], 32.0f);
  EXPECT_EQ(v[32], 101.0f);
  EXPECT_EQ(v[63], 132.0f);
  EXPECT_LT(peak_rss_bytes() - before, 20L << 20) << "the whole member was decompressed";
}

// The real-activation source reads only the batch's images: batch 2 of a file of 781,250.
TEST(input_readers, real_activations_load_only_the_images_of_the_batch) {
  const std::string p = big_npz(781250);
  const wl::network net = wl::load_layer_file(two_conv_net(), 2);
  const long before = peak_rss_bytes();
  wl::npz_activation_source src(p);
  src.validate(net);
  EXPECT_EQ(src.distinct_images(), 2);
  std::vector<float> out(64);
  src.fill("c1", net.layers[1].offload, 0, reinterpret_cast<std::uint8_t*>(out.data()), 256);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[32], 101.0f);  // image 1 of the batch is image 1 of the file
  EXPECT_LT(peak_rss_bytes() - before, 20L << 20) << "more than the batch's images were loaded";
  // A larger batch later (fill with N = 3) loads the images it needs.
  wl::tensor_shape three = net.layers[1].offload;
  three.n = 3;
  std::vector<float> out3(96);
  src.fill("c1", three, 0, reinterpret_cast<std::uint8_t*>(out3.data()), 384);
  EXPECT_EQ(out3[64], 201.0f);
}

// A member whose CRC fails in rows the batch does not use: still an error (it was used
// silently when only the rows needed were decompressed). Stored (not deflated) so that a
// flipped data byte decompresses fine and only the CRC catches it.
TEST(input_readers, npz_member_corrupt_beyond_the_rows_read_is_refused) {
  const std::string p = tmp("crc.npz");
  python("import struct, zipfile\n"
         "h = \"{'descr': '<f4', 'fortran_order': False, 'shape': (4, 2, 4, 4), }\"\n"
         "h += ' ' * ((64 - (10 + len(h) + 1) % 64) % 64) + '\\n'\n"
         "data = b''.join(struct.pack('<32f', *[k * 100 + i + 1 for i in range(32)]) for k in range(4))\n"
         "with zipfile.ZipFile('" + p + "', 'w', zipfile.ZIP_STORED) as z:\n"
         "  z.writestr('c1.npy', b'\\x93NUMPY\\x01\\x00' + struct.pack('<H', len(h)) + h.encode() + data)\n"
         "b = bytearray(open('" + p + "', 'rb').read())\n"
         "i = b.find(b'NUMPY') - 1 + 128 + 3 * 128 + 5\n"  // a byte of image 3
         "b[i] ^= 0xFF\n"
         "open('" + p + "', 'wb').write(b)\n");
  const wl::npz_archive z(p);
  EXPECT_HAS(error_of([&] { z.read("c1", 1); }), "CRC");
  EXPECT_HAS(error_of([&] { z.read("c1"); }), "CRC");
}

// A member whose header names 4 bytes of data followed by 100 MB of zeros (compressed to
// ~100 KB): the error names the bytes after the data, without holding the member (its header
// and the zip's size disagree, and that path read the whole member to word the message).
TEST(input_readers, npz_member_with_far_more_bytes_than_its_shape_is_refused_without_holding_them) {
  const std::string p = tmp("tail.npz");
  python("import struct, zipfile\n"
         "h = \"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1), }\"\n"
         "h += ' ' * ((64 - (10 + len(h) + 1) % 64) % 64) + '\\n'\n"
         "with zipfile.ZipFile('" + p + "', 'w', zipfile.ZIP_DEFLATED) as z:\n"
         "  with z.open('c1.npy', 'w', force_zip64=True) as f:\n"
         "    f.write(b'\\x93NUMPY\\x01\\x00' + struct.pack('<H', len(h)) + h.encode() + struct.pack('<f', 1.0))\n"
         "    zero = bytes(1 << 20)\n"
         "    for _ in range(100):\n"
         "      f.write(zero)\n");
  const long before = peak_rss_bytes();
  const wl::npz_archive z(p);
  EXPECT_HAS(error_of([&] { z.read("c1"); }), "104857600 bytes after the data");
  EXPECT_HAS(error_of([&] { z.read("c1", 1); }), "104857600 bytes after the data");
  EXPECT_LT(peak_rss_bytes() - before, 20L << 20) << "the member was held to word the message";
}

// Reading every row of such a member when memory is short: the error names the file, the
// member and the bytes it needed (was "cdma-vp: std::bad_alloc").
TEST(input_readers, allocation_failure_names_the_file_and_the_size) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit set here";
#endif
  const std::string p = big_npz(781250);
  const wl::npz_archive z(p);
  // Address space: what the process maps now + 48 MiB, less than the 100 MB the member needs.
  long pages = 0;
  std::ifstream("/proc/self/statm") >> pages;
  struct rlimit old {};
  ASSERT_EQ(::getrlimit(RLIMIT_AS, &old), 0);
  struct rlimit lim = old;
  lim.rlim_cur = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + (48u << 20);
  ASSERT_EQ(::setrlimit(RLIMIT_AS, &lim), 0);
  std::string msg;
  try {
    z.read("c1");
  } catch (const std::exception& e) {
    msg = e.what();
  }
  ::setrlimit(RLIMIT_AS, &old);
  EXPECT_HAS(msg, p + ":c1: ");
  EXPECT_HAS(msg, "needs 100000000 bytes of memory");
}

// A zip directory that declares a member far larger than it is (2 GB for 160 bytes): read as
// the bytes are, refused naming the member, without allocating what was declared.
TEST(input_readers, npz_member_declared_larger_than_it_is_is_refused_without_allocating_it) {
  const std::string p = tmp("lying.npz"), m = tmp("small.npy");
  write_text(m, npy_f4("(2, 2)", {1, 2, 3, 4}));
  python("import struct, zipfile\n"
         "with zipfile.ZipFile('" + p + "', 'w') as z:\n  z.write('" + m + "', 'c1.npy')\n"
         "b = bytearray(open('" + p + "', 'rb').read())\n"
         "i = b.find(b'PK\\x01\\x02')\n"
         "b[i + 24:i + 28] = struct.pack('<I', 2000000000)\n"
         "open('" + p + "', 'wb').write(b)\n");
  const long before = peak_rss_bytes();
  std::string msg;
  try {
    const wl::npz_archive z(p);
    z.read("c1");
  } catch (const wl::npy_error& e) {
    msg = e.what();
  }
  EXPECT_HAS(msg, p);
  EXPECT_LT(peak_rss_bytes() - before, 20L << 20) << "the declared size was allocated";
}

// ---- 3. cdma.window ------------------------------------------------------------------------

// The engine holds each window whole (twice, and once per window in flight in AT): a 1 GiB
// window made a batch-1 run take 4.3 GB. At most 1 MiB now, said in the message.
TEST(input_readers, cdma_window_is_at_most_1_MiB) {
  platform_config c = preset("titanx-gen3");
  apply_override(c, "cdma.window=1 MiB");
  EXPECT_EQ(c.engine.window_bytes, 1u << 20);
  for (const std::string v : {"1 GiB", "2 MiB", "1048580"}) {
    const std::string m = error_of([&] { apply_override(c, "cdma.window=" + v); });
    EXPECT_HAS(m, "cdma.window");
    EXPECT_HAS(m, "to 1 MiB");
  }
  std::string err;
  EXPECT_EQ(cli("run --network fmnist_cnn --batch 1 -q --param 'cdma.window=1 GiB'", &err), 2) << err;
  EXPECT_HAS(err, "cdma.window");
  EXPECT_EQ(err.find("bad_alloc"), std::string::npos) << err;
}

// ---- 4. duplicate and unknown keys, empty names, messages -----------------------------------

TEST(input_readers, duplicate_keys_in_a_config_file_are_refused) {
  const std::string p = tmp("dup.config.json");
  write_text(p, R"({"batch": 2, "batch": 4})");
  const std::string m = error_of([&] { load_config_file(p); });
  EXPECT_HAS(m, p + ": key \"batch\" appears twice in the top-level object");
  write_text(p, R"({"pcie": {"lanes": 4, "lanes": 8}})");
  EXPECT_HAS(error_of([&] { load_config_file(p); }), "key \"lanes\" appears twice in pcie");
  // The same key in two different objects is fine.
  write_text(p, R"({"batch": 2, "pcie": {"lanes": 8}, "gpu_mem": {"channels": 12}})");
  EXPECT_EQ(load_config_file(p).batch, 2);
  // One parameter in two spellings (a dotted key, a group, the "platform" group): refused,
  // naming both (one value silently won before).
  write_text(p, R"({"pcie.lanes": 4, "pcie": {"lanes": 8}})");
  EXPECT_HAS(error_of([&] { load_config_file(p); }),
             "parameter pcie.lanes is given twice (as \"pcie\" / \"lanes\" and as \"pcie.lanes\")");
  write_text(p, R"({"platform": {"pcie": {"lanes": 4}}, "pcie": {"lanes": 8}})");
  EXPECT_HAS(error_of([&] { load_config_file(p); }), "parameter pcie.lanes is given twice");
  // A group's preset and its keys are one spelling each: fine.
  write_text(p, R"({"pcie": {"preset": "measured-host", "lanes": 8}})");
  EXPECT_EQ(load_config_file(p).pcie.lanes, 8u);
}

TEST(input_readers, duplicate_keys_in_a_layer_file_or_name_map_are_refused) {
  const std::string p = tmp("dupkey.json");
  write_text(p, R"({"name":"z","input":[3,8,8],"layers":[{"name":"a","type":"conv","filters":4,"filters":8,"kernel":3}]})");
  const std::string m = error_of([&] { wl::make_network(p, 1); });
  EXPECT_HAS(m, p);
  EXPECT_HAS(m, "key \"filters\" appears twice in layers[0]");
  EXPECT_HAS(error_of([&] { wl::load_layer_file(p, 1); }), "key \"filters\" appears twice in layers[0]");
  const std::string nm = tmp("dup_map.json");
  write_text(nm, R"({"a": "conv1", "a": "conv2"})");
  EXPECT_HAS(error_of([&] { wl::load_name_map(nm); }), nm + ": name map: key \"a\" appears twice");
}

TEST(input_readers, layer_file_unknown_top_level_key_empty_name_and_shared_key_are_refused) {
  const std::string p = tmp("lf.json");
  write_text(p, R"({"name":"z","input":[3,8,8],"bogus":1,"layers":[{"name":"a","type":"conv","filters":4,"kernel":3}]})");
  EXPECT_HAS(error_of([&] { wl::load_layer_file(p, 1); }), "unknown top-level key \"bogus\"");
  write_text(p, R"({"name":"z","input":[3,8,8],"layers":[{"name":"","type":"conv","filters":4,"kernel":3}]})");
  EXPECT_HAS(error_of([&] { wl::load_layer_file(p, 1); }), "layers[0] \"\" (conv): \"name\" is empty");
  write_text(p, R"({"name":"z","input":[3,8,8],"layers":[{"name":"a","type":"conv","filters":4,"kernel":3,"key":"k"},)"
                R"({"name":"b","type":"conv","filters":4,"kernel":3,"key":"k"}]})");
  EXPECT_HAS(error_of([&] { wl::load_layer_file(p, 1); }),
             "layers[1] \"b\" (conv): activation key \"k\" is already the key of layers[0] \"a\" (conv)");
  // A key equal to another layer's name (its default key) is the same clash.
  write_text(p, R"({"name":"z","input":[3,8,8],"layers":[{"name":"a","type":"conv","filters":4,"kernel":3},)"
                R"({"name":"b","type":"conv","filters":4,"kernel":3,"key":"a"}]})");
  EXPECT_HAS(error_of([&] { wl::load_layer_file(p, 1); }), "activation key \"a\" is already the key of layers[0]");
  // The shipped files (name, source, input, layers) still load.
  EXPECT_EQ(wl::make_network("fmnist_cnn", 1).layers.size(), 10u);
}

TEST(input_readers, npz_with_two_members_of_one_name_is_refused) {
  const std::string p = tmp("dup_member.npz");
  const std::string a = tmp("m1.npy"), b = tmp("m2.npy");
  write_text(a, npy_f4("(1, 2)", {1, 2}));
  write_text(b, npy_f4("(1, 2)", {0, 0}));
  python("import zipfile, warnings\nwarnings.simplefilter('ignore')\n"
         "with zipfile.ZipFile('" + p + "', 'w') as z:\n"
         "  z.write('" + a + "', 'conv1.npy')\n  z.write('" + b + "', 'conv1.npy')\n  z.write('" + a + "', 'fc6.npy')\n");
  const std::string m = error_of([&] { wl::npz_archive z(p); });
  EXPECT_HAS(m, p + ": two members hold array 'conv1' (\"conv1.npy\" and \"conv1.npy\", entries 0 and 1)");
}

TEST(input_readers, time_with_an_unknown_unit_says_unknown_unit) {
  platform_config c = preset("titanx-gen3");
  const std::string m = error_of([&] { apply_override(c, "pcie.latency=500 NS"); });
  EXPECT_HAS(m, "unknown unit 'NS'");
  EXPECT_EQ(m.find("has no unit"), std::string::npos) << m;
  EXPECT_HAS(error_of([&] { apply_override(c, "pcie.latency=500"); }), "has no unit");
  apply_override(c, "pcie.latency=500 ns");
  EXPECT_EQ(c.pcie.latency_ps, 500000u);
}

TEST(input_readers, pd_credits_that_no_mps_fits_reads_cleanly) {
  platform_config c = preset("titanx-gen3");
  const std::string m = error_of([&] { apply_override(c, "pcie.pd_credits=1"); });
  EXPECT_EQ(m.find("expected no pcie.mps fits"), std::string::npos) << m;
  EXPECT_HAS(m, "expected pcie.pd_credits = 0 (unlimited) or >= ");
  EXPECT_HAS(m, "(no pcie.mps from 128 to 4096 B fits 1 credits)");
}

TEST(input_readers, name_map_message_closes_its_parenthesis) {
  const std::string d = tmp("nm_acts");
  make_dir(d);
  write_text(d + "/conv1.npy", npy_f4("(1, 32, 28, 28)", std::vector<float>(32 * 28 * 28, 1.0f)));
  const std::string nm = tmp("nm.json");
  write_text(nm, R"({"conv1": "bogus"})");
  wl::real_activation_options o;
  o.name_map = wl::load_name_map(nm);
  wl::npz_activation_source src(d, o);
  const std::string m = error_of([&] { src.validate(wl::make_network("fmnist_cnn", 1)); });
  EXPECT_HAS(m, "tensor 'conv1' (mapped to 'bogus') matches no layer of network fmnist_cnn");
}

// New-user trial s19 F5(b): with five unknown members the message named only the first by name,
// one retry per name. Every one is named now, in the file's order (a folder: its .npy names in
// order); one alone keeps the message above.
TEST(input_readers, every_tensor_matching_no_layer_is_named_at_once) {
  const std::string d = tmp("unknown_acts");
  make_dir(d);
  const std::vector<float> v(32 * 28 * 28, 1.0f);
  for (const char* name : {"zeta", "conv1", "alpha", "logits"}) write_text(d + "/" + name + ".npy", npy_f4("(1, 32, 28, 28)", v));
  wl::npz_activation_source src(d);
  const std::string m = error_of([&] { src.validate(wl::make_network("fmnist_cnn", 1)); });
  EXPECT_HAS(m, d + ": 3 tensors match no layer of network fmnist_cnn: 'alpha', 'logits', 'zeta' (expected layer "
                    "output keys such as 'conv1'; a name map can rename tensors, or leave them out with null)");
}

// New-user trial s19 F5(a): members that are no layer output (logits, pre-ReLU copies) had to
// be removed from the file. A name map entry `null` leaves a member out: it is neither matched
// nor read, and the other members are used as before.
TEST(input_readers, a_name_map_entry_null_leaves_a_tensor_out) {
  const std::string d = tmp("skipped_acts");
  make_dir(d);
  const std::vector<float> v(32 * 28 * 28, 1.0f);
  for (const char* name : {"zeta", "conv1", "alpha", "logits"}) write_text(d + "/" + name + ".npy", npy_f4("(1, 32, 28, 28)", v));
  const std::string nm = tmp("skip_map.json");
  write_text(nm, R"({"zeta": null, "alpha": null, "logits": null})");
  wl::real_activation_options o;
  o.missing = wl::real_activation_options::missing_policy::dense;  // the file holds conv1 only
  o.name_map = wl::load_name_map(nm);
  ASSERT_EQ(o.name_map.at("logits"), "");
  wl::npz_activation_source src(d, o);
  EXPECT_NO_THROW(src.validate(wl::make_network("fmnist_cnn", 1)));
  // Leaving out one of three unknown members still names the other two.
  write_text(nm, R"({"logits": null})");
  o.name_map = wl::load_name_map(nm);
  wl::npz_activation_source src2(d, o);
  EXPECT_HAS(error_of([&] { src2.validate(wl::make_network("fmnist_cnn", 1)); }),
             d + ": 2 tensors match no layer of network fmnist_cnn: 'alpha', 'zeta' (expected layer output keys");
  // An empty string is not a layer key (it was taken and matched nothing); a number neither.
  for (const char* text : {R"({"logits": ""})", R"({"logits": 3})"}) {
    write_text(nm, text);
    EXPECT_HAS(error_of([&] { wl::load_name_map(nm); }),
               nm + ": value of \"logits\" must be a layer key (a non-empty string) or null to leave the tensor out; "
                    "expected a JSON object {\"name in file\": \"layer key\" or null, ...}");
  }
}

// F5(d): a wrong shape named only the layer whose X_i the tensor is; now also the layer that
// produced it, and an NHWC tensor (N x H x W x C holding the expected C, H, W) is called so.
TEST(input_readers, wrong_shape_names_the_producing_layer_and_nhwc) {
  // A layer file whose first layer writes the key "act1" (not its name): c1's output, c2's X_i.
  const std::string net = tmp("keyed_net.json");
  write_text(net, R"({"name": "keyed", "input": [3, 8, 8], "layers": [
    {"name": "c1", "type": "conv", "filters": 4, "kernel": 3, "pad": 1, "relu": true, "key": "act1"},
    {"name": "c2", "type": "conv", "filters": 4, "kernel": 3, "pad": 1},
    {"name": "f", "type": "fc", "units": 2}]})");
  const wl::network n = wl::load_layer_file(net, 1);
  const std::string d = tmp("nhwc_acts");
  make_dir(d);
  write_text(d + "/act1.npy", npy_f4("(1, 8, 8, 4)", std::vector<float>(8 * 8 * 4, 1.0f)));
  const std::string m = error_of([&] { wl::npz_activation_source(d).validate(n); });
  EXPECT_HAS(m, d + ": tensor 'act1' (output of layer 'c1') has shape 1x8x8x4 but layer 'c2' expects N x 4x8x8 "
                    "(NCHW); the tensor looks NHWC (N x H x W x C): transpose it to NCHW");
  // Another wrong shape: no NHWC hint.
  const std::string e = tmp("odd_acts");
  make_dir(e);
  write_text(e + "/act1.npy", npy_f4("(1, 2, 8, 8)", std::vector<float>(2 * 8 * 8, 1.0f)));
  const std::string m2 = error_of([&] { wl::npz_activation_source(e).validate(n); });
  EXPECT_HAS(m2, "tensor 'act1' (output of layer 'c1') has shape 1x2x8x8 but layer 'c2' expects N x 4x8x8 (NCHW)");
  EXPECT_EQ(m2.find("NHWC"), std::string::npos) << m2;
}

TEST(input_readers, dilation_message_names_the_effective_window) {
  const std::string p = tmp("dil.json");
  write_text(p, R"({"name":"z","input":[3,8,8],"layers":[{"name":"a","type":"conv","filters":4,"kernel":3,"dilation":1000000000}]})");
  const std::string m = error_of([&] { wl::load_layer_file(p, 1); });
  EXPECT_HAS(m, "window 3 with dilation 1000000000 (effective window d (k - 1) + 1 = 2000000001) does not fit input "
                "length 8");
  // A dilation whose product overflows 64 bits is refused the same way (was undefined behaviour).
  write_text(p, R"({"name":"z","input":[3,8,8],"layers":[{"name":"a","type":"conv","filters":4,"kernel":3,"dilation":9000000000000000000}]})");
  EXPECT_HAS(error_of([&] { wl::load_layer_file(p, 1); }), "(effective window d (k - 1) + 1 = 18000000000000000001)");
}

// A tensor of a folder of .npy files with a dtype other than float32: the message names the
// file once (it said "DIR:DIR/conv1.npy"; re-breaker, session 12).
TEST(input_readers, folder_tensor_error_names_the_file_once) {
  const std::string d = tmp("f8_folder");
  std::filesystem::create_directories(d);
  python("import struct\n"
         "h = \"{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 4, 4), }\"\n"
         "h += ' ' * ((64 - (10 + len(h) + 1) % 64) % 64) + '\\n'\n"
         "open('" + d + "/c1.npy', 'wb').write(b'\\x93NUMPY\\x01\\x00' + struct.pack('<H', len(h)) + h.encode() + bytes(8 * 32))\n");
  const wl::network net = wl::load_layer_file(two_conv_net(), 1);
  wl::npz_activation_source src(d);
  const std::string m = error_of([&] {
    src.validate(net);
    std::vector<float> out(32);
    src.fill("c1", net.layers[1].offload, 0, reinterpret_cast<std::uint8_t*>(out.data()), 128);
  });
  EXPECT_HAS(m, d + "/c1.npy: dtype <f8 is not supported");
  EXPECT_EQ(m.find(d + ":"), std::string::npos) << m;
}

// `run --csv` writes each layer's kernel times in seconds (forward_s, backward_s, to the ps);
// given back as --layer-times it pins them: the same oracle step to the ps, every layer listed
// (new-user trial s22 F5: the DRAM-type study converted the file to milliseconds by hand).
TEST(input_readers, a_run_csv_is_a_layer_time_table) {
  const std::string csv = tmp("pin_times.csv"), a = tmp("pin_a.json"), b = tmp("pin_b.json");
  const std::string job = "run --network fmnist_cnn --batch 2 --steps oracle -q";
  ASSERT_EQ(cdma::test::cli(job + " --csv " + csv + " --json " + a), 0);
  std::string out;
  ASSERT_EQ(cdma::test::cli(job + " --layer-times " + csv + " --json " + b, &out), 0);
  const auto ja = nlohmann::json::parse(slurp(a)), jb = nlohmann::json::parse(slurp(b));
  EXPECT_EQ(ja["step_time_s"]["oracle"], jb["step_time_s"]["oracle"]);
  EXPECT_EQ(jb["kernel_times"]["measured_layers"], ja["layers"].size()) << jb["kernel_times"];
  // And on another GPU the pinned times stay (the roofline would give other ones).
  ASSERT_EQ(cdma::test::cli(job + " --preset v100-gen3 --layer-times " + csv + " --json " + b), 0);
  EXPECT_EQ(ja["step_time_s"]["oracle"], nlohmann::json::parse(slurp(b))["step_time_s"]["oracle"]);
}

// Breaker s23: times of 1 s or more lost ps in `run --csv` (12 significant digits): a kernel
// time of 1234.567890123 ms was written 1.23456789012 s and pinned back 3 ps off. With 15
// digits the oracle step comes back to the ps (1 234 567 890 123 ps + 2 000 000 001 ps, by
// hand: 1.236567890124 s for the two listed kernel times' layer).
TEST(input_readers, a_run_csv_keeps_every_ps_of_long_kernel_times) {
  const std::string times = tmp("long_times.csv"), csv = tmp("long_run.csv"), a = tmp("long_a.json"),
                    b = tmp("long_b.json");
  std::ofstream(times) << "layer,forward_ms,backward_ms\nsyn_conv_2,1234.567890123,2.000000001\n";
  const std::string job = "run --network synthetic --batch 1 --steps oracle -q";
  ASSERT_EQ(cdma::test::cli(job + " --layer-times " + times + " --csv " + csv + " --json " + a), 0);
  ASSERT_EQ(cdma::test::cli(job + " --layer-times " + csv + " --json " + b), 0);
  const auto ja = nlohmann::json::parse(slurp(a)), jb = nlohmann::json::parse(slurp(b));
  EXPECT_EQ(ja["step_time_s"]["oracle"], jb["step_time_s"]["oracle"]);
  EXPECT_NE(slurp(csv).find(",1.234567890123,0.002000000001,"), std::string::npos) << slurp(csv);
}
