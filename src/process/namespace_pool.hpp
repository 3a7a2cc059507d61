// src/process/namespace_pool.hpp: the user and network namespaces confined
// starts enter instead of creating.
//
// A new network namespace is the most expensive part of a confined start:
// the kernel registers its sysctl tables and its loopback device, about 40%
// of the start's wall time. So a start enters one from a pool, and gives it
// back once its run's pid namespace is empty: runs of one namespace never
// overlap, and what a run leaves in it (a listener, a connection) dies with
// the run's last process, because the command never holds a capability over
// it (no interface, route, firewall or sysctl change is possible).
//
// A network namespace may only be entered by a process with CAP_SYS_ADMIN
// over the user namespace that owns it, so the pool's namespaces belong to
// one user namespace per (uid, gid) that every confined start enters first
// (its ids are mapped once). Runs sharing it share nothing they did not
// already share on the host: their processes all run as the same host uid,
// hold no capability in it, and each run still gets its own mount, pid, ipc,
// uts and cgroup namespaces.
#pragma once

#include <cstddef>
#include <memory>

#include "process/fd.hpp"

namespace corral::process {

class NetworkNamespacePool;

// One pooled network namespace, held by one run. Dropped (closed), not
// returned, unless give_back() is called: a run whose processes may still
// be alive must not hand its namespace on.
class NetworkLease {
 public:
  NetworkLease() = default;
  NetworkLease(std::shared_ptr<NetworkNamespacePool> pool, UniqueFd fd)
      : pool_(std::move(pool)), fd_(std::move(fd)) {}
  NetworkLease(NetworkLease&&) noexcept = default;
  NetworkLease& operator=(NetworkLease&&) noexcept = default;
  ~NetworkLease() = default;

  int fd() const noexcept { return fd_.get(); }
  explicit operator bool() const noexcept { return static_cast<bool>(fd_); }
  // Every process of the run is gone: later runs may enter the namespace.
  void give_back();

 private:
  std::shared_ptr<NetworkNamespacePool> pool_;
  UniqueFd fd_;
};

// The user namespace confined starts with these ids enter: created on first
// use (mapping `uid` and `gid` to themselves) and kept for the life of the
// process. Returns its descriptor; throws SpawnError.
int shared_user_namespace(unsigned uid, unsigned gid);

// A network namespace with only loopback, up, owned by the user namespace
// `owner` (-1: this process's own, which needs root). Idle ones are reused;
// a new one is made when none is idle. Throws SpawnError.
NetworkLease lease_network_namespace(int owner);

// How many network namespaces sit idle in the pools (for tests).
std::size_t idle_network_namespaces();

// At most this many idle namespaces are kept per owner; more are closed.
inline constexpr std::size_t kMaxIdleNetworkNamespaces = 32;

}  // namespace corral::process
