// Records every SystemC report (severity, message type, message) while it is alive, then
// hands the report to the default handler (so the actions, e.g. display or throw, still
// apply). For tests that check a warning's or an error's text.
#pragma once
#include <string>
#include <vector>

#include <systemc>

namespace cdma::test {

class report_log {
public:
  struct entry {
    sc_core::sc_severity severity;
    std::string type, msg;
  };
  report_log() {
    entries().clear();
    sc_core::sc_report_handler::set_handler(&handler);
  }
  ~report_log() { sc_core::sc_report_handler::set_handler(sc_core::sc_report_handler::default_handler); }
  report_log(const report_log&) = delete;
  report_log& operator=(const report_log&) = delete;

  /// Reports of `severity` (from message type `type` if not empty).
  std::vector<entry> of(sc_core::sc_severity severity, const std::string& type = "") const {
    std::vector<entry> out;
    for (const entry& e : entries())
      if (e.severity == severity && (type.empty() || e.type == type)) out.push_back(e);
    return out;
  }
  std::vector<entry> warnings(const std::string& type = "") const { return of(sc_core::SC_WARNING, type); }
  std::vector<entry> errors(const std::string& type = "") const { return of(sc_core::SC_ERROR, type); }

private:
  static std::vector<entry>& entries() {
    static std::vector<entry> e;
    return e;
  }
  static void handler(const sc_core::sc_report& r, const sc_core::sc_actions& a) {
    entries().push_back({r.get_severity(), r.get_msg_type(), r.get_msg()});
    sc_core::sc_report_handler::default_handler(r, a);
  }
};

}  // namespace cdma::test
