// A pool of generic payloads implementing tlm_mm_interface with reference counting, as the
// base protocol requires for nb_transport (IEEE 1666-2011 §14.5). An initiator takes a
// payload with allocate(), calls acquire() on it, and release() when done; the last release
// returns it to the pool (free()), so a long run reuses a bounded set of payloads.
#pragma once
#include <cstddef>
#include <vector>
#include <tlm>

namespace cdma {

class payload_pool : public tlm::tlm_mm_interface {
public:
  payload_pool() = default;
  payload_pool(const payload_pool&) = delete;
  payload_pool& operator=(const payload_pool&) = delete;
  ~payload_pool() override {
    for (tlm::tlm_generic_payload* p : all_) delete p;
  }

  /// A payload with this pool as its memory manager and reference count 0. Fields are reset.
  tlm::tlm_generic_payload* allocate() {
    tlm::tlm_generic_payload* p;
    if (free_.empty()) {
      p = new tlm::tlm_generic_payload(this);
      all_.push_back(p);
    } else {
      p = free_.back();
      free_.pop_back();
    }
    ++in_use_;
    return p;
  }

  /// Called by tlm_generic_payload::release() when the count reaches 0.
  void free(tlm::tlm_generic_payload* p) override {
    p->reset();  // clears extensions managed by the mm and the byte-enable pointer
    p->set_data_ptr(nullptr);
    p->set_byte_enable_ptr(nullptr);
    p->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    free_.push_back(p);
    --in_use_;
  }

  /// Payloads ever created (the pool's size): stays bounded when payloads are released.
  std::size_t created() const { return all_.size(); }
  /// Payloads handed out and not yet returned.
  std::size_t in_use() const { return in_use_; }

private:
  std::vector<tlm::tlm_generic_payload*> all_, free_;
  std::size_t in_use_ = 0;
};

}  // namespace cdma
