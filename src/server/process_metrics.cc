#include "server/process_metrics.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string_view>
#include <vector>

namespace corral::server {
namespace {

void series(std::string& out, std::string_view name, std::string_view type, std::string_view help,
            double value) {
  fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name,
                 type, name, value);
}

// The fields of /proc/self/stat after the command name (which may hold
// spaces and parentheses: it ends at the last ')'), so field 3 of proc(5),
// the state, is [0].
std::vector<std::string> stat_fields() {
  std::ifstream in("/proc/self/stat");
  const std::string line((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t close = line.rfind(')');
  std::vector<std::string> fields;
  if (close == std::string::npos) return fields;
  std::istringstream rest(line.substr(close + 1));
  for (std::string field; rest >> field;) fields.push_back(field);
  return fields;
}

double number(const std::string& field) { return std::strtod(field.c_str(), nullptr); }

// The boot time, in Unix seconds (`btime` of /proc/stat).
double boot_time() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double seconds = 0;
      in >> seconds;
      return seconds;
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

}  // namespace

void append_process_metrics(std::string& out) {
  const std::vector<std::string> f = stat_fields();
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  // proc(5): utime 14, stime 15, starttime 22, vsize 23, rss 24 (1-based,
  // counting pid and comm): [11], [12], [19], [20], [21] here.
  if (f.size() > 21 && ticks > 0) {
    series(out, "process_cpu_seconds_total", "counter", "User and system CPU time spent, seconds.",
           (number(f[11]) + number(f[12])) / ticks);
    series(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
           number(f[20]));
    series(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
           number(f[21]) * page);
    if (const double boot = boot_time(); boot > 0) {
      series(out, "process_start_time_seconds", "gauge",
             "Start time of the process since the Unix epoch, seconds.",
             boot + number(f[19]) / ticks);
    }
  }
  std::error_code error;
  std::size_t fds = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", error), end; !error && it != end;
       it.increment(error)) {
    ++fds;
  }
  if (!error) {
    // The directory's own descriptor, open while it was listed, is not counted.
    series(out, "process_open_fds", "gauge", "Open file descriptors.",
           static_cast<double>(fds > 0 ? fds - 1 : 0));
  }
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    series(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
           static_cast<double>(limit.rlim_cur));
  }
}

}  // namespace corral::server
