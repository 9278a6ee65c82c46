// pcie_link + host_memory: LT delays, AT response times and per-direction stats, worked out
// by hand (Gen3 x16 = 16e9 x 128/130 B/s per direction; host DDR4 25.6e9 B/s + 80 ns).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tests/support/sc_fixture.h"
#include "tlm/core/sc_time_util.h"
#include "tlm/memory/host_memory.h"
#include "tlm/pcie/link_math.h"
#include "tlm/pcie/pcie_link.h"


using namespace cdma;
using namespace sc_core;
using namespace tlm;

namespace {

// Test initiator: runs `body` in an SC_THREAD, records AT BEGIN_RESP times (ps).
struct driver : sc_module {
  tlm_utils::simple_initiator_socket<driver> init;
  std::function<void(driver&)> body;
  std::vector<std::pair<tlm_generic_payload*, ps_t>> responses;

  SC_HAS_PROCESS(driver);
  driver(sc_module_name n, std::function<void(driver&)> b)
      : sc_module(n), init("init"), body(std::move(b)) {
    init.register_nb_transport_bw(this, &driver::nb_transport_bw);
    SC_THREAD(run);
  }
  void run() { body(*this); }
  tlm_sync_enum nb_transport_bw(tlm_generic_payload& t, tlm_phase& phase, sc_time& delay) {
    EXPECT_EQ(phase, BEGIN_RESP);
    responses.emplace_back(&t, now_ps(delay));
    return TLM_COMPLETED;
  }
};

void setup(tlm_generic_payload& gp, tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
           unsigned len) {
  gp.set_command(cmd);
  gp.set_address(addr);
  gp.set_data_ptr(data);
  gp.set_data_length(len);
  gp.set_streaming_width(len);
  gp.set_byte_enable_ptr(nullptr);
  gp.set_response_status(TLM_INCOMPLETE_RESPONSE);
}

class PcieLinkTest : public cdma::test::sc_fixture {};

constexpr std::uint64_t MiB = 1 << 20;
constexpr std::uint64_t buf_addr = 0x10000000;  // 256 MiB: 4 KiB- and MPS-aligned

}  // namespace

TEST_F(PcieLinkTest, LtWriteThenReadOfOneMiB) {
  pcie_link link("link");  // Gen3 x16, MPS 256, MRRS 512, RCB 64, 4DW, 400 ns one way
  host_memory host("host");
  std::vector<std::uint8_t> out(MiB), in(MiB, 0);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(i * 131 + 7);
  ps_t write_delay = 0, read_delay = 0;
  driver drv("drv", [&](driver& d) {
    tlm_generic_payload gp;
    sc_time delay = SC_ZERO_TIME;
    setup(gp, TLM_WRITE_COMMAND, buf_addr, out.data(), MiB);
    d.init->b_transport(gp, delay);
    EXPECT_TRUE(gp.is_response_ok());
    write_delay = to_ps(delay);
    wait(delay);  // everything idle again (the host finished at 114.16 us, link d2h at 72.8)

    delay = SC_ZERO_TIME;
    setup(gp, TLM_READ_COMMAND, buf_addr, in.data(), MiB);
    d.init->b_transport(gp, delay);
    EXPECT_TRUE(gp.is_response_ok());
    read_delay = to_ps(delay);
  });
  drv.init.bind(link.tgt);
  link.init.bind(host.tgt);
  sc_start();

  const double gen3x16 = 16e9 * 128.0 / 130.0;  // 8 GT/s x 16 x 128/130 / 8 B/s
  // Write: 4096 MWr x (256 + 24) B = 1,146,880 B; / gen3x16 = 1,146,880 x 130 / 2.048e12 s
  //        = 72,800,000 ps; + 400,000 link latency; host: 1 MiB / 25.6e9 = 40,960,000 ps
  //        + 80,000 latency. Total 114,240,000 ps.
  EXPECT_EQ(transfer_ps(1146880, gen3x16), 72800000u);
  EXPECT_EQ(transfer_ps(MiB, 25.6e9), 40960000u);
  EXPECT_EQ(write_delay, 72800000u + 400000u + 40960000u + 80000u);
  EXPECT_EQ(write_delay, 114240000u);

  // Read: 2048 MRd (MRRS 512) x 24 B = 49,152 B -> 49,152 x 130 / 2.048e12 s = 3,120,000 ps;
  //       + 400,000; host 40,960,000 + 80,000; 4096 CplD x (256 + 20) B = 1,130,496 B
  //       -> 71,760,000 ps; + 400,000. Total 116,720,000 ps.
  EXPECT_EQ(transfer_ps(49152, gen3x16), 3120000u);
  EXPECT_EQ(transfer_ps(1130496, gen3x16), 71760000u);
  EXPECT_EQ(read_delay, 3120000u + 400000u + 40960000u + 80000u + 71760000u + 400000u);
  // Read - write = (3.12 + 71.76 + 0.4) - 72.8 us = 2.48 us.
  EXPECT_EQ(read_delay - write_delay, 2480000u);
  EXPECT_EQ(in, out);  // the bytes came back

  const pcie::link_stats up = link.stats(pcie::direction::d2h);
  EXPECT_EQ(up.payload_bytes, MiB);             // MWr data; MRd carry none
  EXPECT_EQ(up.wire_bytes, 1146880u + 49152u);  // MWr + MRd
  EXPECT_EQ(up.tlps, 4096u + 2048u);
  EXPECT_EQ(up.busy_ps, 72800000u + 3120000u);
  const pcie::link_stats down = link.stats(pcie::direction::h2d);
  EXPECT_EQ(down.payload_bytes, MiB);
  EXPECT_EQ(down.wire_bytes, 1130496u);
  EXPECT_EQ(down.tlps, 4096u);
  EXPECT_EQ(down.busy_ps, 71760000u);
  EXPECT_EQ(host.bytes_written(), MiB);
  EXPECT_EQ(host.bytes_read(), MiB);
}

TEST_F(PcieLinkTest, AtWritesGetBeginRespAtTheLtTime) {
  pcie_link link("link");
  host_memory host("host");
  std::vector<std::uint8_t> a(4096, 1), b(4096, 2);
  tlm_generic_payload g1, g2;
  driver drv("drv", [&](driver& d) {
    setup(g1, TLM_WRITE_COMMAND, buf_addr, a.data(), 4096);
    setup(g2, TLM_WRITE_COMMAND, buf_addr + 4096, b.data(), 4096);
    for (tlm_generic_payload* g : {&g1, &g2}) {
      tlm_phase ph = BEGIN_REQ;
      sc_time delay = SC_ZERO_TIME;
      EXPECT_EQ(d.init->nb_transport_fw(*g, ph, delay), TLM_UPDATED);
      EXPECT_EQ(ph, END_REQ);
    }
  });
  drv.init.bind(link.tgt);
  link.init.bind(host.tgt);
  sc_start();
  ASSERT_EQ(drv.responses.size(), 2u);
  // Each 4 KiB write: 16 MWr x 280 B = 4480 B -> 4480 x 130 / 2.048e12 s = 284,375 ps.
  // Host: 4096 / 25.6e9 = 160,000 ps, + 80,000.
  // First:  284,375 + 400,000 = 684,375 at the host; + 160,000 + 80,000 = 924,375 ps.
  // Second: link busy until 568,750, at the host 968,750 (host idle since 844,375);
  //         + 160,000 + 80,000 = 1,208,750 ps.
  EXPECT_EQ(drv.responses[0].first, &g1);
  EXPECT_EQ(drv.responses[0].second, 924375u);
  EXPECT_EQ(drv.responses[1].first, &g2);
  EXPECT_EQ(drv.responses[1].second, 1208750u);
  EXPECT_EQ(g2.get_response_status(), TLM_OK_RESPONSE);
  std::uint8_t v = 0;
  host.store().read(buf_addr + 4096, &v, 1);
  EXPECT_EQ(v, 2u);
  EXPECT_EQ(link.stats(pcie::direction::d2h).wire_bytes, 2u * 4480u);
}

TEST_F(PcieLinkTest, DebugForwardsDmiRefusedErrorsCompleteWithoutData) {
  pcie_link link("link");
  host_memory_params hp;
  hp.size_bytes = 1 << 20;  // 1 MiB host
  host_memory host("host", hp);
  std::uint8_t buf[64] = {};
  ps_t err_delay = 0;
  driver drv("drv", [&](driver& d) {
    tlm_generic_payload gp;
    // transport_dbg passes through the link unchanged.
    std::uint8_t w[4] = {9, 8, 7, 6};
    setup(gp, TLM_WRITE_COMMAND, 0x100, w, 4);
    EXPECT_EQ(d.init->transport_dbg(gp), 4u);
    // DMI is refused for the whole address range.
    tlm_dmi dmi;
    setup(gp, TLM_READ_COMMAND, 0x100, nullptr, 0);
    EXPECT_FALSE(d.init->get_direct_mem_ptr(gp, dmi));
    EXPECT_EQ(dmi.get_start_address(), 0u);
    EXPECT_EQ(dmi.get_end_address(), ~0ull);
    // A 64 B read beyond the host memory: address error, no crash.
    sc_time delay = SC_ZERO_TIME;
    setup(gp, TLM_READ_COMMAND, 2 << 20, buf, 64);
    d.init->b_transport(gp, delay);
    EXPECT_EQ(gp.get_response_status(), TLM_ADDRESS_ERROR_RESPONSE);
    err_delay = to_ps(delay);
  });
  drv.init.bind(link.tgt);
  link.init.bind(host.tgt);
  sc_start();
  std::uint8_t v[4] = {};
  host.store().read(0x100, v, 4);
  EXPECT_EQ(v[3], 6u);
  // One MRd (24 B -> 24 x 130 / 2.048e12 s = 1523.4 -> 1,524 ps) + 400,000; the host adds
  // nothing on error; one Cpl without data (20 B -> 1269.5 -> 1,270 ps) + 400,000.
  EXPECT_EQ(err_delay, 1524u + 400000u + 1270u + 400000u);
  EXPECT_EQ(link.stats(pcie::direction::d2h).tlps, 1u);
  EXPECT_EQ(link.stats(pcie::direction::d2h).wire_bytes, 24u);
  EXPECT_EQ(link.stats(pcie::direction::h2d).tlps, 1u);
  EXPECT_EQ(link.stats(pcie::direction::h2d).wire_bytes, 20u);
  EXPECT_EQ(link.stats(pcie::direction::h2d).payload_bytes, 0u);
}
