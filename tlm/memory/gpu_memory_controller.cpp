#include "tlm/memory/gpu_memory_controller.h"

#include <stdexcept>

namespace cdma {

void gpu_memory_params::validate() const {
  if (!(efficiency > 0.0 && efficiency <= 1.0))
    throw std::invalid_argument("gpu_memory_params.efficiency must be in (0, 1]");
  if (channels == 0) throw std::invalid_argument("gpu_memory_params.channels must be >= 1");
  if (!(peak_bandwidth_Bps > 0.0))
    throw std::invalid_argument("gpu_memory_params.peak_bandwidth_Bps must be > 0");
}

}  // namespace cdma
