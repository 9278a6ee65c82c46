// cdma-vp run --txn-trace FILE [--txn-trace-only LIST]: one line per transaction event on the
// platform's connections (tlm/core/txn_tracer.h). Checked against values computed
// independently: the bytes the engine wrote and read over PCIe, summed from the trace lines,
// equal the link's payload counters in the JSON results; every call has its return; the
// traced run gives the same step times as the untraced one (LT and AT with the protocol
// checkers); bad lists are errors naming the connection and the expected form.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli.h"

using cdma::test::cli;
using cdma::test::slurp;
using nlohmann::json;

namespace {

std::string tmp(const std::string& name) {
  return std::string(::testing::TempDir()) + "cdma_tt_" + std::to_string(::getpid()) + "_" + name;
}

struct trace_line {
  std::string time, conn, arrow, event, cmd;
  std::uint64_t addr = 0, len = 0;
  std::string rest;
};

/// Parses the trace; fails the test on a line not of the documented form.
std::vector<trace_line> parse(const std::string& text) {
  // <ns>.<ps> <connection> >>|<< <event> [RD|WR|IGN 0x<hex> <n> B [status...]] | dmi_invalidate [..]
  static const std::regex rx(
      R"(^([0-9]+\.[0-9]{3}) ([a-z_]+) (>>|<<) ([A-Za-z_]+)(?: (RD|WR|IGN) 0x([0-9a-f]+) ([0-9]+) B(?: (.*))?| (\[0x[0-9a-f]+, 0x[0-9a-f]+\]))$)");
  std::vector<trace_line> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (!std::regex_match(l, m, rx)) {
      ADD_FAILURE() << "line not in the documented form: " << l;
      continue;
    }
    trace_line t;
    t.time = m[1];
    t.conn = m[2];
    t.arrow = m[3];
    t.event = m[4];
    t.cmd = m[5];
    if (m[6].matched) t.addr = std::stoull(m[6], nullptr, 16);
    if (m[7].matched) t.len = std::stoull(m[7]);
    t.rest = m[8].matched ? std::string(m[8]) : std::string(m[9]);
    v.push_back(t);
  }
  return v;
}

}  // namespace

TEST(TxnTrace, LtTraceOfTheEnginesPcieTrafficAddsUpToTheLinksPayloadCounters) {
  const std::string tr = tmp("lt.txt"), js = tmp("lt.json"), js0 = tmp("lt0.json");
  std::string out, err;
  ASSERT_EQ(cli("run --network fmnist_cnn --batch 1 --steps cdma -q --txn-trace " + tr + " --json " + js,
                &out, &err, "", 300), 0) << err;
  ASSERT_EQ(cli("run --network fmnist_cnn --batch 1 --steps cdma -q --json " + js0, nullptr, &err, "", 300), 0)
      << err;
  const auto lines = parse(slurp(tr));
  ASSERT_FALSE(lines.empty());
  // The count the run reports is the file's.
  EXPECT_NE(out.find("transaction trace written to " + tr + " (" + std::to_string(lines.size()) + " lines)"),
            std::string::npos) << out;
  std::map<std::string, long> open;  // per connection: b_transport calls - returns
  std::map<std::string, std::size_t> seen;
  std::uint64_t wr = 0, rd = 0;
  for (const auto& l : lines) {
    ++seen[l.conn];
    if (l.event == "b_transport") ++open[l.conn];
    if (l.event == "return") {
      --open[l.conn];
      EXPECT_EQ(l.rest.rfind("TLM_", 0), 0u) << "a return carries the response status";
    }
    if (l.conn == "engine_pcie" && l.event == "b_transport") (l.cmd == "WR" ? wr : rd) += l.len;
  }
  for (const auto& [c, n] : open) EXPECT_EQ(n, 0) << c << ": every call has its return";
  for (const char* c : {"engine_gpu_mem", "runtime_gpu_mem", "gpu_bus_gpu_mem", "engine_pcie", "pcie_host_mem",
                        "runtime_regs"})
    EXPECT_TRUE(seen.count(c)) << c << " traced";  // (the runtime's GPU memory: DMI and debug only)
  const json r = json::parse(slurp(js)), r0 = json::parse(slurp(js0));
  // Independent: the link counts the payload of every MWr (d2h) and CplD (h2d) it carries.
  EXPECT_EQ(wr, r["pcie"]["cdma"]["d2h"]["payload_bytes"].get<std::uint64_t>());
  EXPECT_EQ(rd, r["pcie"]["cdma"]["h2d"]["payload_bytes"].get<std::uint64_t>());
  EXPECT_GT(wr, 0u);
  // Tracing changes nothing simulated.
  EXPECT_EQ(r["step_time_s"]["cdma"], r0["step_time_s"]["cdma"]);
}

TEST(TxnTrace, AtTraceWithProtocolCheckersShowsEveryPhaseAndChangesNothing) {
  const std::string tr = tmp("at.txt"), js = tmp("at.json"), js0 = tmp("at0.json");
  std::string out, err;
  ASSERT_EQ(cli("run --network fmnist_cnn --batch 1 --steps cdma --mode at --check-protocol -q "
                "--txn-trace " + tr + " --txn-trace-only ' engine_pcie, pcie_host_mem' --json " + js,
                &out, &err, "", 300), 0) << err;
  ASSERT_EQ(cli("run --network fmnist_cnn --batch 1 --steps cdma --mode at -q --json " + js0, nullptr, &err, "", 300),
            0) << err;
  const auto lines = parse(slurp(tr));
  std::size_t begin_req = 0, begin_resp = 0;
  std::uint64_t wr = 0;
  for (const auto& l : lines) {
    EXPECT_TRUE(l.conn == "engine_pcie" || l.conn == "pcie_host_mem") << l.conn << " was not asked for";
    if (l.conn != "engine_pcie") continue;
    begin_req += l.event == "BEGIN_REQ";
    begin_resp += l.event == "BEGIN_RESP";
    if (l.event == "BEGIN_REQ" && l.cmd == "WR") wr += l.len;
  }
  EXPECT_GT(begin_req, 0u);
  EXPECT_EQ(begin_resp, begin_req);  // each request answered
  const json r = json::parse(slurp(js)), r0 = json::parse(slurp(js0));
  EXPECT_EQ(wr, r["pcie"]["cdma"]["d2h"]["payload_bytes"].get<std::uint64_t>());
  EXPECT_EQ(r["step_time_s"]["cdma"], r0["step_time_s"]["cdma"]);
}

TEST(TxnTrace, EveryNamedConnectionCanBeTracedAlone) {
  // The documented list (docs/user-guide.md, txn_trace_connections()) is the platform's
  // wiring: each name alone gives lines of that connection and of no other.
  for (const std::string c : {"engine_gpu_mem", "runtime_gpu_mem", "kernels_gpu_mem", "gpu_bus_gpu_mem",
                              "engine_pcie", "pcie_host_mem", "runtime_regs"}) {
    const std::string tr = tmp("one_" + c + ".txt");
    std::string err;
    ASSERT_EQ(cli("run --network fmnist_cnn --batch 1 --steps cdma -q --param gpu.kernel_traffic=true --txn-trace " +
                      tr + " --txn-trace-only " + c,
                  nullptr, &err, "", 300), 0) << c << ": " << err;
    const auto lines = parse(slurp(tr));
    EXPECT_FALSE(lines.empty()) << c;
    for (const auto& l : lines) EXPECT_EQ(l.conn, c);
  }
}

TEST(TxnTrace, BadConnectionListsAreErrorsNamingTheConnectionAndTheExpectedForm) {
  std::string err;
  EXPECT_EQ(cli("run --network fmnist_cnn --batch 1 -q --txn-trace " + tmp("x.txt") + " --txn-trace-only engine_pcie,dram",
                nullptr, &err, "", 120), 2);
  EXPECT_NE(err.find("--txn-trace-only: unknown connection \"dram\"; expected a comma-separated list of "
                     "engine_gpu_mem, runtime_gpu_mem, kernels_gpu_mem, gpu_bus_gpu_mem, engine_pcie, "
                     "pcie_host_mem, runtime_regs"),
            std::string::npos) << err;
  EXPECT_EQ(cli("run --network fmnist_cnn --batch 1 -q --txn-trace-only engine_pcie", nullptr, &err, "", 120), 2);
  EXPECT_NE(err.find("--txn-trace-only needs --txn-trace FILE"), std::string::npos) << err;
  EXPECT_EQ(cli("run --network fmnist_cnn --batch 1 -q --txn-trace " + tmp("y.txt") + " --txn-trace-only kernels_gpu_mem",
                nullptr, &err, "", 120), 2);
  EXPECT_NE(err.find("kernels_gpu_mem exists only with gpu.kernel_traffic = true"), std::string::npos) << err;
  EXPECT_EQ(cli("run --network fmnist_cnn --batch 1 -q --txn-trace " + tmp("z.txt") + " --txn-trace-only 'engine_pcie,,'",
                nullptr, &err, "", 120), 2);
  EXPECT_NE(err.find("an empty connection name"), std::string::npos) << err;
  EXPECT_EQ(cli("run --network fmnist_cnn --batch 1 -q --txn-trace /nonexistent/dir/t.txt", nullptr, &err, "", 120), 2);
  EXPECT_NE(err.find("--txn-trace /nonexistent/dir/t.txt: cannot open for writing"), std::string::npos) << err;
  // The sweep sets outputs per run: a --txn-trace passed to every run is refused.
  EXPECT_EQ(cli("sweep --grid batch=1,2 --out " + tmp("sw") + " --network fmnist_cnn --txn-trace " + tmp("s.txt"),
                nullptr, &err, "", 120), 2);
  EXPECT_NE(err.find("--txn-trace is a per-run output, which the sweep does not pass to its runs"), std::string::npos)
      << err;
  // So is the connection list alone (every run failed, the sweep still wrote its CSV: new-user s17).
  const std::string sw2 = tmp("sw2");
  EXPECT_EQ(cli("sweep --grid batch=1,2 --out " + sw2 + " --network fmnist_cnn --txn-trace-only engine_pcie",
                nullptr, &err, "", 120), 2);
  EXPECT_NE(err.find("--txn-trace-only is a per-run output"), std::string::npos) << err;
  EXPECT_TRUE(cdma::test::entries(sw2).empty()) << "nothing written";
  // An empty list is named as a list, not as a file name.
  EXPECT_EQ(cli("run --network fmnist_cnn --batch 1 -q --txn-trace " + tmp("e.txt") + " --txn-trace-only ''",
                nullptr, &err, "", 120), 2);
  EXPECT_NE(err.find("--txn-trace-only '': no connection; expected a comma-separated list of connection names"),
            std::string::npos) << err;
}
