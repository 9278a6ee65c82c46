// cdma-vp analyze PATH... : compressibility of activation tensors (.npy, .npz, or folders of
// them, searched recursively) under every codec, whole-tensor and windowed as the cDMA engine
// does it, in NCHW and NHWC layouts (docs/codecs.md "cdma-vp analyze").
//
//   whole_bytes    = codec::compressed_size of the whole tensor buffer (no framing);
//   windowed_bytes = sum over windows of the window's stored bytes (compressed, or raw when
//                    compression would not shrink it) + 8 bytes of metadata per window
//                    (tlm/codec/window.h), i.e. the bytes the engine moves over PCIe.
// ratio = tensor bytes / those bytes. A 4-D tensor is taken as NCHW (the file layout) and
// transposed to NHWC; other ranks have one layout, reported under both names.
// Exit status: 0 ok, 2 bad options or at least one unreadable input (named on stderr; the
// other inputs are still analysed), 3 the --json file could not be written.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "platform/command.h"
#include "platform/config.h"
#include "platform/outputs.h"
#include "tlm/codec/codec.h"
#include "tlm/codec/window.h"
#include "tlm/cdma/cdma_engine.h"
#include "workloads/io/npy.h"

namespace cdma::platform {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct layout_result {
  std::uint64_t whole = 0, windowed = 0;
};
const char* const k_layouts[2] = {"NCHW", "NHWC"};

struct tensor_result {
  std::string name;
  std::vector<std::int64_t> shape;
  std::uint64_t elements = 0, bytes = 0;
  double zero_fraction = 0;
  /// Float elements that are -0.0 (sign bit alone), a fraction of the elements: no zeros to
  /// ZVC (bit-exact); 0 for other dtypes.
  double negative_zero_fraction = 0;
  std::vector<std::array<layout_result, 2>> codecs;  // per codec, per layout
};

std::string shape_str(const std::vector<std::int64_t>& s) {
  std::string r = "(";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

std::vector<std::uint8_t> to_nhwc(const workloads::npy_array& a) {
  const std::size_t N = a.shape[0], C = a.shape[1], H = a.shape[2], W = a.shape[3];
  const std::size_t w = a.element_width;
  std::vector<std::uint8_t> out(a.data.size());
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t c = 0; c < C; ++c)
      for (std::size_t hw = 0; hw < H * W; ++hw)
        std::memcpy(&out[((n * H * W + hw) * C + c) * w], &a.data[((n * C + c) * H * W + hw) * w], w);
  return out;
}

class analyzer {
 public:
  analyzer(std::size_t window, const std::vector<codec::codec_id>& ids) : window_(window), ids_(ids) {}

  tensor_result analyze(const std::string& name, const workloads::npy_array& a) const {
    tensor_result t;
    t.name = name;
    t.shape = a.shape;
    t.elements = a.elements();
    t.bytes = a.data.size();
    // Codec element width: the dtype's (8-byte dtypes are coded as pairs of 4-byte elements).
    const unsigned w = a.element_width <= 4 ? a.element_width : 4;
    std::uint64_t zeros = 0, negative_zeros = 0;
    const unsigned ew = a.element_width;
    // -0.0 of a float dtype: every byte 0 but the last (little-endian), 0x80.
    const bool is_float = a.descr.size() >= 2 && a.descr[1] == 'f';
    for (std::size_t i = 0; i + ew <= a.data.size(); i += ew) {
      bool z = true;
      for (unsigned b = 0; b + 1 < ew && z; ++b) z = a.data[i + b] == 0;
      zeros += z && a.data[i + ew - 1] == 0;
      negative_zeros += is_float && z && a.data[i + ew - 1] == 0x80;
    }
    t.zero_fraction = t.elements ? double(zeros) / double(t.elements) : 0.0;
    t.negative_zero_fraction = t.elements ? double(negative_zeros) / double(t.elements) : 0.0;
    std::vector<std::uint8_t> nhwc;
    const bool four_d = a.shape.size() == 4;
    if (four_d) nhwc = to_nhwc(a);
    for (codec::codec_id id : ids_) {
      const auto c = codec::make_codec(id, w);
      std::array<layout_result, 2> r;
      for (int l = 0; l < 2; ++l) {
        if (l == 1 && !four_d) {
          r[1] = r[0];
          break;
        }
        const std::vector<std::uint8_t>& buf = l == 0 ? a.data : nhwc;
        r[l].whole = c->compressed_size(buf.data(), buf.size());
        const std::size_t nwin = codec::window_count(buf.size(), window_);
        std::uint64_t sum = 0;
        for (std::size_t k = 0; k < nwin; ++k) {
          const std::size_t off = k * window_;
          sum += codec::window_size(*c, buf.data() + off, std::min(window_, buf.size() - off)).bytes;
        }
        r[l].windowed = sum + nwin * codec::window_entry_bytes;
      }
      t.codecs.push_back(r);
    }
    return t;
  }

 private:
  std::size_t window_;
  std::vector<codec::codec_id> ids_;
};

double ratio(std::uint64_t in, std::uint64_t out) { return out ? double(in) / double(out) : 0.0; }

void print_row(std::ostream& os, const std::string& codec_name, std::uint64_t bytes,
               const std::array<layout_result, 2>& r) {
  char line[256];
  std::snprintf(line, sizeof line, "    %-5s", codec_name.c_str());
  os << line;
  for (int l = 0; l < 2; ++l) {
    std::snprintf(line, sizeof line, "  %s whole %11llu (%6.2fx) windowed %11llu (%6.2fx)",
                  k_layouts[l], static_cast<unsigned long long>(r[l].whole), ratio(bytes, r[l].whole),
                  static_cast<unsigned long long>(r[l].windowed), ratio(bytes, r[l].windowed));
    os << line;
  }
  os << "\n";
}

int analyze_command(const std::vector<std::string>& args) {
  std::vector<std::string> paths;
  std::string json_path;
  std::size_t window = 4096;
  std::vector<codec::codec_id> ids(std::begin(codec::all_codec_ids), std::end(codec::all_codec_ids));
  bool options_end = false;  // after "--" every argument is a PATH (a file named -q: -- -q or ./-q)
  std::vector<std::string> given;  // options seen: each at most once, as every other command (the last one won)
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (options_end || a == "-" || a.empty() || a[0] != '-') {
      paths.push_back(a);
      continue;
    }
    if (a == "--") {
      options_end = true;
      continue;
    }
    auto value = [&](const char* opt) -> std::string {
      if (i + 1 >= args.size()) throw std::runtime_error(std::string(opt) + " needs a value");
      return args[++i];
    };
    try {
      if (a == "--json" || a == "--window" || a == "--codecs") {
        if (std::find(given.begin(), given.end(), a) != given.end())
          throw std::runtime_error("option '" + a + "' cannot be specified more than once");
        given.push_back(a);
      }
      if (a == "--help" || a == "-h") {
        std::cout
            << "Usage: cdma-vp analyze [--json FILE] [--window BYTES] [--codecs a,b,..] PATH...\n\n"
               "Compressibility of activation tensors (.npy, .npz, or folders of them, searched\n"
               "recursively): per tensor its shape, zero fraction and, for each codec, the\n"
               "compressed bytes and ratio whole-tensor and windowed as the cDMA engine does it\n"
               "(per-window raw fallback + 8 B metadata per window), in NCHW and NHWC layouts;\n"
               "a total line per file.\n\n"
               "  --json FILE      also write the results as JSON\n"
               "  --window BYTES   window size of the windowed framing, as cdma.window (default 4096; \"4 KiB\")\n"
               "  --codecs LIST    comma-separated subset of raw,zvc,rle,zlib,lz4,zstd, each once (default all)\n"
               "  (each option once)\n\n"
               "Exit status: 0 ok, 2 bad options or an unreadable input (the others are analysed),\n"
               "3 the --json file could not be written (e.g. a full disk; nothing partial is left).\n";
        return 0;
      } else if (a == "--json") {
        json_path = value("--json");
        if (json_path.empty()) throw std::runtime_error("--json '': an empty file name; expected a path");
      } else if (a == "--window") {
        const std::string v = value("--window");
        // Read as cdma.window reads it (a number of bytes or a size with its unit: "4 KiB",
        // "1.5 KiB"; the message said "as cdma.window takes them" but refused "4 KiB").
        // The engine's rule (cdma.window): 64 B .. cdma::max_window_bytes, whole fp32 elements;
        // decimal only (parse_bytes alone took "0x1000" and " 4096").
        std::uint64_t n = 0;
        try {
          platform_config c;
          apply_override(c, "cdma.window=" + v, true);
          n = c.engine.window_bytes;
        } catch (const std::exception&) {  // the message below
        }
        if (n < 64 || n > max_window_bytes || n % 4 != 0)
          throw std::runtime_error("--window '" + v + "': expected bytes per window as cdma.window takes them (4096, "
                                   "\"4 KiB\"): a multiple of 4 from 64 to " + std::to_string(max_window_bytes));
        window = static_cast<std::size_t>(n);
      } else if (a == "--codecs") {
        ids.clear();
        std::stringstream ss(value("--codecs"));
        for (std::string name; std::getline(ss, name, ',');) {
          const codec::codec_id id = codec::codec_from_string(name);
          // Each once (as bench dram --presets): a codec listed twice printed its rows twice.
          if (std::find(ids.begin(), ids.end(), id) != ids.end())
            throw std::runtime_error("--codecs: '" + name + "' names a codec listed before (raw and none are one "
                                     "codec); expected each codec once");
          ids.push_back(id);
        }
        if (ids.empty()) throw std::runtime_error("--codecs: expected at least one codec name");
      } else {  // -q was read as a PATH ("-q: no such file")
        throw std::runtime_error("unknown option '" + a + "'; expected --json, --window, --codecs, --help (a PATH "
                                 "that starts with '-': ./" + a + " or -- " + a + ")");
      }
    } catch (const std::invalid_argument&) {
      return usage_error("--window: expected a number of bytes");
    } catch (const std::exception& e) {
      return usage_error(std::string("analyze: ") + e.what());
    }
  }
  if (paths.empty()) return usage_error("analyze: expected at least one PATH (.npy, .npz or folder)");
  // Expand folders (sorted, recursive); keep explicit files as given.
  std::vector<std::string> files;
  bool failed = false;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec)) {
        const auto ext = it->path().extension();
        if (it->is_regular_file() && (ext == ".npy" || ext == ".npz")) found.push_back(it->path().string());
      }
      if (ec) {
        std::cerr << "cdma-vp analyze: " << printable(p) << ": cannot read folder (" << ec.message() << ")\n";
        failed = true;
      }
      if (found.empty() && !ec) {
        std::cerr << "cdma-vp analyze: " << printable(p) << ": no .npy or .npz files in this folder\n";
        failed = true;
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(p);
    }
  }

  if (!json_path.empty()) {
    try {
      // Not one of the inputs (analyze --json x.npy x.npy overwrote the tensor), however spelled.
      std::vector<named_file> inputs;
      for (const auto& f : files) inputs.push_back({f, "the input"});
      check_distinct_files({{json_path, "--json"}}, inputs);
      check_output_path(json_path, "--json");  // written (via FILE.tmp) once the analysis is done
    } catch (const std::exception& e) {
      return usage_error(std::string("analyze: ") + e.what());
    }
  }

  const analyzer an(window, ids);
  std::vector<std::string> names;
  for (auto id : ids) names.push_back(codec::to_string(id));
  json j;
  j["window_bytes"] = window;
  j["window_entry_bytes"] = codec::window_entry_bytes;
  j["tensors"] = json::array();
  j["files"] = json::array();
  for (const auto& file : files) {
    std::vector<tensor_result> results;
    json jf;
    jf["path"] = file;
    try {
      const bool npz = fs::path(file).extension() == ".npz";
      if (npz) {
        const workloads::npz_archive z(file);
        for (const auto& k : z.keys()) results.push_back(an.analyze(k, z.read(k)));
      } else {
        results.push_back(an.analyze(fs::path(file).stem().string(), workloads::read_npy(file)));
      }
    } catch (const std::exception& e) {
      // npy_error / codec_error messages start with the file (and member) name.
      const std::string msg = e.what();
      std::cerr << "cdma-vp analyze: " << printable((msg.rfind(file, 0) == 0 ? "" : file + ": ") + msg, true) << "\n";
      jf["error"] = msg;
      j["files"].push_back(jf);
      failed = true;
      continue;
    }
    std::cout << printable(file) << " (" << results.size() << " tensors, window " << window << " B)\n";
    tensor_result total;
    total.codecs.assign(ids.size(), {});
    std::uint64_t zeros_w = 0;
    for (const auto& t : results) {
      std::cout << "  " << printable(t.name) << "  shape " << shape_str(t.shape) << "  elements " << t.elements
                << "  zero fraction " << std::fixed;
      std::cout.precision(4);
      std::cout << t.zero_fraction;
      // -0.0 is no zero to ZVC: say so where a tensor has any (new-user trial s23 F2).
      if (t.negative_zero_fraction > 0)
        std::cout << "  negative zeros (-0.0, not zeros to zvc) " << t.negative_zero_fraction;
      std::cout << std::defaultfloat << "\n";
      json jt;
      jt["file"] = file;
      jt["name"] = t.name;
      jt["shape"] = t.shape;
      jt["elements"] = t.elements;
      jt["bytes"] = t.bytes;
      jt["zero_fraction"] = t.zero_fraction;
      jt["negative_zero_fraction"] = t.negative_zero_fraction;
      for (std::size_t k = 0; k < ids.size(); ++k) {
        print_row(std::cout, names[k], t.bytes, t.codecs[k]);
        for (int l = 0; l < 2; ++l) {
          jt["codecs"][names[k]][k_layouts[l]] = {{"whole_bytes", t.codecs[k][l].whole},
                                                  {"windowed_bytes", t.codecs[k][l].windowed}};
          total.codecs[k][l].whole += t.codecs[k][l].whole;
          total.codecs[k][l].windowed += t.codecs[k][l].windowed;
        }
      }
      j["tensors"].push_back(jt);
      total.elements += t.elements;
      total.bytes += t.bytes;
      zeros_w += static_cast<std::uint64_t>(t.zero_fraction * double(t.elements) + 0.5);
    }
    std::cout << "  TOTAL " << printable(file) << "  tensors " << results.size() << "  elements " << total.elements
              << "  bytes " << total.bytes << "  zero fraction " << std::fixed;
    std::cout.precision(4);
    std::cout << (total.elements ? double(zeros_w) / double(total.elements) : 0.0) << std::defaultfloat
              << "\n";
    jf["tensors"] = results.size();
    jf["elements"] = total.elements;
    jf["bytes"] = total.bytes;
    for (std::size_t k = 0; k < ids.size(); ++k) {
      print_row(std::cout, names[k], total.bytes, total.codecs[k]);
      for (int l = 0; l < 2; ++l)
        jf["codecs"][names[k]][k_layouts[l]] = {{"whole_bytes", total.codecs[k][l].whole},
                                                {"windowed_bytes", total.codecs[k][l].windowed}};
    }
    j["files"].push_back(jf);
  }
  if (!json_path.empty()) {
    try {
      // Names from the files (an .npz member, a path) that are not UTF-8: JSON holds only
      // UTF-8, such bytes become U+FFFD (the dump threw, an uncaught exception).
      write_output_file(json_path, j.dump(2, ' ', false, json::error_handler_t::replace) + "\n", "--json",
                        "analysis done but not saved");
    } catch (const output_error& e) {
      std::cerr << "cdma-vp analyze: error: " << printable(e.what(), true) << "\n";
      return 3;
    }
  }
  return failed ? 2 : 0;
}

const command_registrar reg({"analyze",
                             "compressibility of .npy/.npz tensors under every codec (cdma-vp analyze PATH...)",
                             analyze_command});

}  // namespace
}  // namespace cdma::platform
