// Break-it round s22, tester brk2 (today's changes: sweep --zip, backing_store huge-page
// arenas; the --layer-times case is in test_compute_model.cpp). Cases marked FINDING failed at the commit the round started
// from (42d62b5) and pass with the fix; cases marked PASS held already and pin the behaviour.
// Expected values by hand: the PCIe links compared are from `cdma-vp config --dump` (gen3x16
// and gen4x16 at pcie.gen=4 differ only in the preset's name), the store's bytes from a
// reference std::vector written alongside.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "support/cli.h"
#include "tlm/memory/backing_store.h"

using cdma::test::cli;
using cdma::test::entries;

namespace {

std::string scratch(const std::string& name) {
  const std::string d = std::string(::testing::TempDir()) + "cdma_s22b_" + std::to_string(::getpid());
  std::filesystem::create_directories(d);
  return d + "/" + name;
}

// ---- sweep: two runs of one configuration ------------------------------------------------

// FINDING 1: a pcie.preset axis zipped with pcie.gen (or beside a one-value pcie.gen axis)
// planned two runs of one link: gen3x16 and gen4x16 at pcie.gen=4 are both Gen4 x16
// (`config --dump` of the two runs differs only in "preset"). The per-axis checks compare each
// axis alone; `--param pcie.gen=4` beside the same axis was refused already.
TEST(s22_break, sweep_refuses_two_runs_of_one_configuration) {
  const std::string out = scratch("sweep_same");
  std::string err;
  const char* grids[] = {
      "--grid pcie.preset=gen3x16,gen4x16 --grid pcie.gen=4,4 --zip pcie.preset,pcie.gen",
      "--grid pcie.preset=gen3x16,gen4x16 --grid pcie.gen=4",
  };
  for (const char* g : grids) {
    std::filesystem::remove_all(out);
    EXPECT_EQ(cli(std::string("sweep ") + g + " --network synthetic --steps oracle --no-plot --out " + out, nullptr,
                  &err),
              2)
        << g;
    EXPECT_NE(err.find("--grid: runs 0 (pcie.gen=4, pcie.preset=gen3x16) and 1 (pcie.gen=4, pcie.preset=gen4x16) are "
                       "the same configuration"),
              std::string::npos)
        << g << ": " << err;
    EXPECT_TRUE(entries(out).empty()) << g << ": nothing written";
  }
  // PASS: the already-refused form keeps its message.
  std::filesystem::remove_all(out);
  EXPECT_EQ(cli("sweep --grid pcie.preset=gen3x16,gen4x16 --param pcie.gen=4 --network synthetic --no-plot --out " + out,
                nullptr, &err),
            2);
  EXPECT_NE(err.find("values 'gen3x16' and 'gen4x16' are the same setting"), std::string::npos) << err;
  std::filesystem::remove_all(out);
}

// PASS: zips whose runs all differ are planned (the preset with its own link generation; the
// user guide's DRAM preset zipped with its bandwidth; a zip beside a preset axis).
TEST(s22_break, sweep_plans_zips_of_different_runs) {
  const std::string out = scratch("sweep_ok");
  const std::string script = scratch("sweep_ok.sh");
  std::string err;
  const char* grids[] = {
      "--grid pcie.preset=gen3x16,gen4x16 --grid pcie.gen=3,4 --zip pcie.preset,pcie.gen",
      "--grid gpu_mem.dram_preset=gddr5_titanx,hbm2_v100 --grid gpu_mem.peak_bandwidth=336GB/s,900GB/s "
      "--zip gpu_mem.dram_preset,gpu_mem.peak_bandwidth",
      "--grid preset=titanx-gen3,v100-gen3 --grid pcie.gen=3,4 --zip preset,pcie.gen",
  };
  for (const char* g : grids) {
    std::filesystem::remove_all(out);
    EXPECT_EQ(cli(std::string("sweep ") + g + " --network synthetic --steps oracle --out " + out + " --emit-slurm " +
                      script,
                  nullptr, &err),
              0)
        << g << ": " << err;
    EXPECT_NE(cdma::test::slurp(script).find("--array=0-1"), std::string::npos) << g;
  }
  std::filesystem::remove_all(out);
  std::remove(script.c_str());
}

// FINDING 3: a grid of 1000 x 1000 x 1000 values was planned until the memory ran out (730 MB
// after 100 s, no message); more than 100000 runs are refused at once, counting a --zip group
// once (317 x 317 = 100489 runs; zipped: 317).
TEST(s22_break, sweep_refuses_more_than_100000_runs) {
  auto values = [](int n) {
    std::string v;
    for (int i = 1; i <= n; ++i) v += (i > 1 ? "," : "") + std::to_string(i);
    return v;
  };
  const std::string out = scratch("sweep_huge");
  const std::string script = scratch("sweep_huge.sh");
  std::filesystem::remove_all(out);
  std::string err;
  EXPECT_EQ(cli("sweep --grid seed=" + values(1000) + " --grid zero_run=" + values(1000) + " --grid batch=" +
                    values(1000) + " --network synthetic --out " + out + " --emit-slurm " + script,
                nullptr, &err, "", 60),
            2);
  EXPECT_NE(err.find("--grid: 1000 x 1000 x 1000 values make more than 100000 runs; expected at most 100000 runs in "
                     "one sweep"),
            std::string::npos)
      << err;
  EXPECT_EQ(cli("sweep --grid seed=" + values(317) + " --grid zero_run=" + values(317) + " --network synthetic --out " +
                    out + " --emit-slurm " + script,
                nullptr, &err, "", 60),
            2);
  EXPECT_NE(err.find("--grid: 317 x 317 values make more than 100000 runs"), std::string::npos) << err;
  EXPECT_TRUE(entries(out).empty());
  // PASS (the same axes zipped): 317 runs.
  EXPECT_EQ(cli("sweep --grid seed=" + values(317) + " --grid zero_run=" + values(317) +
                    " --zip seed,zero_run --network synthetic --out " + out + " --emit-slurm " + script,
                nullptr, &err, "", 120),
            0)
      << err;
  EXPECT_NE(cdma::test::slurp(script).find("--array=0-316"), std::string::npos);
  std::filesystem::remove_all(out);
  std::remove(script.c_str());
}

// ---- backing_store: odd page sizes through the huge-page arenas ----------------------------

/// Writes random spans over a store of `size` bytes with pages of `page` bytes (spilling when
/// `spill`) and a reference vector alike; every byte must read back as the reference holds it.
void check_store(std::size_t page, std::uint64_t size, bool spill, unsigned seed) {
  cdma::mem::spill_options o;
  o.cache_bytes = std::uint64_t{4} << 20;  // evictions: pages go to the file and come back
  cdma::mem::backing_store s = spill ? cdma::mem::backing_store(size, page, o) : cdma::mem::backing_store(size, page);
  std::vector<std::uint8_t> ref(size, 0);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 300; ++i) {
    // Every other span starts just before a page boundary, so that it crosses it.
    const std::uint64_t boundary = (rng() % (size / page + 1)) * page;
    const std::uint64_t at = i % 2 ? rng() % size : std::min<std::uint64_t>(size - 1, boundary - std::min<std::uint64_t>(boundary, rng() % 100));
    const std::uint64_t most = std::min<std::uint64_t>(3 * page + 5000, 200000);
    const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(size - at, 1 + rng() % most));
    std::vector<std::uint8_t> b(len);
    for (auto& x : b) x = static_cast<std::uint8_t>(rng() >> 56);
    s.write(at, b.data(), len);
    std::copy(b.begin(), b.end(), ref.begin() + static_cast<std::ptrdiff_t>(at));
  }
  std::vector<std::uint8_t> got(size);
  s.read(0, got.data(), size);
  EXPECT_TRUE(got == ref) << "page " << page << " size " << size << (spill ? " spill" : "");
}

// PASS: page sizes 1, 3, 4095, 65537, 2 MiB + 1 (frames straddle the 2 MiB huge pages of an
// arena), in RAM and spilled; the bytes are the reference's.
TEST(s22_break, backing_store_odd_page_sizes_keep_their_bytes) {
  for (std::size_t page : {std::size_t{1}, std::size_t{3}, std::size_t{4095}, std::size_t{65537},
                           (std::size_t{2} << 20) + 1})
    for (bool spill : {false, true})  // (3 MiB of 1- and 3-byte pages: past the first 1 MiB arena)
      check_store(page, static_cast<std::uint64_t>(page <= 3 ? 3 : 12) << 20, spill, static_cast<unsigned>(page));
}

// PASS: many stores at once, each with arenas above 2 MiB (the aligned, MADV_HUGEPAGE path),
// then a 1 GiB page (the largest: its arena is 1 GiB + 2 MiB of address space, touched at two
// bytes only).
TEST(s22_break, backing_store_many_stores_and_the_largest_page) {
  std::vector<std::unique_ptr<cdma::mem::backing_store>> stores;
  for (int k = 0; k < 24; ++k) {
    stores.push_back(std::make_unique<cdma::mem::backing_store>(std::uint64_t{8} << 20, 4096));
    for (std::uint64_t a = 0; a < (std::uint64_t{8} << 20); a += 4096) {
      const std::uint8_t v = static_cast<std::uint8_t>(k * 7 + a / 4096);
      stores.back()->write(a, &v, 1);
    }
  }
  for (int k = 0; k < 24; ++k)
    for (std::uint64_t a = 0; a < (std::uint64_t{8} << 20); a += 4096 * 97) {
      std::uint8_t v = 0;
      stores[k]->read(a, &v, 1);
      ASSERT_EQ(v, static_cast<std::uint8_t>(k * 7 + a / 4096)) << k << " " << a;
    }
  cdma::mem::backing_store big(std::uint64_t{3} << 30, std::size_t{1} << 30);
  const std::uint8_t x = 0xA5, y = 0x5A;
  big.write((std::uint64_t{1} << 30) - 1, &x, 1);
  big.write((std::uint64_t{2} << 30) + 5, &y, 1);
  std::uint8_t r[2] = {1, 1};
  big.read((std::uint64_t{1} << 30) - 1, r, 2);  // across the page boundary: 0xA5 then 0
  EXPECT_EQ(r[0], 0xA5);
  EXPECT_EQ(r[1], 0);
  big.read((std::uint64_t{2} << 30) + 5, r, 1);
  EXPECT_EQ(r[0], 0x5A);
}

}  // namespace
