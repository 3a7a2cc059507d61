// src/process/filesystem_view.hpp: the mount namespace a confined command
// starts in (Confinement::filesystem), as a list of mount steps the parent
// builds and the child runs with raw system calls between clone and exec.
//
// The child is in a new mount namespace (owned by its user namespace when it
// has one) whose mounts no longer propagate. The view is assembled under a
// tmpfs staged over /proc (no bind may come from /proc, so hiding it hides
// nothing a bind needs, and the command gets a procfs of its own anyway),
// from the host's own paths, then becomes the root: pivot_root(".", ".")
// and a detach of the host's tree, or, where the supervisor itself runs in a
// chroot and pivot_root refuses, chroot(".").
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "corral/process.hpp"

namespace corral::process {

// One step of the view. Pointers stay valid while the FilesystemPlan lives.
struct MountStep {
  enum class Op : std::uint8_t {
    make_private,  // mounts at and below `target` (if no mount point: `source`) stop propagating
    mount,         // mount(source, target, fstype, flags, data)
    set_attr,      // mount_setattr(target, attr_set = flags), `recursive` for the subtree
    mkdir,         // mkdir(target, 0755); an existing one is fine
    touch,         // an empty file at `target` to bind a file onto
    symlink,       // symlink(source, target); an existing one is fine
    enter,         // make `target` the root and chdir("/")
  };
  Op op;
  const char* source = nullptr;
  const char* target = nullptr;
  const char* fstype = nullptr;
  unsigned long flags = 0;
  const char* data = nullptr;
  bool recursive = false;
};

class FilesystemPlan {
 public:
  struct Inputs {
    FilesystemView view = FilesystemView::minimal;
    std::vector<Bind> binds;
    std::string executable;                        // absolute host path
    std::optional<std::string> working_directory;  // absolute host path, or none
    bool fresh_proc = false;      // mount a procfs (the command has its own pid namespace)
    std::uint64_t tmp_bytes = 0;  // the size of the private /tmp and /dev/shm
  };

  // Checks every bind (absolute paths, an existing source, not under /proc)
  // and lays out the steps. Throws SpawnError naming the bad bind.
  static FilesystemPlan build(const Inputs& inputs);

  const std::vector<MountStep>& steps() const noexcept { return steps_; }
  // What a step does ("bind /srv/data on /data"), for its failure message.
  const std::string& describe(std::size_t index) const;
  // Where the command starts inside the view.
  const std::string& working_directory() const noexcept { return working_directory_; }

 private:
  const char* keep(std::string text);
  void add(MountStep step, std::string description);
  void make_directories(const std::string& inside);
  void bind(const std::string& host, const std::string& inside, bool writable, bool directory);
  bool visible(const std::string& path) const;
  // The steps of build(), in the order it takes them.
  void mount_stage();
  void show_system_directories();
  void show_host_root();
  void mount_tmp(const std::string& size);
  void mount_proc(bool fresh_proc, bool minimal);
  void mount_dev(const std::string& size);
  void show_cwd_and_executable(const Inputs& in);
  void enter(bool minimal);

  std::string root_;                 // where the view is assembled
  std::deque<std::string> strings_;  // what the steps point into
  std::vector<MountStep> steps_;
  std::vector<std::string> descriptions_;
  std::vector<std::string> made_;     // directories already created in the view
  std::vector<std::string> visible_;  // host paths the view shows at the same place
  std::string working_directory_ = "/";
};

// At most this many binds per command: each is a mount the kernel keeps
// per run (its own limit, fs.mount-max, is 100000 for the whole namespace).
inline constexpr std::size_t kMaxBinds = 256;

// What is wrong with `binds` ("bind: the source /x cannot be used: No such
// file or directory"), or empty: absolute paths, an existing directory or
// regular file as the source, nothing under /proc, no target "/", at most
// kMaxBinds. The one rule the bind layer checks at bind time and the
// filesystem view again at each start.
std::string bind_problem(const std::vector<Bind>& binds);

// Runs `count` steps in the child. Returns -1 when all succeeded, else the
// index of the step that failed (errno says why). Raw system calls only.
long run_mount_steps(const MountStep* steps, std::size_t count);

// Whether this process can build a view: a mount namespace with tmpfs and
// binds (in a new user namespace when `in_user_namespace`), and a procfs of
// its own pid namespace. Probed with a short-lived child.
struct FilesystemSupport {
  bool mount_namespace = false;
  bool fresh_proc = false;
  std::string detail;  // why not, when not
};
// `also` adds clone flags (more namespaces) to the probe's child: a probe
// that succeeds with them shows those namespaces can be made too.
FilesystemSupport probe_filesystem_support(bool in_user_namespace, int also = 0);

}  // namespace corral::process
