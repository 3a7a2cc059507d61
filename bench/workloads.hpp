// bench/workloads.hpp: the standard workloads every execution benchmark
// reports on (../shared/bench/workloads.json), so numbers stay comparable
// across corral's benchmarks and the peers'.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "unique_source.hpp"

namespace corral::bench {

struct Workload {
  std::string name;
  std::string source;  // an async arrow function
  std::string expect;  // the JSON every peer must return, serialized
};

// Reads CORRAL_WORKLOADS_JSON; without the file, only `trivial`.
inline std::vector<Workload> load_workloads() {
  std::ifstream in(CORRAL_WORKLOADS_JSON);
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().empty()) return {{"trivial", "async () => 1 + 1", "2"}};
  std::vector<Workload> out;
  const auto root = core::parse_json(text.str(), "workloads.json").as_object();
  for (const auto& w : root.at("workloads").as_array()) {
    out.push_back({std::string(w.at("name").as_string()), std::string(w.at("source").as_string()),
                   w.as_object().contains("expect") ? core::json::serialize(w.at("expect"))
                                                    : std::string("null")});
  }
  return out;
}

}  // namespace corral::bench
