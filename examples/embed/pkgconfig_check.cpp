// Builds with nothing but `pkg-config --cflags --libs cdma_vp`: the installed headers, the
// library and its dependencies are all found through cdma_vp.pc.
#include <iostream>
#include <systemc>
#include "tlm/cdma/cdma_engine.h"
#include "tlm/cdma/cdma_regs.h"

int sc_main(int, char*[]) {
  cdma::cdma_engine engine("cdma", cdma::cdma_engine_params{});
  const cdma::cdma_regs& r = engine.registers();
  std::uint32_t id = 0;
  if (r.read(cdma::reg::ID, id) != cdma::reg_access::ok || id != cdma::reg::ID_VALUE) return 1;
  std::cout << "pkg-config build: " << engine.name() << " ID 0x" << std::hex << id << "\n";
  return 0;
}
