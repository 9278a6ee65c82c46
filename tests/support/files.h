// Scratch files for tests that write inputs (layer files, CSVs, .npy): one directory per test
// program and tag below GoogleTest's TempDir, text files, and float32 .npy files written by
// the NumPy format's rules (version 1.0 header padded to a multiple of 64 bytes; NEP 1,
// numpy.lib.format), so the readers are tested against files shaped as NumPy writes them.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace cdma::test {

/// TempDir()/cdma_<tag>_<pid>, created.
inline std::string scratch_dir(const std::string& tag) {
  const std::string d = std::string(::testing::TempDir()) + "cdma_" + tag + "_" + std::to_string(::getpid());
  std::filesystem::create_directories(d);
  return d;
}

/// Writes `text` to dir/name; returns the path.
inline std::string write_text(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string p = dir + "/" + name;
  std::ofstream(p) << text;
  return p;
}

/// A little-endian float32 .npy file of `shape` holding `v` (C order).
inline void write_npy_f32(const std::string& path, const std::vector<int>& shape, const std::vector<float>& v) {
  std::string dims;
  for (int d : shape) dims += std::to_string(d) + ", ";
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::ofstream f(path, std::ios::binary);
  f << "\x93NUMPY" << '\x01' << '\x00' << static_cast<char>(h.size() & 0xFF) << static_cast<char>(h.size() >> 8) << h;
  f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
}

}  // namespace cdma::test

namespace cdma::test {

/// The message of the exception `f` throws; "" and a test failure when it throws none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}

}  // namespace cdma::test
