// corral/process.hpp: run a command-line program inside a containment unit,
// one supervised subprocess per call, with slots, deadlines and cleanup.
//
// A `Supervisor` owns a fixed number of execution slots (one by default).
// Each `run()` takes a slot, starts the command in a fresh containment unit
// (a cgroup v2 leaf, else a new pid namespace, else a process group), captures
// stdout and stderr up to a budget, and ends in exactly one of:
//   - an `Execution` (the command exited 0);
//   - a `corral::Error` carrying the Execution: `command_failed` (non-zero
//     exit), `timeout`, `cancelled`, `cleanup_failed` (the unit still held a
//     live process when the cleanup budget ran out; the slot stays taken);
//   - a `corral::Error` without one: `busy` (every slot taken, nothing
//     queues), `unavailable` (the command could not start, or the supervisor
//     was shut down), `invalid_request` (the Command itself was malformed).
//
// When a run stops early (deadline, cancellation, shutdown) every process in
// its unit is asked to stop (SIGTERM), forced (SIGKILL) halfway through the
// cleanup budget, and the unit is polled until it reports no live process.
// When a command exits by itself, whatever it left running in its unit is
// killed at once. Descendants that call setsid() stay in a cgroup or pid
// namespace unit; the process-group fallback cannot hold them (see
// docs/commands.md).
//
// Example:
//   corral::process::Supervisor supervisor;               // 1 slot, 5 min, 1 MiB
//   corral::process::Command command{.argv = {"/bin/echo", "hi"}};
//   corral::process::CancelSource cancel;                 // cancel.cancel() from any thread
//   corral::process::RunOptions run;
//   run.cancel = cancel;
//   try {
//     corral::Execution e = supervisor.run(command, run);
//     e.stdout_text();                                    // "hi\n"
//   } catch (const corral::CommandError& e) {             // command_failed, cleanup_failed
//     e.execution()->exit_code();
//   }
//   supervisor.status().unit;                             // which unit this host gave us
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "corral/execution.hpp"
#include "corral/failure.hpp"

namespace corral::process {

using Clock = std::chrono::steady_clock;

// UnitKind: the containment unit a run is started in, strongest first.
//   cgroup:        a cgroup v2 leaf per run; holds every descendant, including
//                  ones that call setsid(); killed with cgroup.kill and seen
//                  empty through cgroup.events.
//   pid_namespace: a new pid namespace under a small init of ours; holds every
//                  descendant; when its init dies the kernel kills the rest.
//   process_group: a new process group, with the supervisor process marked as
//                  child subreaper; a descendant that calls setsid() or
//                  setpgid() leaves it and is not cleaned up.
enum class UnitKind { cgroup, pid_namespace, process_group };

// "cgroup", "pid_namespace", "process_group".
std::string_view to_string(UnitKind kind) noexcept;
// Parses the strings above; nullopt otherwise.
std::optional<UnitKind> unit_kind_from_string(std::string_view text) noexcept;

// Rlimits: resource limits applied to the command before exec (each unset by
// default). They bind each process on its own, not the unit as a whole
// (except `processes`, which counts the real user's processes, as
// RLIMIT_NPROC always does).
struct Rlimits {
  std::optional<std::uint64_t> cpu_seconds;    // RLIMIT_CPU
  std::optional<std::uint64_t> address_space;  // RLIMIT_AS, bytes
  std::optional<std::uint64_t> open_files;     // RLIMIT_NOFILE
  std::optional<std::uint64_t> processes;      // RLIMIT_NPROC

  friend bool operator==(const Rlimits&, const Rlimits&) = default;
};

// ResourceLimits: bounds on the run's unit as a whole (all its processes
// together), enforced by the kernel's cgroup controllers: cgroup v2
// (`pids.max`, `memory.max`, `cpu.max`) where the supervisor's subtree has
// the controllers, else the cgroup v1 `pids`, `memory` and `cpu` hierarchies
// where they are mounted and writable. Where neither exists the limit is not
// enforced, and Supervisor::protections() says so (`Confinement::strict`
// makes such a run fail `unavailable` instead).
struct ResourceLimits {
  std::optional<std::uint64_t> processes = 256;  // tasks (threads included)
  std::optional<std::uint64_t> memory_bytes;     // RAM (+ swap where accounted)
  std::optional<double> cpus;                    // CPU time per wall second (1.5 = 1.5 cores)

  friend bool operator==(const ResourceLimits&, const ResourceLimits&) = default;
};

// FilesystemView: the mount namespace a confined command starts in. Where
// the supervisor can create none (no user namespace and not root),
// protections() reports the filesystem unenforced and `strict` refuses.
//   host:           the supervisor's own (no mount namespace).
//   host_read_only: the host root, recursively read-only, with `binds` on top.
//   minimal:        an empty root holding only the system directories that
//                   exist of /usr, /bin, /sbin, /lib, /lib32, /lib64, /etc
//                   (read-only), the executable, the working directory
//                   (read-only unless bound writable) and `binds`.
// Every view but host also gets a private tmpfs /tmp and /dev/shm (each of
// half limits.memory_bytes, 256 MiB when unset), a fresh /proc of the
// command's pid namespace (an empty one without a pid namespace) and a
// read-only /dev with only null, zero, full, random, urandom and the fd,
// stdin, stdout and stderr links. No bind may name /proc.
enum class FilesystemView { host, host_read_only, minimal };
std::string_view to_string(FilesystemView view) noexcept;
std::optional<FilesystemView> filesystem_view_from_string(std::string_view text) noexcept;

// Bind: a host path made visible inside the command's mount namespace.
struct Bind {
  std::string source;  // absolute host path
  std::string target;  // absolute path inside; empty means the same as source
  bool writable = false;

  friend bool operator==(const Bind&, const Bind&) = default;
};

// Confinement: what a command can reach, enforced by the kernel. Deny by
// default: a default-constructed Confinement is the fully confined profile.
// Each protection that this host cannot provide is left out and named in
// Supervisor::protections(), unless `strict` is set (then the run fails
// `unavailable` without starting). Without a user namespace (a chroot, a
// policy that forbids one) a root supervisor's command still drops to
// uid/gid (65534 unless set) with no capabilities; a non-root supervisor's
// keeps its ids.
struct Confinement {
  // A user namespace whose only mapped ids are `uid`/`gid` (default: 65534
  // when the supervisor is root, the supervisor's own ids otherwise); every
  // capability dropped (bounding and ambient sets too); no_new_privs.
  // Off (or refused by the kernel), a root supervisor's command runs as the
  // host ids `uid`/`gid` with no capabilities when they are set (when
  // refused: 65534 unless set); Confinement::none() sets neither.
  bool user_namespace = true;
  std::optional<std::uint32_t> uid;
  std::optional<std::uint32_t> gid;
  // A seccomp filter that kills the process on the escape syscalls (ptrace,
  // mount, unshare/setns, bpf, keyctl, perf_event_open, userfaultfd, kexec,
  // module loading, io_uring, ...; docs/security.md lists them).
  bool seccomp = true;
  // A pid namespace under an init of ours (dies with the supervisor, so a
  // supervisor crash kills the tree), plus ipc, uts and cgroup namespaces.
  bool pid_namespace = true;
  FilesystemView filesystem = FilesystemView::minimal;
  std::vector<Bind> binds;
  // A new network namespace (only a loopback) unless true.
  bool network = false;
  ResourceLimits limits;
  // Fail instead of leaving out a protection this host lacks.
  bool strict = false;

  // Everything off: the command runs with the supervisor's identity,
  // filesystem and network (setsid, the environment rule and the rlimits
  // still apply). For trusted tools and tests that need the host.
  static Confinement none();

  friend bool operator==(const Confinement&, const Confinement&) = default;
};

// Hardening: the per-command settings a binding fixes once for every call.
struct Hardening {
  // Start the command in a new network namespace (only a down loopback).
  // Kept for older callers; the same as `!confinement.network`, and either
  // being set means no network.
  bool new_network_namespace = false;
  Rlimits rlimits;
  // The command's environment is exactly the supervisor's variables named
  // here (absent ones skipped) plus `environment_set`, with PATH defaulting
  // to /usr/local/bin:/usr/bin:/bin when neither names it. When nullopt the
  // command inherits the supervisor's environment (Confinement::none() only).
  // Never any CORRAL_* variable, whatever is listed.
  std::optional<std::vector<std::string>> environment_allow = std::vector<std::string>{};
  std::map<std::string, std::string> environment_set;
  // When set, the command starts in this directory; otherwise in the
  // supervisor's current directory (`/` in a minimal filesystem view).
  std::optional<std::string> working_directory;
  Confinement confinement;

  // The host profile: the supervisor's whole environment and
  // Confinement::none(). What every command got before confinement existed.
  static Hardening host();
};

// Protection: one part of a command's profile and whether this host enforces
// it, for `corral tools`, `corral check`, status pages and docs.
struct Protection {
  std::string name;  // "user_namespace", "seccomp", "limits.processes", ...
  bool enforced = false;
  std::string detail;  // how ("cgroup v1 pids.max=256") or why not
};

// Command: what to run. `argv[0]` is the executable: an absolute path, a path
// relative to the working directory, or a bare name searched in the
// supervisor's PATH when the run starts.
struct Command {
  std::vector<std::string> argv;
  Hardening hardening;
};

// CancelSource: a handle a caller keeps to stop a run from another thread.
//
// Copies share one state; `cancel()` is thread-safe, idempotent and async
// from the run's point of view (the run notices on its event loop, then
// cleans up). A run started with an already cancelled source ends
// `cancelled` without starting the command. Construction throws
// `corral::SetupError` (unavailable) if no eventfd can be created.
class CancelSource {
 public:
  CancelSource();
  void cancel() noexcept;
  bool cancelled() const noexcept;
  // A file descriptor that becomes readable once cancelled (for event loops).
  // Owned by the source; valid while any copy lives.
  int wait_handle() const noexcept;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// RunOptions: per-call bounds chosen by the caller.
struct RunOptions {
  // The caller's own deadline; the run ends `timeout` at the earlier of this
  // and start + SupervisorOptions::deadline.
  std::optional<Clock::time_point> deadline;
  // Cancels the run when triggered; the run ends `cancelled`.
  std::optional<CancelSource> cancel;
};

// Fault injection for corral's own tests (src/process/faults.hpp); only
// declared here, so it stays null outside them.
struct SupervisorFaults;

// SupervisorOptions: fixed at construction.
struct SupervisorOptions {
  // Execution slots; a run beyond them fails `busy` at once.
  int slots = 1;
  // Longest a run may take (shortened by RunOptions::deadline).
  std::chrono::milliseconds deadline = std::chrono::minutes(5);
  // Time from asking a unit to stop to giving up on it (SIGKILL at half).
  std::chrono::milliseconds cleanup_budget = std::chrono::seconds(5);
  // Output retained across stdout and stderr; the rest is read and dropped.
  std::uint64_t output_budget = 1 << 20;
  // Use exactly this unit (construction fails `unavailable` if the host does
  // not offer it); nullopt picks the strongest available.
  std::optional<UnitKind> unit;
  // cgroup v2 directory to create run leaves under; empty means a new child
  // of the supervisor's own cgroup on the first writable cgroup2 mount.
  std::string cgroup_parent;
  // How often a unit left behind by `cleanup_failed` is re-checked.
  std::chrono::milliseconds recheck_interval{100};
  std::shared_ptr<const SupervisorFaults> faults;
};

// SlotState: what one slot is doing.
enum class SlotState { idle, running, cleaning_up, cleanup_failed };
std::string_view to_string(SlotState state) noexcept;

// SlotStatus: one slot's view in Status.
struct SlotStatus {
  SlotState state = SlotState::idle;
  // The leader process (the command, or the pid namespace's init); 0 if none.
  int pid = 0;
  // The program path, for people reading a health report.
  std::string program;
  // Since when the slot is in this state.
  Clock::time_point since{};
  // The unit, as the kernel names it ("cgroup /sys/fs/cgroup/..", "pgid 123").
  std::string unit;
};

// Status: a snapshot. `unit` is the containment unit runs are started in.
struct Status {
  UnitKind unit = UnitKind::process_group;
  int slots = 0;
  int running = 0;                      // slots held by live runs (including their cleanup)
  int cleanup_failed = 0;               // slots held by units not yet seen empty
  bool accepting = true;                // false once shutdown() was called
  std::vector<SlotStatus> slot_status;  // one per slot
  std::uint64_t runs_started = 0;
  std::uint64_t runs_failed = 0;  // every non-success ending, busy included
  // Non-success endings by failure code (busy and unavailable included).
  std::map<FailureCode, std::uint64_t> failures;
};

// Supervisor: slots, containment, capture, deadlines and cleanup.
//
// Thread-safe: run(), status() and shutdown() may be called from any thread
// concurrently. run() blocks its caller and drives that run's event loop on
// the caller's thread (no extra thread per run). One background thread exists
// only while a unit left by `cleanup_failed` awaits re-checking.
// Construction throws `corral::SetupError` (unavailable) if `options.unit`
// names a unit the host cannot provide, and std::invalid_argument for
// nonsensical options (slots < 1, zero budgets). Destruction calls
// shutdown(now + cleanup_budget) and abandons units still not empty.
class Supervisor {
 public:
  explicit Supervisor(SupervisorOptions options = {});
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Runs `command` to completion in a fresh unit. Returns the Execution of a
  // zero exit; throws corral::Error otherwise (see the file comment). Output
  // and usage are in the Execution attached to every failure except busy,
  // unavailable and invalid_request.
  Execution run(const Command& command, const RunOptions& options = {});

  // Cheap snapshot (one mutex, no syscalls).
  Status status() const;

  // What `hardening` gets from this supervisor on this host, one entry per
  // protection the profile asks for. Probed once per supervisor, then cached.
  std::vector<Protection> protections(const Hardening& hardening) const;

  // Closes admission (later runs fail `unavailable`), cancels active runs and
  // waits until every slot is free or `deadline` passes. Returns true iff no
  // slot is held on return. Idempotent; safe to call concurrently.
  bool shutdown(Clock::time_point deadline);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Which units this host offers, strongest first (always ends with
// process_group). Probes the kernel; costs a few syscalls and one short-lived
// child.
std::vector<UnitKind> available_units();

}  // namespace corral::process
