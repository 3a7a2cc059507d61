// src/process/filesystem_view.cc: see filesystem_view.hpp.
#include "process/filesystem_view.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "process/child_code.hpp"
#include "process/spawn.hpp"

namespace corral::process {

namespace {

// Where the view is assembled: a tmpfs over /proc (see the header).
constexpr const char* kStage = "/proc";
// The host directories a minimal view shows, read-only, where they exist.
constexpr const char* kSystemDirectories[] = {"/usr",   "/bin",   "/sbin", "/lib",
                                              "/lib32", "/lib64", "/etc"};
constexpr const char* kDeviceNodes[] = {"null", "zero", "full", "random", "urandom"};
constexpr const char* kDeviceLinks[][2] = {{"/proc/self/fd", "fd"},
                                           {"/proc/self/fd/0", "stdin"},
                                           {"/proc/self/fd/1", "stdout"},
                                           {"/proc/self/fd/2", "stderr"}};
// What a bound path may not be made writable or read-only beyond.
constexpr unsigned long kReadOnly = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

bool under(const std::string& path, const std::string& folder) {
  if (folder == "/") return true;
  return path == folder ||
         (path.size() > folder.size() && path.compare(0, folder.size(), folder) == 0 &&
          path[folder.size()] == '/');
}

// "/a/./b/../c//" -> "/a/c"; empty when `path` is not absolute.
std::string normalize(const std::string& path) {
  if (path.empty() || path[0] != '/') return {};
  std::vector<std::string> parts;
  std::size_t start = 1;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(std::move(part));
    }
    start = end + 1;
  }
  std::string out;
  for (const auto& part : parts) out += "/" + part;
  return out.empty() ? "/" : out;
}

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

// A bind as the view makes it: normalized paths, and whether it is a
// directory.
struct CheckedBind {
  std::string source, target;
  bool writable, directory;
};

// Binds first checked, parents before children so nested ones layer.
// Throws SpawnError naming the bad bind.
std::vector<CheckedBind> checked_binds(const std::vector<Bind>& requested) {
  std::vector<CheckedBind> binds;
  if (std::string problem = bind_problem(requested); !problem.empty()) throw SpawnError(problem);
  for (const auto& b : requested) {
    const std::string source = normalize(b.source);
    struct stat st;
    if (::stat(source.c_str(), &st) != 0) {
      throw SpawnError("bind: the source " + source + " cannot be used: " + std::strerror(errno));
    }
    binds.push_back({source, normalize(b.target.empty() ? b.source : b.target), b.writable,
                     S_ISDIR(st.st_mode)});
  }
  std::stable_sort(binds.begin(), binds.end(), [](const CheckedBind& a, const CheckedBind& b) {
    return std::count(a.target.begin(), a.target.end(), '/') <
           std::count(b.target.begin(), b.target.end(), '/');
  });
  return binds;
}

}  // namespace

std::string bind_problem(const std::vector<Bind>& binds) {
  if (binds.size() > kMaxBinds) {
    return "bind: " + std::to_string(binds.size()) + " binds, more than the " +
           std::to_string(kMaxBinds) + " a command may have";
  }
  for (const auto& b : binds) {
    const std::string source = normalize(b.source);
    const std::string target = normalize(b.target.empty() ? b.source : b.target);
    if (source.empty()) return "bind: the source is not an absolute path: " + b.source;
    if (target.empty()) return "bind: the target is not an absolute path: " + b.target;
    if (under(source, "/proc") || under(target, "/proc")) {
      return "bind: /proc cannot be bound (the command gets its own): " + b.source;
    }
    if (target == "/") return "bind: the target cannot be /: " + b.source;
    struct stat st;
    if (::stat(source.c_str(), &st) != 0) {
      return "bind: the source " + source + " cannot be used: " + std::strerror(errno);
    }
    if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
      return "bind: the source " + source + " is neither a directory nor a file";
    }
  }
  return {};
}

const char* FilesystemPlan::keep(std::string text) {
  strings_.push_back(std::move(text));
  return strings_.back().c_str();
}

void FilesystemPlan::add(MountStep step, std::string description) {
  steps_.push_back(step);
  descriptions_.push_back(std::move(description));
}

const std::string& FilesystemPlan::describe(std::size_t index) const {
  static const std::string unknown = "build the filesystem view";
  return index < descriptions_.size() ? descriptions_[index] : unknown;
}

// Every directory from the view's root down to `inside`.
void FilesystemPlan::make_directories(const std::string& inside) {
  if (inside == "/") return;
  make_directories(parent_of(inside));
  if (std::find(made_.begin(), made_.end(), inside) != made_.end()) return;
  made_.push_back(inside);
  add({.op = MountStep::Op::mkdir, .target = keep(root_ + inside)}, "create " + inside);
}

void FilesystemPlan::bind(const std::string& host, const std::string& inside, bool writable,
                          bool directory) {
  if (directory) {
    make_directories(inside);
  } else {
    make_directories(parent_of(inside));
    add({.op = MountStep::Op::touch, .target = keep(root_ + inside)}, "create " + inside);
  }
  const char* target = keep(root_ + inside);
  const std::string what = "bind " + host + (host == inside ? "" : " on " + inside);
  add({.op = MountStep::Op::mount,
       .source = keep(host),
       .target = target,
       .flags = static_cast<unsigned long>(MS_BIND | (directory ? MS_REC : 0))},
      what);
  add({.op = MountStep::Op::set_attr,
       .target = target,
       .flags =
           writable ? static_cast<unsigned long>(MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) : kReadOnly,
       .recursive = directory},
      (writable ? "make nosuid " : "make read-only ") + inside);
}

bool FilesystemPlan::visible(const std::string& path) const {
  // The view's own /tmp, /proc and /dev hide the host's.
  for (const char* own : {"/tmp", "/proc", "/dev"}) {
    if (under(path, own)) return false;
  }
  return std::any_of(visible_.begin(), visible_.end(),
                     [&](const std::string& folder) { return under(path, folder); });
}

FilesystemPlan FilesystemPlan::build(const Inputs& in) {
  FilesystemPlan plan;
  const bool minimal = in.view == FilesystemView::minimal;
  plan.root_ = minimal ? std::string(kStage) : std::string(kStage) + "/root";
  const std::vector<CheckedBind> binds = checked_binds(in.binds);

  plan.mount_stage();
  if (minimal) {
    plan.show_system_directories();
  } else {
    plan.show_host_root();
  }
  const std::string size = "size=" + std::to_string(std::max<std::uint64_t>(in.tmp_bytes, 1 << 20));
  plan.mount_tmp(size);
  plan.mount_proc(in.fresh_proc, minimal);
  plan.mount_dev(size);
  for (const auto& b : binds) {
    plan.bind(b.source, b.target, b.writable, b.directory);
    if (b.source == b.target && b.directory) plan.visible_.push_back(b.target);
  }
  plan.show_cwd_and_executable(in);
  plan.enter(minimal);
  return plan;
}

// The tmpfs the view is assembled on, in mounts that no longer propagate.
void FilesystemPlan::mount_stage() {
  // "/" is no mount point where the supervisor is chrooted into a plain
  // directory: then the stage's own mount, under which every mount of the
  // view is made.
  add({.op = MountStep::Op::make_private, .source = kStage, .target = "/"},
      "make the mounts private");
  add({.op = MountStep::Op::mount,
       .source = "tmpfs",
       .target = kStage,
       .fstype = "tmpfs",
       .flags = MS_NOSUID | MS_NODEV,
       .data = "mode=0755,size=1m,nr_inodes=4096"},
      "mount the view's tmpfs");
}

// A minimal view: the host's system directories that exist, read-only (a
// symbolic link as the same link).
void FilesystemPlan::show_system_directories() {
  for (const char* dir : kSystemDirectories) {
    struct stat st;
    if (::lstat(dir, &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char link[4096];
      const ssize_t n = ::readlink(dir, link, sizeof link - 1);
      if (n <= 0) continue;
      add({.op = MountStep::Op::symlink,
           .source = keep(std::string(link, static_cast<std::size_t>(n))),
           .target = keep(root_ + dir)},
          std::string("link ") + dir);
    } else if (S_ISDIR(st.st_mode)) {
      bind(dir, dir, false, true);
    } else {
      continue;
    }
    visible_.emplace_back(dir);
  }
}

// A host view: the host's whole tree, read-only; its /tmp, /proc and /dev
// are replaced next.
void FilesystemPlan::show_host_root() {
  add({.op = MountStep::Op::mkdir, .target = keep(root_)}, "create the root");
  add({.op = MountStep::Op::mount, .source = "/", .target = keep(root_), .flags = MS_BIND | MS_REC},
      "bind the host's root");
  add({.op = MountStep::Op::set_attr, .target = keep(root_), .flags = kReadOnly, .recursive = true},
      "make the host's root read-only");
  visible_.emplace_back("/");
  made_.emplace_back("/tmp");
  made_.emplace_back("/proc");
  made_.emplace_back("/dev");
}

void FilesystemPlan::mount_tmp(const std::string& size) {
  make_directories("/tmp");
  add({.op = MountStep::Op::mount,
       .source = "tmpfs",
       .target = keep(root_ + "/tmp"),
       .fstype = "tmpfs",
       .flags = MS_NOSUID | MS_NODEV,
       .data = keep("mode=1777," + size)},
      "mount a private /tmp");
}

void FilesystemPlan::mount_proc(bool fresh_proc, bool minimal) {
  make_directories("/proc");
  if (fresh_proc) {
    add({.op = MountStep::Op::mount,
         .source = "proc",
         .target = keep(root_ + "/proc"),
         .fstype = "proc",
         .flags = MS_NOSUID | MS_NODEV | MS_NOEXEC},
        "mount /proc");
  } else if (!minimal) {
    // No procfs of its own: not the host's either (the bind of the host's
    // root brought it along).
    add({.op = MountStep::Op::mount,
         .source = "tmpfs",
         .target = keep(root_ + "/proc"),
         .fstype = "tmpfs",
         .flags = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
         .data = "size=4k,nr_inodes=2"},
        "hide the host's /proc");
  }
}

// A /dev of its own: the harmless device nodes bound from the host, the
// standard links, a private /dev/shm; then read-only.
void FilesystemPlan::mount_dev(const std::string& size) {
  const std::string dev = root_ + "/dev";
  make_directories("/dev");
  add({.op = MountStep::Op::mount,
       .source = "tmpfs",
       .target = keep(dev),
       .fstype = "tmpfs",
       .flags = MS_NOSUID | MS_NOEXEC,
       .data = "mode=0755,size=64k,nr_inodes=64"},
      "mount /dev");
  for (const char* node : kDeviceNodes) {
    const std::string host = std::string("/dev/") + node;
    struct stat st;
    if (::stat(host.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) continue;
    add({.op = MountStep::Op::touch, .target = keep(dev + "/" + node)}, "create " + host);
    add({.op = MountStep::Op::mount,
         .source = keep(host),
         .target = keep(dev + "/" + node),
         .flags = MS_BIND},
        "bind " + host);
  }
  for (const auto& link : kDeviceLinks) {
    add({.op = MountStep::Op::symlink, .source = link[0], .target = keep(dev + "/" + link[1])},
        std::string("link /dev/") + link[1]);
  }
  add({.op = MountStep::Op::mkdir, .target = keep(dev + "/shm")}, "create /dev/shm");
  add({.op = MountStep::Op::mount,
       .source = "tmpfs",
       .target = keep(dev + "/shm"),
       .fstype = "tmpfs",
       .flags = MS_NOSUID | MS_NODEV | MS_NOEXEC,
       .data = keep("mode=1777," + size)},
      "mount /dev/shm");
  add({.op = MountStep::Op::set_attr,
       .target = keep(dev),
       .flags = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID},
      "make /dev read-only");
}

// What the command runs in and from, where no bind shows it already:
// read-only, at the same path.
void FilesystemPlan::show_cwd_and_executable(const Inputs& in) {
  if (in.working_directory) {
    const std::string cwd = normalize(*in.working_directory);
    if (!cwd.empty() && !visible(cwd)) {
      bind(cwd, cwd, false, true);
      visible_.push_back(cwd);
    }
    working_directory_ = cwd.empty() ? "/" : cwd;
  }
  const std::string executable = normalize(in.executable);
  if (!executable.empty() && !visible(executable)) bind(executable, executable, false, false);
}

void FilesystemPlan::enter(bool minimal) {
  add({.op = MountStep::Op::enter, .target = keep(root_)}, "enter the view");
  if (minimal) {
    add({.op = MountStep::Op::set_attr, .target = "/", .flags = kReadOnly},
        "make the view's root read-only");
  }
}

CORRAL_CHILD_CODE long run_mount_steps(const MountStep* steps, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const MountStep& s = steps[i];
    long rc = 0;
    switch (s.op) {
      case MountStep::Op::make_private:
        rc = ::syscall(SYS_mount, nullptr, s.target, nullptr, MS_REC | MS_PRIVATE, nullptr);
        if (rc < 0 && errno == EINVAL && s.source != nullptr) {
          rc = ::syscall(SYS_mount, nullptr, s.source, nullptr, MS_REC | MS_PRIVATE, nullptr);
        }
        break;
      case MountStep::Op::mount:
        rc = ::syscall(SYS_mount, s.source, s.target, s.fstype, s.flags, s.data);
        break;
      case MountStep::Op::set_attr: {
        struct mount_attr attr {};
        attr.attr_set = s.flags;
        rc = ::syscall(SYS_mount_setattr, AT_FDCWD, s.target, s.recursive ? AT_RECURSIVE : 0, &attr,
                       sizeof attr);
        break;
      }
      case MountStep::Op::mkdir:
        rc = ::syscall(SYS_mkdir, s.target, 0755);
        if (rc < 0 && errno == EEXIST) rc = 0;
        break;
      case MountStep::Op::touch:
        // O_RDONLY: an existing file on a read-only mount is fine as it is.
        rc = ::syscall(SYS_openat, AT_FDCWD, s.target, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
                       0644);
        if (rc >= 0) rc = ::syscall(SYS_close, rc);
        break;
      case MountStep::Op::symlink:
        rc = ::syscall(SYS_symlink, s.source, s.target);
        if (rc < 0 && errno == EEXIST) rc = 0;
        break;
      case MountStep::Op::enter:
        rc = ::syscall(SYS_chdir, s.target);
        if (rc < 0) break;
        if (::syscall(SYS_pivot_root, ".", ".") == 0) {
          // The host's tree now sits on top of the view: detach it.
          rc = ::syscall(SYS_umount2, ".", MNT_DETACH);
        } else if (errno == EINVAL) {
          // The supervisor is chrooted (its root is no mount point): the
          // host's tree stays in the namespace, out of reach of a process
          // without CAP_SYS_CHROOT (dropped next) and without chroot (the
          // seccomp filter kills it).
          rc = ::syscall(SYS_chroot, ".");
        } else {
          rc = -1;
        }
        if (rc == 0) rc = ::syscall(SYS_chdir, "/");
        break;
    }
    if (rc < 0) return static_cast<long>(i);
  }
  return -1;
}

namespace {

struct ProbeResult {
  int error = 0;
  int stage = 0;  // 0 done, 1 mount namespace, 2 tmpfs, 3 proc
};

CORRAL_CHILD_CODE int probe_main(void* arg) {
  auto* result = static_cast<ProbeResult*>(arg);
  // In a fresh mount namespace: nothing here reaches the host.
  if (::syscall(SYS_mount, nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) < 0 &&
      (errno != EINVAL ||
       ::syscall(SYS_mount, nullptr, kStage, nullptr, MS_REC | MS_PRIVATE, nullptr) < 0)) {
    *result = {errno, 1};
  } else if (::syscall(SYS_mount, "tmpfs", kStage, "tmpfs", MS_NOSUID | MS_NODEV, "size=4k") < 0) {
    *result = {errno, 2};
  } else if (::syscall(SYS_mount, "proc", kStage, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                       nullptr) < 0) {
    // On top of the staged tmpfs, as in a view (no directory is made: this
    // child's ids are not mapped, so it could create nothing).
    *result = {errno, 3};
  }
  ::syscall(SYS_exit_group, 0);
  return 0;
}

}  // namespace

FilesystemSupport probe_filesystem_support(bool in_user_namespace, int also) {
  FilesystemSupport support;
  constexpr std::size_t kStack = 64 * 1024;
  void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) {
    support.detail = "mmap failed";
    return support;
  }
  ProbeResult result{0, 0};
  const int flags = CLONE_NEWNS | CLONE_NEWPID | (in_user_namespace ? CLONE_NEWUSER : 0) | also;
  const pid_t pid = ::clone(probe_main, static_cast<char*>(stack) + kStack,
                            flags | CLONE_VM | CLONE_VFORK | SIGCHLD, &result);
  if (pid < 0) {
    support.detail = std::string("a mount namespace is refused: ") + std::strerror(errno);
  } else {
    int status = 0;
    ::waitpid(pid, &status, 0);
    support.mount_namespace = result.stage == 0 || result.stage == 3;
    support.fresh_proc = result.stage == 0;
    if (result.stage == 1 || result.stage == 2) {
      support.detail = std::string(result.stage == 1 ? "private mounts" : "a tmpfs") +
                       " refused: " + std::strerror(result.error);
    } else if (result.stage == 3) {
      support.detail = std::string("a fresh /proc is refused (the command gets none): ") +
                       std::strerror(result.error);
    }
  }
  ::munmap(stack, kStack);
  return support;
}

}  // namespace corral::process
