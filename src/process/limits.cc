// src/process/limits.cc: cgroup v1/v2 resource limits and the start-up sweep.
#include "process/limits.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <sstream>
#include <string_view>
#include <system_error>
#include <thread>

#include "process/cgroup.hpp"

namespace corral::process {

namespace {

constexpr const char* kControllerNames[] = {"pids", "memory", "cpu"};
constexpr std::uint64_t kCpuPeriodUsec = 100000;

std::atomic<unsigned> next_v1_parent{0};
std::atomic<unsigned> next_v1_leaf{0};

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, by)) parts.push_back(part);
  return parts;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  for (const auto& each : list)
    if (each == item) return true;
  return false;
}

std::vector<std::string> subdirectories(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return names;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.' || entry->d_type != DT_DIR) continue;
    names.emplace_back(entry->d_name);
  }
  ::closedir(dir);
  return names;
}

std::vector<pid_t> listed_pids(const std::string& procs_path) {
  std::vector<pid_t> pids;
  std::istringstream in(read_small_file(procs_path));
  std::string line;
  while (std::getline(in, line)) {
    pid_t pid = 0;
    auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), pid);
    if (ec == std::errc() && pid > 0) pids.push_back(pid);
  }
  return pids;
}

std::uint64_t keyed_value(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + " ", 0) != 0) continue;
    std::uint64_t value = 0;
    std::from_chars(line.data() + key.size() + 1, line.data() + line.size(), value);
    return value;
  }
  return 0;
}

std::uint64_t number_in(const std::string& path) {
  std::string text = read_small_file(path);
  std::uint64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

void write_or_throw(const std::string& path, const std::string& text) {
  if (int error = write_file(path, text); error != 0) {
    throw std::system_error(error, std::generic_category(), "write " + text + " to " + path);
  }
}

std::string cpu_quota_text(double cpus) {
  auto quota = static_cast<long long>(std::llround(cpus * static_cast<double>(kCpuPeriodUsec)));
  if (quota < 1000) quota = 1000;  // the kernel's floor is 1 ms
  return std::to_string(quota);
}

std::string format_cpus(double cpus) {
  std::ostringstream out;
  out << cpus;
  return out.str();
}

}  // namespace

bool any_limit(const ResourceLimits& limits) {
  return limits.processes || limits.memory_bytes || limits.cpus;
}

std::optional<std::string> own_cgroup_v1_directory(const std::string& controller) {
  std::istringstream mounts(read_small_file("/proc/mounts"));
  std::string line;
  std::string mount_point;
  while (std::getline(mounts, line)) {
    std::istringstream fields(line);
    std::string device, point, type, options;
    fields >> device >> point >> type >> options;
    if (type == "cgroup" && contains(split(options, ','), controller)) {
      mount_point = point;
      break;
    }
  }
  if (mount_point.empty()) return std::nullopt;
  std::istringstream groups(read_small_file("/proc/self/cgroup"));
  while (std::getline(groups, line)) {
    auto first = line.find(':');
    auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    if (!contains(split(line.substr(first + 1, second - first - 1), ','), controller)) continue;
    std::string relative = line.substr(second + 1);
    if (relative == "/") relative.clear();
    std::string own = mount_point + relative;
    if (::access(own.c_str(), W_OK) != 0 || !exists(own + "/cgroup.procs")) return std::nullopt;
    return own;
  }
  return std::nullopt;
}

// LimitLeaf

LimitLeaf::~LimitLeaf() {
  for (const auto& path : paths_)
    if (!path.empty()) ::rmdir(path.c_str());
}

std::array<int, 3> LimitLeaf::procs_fds() const {
  return {procs_[0].get(), procs_[1].get(), procs_[2].get()};
}

void LimitLeaf::close_procs() {
  for (auto& fd : procs_) fd.reset();
}

bool LimitLeaf::empty() const {
  for (const auto& path : paths_) {
    if (path.empty()) continue;
    if (!listed_pids(path + "/cgroup.procs").empty()) return false;
  }
  return true;
}

void LimitLeaf::kill_all() const {
  for (const auto& path : paths_) {
    if (path.empty()) continue;
    for (pid_t pid : listed_pids(path + "/cgroup.procs")) ::kill(pid, SIGKILL);
  }
}

bool LimitLeaf::oom_killed() const {
  const auto& memory = paths_[static_cast<int>(LimitController::memory)];
  if (memory.empty()) return false;
  return keyed_value(read_small_file(memory + "/memory.oom_control"), "oom_kill") > oom_baseline_;
}

long LimitLeaf::pids_current() const {
  const auto& pids = paths_[static_cast<int>(LimitController::pids)];
  if (pids.empty()) return -1;
  return static_cast<long>(number_in(pids + "/pids.current"));
}

std::string LimitLeaf::describe() const {
  std::string out;
  for (const auto& path : paths_) {
    if (path.empty()) continue;
    if (!out.empty()) out += ", ";
    out += path;
  }
  return "cgroup v1 " + out;
}

// LimitCgroups

LimitCgroups::LimitCgroups(int slots, V2Controllers v2) : slots_(slots), v2_(v2) {
  for (int i = 0; i < 3; ++i) {
    if (v2_has(static_cast<LimitController>(i))) continue;
    auto own = own_cgroup_v1_directory(kControllerNames[i]);
    if (!own) continue;
    // Made now, so protections() reports what a run will really get: a
    // hierarchy that is mounted but refuses our mkdir is not enforced.
    std::string path = *own + "/corral-" + std::to_string(::getpid()) + "-" +
                       std::to_string(next_v1_parent.fetch_add(1));
    if (::mkdir(path.c_str(), 0755) != 0) continue;
    v1_[i] = V1Hierarchy{*own};
    parents_[i] = path;
  }
}

LimitCgroups::~LimitCgroups() {
  free_.clear();  // rmdir the leaves first
  for (const auto& parent : parents_)
    if (!parent.empty()) ::rmdir(parent.c_str());
}

bool LimitCgroups::v2_has(LimitController controller) const {
  switch (controller) {
    case LimitController::pids:
      return v2_.pids;
    case LimitController::memory:
      return v2_.memory;
    case LimitController::cpu:
      return v2_.cpu;
  }
  return false;
}

bool LimitCgroups::v1_has(LimitController controller) const {
  return v1_[static_cast<int>(controller)].has_value();
}

std::vector<Protection> LimitCgroups::protections(const ResourceLimits& limits) const {
  std::vector<Protection> out;
  auto entry = [&](const char* name, LimitController controller, const std::string& v2_file,
                   const std::string& v1_file, const std::string& value) {
    Protection p;
    p.name = name;
    if (v2_has(controller)) {
      p.enforced = true;
      p.detail = "cgroup v2 " + v2_file + "=" + value;
    } else if (v1_has(controller)) {
      p.enforced = true;
      p.detail = "cgroup v1 " + v1_file + "=" + value;
    } else {
      p.detail = std::string("not enforced: no writable cgroup v2 or v1 '") +
                 kControllerNames[static_cast<int>(controller)] + "' controller here";
      if (controller == LimitController::memory) {
        p.detail += "; RLIMIT_AS=" + value + " per process instead (weaker: each process alone)";
      }
    }
    out.push_back(std::move(p));
  };
  if (limits.processes) {
    entry("limits.processes", LimitController::pids, "pids.max", "pids.max",
          std::to_string(*limits.processes));
  }
  if (limits.memory_bytes) {
    std::string value = std::to_string(*limits.memory_bytes);
    entry("limits.memory", LimitController::memory, "memory.max", "memory.limit_in_bytes", value);
  }
  if (limits.cpus) {
    std::string quota = cpu_quota_text(*limits.cpus);
    Protection p;
    p.name = "limits.cpus";
    if (v2_has(LimitController::cpu)) {
      p.enforced = true;
      p.detail = "cgroup v2 cpu.max=" + quota + " " + std::to_string(kCpuPeriodUsec);
    } else if (v1_has(LimitController::cpu)) {
      p.enforced = true;
      p.detail = "cgroup v1 cpu.cfs_quota_us=" + quota +
                 " cpu.cfs_period_us=" + std::to_string(kCpuPeriodUsec);
    } else {
      p.detail = "not enforced: no writable cgroup v2 or v1 'cpu' controller here (" +
                 format_cpus(*limits.cpus) + " cpus asked)";
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::string> LimitCgroups::unenforced(const ResourceLimits& limits) const {
  std::vector<std::string> names;
  for (const auto& p : protections(limits))
    if (!p.enforced) names.push_back(p.name + " (" + p.detail + ")");
  return names;
}

void LimitCgroups::apply_v2(const std::string& leaf, const ResourceLimits& limits) const {
  if (v2_.pids) {
    write_or_throw(leaf + "/pids.max",
                   limits.processes ? std::to_string(*limits.processes) : std::string("max"));
  }
  if (v2_.memory) {
    std::string value = limits.memory_bytes ? std::to_string(*limits.memory_bytes) : "max";
    write_or_throw(leaf + "/memory.max", value);
    if (exists(leaf + "/memory.swap.max")) {
      write_or_throw(leaf + "/memory.swap.max", limits.memory_bytes ? "0" : "max");
    }
  }
  if (v2_.cpu) {
    write_or_throw(leaf + "/cpu.max", (limits.cpus ? cpu_quota_text(*limits.cpus) : "max") + " " +
                                          std::to_string(kCpuPeriodUsec));
  }
}

const std::string& LimitCgroups::parent(LimitController controller) {
  return parents_[static_cast<int>(controller)];
}

void LimitCgroups::write_limits(LimitLeaf& leaf, const ResourceLimits& limits) const {
  if (const auto& pids = leaf.paths_[0]; !pids.empty()) {
    write_or_throw(pids + "/pids.max",
                   limits.processes ? std::to_string(*limits.processes) : std::string("max"));
  }
  if (const auto& memory = leaf.paths_[1]; !memory.empty()) {
    bool memsw = exists(memory + "/memory.memsw.limit_in_bytes");
    // memsw must stay >= the memory limit: lift it first, then set both.
    if (memsw) write_or_throw(memory + "/memory.memsw.limit_in_bytes", "-1");
    std::string value = limits.memory_bytes ? std::to_string(*limits.memory_bytes) : "-1";
    write_or_throw(memory + "/memory.limit_in_bytes", value);
    if (memsw && limits.memory_bytes) {
      write_or_throw(memory + "/memory.memsw.limit_in_bytes", value);
    }
    write_file(memory + "/memory.max_usage_in_bytes", "0");
    leaf.oom_baseline_ = keyed_value(read_small_file(memory + "/memory.oom_control"), "oom_kill");
    leaf.failcnt_baseline_ = number_in(memory + "/memory.failcnt");
  }
  if (const auto& cpu = leaf.paths_[2]; !cpu.empty()) {
    write_or_throw(cpu + "/cpu.cfs_period_us", std::to_string(kCpuPeriodUsec));
    write_or_throw(cpu + "/cpu.cfs_quota_us", limits.cpus ? cpu_quota_text(*limits.cpus) : "-1");
  }
}

std::unique_ptr<LimitLeaf> LimitCgroups::acquire(const ResourceLimits& limits) {
  std::array<bool, 3> need{limits.processes && !v2_.pids && v1_has(LimitController::pids),
                           limits.memory_bytes && !v2_.memory && v1_has(LimitController::memory),
                           limits.cpus && !v2_.cpu && v1_has(LimitController::cpu)};
  if (!need[0] && !need[1] && !need[2]) return nullptr;
  std::unique_ptr<LimitLeaf> leaf;
  {
    std::lock_guard lock(mutex_);
    // A reused leaf keeps the controllers it had; a missing one is added
    // below, an extra one gets its limit lifted.
    if (!free_.empty()) {
      leaf = std::move(free_.back());
      free_.pop_back();
    }
    if (!leaf) leaf.reset(new LimitLeaf());
    for (int i = 0; i < 3; ++i) {
      if (!need[i] || !leaf->paths_[i].empty()) continue;
      std::string path = parent(static_cast<LimitController>(i)) + "/run-" +
                         std::to_string(next_v1_leaf.fetch_add(1));
      if (::mkdir(path.c_str(), 0755) != 0) {
        throw std::system_error(errno, std::generic_category(), "mkdir " + path);
      }
      leaf->paths_[i] = path;
    }
  }
  if (!leaf->empty()) {
    throw std::system_error(EBUSY, std::generic_category(), "a reused limit leaf is not empty");
  }
  write_limits(*leaf, limits);
  for (int i = 0; i < 3; ++i) {
    if (leaf->paths_[i].empty()) continue;
    std::string procs = leaf->paths_[i] + "/cgroup.procs";
    leaf->procs_[i] = UniqueFd(::open(procs.c_str(), O_WRONLY | O_CLOEXEC));
    if (!leaf->procs_[i]) throw std::system_error(errno, std::generic_category(), "open " + procs);
  }
  return leaf;
}

bool LimitCgroups::release(std::unique_ptr<LimitLeaf>& leaf) {
  if (!leaf) return true;
  leaf->close_procs();
  if (!leaf->empty()) return false;
  std::lock_guard lock(mutex_);
  if (free_.size() < static_cast<std::size_t>(slots_)) {
    free_.push_back(std::move(leaf));
  } else {
    leaf.reset();
  }
  return true;
}

std::size_t LimitCgroups::free_leaves() const {
  std::lock_guard lock(mutex_);
  return free_.size();
}

// The sweep

namespace {

// When `pid` started, in seconds since the epoch; nullopt if not running.
std::optional<double> process_start_time(pid_t pid) {
  std::string stat = read_small_file("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  // Fields after comm start at 3 (state); starttime is field 22.
  for (int i = 3; i <= 22 && (fields >> field); ++i) {
  }
  if (field.empty()) return std::nullopt;
  double ticks = std::strtod(field.c_str(), nullptr);
  static const double boot =
      static_cast<double>(keyed_value(read_small_file("/proc/stat"), "btime"));
  return boot + ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::optional<pid_t> owner_of(const std::string& name) {
  // corral-<pid>-<n>
  if (name.rfind("corral-", 0) != 0) return std::nullopt;
  auto dash = name.find('-', 7);
  if (dash == std::string::npos) return std::nullopt;
  pid_t pid = 0;
  auto [end, ec] = std::from_chars(name.data() + 7, name.data() + dash, pid);
  if (ec != std::errc() || end != name.data() + dash || pid <= 0) return std::nullopt;
  return pid;
}

bool stale(const std::string& path, pid_t owner) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return false;
  double created = static_cast<double>(info.st_ctim.tv_sec);
  auto started = process_start_time(owner);
  if (!started) return ::kill(owner, 0) != 0 && errno == ESRCH;
  // The pid belongs to a process started after the directory: reused.
  return *started > created + 2.0;
}

// Every directory below `dir`, deepest first, so they can be removed in
// this order. Not only the run leaves: a command that ran corral itself
// (under cgroup delegation) left a corral-P-N of its own inside its leaf,
// and a parent cgroup with any child is EBUSY to rmdir forever.
void collect_below(const std::string& dir, int depth, std::vector<std::string>& out) {
  if (depth > 16) return;  // no corral nests this deep; rmdir then fails, the sweep reports it
  for (const auto& name : subdirectories(dir)) {
    const std::string path = dir + "/" + name;
    collect_below(path, depth + 1, out);
    out.push_back(path);
  }
}

std::vector<std::string> below(const std::string& dir) {
  std::vector<std::string> out;
  collect_below(dir, 0, out);
  return out;
}

bool all_empty(const std::string& dir, const std::vector<std::string>& below) {
  if (!listed_pids(dir + "/cgroup.procs").empty()) return false;
  for (const auto& path : below)
    if (!listed_pids(path + "/cgroup.procs").empty()) return false;
  return true;
}

bool populated(const std::string& dir) {
  return read_small_file(dir + "/cgroup.events").find("populated 1") != std::string::npos;
}

bool sweep_one(const std::string& dir) {
  const std::vector<std::string> nested = below(dir);
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  bool v2 = exists(dir + "/cgroup.kill");
  // Processes we cannot see (another pid namespace's) are not listed: a
  // populated v2 directory that lists none belongs to a supervisor outside
  // our pid namespace, whose pid only looks dead from here. Leave it.
  if (v2 && populated(dir) && all_empty(dir, nested)) return false;
  while (!all_empty(dir, nested)) {
    if (std::chrono::steady_clock::now() > until) return false;
    if (v2) {
      write_file(dir + "/cgroup.kill", "1");
    } else {
      // v1: SIGKILL every listed pid; pids.max bounds a tree that forks on.
      for (pid_t pid : listed_pids(dir + "/cgroup.procs")) ::kill(pid, SIGKILL);
      for (const auto& path : nested)
        for (pid_t pid : listed_pids(path + "/cgroup.procs")) ::kill(pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // exits are asynchronous
  }
  for (const auto& path : nested) ::rmdir(path.c_str());
  return ::rmdir(dir.c_str()) == 0;
}

}  // namespace

std::size_t sweep_stale_cgroups(bool force) {
  static std::atomic<bool> swept{false};
  if (!force && swept.exchange(true)) return 0;
  // Pids in directory names are only comparable with /proc when /proc is
  // our own pid namespace's.
  char self[32];
  ssize_t n = ::readlink("/proc/self", self, sizeof self - 1);
  if (n <= 0 || std::string_view(self, static_cast<std::size_t>(n)) != std::to_string(::getpid())) {
    return 0;
  }
  std::vector<std::string> bases;
  if (auto own = own_cgroup2_directory()) bases.push_back(*own);
  for (const char* controller : kControllerNames)
    if (auto own = own_cgroup_v1_directory(controller)) bases.push_back(*own);
  std::size_t removed = 0;
  for (const auto& base : bases) {
    for (const auto& name : subdirectories(base)) {
      auto owner = owner_of(name);
      if (!owner) continue;
      std::string path = base + "/" + name;
      if (*owner == ::getpid()) {
        // Ours, unless it predates this process (a pid reused across boots
        // of a container).
        if (!stale(path, *owner)) continue;
      } else if (!stale(path, *owner)) {
        continue;
      }
      if (sweep_one(path)) ++removed;
    }
  }
  return removed;
}

}  // namespace corral::process
