// src/server/process_metrics.hpp: the standard `process_*` series of
// Prometheus client libraries (CPU, memory, descriptors, start time), read
// from /proc/self, so dashboards and alerts written for any exporter read
// corral's too.
//
// Example:
//   std::string out;
//   append_process_metrics(out);
//   // # TYPE process_cpu_seconds_total counter
//   // process_cpu_seconds_total 1.27 ...
#pragma once

#include <string>

namespace corral::server {

// Appends process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_open_fds, process_max_fds and
// process_start_time_seconds (Unix seconds). A series /proc cannot give is
// left out rather than written as 0.
void append_process_metrics(std::string& out);

}  // namespace corral::server
