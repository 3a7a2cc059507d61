// src/process/confine.cc: see confine.hpp.
#include "process/confine.hpp"

namespace corral::process {

std::string_view to_string(FilesystemView view) noexcept {
  switch (view) {
    case FilesystemView::host:
      return "host";
    case FilesystemView::host_read_only:
      return "host_read_only";
    case FilesystemView::minimal:
      return "minimal";
  }
  return "minimal";
}

std::optional<FilesystemView> filesystem_view_from_string(std::string_view text) noexcept {
  for (auto view :
       {FilesystemView::host, FilesystemView::host_read_only, FilesystemView::minimal}) {
    if (to_string(view) == text) return view;
  }
  return std::nullopt;
}

Confinement Confinement::none() {
  Confinement c;
  c.user_namespace = false;
  c.seccomp = false;
  c.pid_namespace = false;
  c.filesystem = FilesystemView::host;
  c.network = true;
  c.limits = ResourceLimits{.processes = std::nullopt};
  return c;
}

Hardening Hardening::host() {
  Hardening h;
  h.environment_allow = std::nullopt;
  h.confinement = Confinement::none();
  return h;
}

std::vector<Protection> confinement_protections(const Hardening&) {
  return {};  // TODO(helper A): probe and report
}

}  // namespace corral::process
