#include "workloads/activations/activation_source.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <iomanip>
#include <limits>
#include <set>
#include <sys/stat.h>
#include <dirent.h>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>
#include "tlm/core/quantity.h"
#include "workloads/io/csv.h"
#include "workloads/io/input_file.h"

namespace cdma::workloads {

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::uint64_t hash_key(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

/// Calls gen(element_index) -> uint32 bit pattern for every element overlapping
/// [offset, offset + len) and copies the wanted bytes (ranges need not be element aligned).
template <typename Gen>
void fill_elements(std::uint64_t offset, std::uint8_t* out, std::size_t len, Gen gen) {
  std::uint64_t pos = offset;
  const std::uint64_t end = offset + len;
  // Whole elements (the common case: element-aligned windows): four bytes at a time.
  if (pos % 4 == 0) {
    std::uint64_t e = pos / 4;
    std::uint8_t* o = out;
    for (const std::uint64_t e_end = end / 4; e < e_end; ++e, o += 4) {
      const std::uint32_t v = gen(e);
      std::memcpy(o, &v, 4);  // little-endian host assumed (x86-64, ARM64)
    }
    pos = e * 4;
  }
  while (pos < end) {
    const std::uint64_t e = pos / 4;
    const std::uint32_t v = gen(e);
    std::uint8_t b[4];
    std::memcpy(b, &v, 4);  // little-endian host assumed (x86-64, ARM64)
    const std::size_t first = static_cast<std::size_t>(pos % 4);
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(4 - first, end - pos));
    std::memcpy(out + (pos - offset), b + first, n);
    pos += n;
  }
}

std::uint32_t float_bits(float f) {
  std::uint32_t v;
  std::memcpy(&v, &f, 4);
  return v;
}

/// A number as printf %g: 1e-300 stays 1e-300 (std::to_string would print 0.000000).
std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

std::string shape_str(const std::vector<std::int64_t>& s) {
  std::ostringstream o;
  for (std::size_t i = 0; i < s.size(); ++i) o << (i ? "x" : "") << s[i];
  return o.str();
}

}  // namespace

void fill_input_image(std::uint64_t seed, std::uint64_t offset, std::uint8_t* out, std::size_t len) {
  const std::uint64_t s = splitmix64(seed ^ 0x1A2B3C4Dull);
  fill_elements(offset, out, len, [s](std::uint64_t e) {
    const std::uint64_t h = splitmix64(s + e);
    // 8-bit pixel / 256 + 1/256: in [1/256, 1], never zero, like a normalised photo.
    return float_bits(static_cast<float>((h & 0xFF) + 1) / 256.0f);
  });
}

// ---- real activations (.npz, .npy, directory of .npy) -------------------------------------

namespace {
bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}
std::string base_name(const std::string& p) {
  const auto slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}
}  // namespace

std::vector<std::string> npy_files_in(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) throw activation_error(dir + ": cannot read the directory");
  std::vector<std::string> files;
  while (const dirent* e = ::readdir(d)) {
    const std::string f = e->d_name;
    if (ends_with(f, ".npy")) files.push_back(f);
  }
  ::closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

std::map<std::string, std::string> load_name_map(const std::string& path) {
  const std::string form = "a JSON object {\"name in file\": \"layer key\" or null, ...}";
  std::ifstream in;
  if (const io::input_problem p = io::open_input(in, path))
    throw activation_error(path + ": " + p.text("the name map") + " (expected " + form + ")");
  nlohmann::json j;
  try {
    j = io::strict_json(in);
  } catch (const io::duplicate_key& e) {
    throw activation_error(path + ": name map: " + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw activation_error(path + ": malformed JSON (" + e.what() + ")");
  } catch (const std::ios_base::failure& e) {  // a read error (e.g. EIO)
    throw activation_error(path + ": read error (" + e.what() + ")");
  }
  if (!j.is_object()) throw activation_error(path + ": expected " + form);
  std::map<std::string, std::string> m;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.value().is_null()) {  // leave the tensor out (logits, pre-ReLU copies, ...)
      m[it.key()] = "";
      continue;
    }
    if (!it.value().is_string() || it.value().get<std::string>().empty())
      throw activation_error(path + ": value of \"" + it.key() + "\" must be a layer key (a non-empty string) or null " +
                             "to leave the tensor out; expected " + form);
    m[it.key()] = it.value().get<std::string>();
  }
  return m;
}

npz_activation_source::npz_activation_source(const std::string& path, std::uint64_t cache_limit)
    : npz_activation_source(path, [cache_limit] {
        real_activation_options o;
        o.cache_limit_bytes = cache_limit;
        return o;
      }()) {}

npz_activation_source::~npz_activation_source() = default;

npz_activation_source::npz_activation_source(const std::string& path, const real_activation_options& opt)
    : npz_activation_source(std::vector<std::string>{path}, opt) {}

npz_activation_source::source_file npz_activation_source::open_source(const std::string& path) const {
  source_file src;
  src.path = path;
  std::vector<std::pair<std::string, std::string>> names;  // name in file, member / path
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw activation_error(path + ": no such file or directory (expected a .npz, a .npy or a directory of .npy files)");
  if (S_ISDIR(st.st_mode)) {
    for (const auto& f : npy_files_in(path)) names.emplace_back(f.substr(0, f.size() - 4), path + "/" + f);
  } else if (ends_with(path, ".npy")) {
    const std::string b = base_name(path);
    names.emplace_back(b.substr(0, b.size() - 4), path);
  } else {
    src.archive = std::make_unique<npz_archive>(path);
    for (const auto& k : src.archive->keys()) names.emplace_back(k, k);
  }
  if (names.empty())
    throw activation_error(path + ": holds no .npy tensors; expected one NCHW float32 tensor per layer output");
  std::map<std::string, std::string> named;  // layer key -> the tensor name that maps to it
  for (const auto& [name, where] : names) {
    auto m = opt_.name_map.find(name);
    const std::string key = m == opt_.name_map.end() ? name : m->second;
    if (m != opt_.name_map.end() && key.empty()) continue;  // mapped to null: left out, never read
    // A member ".npy" (or a folder's file ".npy") names no array: it was left out silently, as
    // if mapped to null (breaker s22 F4).
    if (key.empty())
      throw activation_error(path + ": holds a tensor with an empty name ('.npy'); expected <layer key>.npy (a name map "
                             "{\"\": null} leaves it out)");
    if (const auto first = named.find(key); first != named.end())
      throw activation_error(path + ": two tensors map to layer key '" + key + "': '" + first->second + "' and '" +
                             name + "' (check the name map); expected one tensor per layer");
    named[key] = name;
    src.where[key] = where;
    src.keys.push_back(key);
  }
  for (const auto& n : names) src.names.insert(n.first);
  return src;
}

npz_activation_source::npz_activation_source(const std::vector<std::string>& paths,
                                             const real_activation_options& opt)
    : opt_(opt) {
  if (paths.empty()) throw activation_error("real activations: no file given; expected a .npz, a .npy or a directory of .npy files");
  std::vector<std::pair<dev_t, ino_t>> ids;  // of the files opened (0, 0 if stat failed)
  for (const std::string& p : paths) {
    struct stat st {};
    const auto id = ::stat(p.c_str(), &st) == 0 ? std::make_pair(st.st_dev, st.st_ino) : std::make_pair(dev_t{}, ino_t{});
    for (std::size_t i = 0; i < sources_.size(); ++i)
      if (p == sources_[i].path || (id.second != 0 && ids[i] == id))
        throw activation_error(p + ": given twice as an activations source (also as " + sources_[i].path +
                               "); expected each file once (a batch repeats the images by itself)");
    sources_.push_back(open_source(p));
    ids.push_back(id);
  }
  path_ = paths_text();
  // Every name the map names is a tensor of a source (with several sources, each may name its
  // tensors its own way: the map makes them the same).
  for (const auto& kv : opt_.name_map)
    if (std::none_of(sources_.begin(), sources_.end(), [&](const source_file& f) { return f.names.count(kv.first) > 0; }))
      throw activation_error(path_ + ": the name map names '" + kv.first + "', which is not a tensor of " +
                             the_files() + "; expected the map's keys to be tensor names in the files");
  for (const auto& kv : sources_.front().where) held_.insert(kv.first);
  // Every source holds the same tensors (after the name map): image n of the batch must exist
  // in every layer.
  const source_file& first = sources_.front();
  for (std::size_t i = 1; i < sources_.size(); ++i)
    for (const auto& [a, b] : {std::pair<const source_file*, const source_file*>{&first, &sources_[i]},
                                  std::pair<const source_file*, const source_file*>{&sources_[i], &first}})
      for (const auto& kv : a->where)
        if (!b->where.count(kv.first))
          throw activation_error(b->path + ": holds no tensor '" + kv.first + "', which " + a->path +
                                 " holds; expected every activations source to hold the same tensors (after the name "
                                 "map) with the same C, H, W (N may differ)");
}

std::string npz_activation_source::paths_text() const {
  std::string t;
  for (const auto& s : sources_) t += (t.empty() ? "" : " + ") + s.path;
  return t;
}

npy_array npz_activation_source::read_checked(const source_file& f, const std::string& key,
                                              std::uint64_t max_rows) const {
  const std::string& where = f.where.at(key);
  npy_array a = f.archive ? f.archive->read(where, max_rows) : read_npy(where, max_rows);
  // FILE.npz:member, or the .npy file's own path (a folder's files are full paths already: it
  // said "DIR:DIR/conv1.npy").
  const std::string origin = f.archive ? f.path + ":" + where : where;
  if (a.descr != "<f4" && a.descr != "=f4" && a.descr != ">f4")
    throw activation_error(origin + ": dtype " + a.descr +
                           " is not supported; expected float32 ('<f4')");
  std::vector<std::int64_t> in_file = a.shape;  // as the file has it (a.shape[0]: the rows read)
  if (!in_file.empty()) in_file[0] = static_cast<std::int64_t>(a.rows_in_file);
  if (a.shape.size() != 4 && a.shape.size() != 2)
    throw activation_error(origin + ": shape " + shape_str(in_file) +
                           " is not NCHW; expected 4 dimensions (or N x C for fully connected)");
  if (std::find_if(in_file.begin(), in_file.end(), [](std::int64_t d) { return d < 1; }) != in_file.end())
    throw activation_error(origin + ": shape " + shape_str(in_file) +
                           " has a zero dimension (an empty tensor); expected at least one image of N x C x H x W "
                           "(or N x C) float32 with every dimension >= 1");
  return a;
}

void npz_activation_source::scan_sources() {
  if (sources_.size() < 2 || sources_.front().images >= 0) return;
  // C, H, W of tensor `a` (a 2-D N x C tensor is C x 1 x 1).
  auto chw = [](const std::vector<std::int64_t>& s) {
    return std::make_tuple(s[1], s.size() == 4 ? s[2] : 1, s.size() == 4 ? s[3] : 1);
  };
  std::map<std::string, std::vector<std::int64_t>> shape0;  // key -> shape in sources_[0]
  // Each member is decompressed once: the rows the batch takes from a source are kept (as
  // load() would read them) and become the cached tensors, while they fit in the cache.
  std::map<std::string, tensor> staged;
  std::uint64_t staged_bytes = 0, start = 0;  // start: images of the sources before f
  bool stage = true;
  for (source_file& f : sources_) {
    const std::uint64_t room = images_needed_ > start ? images_needed_ - start : 0;
    std::int64_t images = -1;
    std::map<std::string, npy_array> rows;  // key -> the rows read from f
    std::map<std::string, std::int64_t> counts;  // key -> its images in f, for the warning below
    for (const std::string& key : held_) {
      npy_array a = read_checked(f, key, room);  // room 0: the header (and the member's CRC) only
      std::vector<std::int64_t> s = a.shape;
      s[0] = static_cast<std::int64_t>(a.rows_in_file);
      auto [first, fresh] = shape0.emplace(key, s);
      if (!fresh && chw(first->second) != chw(s))
        throw activation_error(f.path + ": tensor '" + key + "' has shape " + shape_str(s) + " but " +
                               sources_.front().path + " holds it as " + shape_str(first->second) +
                               "; expected every activations source to hold the same tensors with the same C, H, W "
                               "(N may differ)");
      images = images < 0 ? s[0] : std::min(images, s[0]);
      counts[key] = s[0];
      if (stage && room > 0) {
        staged_bytes += a.data.size();
        if (staged_bytes > opt_.cache_limit_bytes) stage = false;  // load() reads them again later
        else rows.emplace(key, std::move(a));
      }
    }
    f.images = images;
    if (std::string w = unequal_images_warning(f.path, counts); !w.empty()) source_warnings_.push_back(std::move(w));
    const std::uint64_t take = std::min<std::uint64_t>(static_cast<std::uint64_t>(images), room);
    start += static_cast<std::uint64_t>(images);
    if (!stage) {
      staged.clear();
      continue;
    }
    // The source's first `take` images of each tensor, appended; each array freed once copied
    // (memory: the tensors staged so far plus this source's rows).
    for (auto it = rows.begin(); it != rows.end(); it = rows.erase(it)) {
      npy_array& a = it->second;
      const std::size_t bytes = a.data.size() / static_cast<std::size_t>(a.shape[0]) * take;
      tensor& t = staged[it->first];
      if (t.shape.empty()) {
        t.shape = a.shape;
        t.shape[0] = static_cast<std::int64_t>(take);
        a.data.resize(bytes);
        t.data = std::move(a.data);
        continue;
      }
      t.data.insert(t.data.end(), a.data.begin(), a.data.begin() + static_cast<std::ptrdiff_t>(bytes));
      t.shape[0] += static_cast<std::int64_t>(take);
    }
  }
  for (auto& [key, t] : staged) {
    t.rows_in_file = start;
    if (cache_.count(key) || cached_bytes_ + t.data.size() > opt_.cache_limit_bytes) continue;
    cached_bytes_ += t.data.size();
    cache_.emplace(key, std::move(t));
  }
}

real_activation_options::missing_policy missing_policy_from_string(const std::string& s) {
  if (s == "error") return real_activation_options::missing_policy::error;
  if (s == "dense") return real_activation_options::missing_policy::dense;
  throw activation_error("missing_activations \"" + s + "\": expected error or dense");
}

npz_activation_source::tensor npz_activation_source::compute_pool(const derived_pool& d, std::uint64_t want) {
  // Pooling is per channel: the pool of a concatenation is the concatenation of its parts' pools.
  const std::int64_t C = d.in.c, H = d.in.h, W = d.in.w, OH = d.out.h, OW = d.out.w;
  const layer::pool_window& p = d.pool;
  tensor t;
  std::int64_t images = -1, c0 = 0;
  auto at = [](const std::uint8_t* b, std::int64_t i) {
    float v;
    std::memcpy(&v, b + i * 4, 4);
    return v;
  };
  for (std::size_t part = 0; part < d.from.size(); ++part) {
    const tensor& src = load(d.from[part], want);  // valid until the next load()
    const std::int64_t pc = d.part_c[part];
    if (images < 0) {
      images = src.shape[0];
      t.shape = {images, C, OH, OW};
      t.rows_in_file = src.rows_in_file;
      t.data.resize(static_cast<std::size_t>(images * C * OH * OW) * 4);
    } else if (src.shape[0] != images) {
      throw activation_error(path_ + ": tensors '" + d.from.front() + "' and '" + d.from[part] +
                             "' (concatenated into a pool's input) hold different numbers of images");
    }
    const std::uint8_t* in = src.data.data();
    std::uint8_t* out = t.data.data();
    for (std::int64_t img = 0; img < images; ++img)
      for (std::int64_t ch = 0; ch < pc; ++ch) {
        const std::uint8_t* ip = in + (img * pc + ch) * H * W * 4;
        std::uint8_t* op = out + (img * C + c0 + ch) * OH * OW * 4;
        for (std::int64_t oy = 0; oy < OH; ++oy)
          for (std::int64_t ox = 0; ox < OW; ++ox) {
            const std::int64_t y0 = std::max<std::int64_t>(0, oy * p.sh - p.ph);
            const std::int64_t y1 = std::min<std::int64_t>(H, oy * p.sh - p.ph + p.kh);
            const std::int64_t x0 = std::max<std::int64_t>(0, ox * p.sw - p.pw);
            const std::int64_t x1 = std::min<std::int64_t>(W, ox * p.sw - p.pw + p.kw);
            if (y0 >= y1 || x0 >= x1)  // layer::pool_window::derivable excludes this; never read outside
              throw activation_error(path_ + ": pool output '" + d.from[part] + "' -> window (" + std::to_string(oy) +
                                     ", " + std::to_string(ox) + ") holds no input element; cannot compute it");
            float v = 0;
            if (p.max) {
              v = at(ip, y0 * W + x0);  // a window always holds one input element (window_out)
              for (std::int64_t y = y0; y < y1; ++y)
                for (std::int64_t x = x0; x < x1; ++x) v = std::max(v, at(ip, y * W + x));
            } else {
              double sum = 0;
              for (std::int64_t y = y0; y < y1; ++y)
                for (std::int64_t x = x0; x < x1; ++x) sum += at(ip, y * W + x);
              // TensorFlow 'same' average pooling: the elements inside the input only.
              const std::int64_t count = p.exclude_padding ? (y1 - y0) * (x1 - x0) : p.kh * p.kw;
              v = static_cast<float>(sum / static_cast<double>(count));
            }
            std::memcpy(op + (oy * OW + ox) * 4, &v, 4);
          }
      }
    c0 += pc;
  }
  return t;
}

const npz_activation_source::tensor& npz_activation_source::load(const std::string& key, std::uint64_t images) {
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    const tensor& c = it->second;
    if (static_cast<std::uint64_t>(c.shape[0]) >= std::min(c.rows_in_file, images)) return c;
    cached_bytes_ -= c.data.size();  // loaded for a smaller batch: load again with more images
    cache_.erase(it);
  }
  auto keep = [this](const std::string& k, tensor t) -> const tensor& {
    if (cached_bytes_ + t.data.size() > opt_.cache_limit_bytes) {
      cache_.clear();
      cached_bytes_ = 0;
    }
    cached_bytes_ += t.data.size();
    return cache_.emplace(k, std::move(t)).first->second;
  };
  if (auto d = derived_.find(key); d != derived_.end()) return keep(key, compute_pool(d->second, images));
  if (!held_.count(key)) throw activation_error(path_ + ": no tensor for layer key '" + key + "'");
  if (sources_.size() == 1) {
    npy_array a = read_checked(sources_.front(), key, images);
    return keep(key, tensor{a.shape, std::move(a.data), a.rows_in_file});
  }
  // Several sources: the first `images` of their images, concatenated along N in order (each
  // source contributes its first `images` rows: its image count, the smallest N over its
  // tensors, even where this tensor holds more).
  scan_sources();
  tensor t;
  std::uint64_t start = 0;  // images of the sources before f
  for (const source_file& f : sources_) {
    const std::uint64_t n = static_cast<std::uint64_t>(f.images);
    const std::uint64_t take = images > start ? std::min(n, images - start) : 0;
    start += n;
    if (take == 0) continue;
    npy_array a = read_checked(f, key, take);
    if (t.shape.empty()) {
      t.shape = a.shape;
      t.shape[0] = 0;
    }
    t.data.insert(t.data.end(), a.data.begin(), a.data.end());
    t.shape[0] += a.shape[0];
  }
  t.rows_in_file = start;
  return keep(key, std::move(t));
}

void npz_activation_source::validate(const network& net) const {
  auto* self = const_cast<npz_activation_source*>(this);
  std::set<std::string> keys;
  for (const layer& l : net.layers) keys.insert(l.output_key);
  // Every tensor that matches no layer, in the file's order, in one message (new-user trial
  // s19: one name per run, the first by name, cost a retry per name).
  std::vector<std::string> unknown;  // quoted as the message shows them
  std::string fused;                 // hints for names of in-place entries (new-user trial s23 F4)
  for (const std::string& key : sources_.front().keys) {
    if (keys.count(key)) continue;
    if (const layer* f = fused_into(net, key))
      fused += "; '" + csv::shown(key) + "' is an in-place entry of the layer file fused into layer '" + f->name +
               "', whose output (after it) has the key '" + csv::shown(f->output_key) + "': use that key";
    // (Names shown as csv::shown does: control bytes as \xNN, at most 60 characters: a
    // 5000-character name made a 5190-character message, breaker2 s21.)
    const std::string shown_key = csv::shown(key);
    std::string name = shown_key + "'";
    for (const auto& m : opt_.name_map)
      if (m.second == key) name = csv::shown(m.first) + "' (mapped to '" + shown_key + "')";
    unknown.push_back("'" + name);
  }
  if (unknown.size() == 1)
    throw activation_error(path_ + ": tensor " + unknown.front() + " matches no layer of network " + net.name +
                           " (expected a layer output key such as '" + net.layers.front().output_key +
                           "'; a name map can rename tensors, or leave one out with null" + fused + ")");
  if (!unknown.empty()) {
    throw activation_error(path_ + ": " + std::to_string(unknown.size()) + " tensors match no layer of network " +
                           net.name + ": " + csv::joined(unknown) + " (expected layer output keys such as '" +
                           net.layers.front().output_key + "'; a name map can rename tensors, or leave them out with null" +
                           fused + ")");
  }
  int images = -1;
  self->images_needed_ = static_cast<std::uint64_t>(std::max(net.batch, 1));
  self->scan_sources();  // several sources: their image counts and shapes agree
  self->derived_.clear();
  self->dense_.clear();
  self->offloaded_bytes_ = 0;
  self->negative_zeros_.clear();
  std::map<std::string, std::int64_t> counts;  // held tensor used -> its images in the file (one source)
  std::map<std::string, const layer*> producer;  // output key -> layer
  for (const layer& l : net.layers) producer.emplace(l.output_key, &l);
  // Checks a held tensor against the shape a layer expects; counts its images; counts its
  // negative zeros when `offloaded` (the run offloads it: a tensor the run never offloads,
  // e.g. the resident last layer's input, was counted and could be warned of; own-fix s23).
  auto check_held = [&](const std::string& key, const tensor_shape& want, const std::string& who, bool offloaded) {
    const tensor& t = self->load(key, self->images_needed_);
    std::int64_t c = t.shape[1], h = 1, w = 1;
    if (t.shape.size() == 4) { h = t.shape[2]; w = t.shape[3]; }
    if (c != want.c || h != want.h || w != want.w) {
      std::vector<std::int64_t> s = t.shape;
      s[0] = static_cast<std::int64_t>(t.rows_in_file);
      // The layer that produced the tensor (its key's layer) besides the one that reads it,
      // and an NHWC tensor (N x H x W x C, e.g. a TensorFlow dump) called so (new-user trial s19).
      const auto p = producer.find(key);
      const bool nhwc = t.shape.size() == 4 && t.shape[1] == want.h && t.shape[2] == want.w && t.shape[3] == want.c;
      throw activation_error(path_ + ": tensor '" + key + "' (output of layer '" +
                             (p != producer.end() ? p->second->name : key) + "') has shape " + shape_str(s) + " but " +
                             who + " expects N x " + std::to_string(want.c) + "x" + std::to_string(want.h) + "x" +
                             std::to_string(want.w) + " (NCHW)" +
                             (nhwc ? "; the tensor looks NHWC (N x H x W x C): transpose it to NCHW, e.g. numpy "
                                     "a.transpose(0, 3, 1, 2)"
                                   : ""));
    }
    const int n = static_cast<int>(std::min<std::uint64_t>(t.rows_in_file, std::numeric_limits<int>::max()));
    images = images < 0 ? n : std::min(images, n);
    counts[key] = static_cast<std::int64_t>(t.rows_in_file);
    // Negative zeros (-0.0, bit pattern 0x80000000): not zeros to ZVC (bit-exact); counted once
    // per offloaded tensor while it is in memory, for warnings().
    if (offloaded && !self->negative_zeros_.count(key)) {
      std::uint64_t neg = 0;
      const std::uint8_t* p = t.data.data();
      const std::size_t words = t.data.size() / 4;
      for (std::size_t i = 0; i < words; ++i) {
        std::uint32_t v;
        std::memcpy(&v, p + i * 4, 4);
        neg += v == 0x80000000u;
      }
      self->negative_zeros_[key] = {neg, words};
    }
  };
  std::vector<std::string> missing;
  std::vector<const layer*> not_derivable;  // missing pool outputs that no input gives
  std::string first_missing_layer;
  std::size_t offloaded = 0;
  for (const layer& l : net.layers) {
    if (l.offload_key.empty()) continue;  // the input image is synthetic
    const std::string& k = l.offload_key;
    // The last layer's input stays resident (vdnn_runtime): never offloaded, so never missing;
    // when the files hold it, it is checked like the others.
    const bool resident = &l == &net.layers.back();
    // Offloaded under the run's policy (opt_.offload_keys; unset: policy all): only these
    // can be missing, and only their bytes count in describe()'s dense share.
    const bool offloaded_here = !resident && (!opt_.offload_keys || opt_.offload_keys->count(k));
    if (offloaded_here) {
      ++offloaded;
      self->offloaded_bytes_ += l.offload.bytes();
    }
    if (held_.count(k)) {
      check_held(k, l.offload, "layer '" + l.name + "'", offloaded_here);
      continue;
    }
    if (resident) continue;
    if (derived_.count(k) || dense_.count(k)) continue;
    // A pool output the files do not hold: computed from the pool's input when that is held
    // (or computed itself).
    // Its input may be a concatenation: every part must be held or computed.
    auto p = producer.find(k);
    if (p != producer.end() && p->second->kind == layer_kind::pool && p->second->pool.derivable &&
        !p->second->input_keys.empty() &&
        std::all_of(p->second->input_keys.begin(), p->second->input_keys.end(), [&](const std::string& in) {
          return !in.empty() && producer.count(in) && (held_.count(in) || derived_.count(in));
        })) {
      const layer& pl = *p->second;
      derived_pool d{pl.input_keys, {}, pl.pool, pl.input, pl.output};
      for (const auto& in : pl.input_keys) {
        const layer& src = *producer.at(in);
        // (Counted, if offloaded, as the offload of the pool layer that reads it.)
        if (held_.count(in)) check_held(in, src.output, "pool layer '" + pl.name + "' (input)", false);
        d.part_c.push_back(src.output.c);
      }
      self->derived_[k] = std::move(d);
      continue;
    }
    if (!offloaded_here) continue;  // never read by the run: not missing
    if (missing.empty()) first_missing_layer = l.name;
    missing.push_back(k);
    // A pool output that is not computed even from a held input: say why (new-user trial s23
    // F3: the message said only that a pool output is computed when its input is held).
    if (p != producer.end() && p->second->kind == layer_kind::pool && !p->second->pool.derivable)
      not_derivable.push_back(p->second);
    if (opt_.missing == real_activation_options::missing_policy::dense) self->dense_[k] = l.offload.bytes();
  }
  if (!missing.empty() && opt_.missing == real_activation_options::missing_policy::error) {
    std::ostringstream m;
    m << path_ << ": layer '" << first_missing_layer << "' offloads tensor '" << missing.front()
      << "', which " << the_files() << (sources_.size() == 1 ? " does" : " do") << " not hold (" << missing.size()
      << " of " << offloaded << " offloaded tensors are not in " << the_files() << " and cannot be computed from "
      << (sources_.size() == 1 ? "it" : "them") << ": ";
    for (std::size_t i = 0; i < missing.size() && i < 4; ++i) m << (i ? ", " : "") << missing[i];
    if (missing.size() > 4) m << ", ...";
    for (std::size_t i = 0; i < not_derivable.size() && i < 4; ++i) {
      const layer& pl = *not_derivable[i];
      const layer::pool_window& w = pl.pool;
      m << "; '" << pl.output_key << "' is the output of " << (w.max ? "max" : "average") << " pool layer '" << pl.name
        << "', which is not computed from its input: ";
      if (!w.max && (w.ph > 0 || w.pw > 0))
        m << "it pads (pad " << w.ph << "x" << w.pw << "), and frameworks differ on whether padded elements count "
          << "in an average (PyTorch count_include_pad)";
      else
        m << "some of its windows reach beyond the input or start in the padding (kernel " << w.kh << "x" << w.kw
          << ", stride " << w.sh << "x" << w.sw << ", pad " << w.ph << "x" << w.pw << ")";
      m << "; save that layer's output in " << the_files() << " under the name '" << pl.output_key << "'";
    }
    m << "; a pool layer's output is computed from its input when " << the_files()
      << (sources_.size() == 1 ? " holds" : " hold") << " that" << (not_derivable.empty() ? "" : ", except as said")
      << ". Set missing_activations to dense (--missing-activations dense) to produce the missing tensors as "
         "dense synthetic data, or give a file holding them)";
    throw activation_error(m.str());
  }
  if (images > 0) self->images_ = images;
  else if (sources_.size() > 1) {  // no tensor used: the images all sources hold
    std::int64_t all = 0;
    for (const auto& f : sources_) all += f.images;
    self->images_ = static_cast<int>(std::min<std::int64_t>(all, std::numeric_limits<int>::max()));
  }
  self->distinct_ = std::min(self->images_, net.batch);
  // Unequal image counts over the tensors used (new-user trial s23 F6: 5 images in conv3, 3
  // in the others, silently cut to 3). Several sources: scan_sources() checked each source.
  self->images_warning_ = sources_.size() == 1 ? unequal_images_warning(path_, counts) : std::string();
}

std::string npz_activation_source::unequal_images_warning(const std::string& file,
                                                          const std::map<std::string, std::int64_t>& counts) const {
  std::map<std::int64_t, std::vector<std::string>, std::greater<>> by_count;  // most images first
  for (const auto& [key, n] : counts) {
    std::string name = "'" + csv::shown(key) + "'";
    for (const auto& m : opt_.name_map)
      if (m.second == key) name = "'" + csv::shown(m.first) + "' (layer key '" + csv::shown(key) + "')";
    by_count[n].push_back(name);
  }
  if (by_count.size() < 2) return "";
  std::string list;
  for (const auto& [n, names] : by_count)
    list += (list.empty() ? "" : "; ") + std::to_string(n) + (n == 1 ? " image in " : " images in ") +
            csv::joined(names, 8);
  const std::int64_t fewest = by_count.rbegin()->first;
  return file + ": its tensors hold different numbers of images (N, the first axis): " + list +
         ". Only the first " + std::to_string(fewest) +
         (fewest == 1 ? " image of each tensor is used" : " images of each tensor are used") + " (the smallest count); unequal counts usually mean a bad dump (tensors saved "
         "from different batches or steps): save every tensor from the same images";
}

std::vector<std::string> npz_activation_source::warnings() const {
  std::vector<std::string> out = source_warnings_;
  if (!images_warning_.empty()) out.push_back(images_warning_);
  if (std::string w = negative_zero_warning(); !w.empty()) out.push_back(std::move(w));
  return out;
}

std::string npz_activation_source::negative_zero_warning() const {
  std::vector<std::pair<std::string, std::string>> listed;  // ("'conv1'", "49.5 %"), in key order
  for (const auto& [key, c] : negative_zeros_) {
    if (c.second == 0) continue;
    const double share = static_cast<double>(c.first) / static_cast<double>(c.second);
    if (share < negative_zero_warn_share) continue;
    std::string name = "'" + csv::shown(key) + "'";
    for (const auto& m : opt_.name_map)
      if (m.second == key) name = "'" + csv::shown(m.first) + "' (layer key '" + csv::shown(key) + "')";
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f %%", 100.0 * share);
    listed.emplace_back(name, pct);
  }
  if (listed.empty()) return "";
  std::string what;
  if (listed.size() == 1) {
    what = listed[0].second + " of the elements of tensor " + listed[0].first + " are";
  } else {
    std::vector<std::string> items;
    for (const auto& [name, pct] : listed) items.push_back(name + " " + pct);
    char thr[16];
    std::snprintf(thr, sizeof thr, "%g", 100.0 * negative_zero_warn_share);
    what = std::to_string(listed.size()) + " tensors hold " + thr + " % or more of their elements as negative zeros (" +
           csv::joined(items) + "); such elements are";
  }
  return path_ + ": " + what +
         " negative zeros (-0.0), which ZVC does not compress: only +0.0 (bit pattern 0) is a zero to it, so they "
         "count as nonzeros (zero%, ratio). A ReLU computed as x * (x > 0) leaves -0.0 where x < 0; if they stand "
         "for zeros, save np.maximum(x, 0) or x + 0.0 instead";
}

void npz_activation_source::fill(const std::string& key, const tensor_shape& shape,
                                 std::uint64_t offset, std::uint8_t* out, std::size_t len) {
  if (key.empty()) return fill_input_image(0, offset, out, len);
  // A missing tensor produced dense (missing_activations = dense): values in [1/256, 1].
  if (dense_.count(key)) return fill_input_image(hash_key(key), offset, out, len);
  const tensor& t = load(key, std::max(images_needed_, static_cast<std::uint64_t>(std::max<std::int64_t>(shape.n, 1))));
  const std::uint64_t per_image = static_cast<std::uint64_t>(shape.c) * shape.h * shape.w * 4;
  const std::uint64_t in_file = static_cast<std::uint64_t>(t.shape[0]);  // images loaded
  if (per_image * in_file != t.data.size())
    throw activation_error(path_ + ":" + key + ": tensor holds " + std::to_string(t.data.size()) +
                           " bytes, expected " + std::to_string(in_file) + " images of " +
                           std::to_string(per_image) + " bytes (shape " + shape.str() + ")");
  // Every tensor uses the same number of images (the smallest over the files), so image n of
  // the batch is the same photo in every layer: image n mod images, the sources' images in
  // the order the sources were given.
  const std::uint64_t images = std::min<std::uint64_t>(in_file, static_cast<std::uint64_t>(images_));
  std::uint64_t pos = offset;
  const std::uint64_t end = offset + len;
  while (pos < end) {
    const std::uint64_t img = (pos / per_image) % images;
    const std::uint64_t in = pos % per_image;
    const std::uint64_t n = std::min(per_image - in, end - pos);
    std::memcpy(out + (pos - offset), t.data.data() + img * per_image + in, n);
    pos += n;
  }
}

std::string npz_activation_source::describe(const network& net) const {
  std::ostringstream o;
  o << "real: ";
  // File names without their folders, unless two sources share a name (the shared data has
  // an inception_v3/chelsea.npz and a mobilenet_v2/chelsea.npz): then the paths as given.
  std::set<std::string> names;
  for (const auto& src : sources_) names.insert(base_name(src.path));
  const bool whole = names.size() < sources_.size();
  for (std::size_t i = 0; i < sources_.size(); ++i)
    o << (i ? " + " : "") << (whole ? sources_[i].path : base_name(sources_[i].path));
  o << " (" << distinct_ << " distinct " << (distinct_ == 1 ? "image" : "images");
  if (net.batch > distinct_) o << ", repeated to batch " << net.batch;
  o << "); the network input image is synthetic (dense)";
  // Pool outputs computed from held tensors, those the run offloads (a pool output only the
  // next pool reads is computed too under policy conv, but not listed).
  std::string pooled;
  for (const auto& kv : derived_)
    if (!opt_.offload_keys || opt_.offload_keys->count(kv.first)) pooled += (pooled.empty() ? "" : ", ") + kv.first;
  if (!pooled.empty()) o << "; computed by pooling tensors of " << the_files() << ": " << pooled;
  if (!dense_.empty()) {
    std::uint64_t b = 0;
    for (const auto& kv : dense_) b += kv.second;
    o << "; " << dense_.size() << (dense_.size() == 1 ? " tensor" : " tensors")
      << " not in " << the_files() << " produced as dense synthetic data ("
      << std::fixed << std::setprecision(1)
      << (offloaded_bytes_ ? 100.0 * static_cast<double>(b) / static_cast<double>(offloaded_bytes_) : 0.0)
      << " % of the offloaded bytes; missing_activations = dense)";
  }
  return o.str();
}

// ---- synthetic --------------------------------------------------------------------------

namespace {
void check_density(double d, const std::string& what) {
  if (!(d >= 0.0 && d <= 1.0))
    throw activation_error(what + " " + num(d) +
                           " is out of range; expected a fraction of nonzero elements in [0, 1]");
}

/// Clustered synthetic zeros (synthetic_params::mean_zero_run > 0) as a stream of elements
/// from any start index. Zeros and nonzeros alternate in runs. Tensor element e belongs to
/// segment k = e / S (S = cluster_segment); each segment is generated alone from its own seed
/// (so any window regenerates from its segment's start) and holds exactly
/// T(b) - T(a) nonzeros, T(e) = floor(d e), a and b its ends: every segment-aligned window
/// holds floor(d b) - floor(d a) nonzeros, less than one element from d (b - a).
///
/// Within a segment: the first run is a zero run with probability 1 - d; a run of length r
/// ends after each element with probability 1 / m, m its mean, drawn per element from the
/// element's hash (a geometric length, as in a two-state Markov chain), m = L for zeros and
/// L_nz = L d / (1 - d) for nonzeros, steered by the surplus of nonzeros so far
/// D = nonzeros - d (elements), taken at the run's start:
///   zero run     m = L    + g (D - u / 2) / d
///   nonzero run  m = L_nz - g (D + u / 2) / (1 - d)       (u = d L, g = 1/4)
/// (the steering term clamped to +-(mean - 1), so m >= 1 and the mean is not biased)
/// D swings by about u per run (a zero run lowers it by d r, a nonzero run raises it by
/// (1 - d) r); the u / 2 terms centre the swing, so both means stay L and L_nz on average, and
/// each run takes back g of the offset. Hard limits: |D| <= B = max(1, 4000 d) (a run is cut
/// where it would leave the band; B >> u unless L > ~1000) and the segment's nonzero count
/// is met exactly (a run is cut where only the other kind fits before the segment's end).
/// So any window of n elements holds d n nonzeros within 2 B + 1: within 0.8 % + 1 element
/// of d n for n = 10^6 (1 % for d >= 0.0005).
class clustered_stream {
public:
  struct params {
    std::uint64_t seed;   ///< the tensor's seed
    double d, L;          ///< nonzero fraction in (0, 1), mean zero-run length (elements)
    std::uint64_t S;      ///< segment length (elements)
  };
  static constexpr double gain = 0.25;           ///< g: share of D taken back per run
  static constexpr double band_per_density = 4000;  ///< B / d (elements)

  clustered_stream(const params& p, std::uint64_t e)
      : p_(p), L_nz_(p.L * p.d / (1.0 - p.d)), u_(p.d * p.L),
        B_(std::max(1.0, band_per_density * p.d)), inv_d_(1.0 / p.d), inv_1md_(1.0 / (1.0 - p.d)),
        gain_per_d_(gain / p.d), gain_per_1md_(gain / (1.0 - p.d)) {
    start_segment(e / p_.S);
    step<false>(nullptr, e - a_);
  }
  /// The next n elements (uint32 bit patterns: 0 or a float in (0, 8]).
  void produce(std::uint32_t* out, std::size_t n) { step<true>(out, n); }

private:
  std::uint64_t T(std::uint64_t e) const {
    return static_cast<std::uint64_t>(std::floor(p_.d * static_cast<double>(e)));
  }
  void start_segment(std::uint64_t k) {
    a_ = k * p_.S;
    b_ = a_ + p_.S;
    n_target_ = T(b_) - T(a_);
    ss_ = splitmix64(p_.seed ^ (k * 0xD1B54A32D192ED03ull));
    e_ = a_;
    nz_ = 0;
    zero_ = (splitmix64(ss_) >> 11) >= static_cast<std::uint64_t>(p_.d * 9007199254740992.0);
    next_run();
  }
  /// Draws the run starting at e_ in state zero_ (which it may change if that kind of run
  /// does not fit): sets its end limit and the per-element end threshold.
  void next_run() {
    const std::uint64_t R = b_ - e_, K = n_target_ - nz_;
    const double D = static_cast<double>(nz_) - p_.d * static_cast<double>(e_ - a_);
    std::uint64_t max_len = longest(zero_, R, K, D);
    if (max_len == 0) {  // this kind of run does not fit: the other one
      zero_ = !zero_;
      max_len = longest(zero_, R, K, D);
    }
    if (max_len == 0) {  // cannot happen with B >= 1 (one of the limits is >= 1 then); never stall
      zero_ = K == 0;
      max_len = 1;
    }
    // Steering term, clamped symmetrically to +-(mean - 1) so that m >= 1 without biasing the
    // mean (a one-sided clamp at 1 would lengthen the runs on average when the mean is near 1).
    const double base = zero_ ? p_.L : L_nz_;
    const double steer = zero_ ? gain_per_d_ * (D - 0.5 * u_) : -gain_per_1md_ * (D + 0.5 * u_);
    const double room = std::max(base - 1.0, 0.0);  // 0 also for L below (1 - d) / d (validate() rejects it)
    const double m = std::max(1.0, base + std::clamp(steer, -room, room));
    run_start_ = e_;
    end_ = e_ + max_len;
    threshold_ = static_cast<std::uint64_t>(281474976710656.0 / m);  // 2^48 / m
  }
  /// Longest run of zeros (zero) or nonzeros from e_ that keeps D in [-B, B] and leaves the
  /// segment's nonzero count reachable (R elements left, K nonzeros still to place).
  std::uint64_t longest(bool zero, std::uint64_t R, std::uint64_t K, double D) const {
    const double x = zero ? (D + B_) * inv_d_ : (B_ - D) * inv_1md_;
    const std::uint64_t room = zero ? R - K : K;
    if (!(x >= 1.0)) return 0;
    return x >= static_cast<double>(room) ? room : static_cast<std::uint64_t>(x);
  }
  template <bool Write>
  void step(std::uint32_t* out, std::uint64_t n) {
    // The hot state in locals (out may alias members for the compiler); refreshed per run.
    std::uint64_t e = e_, ss = ss_, threshold = threshold_, end = end_;
    std::uint32_t mask = zero_ ? 0u : ~0u;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t h = splitmix64(ss + e + 1);
      if (Write) out[i] = float_bits(static_cast<float>((h & 0xFFFF) + 1) / 8192.0f) & mask;  // 0 or (0, 8]
      ++e;
      if ((h >> 16) < threshold || e == end) {
        e_ = e;
        end_run();
        ss = ss_, threshold = threshold_, end = end_, mask = zero_ ? 0u : ~0u;
      }
    }
    e_ = e;
  }
  /// The run ending at e_ is complete: counts it, starts the next run (or segment).
  void end_run() {
    if (!zero_) nz_ += e_ - run_start_;
    if (e_ == b_) return start_segment(b_ / p_.S);  // the segment is complete: the next starts afresh
    zero_ = !zero_;
    next_run();
  }

  params p_;
  double L_nz_, u_, B_, inv_d_, inv_1md_, gain_per_d_, gain_per_1md_;
  std::uint64_t a_ = 0, b_ = 0, n_target_ = 0, ss_ = 0;
  std::uint64_t e_ = 0, nz_ = 0, run_start_ = 0, end_ = 0, threshold_ = 0;
  bool zero_ = false;
};

/// Independent synthetic zeros (synthetic_params::mean_zero_run = 0): segment k (elements
/// [a, b) = [k S, k S + S), S = cluster_segment) holds exactly K = floor(d b) - floor(d a)
/// nonzeros at uniformly random positions (a uniformly random K-subset of the segment: the
/// elements are Bernoulli(d) draws conditioned on their count, so zero runs stay geometric,
/// mean 1 / d, and two elements' covariance is -d (1 - d) / (S - 1)). Generated per segment
/// from the segment's own seed (any byte range regenerates from its segments), in three passes:
///   1. raw words: the segment's SplitMix64 stream (Steele et al., OOPSLA 2014), two 32-bit
///      words per 64-bit output;
///   2. each word w becomes a nonzero with probability q (w >> 16 < q 2^16), value
///      ((w & 0xFFFF) + 1) / 8192 in (0, 8], else 0; q is K / S moved 2 sigma
///      (sigma = sqrt(K (S - K) / S)) towards fewer of the rarer kind, so pass 3 almost
///      always turns common elements into rare ones (a few tries each);
///   3. fix-up to exactly K: positions drawn uniformly from the same stream; a drawn element
///      of the kind in excess is turned into the other kind (a new value from the draw).
/// Pass 2 is i.i.d. and pass 3 picks positions uniformly, so the result does not depend on
/// the order of the positions (exchangeable): with its count fixed at K it is a uniformly
/// random K-subset, whatever q (q only sets how many fix-ups are needed). Passes 1 and 2 are
/// branch-free (pass 2 vectorises): ~12 instructions per element against ~20 and a
/// mispredicted branch per other element of the per-element Bernoulli draw it replaces.
/// A window of n elements so holds d n nonzeros within 1 element plus the deviations of
/// its two partial segments (hypergeometric, sd <= sqrt(S d (1 - d)) / 2 each).
void independent_segment(std::uint64_t seed, double d, std::uint64_t S, std::uint64_t k, std::uint8_t* out) {
  const auto T = [d](std::uint64_t e) { return static_cast<std::uint64_t>(std::floor(d * static_cast<double>(e))); };
  const std::uint64_t K = T((k + 1) * S) - T(k * S);
  const double n = static_cast<double>(S), nz = static_cast<double>(K);
  const double sigma = std::sqrt(nz * (n - nz) / n);
  const double q = std::clamp(nz <= n - nz ? (nz - 2 * sigma) / n : (nz + 2 * sigma) / n, 0.0, 1.0);
  const auto threshold = static_cast<std::int32_t>(std::lround(q * 65536.0));  // 0..65536
  std::uint64_t x = splitmix64(seed ^ (k * 0x9E6C63D0676A9A99ull));
  const auto next = [&x] {  // SplitMix64 step: the state advances by the golden gamma
    x += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  const auto value = [](std::uint32_t v16) {  // (0, 8]
    return float_bits(static_cast<float>(static_cast<std::int32_t>(v16) + 1) * (1.0f / 8192.0f));
  };
  // 1. Raw words (little-endian host assumed, as in fill_elements).
  std::uint64_t i = 0;
  for (; i + 2 <= S; i += 2) {
    const std::uint64_t h = next();
    std::memcpy(out + 4 * i, &h, 8);
  }
  if (i < S) {
    const auto w = static_cast<std::uint32_t>(next());
    std::memcpy(out + 4 * i, &w, 4);
  }
  // 2. Bernoulli(q) with values; c counts the nonzeros (S <= 2^24: fits 32 bits).
  std::uint32_t c = 0;
  for (std::uint64_t j = 0; j < S; ++j) {
    std::uint32_t w;
    std::memcpy(&w, out + 4 * j, 4);
    const std::uint32_t keep = static_cast<std::int32_t>(w >> 16) < threshold;
    const std::uint32_t v = value(w & 0xFFFF) & (0u - keep);
    c += keep;
    std::memcpy(out + 4 * j, &v, 4);
  }
  // 3. Fix-up to exactly K nonzeros.
  while (c != K) {
    const std::uint64_t h = next();
    const std::uint64_t at = 4 * (((h & 0xFFFFFFFFull) * S) >> 32);  // uniform in [0, S) (S <= 2^24)
    std::uint32_t w;
    std::memcpy(&w, out + at, 4);
    if (c > K && w != 0) {
      w = 0;
      --c;
    } else if (c < K && w == 0) {
      w = value(static_cast<std::uint32_t>(h >> 32) & 0xFFFF);
      ++c;
    } else {
      continue;
    }
    std::memcpy(out + at, &w, 4);
  }
}

/// Bytes [offset, offset + len) of a tensor of independent zeros (independent_segment):
/// whole segments are generated in place, partial ones in a scratch segment.
void fill_independent(std::uint64_t seed, double d, std::uint64_t S, std::uint64_t offset, std::uint8_t* out,
                      std::size_t len) {
  const std::uint64_t end = offset + len, seg_bytes = 4 * S;
  std::unique_ptr<std::uint8_t[]> scratch;
  for (std::uint64_t k = offset / seg_bytes; k * seg_bytes < end; ++k) {
    const std::uint64_t a = k * seg_bytes, b = a + seg_bytes;
    const std::uint64_t lo = std::max(a, offset), hi = std::min(b, end);
    if (lo == a && hi == b) {
      independent_segment(seed, d, S, k, out + (a - offset));
      continue;
    }
    if (!scratch) scratch.reset(new std::uint8_t[seg_bytes]);
    independent_segment(seed, d, S, k, scratch.get());
    std::memcpy(out + (lo - offset), scratch.get() + (lo - a), hi - lo);
  }
}

}  // namespace

synthetic_activation_source::synthetic_activation_source(double density, std::uint64_t seed)
    : synthetic_activation_source(synthetic_params{density, {}, 0, 16384, seed, {}}) {}

synthetic_activation_source::synthetic_activation_source(const synthetic_params& p) : p_(p) {
  check_density(p_.density, "synthetic density");
  for (const auto& kv : p_.layer_density) check_density(kv.second, "synthetic density of '" + kv.first + "'");
  if (!(p_.mean_zero_run == 0 || p_.mean_zero_run >= 1.0) || !std::isfinite(p_.mean_zero_run))
    throw activation_error("synthetic mean zero-run length (zero_run) " + num(p_.mean_zero_run) +
                           " is out of range; expected 0 (independent zeros) or >= 1 (elements)");
  if (p_.cluster_segment < 1 || p_.cluster_segment > synthetic_params::max_cluster_segment)
    throw activation_error("synthetic cluster_segment " + std::to_string(p_.cluster_segment) +
                           " is out of range; expected 1.." +
                           std::to_string(synthetic_params::max_cluster_segment) + " elements");
}

double synthetic_activation_source::density_of(const std::string& key) const {
  auto it = p_.layer_density.find(key);
  return it == p_.layer_density.end() ? p_.density : it->second;
}

void synthetic_activation_source::validate(const network& net) const {
  if (p_.mean_zero_run == 0) return;
  for (const layer& l : net.layers) {
    if (l.offload_key.empty()) continue;
    const double d = density_of(l.offload_key);
    if (d <= 0.0 || d >= 1.0) continue;
    if (p_.mean_zero_run < (1.0 - d) / d)
      throw activation_error("synthetic mean zero-run length (zero_run) " + num(p_.mean_zero_run) +
                             " is too short for tensor '" + l.offload_key + "' (layer '" + l.name +
                             "') of density " + num(d) + ": needs >= (1 - d) / d = " + num((1.0 - d) / d));
  }
}

void synthetic_activation_source::fill(const std::string& key, const tensor_shape&,
                                       std::uint64_t offset, std::uint8_t* out, std::size_t len) {
  if (key.empty()) return fill_input_image(p_.seed, offset, out, len);
  const std::uint64_t s = splitmix64(p_.seed ^ hash_key(key));
  const double d = density_of(key);
  if (p_.mean_zero_run == 0 || d <= 0.0 || d >= 1.0)  // independent zeros (or none, or all)
    return fill_independent(s, d, p_.cluster_segment, offset, out, len);
  // Clustered: run-length chain, steered per segment (clustered_stream).
  const clustered_stream::params cp{s, d, p_.mean_zero_run, p_.cluster_segment};
  const std::uint64_t e_first = offset / 4, e_end = (offset + len + 3) / 4;
  clustered_stream gen(cp, e_first);
  constexpr std::size_t block = 4096;  // elements produced at a time, then copied
  std::uint32_t buf[block];
  for (std::uint64_t e = e_first; e < e_end;) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(block, e_end - e));
    gen.produce(buf, n);
    // Bytes [offset, offset + len) that elements [e, e + n) hold.
    const std::uint64_t lo = std::max(offset, e * 4), hi = std::min(offset + len, (e + n) * 4);
    std::memcpy(out + (lo - offset), reinterpret_cast<const std::uint8_t*>(buf) + (lo - e * 4), hi - lo);
    e += n;
  }
}

std::string synthetic_activation_source::describe(const network& net) const {
  std::ostringstream o;
  o << "synthetic: ";
  if (p_.layer_density.empty()) {
    o << "density " << p_.density;
  } else {
    double lo = 1, hi = 0;
    for (const layer& l : net.layers)
      if (!l.offload_key.empty()) {
        lo = std::min(lo, density_of(l.offload_key));
        hi = std::max(hi, density_of(l.offload_key));
      }
    o << "per-layer density " << lo << ".." << hi;
  }
  if (p_.mean_zero_run > 0) o << ", clustered zeros (mean zero run " << p_.mean_zero_run << " elements)";
  else o << " (independent zeros)";
  o << ", seed " << p_.seed;
  if (!p_.layer_density_origin.empty()) o << "; " << p_.layer_density_origin;
  return o.str();
}

std::string density_profile_match::summary() const {
  std::ostringstream o;
  auto it_text = [](double v) {  // 10 digits: 1234567 iterations in full, not 1.23457e+06
    char b[40];
    std::snprintf(b, sizeof b, "%.10g", v);
    return std::string(b);
  };
  o << "density profile " << base_name(path) << " at progress " << num(progress) << " (iteration " << it_text(iteration);
  // Before the profile's first row (new-user trial s23 F10: a profile starting at iteration
  // 100 gave iteration 100's densities at progress 0, silently).
  if (iteration_used != iteration)
    o << ", before the profile's first iteration " << it_text(iteration_used) << ": clamped to it";
  o << "): ";
  // Layers whose output no policy offloads need no density (new-user trial s23 F5: a profile
  // naming every offloaded tensor read as incomplete, "2 borrowed (fc1 <- conv3, fc2 <- gap)").
  std::vector<std::pair<std::string, std::string>> used;
  for (const auto& b : borrowed)
    if (std::find(never_offloaded.begin(), never_offloaded.end(), b.first) == never_offloaded.end()) used.push_back(b);
  if (named == layers) o << "all " << layers << " layers named";
  else o << named << " of " << layers << " layers named";
  if (!used.empty()) {
    o << ", " << used.size() << " borrowed (";
    const std::size_t shown = used.size() <= 5 ? used.size() : 4;
    for (std::size_t i = 0; i < shown; ++i) o << (i ? ", " : "") << used[i].first << " <- " << used[i].second;
    if (shown < used.size()) o << ", +" << used.size() - shown << " more";
    o << ")";
  }
  if (!never_offloaded.empty()) {
    o << ", " << never_offloaded.size() << " not named but never offloaded (";
    for (std::size_t i = 0; i < never_offloaded.size(); ++i) o << (i ? ", " : "") << never_offloaded[i];
    o << ")";
  }
  if (!unknown.empty())
    o << ", " << unknown.size() << (unknown.size() == 1 ? " profile name" : " profile names") << " not in the network";
  return o.str();
}

std::string density_profile_match::warning(const std::string& network_name) const {
  if (unknown.empty()) return "";
  std::vector<std::string> quoted;
  for (const std::string& u : unknown) quoted.push_back("'" + workloads::csv::shown(u) + "'");
  const std::string list = workloads::csv::joined(quoted);
  std::string fused_hint;
  for (const auto& f : fused)
    fused_hint += "; '" + workloads::csv::shown(f.name) + "' is an in-place entry of the layer file fused into layer '" +
                  workloads::csv::shown(f.layer) + "', whose output (after it) has the key '" +
                  workloads::csv::shown(f.key) + "': use that key";
  return path + ": " + std::to_string(unknown.size()) +
         (unknown.size() == 1 ? " layer name of the density profile is not a layer of network "
                              : " layer names of the density profile are not layers of network ") +
         network_name + ": " + list +
         " (such a layer's curve is used only by its position in the file, for the layers the profile does not "
         "name; expected the network's layer output keys, e.g. its layer names" + fused_hint + ")";
}

// ---- density over training ---------------------------------------------------------------

std::map<std::string, double> training_profile_densities(const std::string& csv, double progress,
                                                         const network& net, density_profile_match* match) {
  if (!(progress >= 0.0 && progress <= 1.0))
    throw activation_error("training progress " + num(progress) + " is out of range; expected 0..1");
  std::ifstream in;
  if (const io::input_problem p = io::open_input(in, csv)) {
    if (p.kind != io::input_problem::cannot_open)  // a directory, a FIFO, a device
      throw activation_error(csv + ": " + p.text() + "; expected a CSV file iteration,epoch,layer,zero_fraction,...");
    throw activation_error(csv + ": " + p.text("the density profile") +
                           " (expected CSV iteration,epoch,layer,zero_fraction,...)");
  }
  std::string line;
  std::size_t lineno = 0;
  int c_iter = -1, c_layer = -1, c_zero = -1, c_epoch = -1;  // epoch: optional, checked, not used
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::pair<double, double>>> curves;  // layer -> (iteration, zero fraction)
  std::map<std::pair<std::string, double>, std::size_t> row_of;           // (layer, iteration) -> line
  std::size_t header_fields = 0;
  const std::string form = " (expected rows iteration,epoch,layer,zero_fraction: one row per layer and "
                           "iteration, as many fields as the header, iteration a whole number >= 0, "
                           "zero_fraction in [0, 1])";
  while (std::getline(in, line)) {
    ++lineno;
    workloads::csv::clean_line(line, lineno);
    if (workloads::csv::trim(line).empty()) continue;
    const std::string where = csv + ":" + std::to_string(lineno) + ": ";
    std::vector<std::string> cols;
    std::vector<std::size_t> at;  // the column where each field starts
    if (const std::string bad = workloads::csv::split(line, cols, &at); !bad.empty())
      throw activation_error(where + bad + form);
    if (c_iter < 0) {
      if (const std::string bad = workloads::csv::check_header(cols, at); !bad.empty())
        throw activation_error(where + bad + form);
      header_fields = cols.size();
      std::vector<std::size_t> c;
      if (const std::string bad = workloads::csv::find_columns(cols, {"iteration", "layer", "zero_fraction"}, c);
          !bad.empty())
        throw activation_error(where + bad + "; expected a header with the columns iteration, layer and zero_fraction" +
                               form);
      c_iter = static_cast<int>(c[0]);
      c_layer = static_cast<int>(c[1]);
      c_zero = static_cast<int>(c[2]);
      for (std::size_t i = 0; i < cols.size(); ++i)
        if (cols[i] == "epoch") c_epoch = static_cast<int>(i);
      continue;
    }
    if (const std::string bad = workloads::csv::check_width(cols, at, header_fields); !bad.empty())
      throw activation_error(where + bad + form);
    double it = 0, z = 0;
    for (const auto& [col, name, out] : {std::tuple<int, const char*, double*>{c_iter, "iteration", &it},
                                         std::tuple<int, const char*, double*>{c_zero, "zero_fraction", &z}}) {
      const std::string& v = cols[static_cast<std::size_t>(col)];
      const std::string why = parse_decimal(v, *out);
      if (!why.empty())
        throw activation_error(where + name + " \"" + workloads::csv::shown(v) + "\": " + why + "; expected a decimal number" + form);
    }
    if (c_epoch >= 0) {
      const std::string& v = cols[static_cast<std::size_t>(c_epoch)];
      double epoch = 0;
      const std::string why = parse_decimal(v, epoch);
      if (!why.empty() || epoch < 0)
        throw activation_error(where + "epoch \"" + workloads::csv::shown(v) + "\": " +
                               (why.empty() ? std::string("negative") : why) + "; expected a decimal number >= 0" + form);
    }
    if (!(z >= 0 && z <= 1))
      throw activation_error(where + "zero_fraction " + workloads::csv::shown(cols[static_cast<std::size_t>(c_zero)]) + " is not in [0, 1]" + form);
    if (it < 0)
      throw activation_error(where + "iteration " + workloads::csv::shown(cols[static_cast<std::size_t>(c_iter)]) + " is negative" + form);
    if (it != std::floor(it))
      throw activation_error(where + "iteration \"" + workloads::csv::shown(cols[static_cast<std::size_t>(c_iter)]) +
                             "\" at column " + std::to_string(at[static_cast<std::size_t>(c_iter)]) +
                             " is not a whole number" + form);
    // From 2^53 on neighbouring whole numbers read as the same double (9007199254740993 is
    // ...992): two iterations would collide. Every whole number below is exact.
    if (it >= 9007199254740992.0)
      throw activation_error(where + "iteration \"" + workloads::csv::shown(cols[static_cast<std::size_t>(c_iter)]) +
                             "\" at column " + std::to_string(at[static_cast<std::size_t>(c_iter)]) +
                             " is 2^53 = 9007199254740992 or more (such iterations cannot be told apart); expected "
                             "a whole number below 2^53" + form);
    if (it == 0) it = 0;  // -0 is iteration 0
    const std::string& name = cols[static_cast<std::size_t>(c_layer)];
    if (const std::string bad = workloads::csv::check_name(name, "layer name", at[static_cast<std::size_t>(c_layer)]);
        !bad.empty())
      throw activation_error(where + bad + form);
    const auto dup = row_of.emplace(std::make_pair(name, it), lineno);
    if (!dup.second)
      throw activation_error(where + "layer " + workloads::csv::shown(name) + " at iteration " + workloads::csv::shown(cols[static_cast<std::size_t>(c_iter)]) +
                             " is listed twice (first on line " + std::to_string(dup.first->second) + ")" + form);
    if (!curves.count(name)) order.push_back(name);
    curves[name].emplace_back(it, z);
  }
  if (order.empty()) throw activation_error(csv + ": no data rows" + form);
  double last = 0;
  std::set<double> iterations;  // of every row: each layer needs a row at each of them
  for (auto& kv : curves) {
    std::sort(kv.second.begin(), kv.second.end());
    last = std::max(last, kv.second.back().first);
    for (const auto& p : kv.second) iterations.insert(p.first);
  }
  for (const std::string& name : order) {
    const auto& c = curves.at(name);
    if (c.size() == iterations.size()) continue;
    auto it = iterations.begin();
    for (std::size_t i = 0; i < c.size() && *it == c[i].first; ++i) ++it;
    std::ostringstream m;
    m << csv << ": layer " << workloads::csv::shown(name) << " has no row at iteration " << *it << " (" << c.size() << " of "
      << iterations.size() << " iterations of the profile); expected one row per layer and iteration" << form;
    throw activation_error(m.str());
  }
  const double at = progress * last;
  const double first_iteration = *iterations.begin();  // every layer has a row at each iteration
  auto zero_at = [&](const std::string& layer_name) {
    const auto& c = curves.at(layer_name);
    if (at <= c.front().first) return c.front().second;
    for (std::size_t i = 1; i < c.size(); ++i)
      if (at <= c[i].first) {
        const double f = (at - c[i - 1].first) / (c[i].first - c[i - 1].first);
        return c[i - 1].second + f * (c[i].second - c[i - 1].second);
      }
    return c.back().second;
  };
  // Profile order = depth order. When every profile layer is a layer of `net`, the network
  // gives it (the rows may come in any order: same result); otherwise the order in which the
  // layers first appear in the file is all there is (a profile of another network).
  {
    std::map<std::string, std::size_t> depth;
    for (std::size_t k = 0; k < net.layers.size(); ++k) depth.emplace(net.layers[k].output_key, k);
    if (std::all_of(order.begin(), order.end(), [&](const std::string& l) { return depth.count(l) > 0; }))
      std::sort(order.begin(), order.end(),
                [&](const std::string& a, const std::string& b) { return depth.at(a) < depth.at(b); });
  }
  std::map<std::string, double> out;
  const std::size_t n = net.layers.size(), m = order.size();
  density_profile_match mt;
  mt.path = csv;
  mt.progress = progress;
  mt.iteration = at;
  mt.iteration_used = std::max(at, first_iteration);
  mt.layers = n;
  for (std::size_t k = 0; k < n; ++k) {
    const std::string& key = net.layers[k].output_key;
    std::string prof = key;
    if (!curves.count(key)) {
      const std::size_t j = n > 1 ? static_cast<std::size_t>(std::llround(static_cast<double>(k) * (m - 1) / (n - 1))) : 0;
      prof = order[std::min(j, m - 1)];
      mt.borrowed.emplace_back(key, prof);
      // X_i is layer i-1's output; the last layer's input stays on the GPU and the network
      // output is no layer's input: the outputs of the last two layers are never offloaded.
      if (k + 2 >= n) mt.never_offloaded.push_back(key);
    } else {
      ++mt.named;
    }
    out[key] = 1.0 - zero_at(prof);
  }
  if (match) {
    std::set<std::string> keys;
    for (const layer& l : net.layers) keys.insert(l.output_key);
    std::set<std::string> listed;
    // `order` may be sorted by depth only when every name is a key; otherwise it is file order.
    for (const std::string& name : order)
      if (!keys.count(name) && listed.insert(name).second) {
        mt.unknown.push_back(name);
        // An in-place entry of a layer file (relu1 fused into conv1): its tensor is that
        // layer's output (own-fix s23, as --layer-times and the name map say it).
        if (const layer* f = fused_into(net, name)) mt.fused.push_back({name, f->name, f->output_key});
      }
    *match = std::move(mt);
  }
  return out;
}

}  // namespace cdma::workloads
